#!/usr/bin/env python3
"""Compares `wsv protocol --format json` with the facts of each kernel's protocol comment.

  check_facts.py --wsv BIN --facts FACTS.json --ptx-dir DIR [--kernel NAME] [--require]

For every kernel of FACTS (reference_facts.json for the reference kernels, extra_facts.json for
tests/protocol's own) and every PTX file the build made of it (nvcc, clang, instrumented), every
entry's protocol must have: the roles with their thread counts, the barrier arrays with their
slots and init counts, and, run for each K of the facts (protocol_sim.py), each listed role's
waits on each listed barrier in the stage and parity order the comment states, the arrivals
per array, and the bytes each expect_tx posts and each fill's copies deliver. Files a kernel
lists but the build did not make are skipped (with --require, they fail).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol_sim as sim  # noqa: E402


def formula(text, names):
    """A count formula of the facts file (`tiles*(K//64)`)."""
    return eval(text, {"__builtins__": {}}, names)  # test data written by hand, see README.md


def tiles_for(facts, launch, rank):
    schedule = facts.get("schedule")
    if not schedule:
        return 1
    total = (launch["M"] // schedule["tile_rows"]) * (launch["N"] // schedule["tile_cols"])
    cluster = facts.get("cluster", 1)
    units = launch["nctaid"] // (cluster if schedule["per"] == "cluster" else 1)
    index = 0  # the CTA (or cluster) the check looks at
    return max(0, (total - index + units - 1) // units)


def environment(kernel, launch, K, rank, params=None):
    """Launch values for CTA `rank`; params names the entry's M, N and K parameters as wsv
    prints them (the reference kernels' launch description calls them M, N, K)."""
    names = params or {"M": "M", "N": "N", "K": "K"}
    env = {("param", names["M"]): launch["M"], ("param", names["N"]): launch["N"]}
    env[("param", names["K"])] = K  # last: kernels without M or N name K's parameter there
    for axis in "xyz":
        env[("sreg", "%ctaid." + axis)] = rank if axis == "x" else 0
        env[("sreg", "%nctaid." + axis)] = launch["nctaid"] if axis == "x" else 1
        env[("sreg", "%ntid." + axis)] = kernel["launch"]["block"]["xyz".index(axis)]
    env[("sreg", "%cluster_ctarank")] = rank
    env[("sreg", "%cluster_nctarank")] = kernel["launch"]["cluster_size"]
    env[("sreg", "%cluster_ctaid.x")] = rank
    return env


def first_thread(threads):
    members = threads.get("members") or []
    if members:
        return members[0][0]
    for group in threads.get("elected") or []:
        if group["warps"]:
            return group["warps"][0] * 32
    return 0


def traces(kernel, env):
    """Each role's trace (and the prologue's and epilogue's) for one CTA."""
    out = {}
    for name, items, threads in (
            [("prologue", kernel["prologue"], None)] +
            [(r["name"], r["body"], r) for r in kernel["roles"]] +
            [("epilogue", kernel["epilogue"], None)]):
        t = sim.Trace()
        local = dict(env)
        local[("sreg", "%tid.x")] = first_thread(threads["threads"]) if threads else 0
        if threads is None or sim.role_runs(kernel, threads, local):
            sim.run(kernel, items, local, env[("sreg", "%cluster_ctarank")], t)
        out[name] = t
    return out


def check_entry(kernel, facts, launch, k_values, failures, where):
    def fail(message):
        failures.append(f"{where}: {message}")

    roles = {r["name"]: r for r in kernel["roles"]}
    for name, want in facts.get("roles", {}).items():
        role = roles.get(name)
        if not role:
            fail(f"no role '{name}' (roles: {', '.join(roles)})")
            continue
        if role["threads"]["count"] != want["threads"]:
            fail(f"role {name} has {role['threads']['count']} threads, the comment says "
                 f"{want['threads']}")
        if "active" in want and role["active"]["count"] != want["active"]:
            fail(f"role {name}'s work runs on {role['active']['count']} threads, the comment "
                 f"says {want['active']}")

    arrays = {b["name"]: b for b in kernel["barriers"]}
    for name, want in facts.get("barriers", {}).items():
        array = arrays.get(name)
        if not array:
            fail(f"no barrier '{name}' (barriers: {', '.join(arrays)})")
            continue
        if array["slots"] != want["slots"]:
            fail(f"{name} has {array['slots']} slots, the comment says {want['slots']}")
        counts = [c.get("constant") if c else None for c in array["init_counts"]]
        if any(c != want["init"] for c in counts):
            fail(f"{name} init counts {counts}, the comment says {want['init']}")

    cluster = facts.get("cluster", 1)
    for K in k_values:
        names = {"K": K, "tiles": tiles_for(facts, launch, 0)}
        per_rank = []
        try:
            for rank in range(cluster):
                per_rank.append(traces(kernel, environment(kernel, launch, K, rank,
                                                           facts.get("params"))))
        except sim.Unknown as e:
            fail(f"K={K}: the protocol cannot be run: {e}")
            continue
        cta0 = per_rank[0]
        for w in facts.get("waits", []):
            trace = cta0.get(w["role"])
            if trace is None:
                fail(f"K={K}: no role '{w['role']}' to wait on {w['barrier']}")
                continue
            seq = [(s, p) for (b, s, p) in trace.waits if b == w["barrier"]]
            count = formula(w["count"], names)
            if len(seq) != count:
                fail(f"K={K}: {w['role']} waits {len(seq)} times on {w['barrier']}, the comment "
                     f"says {w['count']} = {count}")
                continue
            first, offset = w.get("first_slot", 0), w.get("offset", 0)
            for j, (slot, parity) in enumerate(seq):
                i = offset + j  # the k-tile of the j-th wait (a peeled first k-tile skips one)
                want = (first + i % w["stage"], ((i // w["stage"]) & 1) ^ w["start_parity"])
                if (slot, parity) != want:
                    fail(f"K={K}: {w['role']}'s wait #{j} on {w['barrier']} is slot {slot} "
                         f"parity {parity}, the comment says slot {want[0]} parity {want[1]}")
                    break
        for name, total in facts.get("arrivals", {}).items():
            got = sum(n for t in per_rank for tr in t.values()
                      for (b, _, cta, n) in tr.arrivals if b == name and cta == 0)
            if got != formula(total, names):
                fail(f"K={K}: {got} arrivals on CTA 0's {name}, the comment says {total} = "
                     f"{formula(total, names)}")
        for name, per_fill in facts.get("bytes", {}).items():
            posted = [n for t in per_rank for tr in t.values()
                      for (b, _, cta, n) in tr.expect if b == name and cta == 0]
            delivered = sum(n for t in per_rank for tr in t.values()
                            for (b, _, ctas, n) in tr.copies if b == name and 0 in ctas)
            if any(n != per_fill for n in posted):
                fail(f"K={K}: expect_tx on {name} posts {sorted(set(posted))} B, the comment "
                     f"says {per_fill}")
            if delivered != per_fill * len(posted):
                fail(f"K={K}: copies deliver {delivered} B to CTA 0's {name} over "
                     f"{len(posted)} fills, the comment says {per_fill} per fill")
    for nb in facts.get("named_barriers", []):
        role = roles.get(nb["role"])
        if not role:
            continue
        found = set()
        env = environment(kernel, launch, k_values[-1], 0, facts.get("params"))
        members = role["threads"].get("members") or []
        for lo, hi in members:
            for tid in range(lo, hi + 1, 128):
                local = dict(env)
                local[("sreg", "%tid.x")] = tid
                trace = sim.Trace()
                sim.run(kernel, role["body"], local, 0, trace)
                for kind, ev in trace.events:
                    if kind != "named-barrier":
                        continue
                    threads = ev["named_barrier"]["threads"]
                    count = sim.value(threads, local) if threads != "all" else None
                    found.add((sim.value(ev["named_barrier"]["id"], local), count))
        want = {(i, nb["threads"]) for i in nb["ids"]}
        if found != want:
            fail(f"role {nb['role']} syncs named barriers {sorted(found)}, the comment says "
                 f"{sorted(want)}")


def protocol_json(wsv, path):
    out = subprocess.run([wsv, "protocol", "--format", "json", path], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"wsv protocol {path} exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--facts", required=True)
    ap.add_argument("--ptx-dir", required=True)
    ap.add_argument("--kernel", action="append")
    ap.add_argument("--k-values", help="comma-separated K values instead of the facts file's")
    ap.add_argument("--require", action="store_true",
                    help="fail when a file the facts name was not built")
    args = ap.parse_args()

    with open(args.facts) as f:
        facts = json.load(f)
    manifest_path = os.path.join(args.ptx_dir, "kernels.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = {k["name"]: k for k in json.load(f)["kernels"]}

    failures, checked, missing = [], 0, []
    for name, kfacts in sorted(facts["kernels"].items()):
        if args.kernel and name not in args.kernel:
            continue
        files = kfacts.get("files")
        if not files:
            entry = manifest.get(name, {})
            files = [entry[k] for k in ("ptx", "clang_ptx", "checked_ptx") if k in entry]
            if not files:
                files = [name + ".ptx"]
        for file in files:
            path = os.path.join(args.ptx_dir, file)
            if not os.path.exists(path):
                missing.append(path)
                continue
            try:
                doc = protocol_json(args.wsv, path)
            except (RuntimeError, json.JSONDecodeError) as e:
                failures.append(f"{file}: {e}")
                continue
            if doc.get("schema") != "wsv-protocol/1":
                failures.append(f"{file}: schema {doc.get('schema')}, expected wsv-protocol/1")
            for kernel in doc["kernels"]:
                k_values = ([int(k) for k in args.k_values.split(",")] if args.k_values
                            else facts["k_values"])
                check_entry(kernel, kfacts, facts["launch"], k_values, failures,
                            f"{file} {kernel['name']}")
                checked += 1
    for m in missing:
        print(f"check_facts: not built, skipped: {m}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"check_facts: {checked} entries checked, {len(failures)} failures")
    if args.require and missing:
        return 1
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
