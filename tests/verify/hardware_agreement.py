#!/usr/bin/env python3
"""Hangs captured on the GPU against the model's counterexamples.

For every hardware capture (a wsv-trace/1 file with "source": "hardware", written by
`wsv run --check`) in the given folders, explores the PTX that ran (the variant's instrumented
build, `<kernel>.bug-<check>.checked.ptx`; the plain build where there is none) with the capture's
problem size (`wsv explore --param K=... --trace`; persistent kernels, whose launch is too large
to explore, at the small launch `wsv explore` picks) and compares who is stuck on what: each
side's summary lists roles (with their warps) and the mbarrier or named barrier they wait on.
A role on one side is the role on the other with the same name (`consumer0` is the copy
`consumer.0`) or with a warp in common. They agree when every role the GPU caught stuck on an
mbarrier waits on the same barrier array in the model, and every role the model leaves stuck
on an mbarrier was caught on it by the GPU; the GPU's named-barrier waits must be in the model
too, while the model's named-barrier waits may be missing from a capture (the instrumented
build captures mbarrier waits, and named ones only where the kernel instruments them). Slots
and parities are printed, not compared.

Prints a table; exits 1 when a capture and the model disagree, or (with --strict) when the
model finds no deadlock for a captured hang.

usage: hardware_agreement.py --wsv BIN --ptx-dir DIR [--strict] CAPTURE_DIR...
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def role_key(name):
    # consumer0, consumer.0, consumer@cta0 -> consumer
    name = name.split("@")[0]
    return re.sub(r"[.]?\d+$", "", name)


def stuck(trace):
    """(role, warps, barrier or 'named barrier', slot, parity) per stuck role of a summary."""
    out = []
    for s in trace.get("summary", []):
        wait = s.get("wait", {})
        # A seeded variant may split an array the capture names once (empty -> empty0).
        barrier = re.sub(r"\d+$", "", wait["barrier"]) if wait.get("barrier") else "named barrier"
        out.append((role_key(s["role"]), set(s.get("warps", [])), barrier, wait.get("index"),
                    wait.get("parity")))
    return out


def same_role(a, b):
    return a[0] == b[0] or bool(a[1] & b[1])


def covered(x, others):
    return any(same_role(x, o) and x[2] == o[2] for o in others)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--ptx-dir", required=True)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    rows, disagree, missing = [], 0, 0
    for d in args.dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            try:
                capture = json.load(open(path))
            except (OSError, ValueError):
                continue
            if capture.get("source") != "hardware" or not capture.get("variant"):
                continue
            base = os.path.join(args.ptx_dir, "%s.bug-%s" % (capture["kernel"], capture["variant"]))
            ptx = base + ".checked.ptx" if os.path.exists(base + ".checked.ptx") else base + ".ptx"
            problem = capture.get("launch", {}).get("problem", {})
            cmd = [args.wsv, "explore", "--kernel", capture["entry"], "--max-states", "400000"]
            protocol = subprocess.run([args.wsv, "protocol", "--kernel", capture["entry"], ptx],
                                      capture_output=True, text=True).stdout
            persistent = "%nctaid" in protocol or "grid" in protocol
            if not persistent and "k" in problem:
                launches = [("K = %d" % problem["k"], ["--param", "K=%d" % problem["k"]])]
            else:
                launches = [("%d k-tile(s), %d tile(s)" % (k, t), ["--k-tiles", str(k), "--tiles", str(t)])
                            for k, t in ((1, 1), (2, 1), (1, 2))]
            for where, extra in launches:
                with tempfile.TemporaryDirectory() as tmp:
                    out = os.path.join(tmp, "model.json")
                    run = subprocess.run(cmd + extra + ["--trace", out, ptx], capture_output=True, text=True)
                    model = json.load(open(out)) if os.path.exists(out) else {}
                if model.get("verdict") in ("deadlock", "race", "violation"):
                    break
            hw = stuck(capture)
            verdict = model.get("verdict", "exit %d" % run.returncode)
            if verdict != "deadlock":
                rows.append((capture["kernel"], capture["variant"] + (" (checked)" if ptx.endswith(".checked.ptx") else ""),
                             where, hw, None,
                             "%s: no deadlock in the model" % verdict))
                missing += 1
                continue
            st = stuck(model)
            ok = all(covered(x, st) for x in hw) and \
                all(covered(x, hw) for x in st if x[2] != "named barrier")
            if ok:
                verdict = "agree"
            elif where.startswith("K ="):
                verdict = "DISAGREE"
                disagree += 1
            else:
                # A smaller launch than the GPU ran: roles finish sooner, and which waits are
                # left differs. Shown, not counted.
                verdict = "differs (the model ran a smaller launch)"
                missing += 1
            rows.append((capture["kernel"], capture["variant"] + (" (checked)" if ptx.endswith(".checked.ptx") else ""),
                         where, hw, st, verdict))
    def fmt(side):
        if side is None:
            return "-"
        return ", ".join("%s on %s%s" % (r, b, "" if i is None else "[%s] parity %s" % (i, p))
                         for r, _, b, i, p in sorted(side, key=lambda x: (x[0], x[2])))
    print("| kernel | variant | model launch | stuck on the GPU | stuck in the model | |")
    print("|---|---|---|---|---|---|")
    for k, v, where, hw, st, verdict in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (k, v, where, fmt(hw), fmt(st), verdict))
    print("%d captures: %d agree, %d disagree, %d not compared (no deadlock in the model, or a smaller launch)"
          % (len(rows), len(rows) - disagree - missing, disagree, missing))
    return 1 if disagree or (args.strict and missing) else 0


if __name__ == "__main__":
    sys.exit(main())
