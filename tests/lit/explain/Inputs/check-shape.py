"""Checks the shape of `wsv explain` JSON (wsv-explain/1) or Perfetto output.

usage: check-shape.py explain FILE [--cycle] | check-shape.py perfetto FILE [--min-flows N]
"""
import json
import sys


def fail(msg):
    print("error:", msg)
    sys.exit(1)


def need(obj, key, types, where):
    if key not in obj:
        fail(f"{where}: missing '{key}'")
    if not isinstance(obj[key], types):
        fail(f"{where}.{key}: {type(obj[key]).__name__}, expected {types}")
    return obj[key]


def explain(doc, args):
    if need(doc, "schema", str, "") != "wsv-explain/1":
        fail("schema")
    trace = need(doc, "trace", dict, "")
    for k in ("source", "kernel", "entry", "ptx"):
        need(trace, k, str, "trace")
    stuck = need(doc, "stuck", list, "")
    if not stuck:
        fail("no stuck waits")
    for i, s in enumerate(stuck):
        w = f"stuck[{i}]"
        need(s, "role", str, w)
        need(s, "warps", list, w)
        wait = need(s, "wait", dict, w)
        if wait.get("op") == "bar.sync":
            need(wait, "id", int, w + ".wait")
        else:
            need(wait, "barrier", str, w + ".wait")
            if wait.get("parity") not in (0, 1):
                fail(w + ".wait.parity")
        it = need(s, "iterations", list, w)
        if len(it) != 2 or it[0] > it[1]:
            fail(w + ".iterations")
        if doc["protocol"]:
            for site in need(s, "protocol_waits", list, w):
                need(site, "ptx_line", int, w + ".protocol_waits")
    need(doc, "silent_roles", list, "")
    need(doc, "steps", list, "")
    bars = need(doc, "barriers", dict, "")
    need(bars, "replayed", bool, "barriers")
    need(bars, "states", list, "barriers")
    for e in need(doc, "wait_for", list, ""):
        if not 0 <= e["from"] < len(stuck):
            fail("wait_for.from out of range")
        if e["state"] not in ("stuck", "silent", "absent", "self"):
            fail("wait_for.state " + e["state"])
        if any(not 0 <= t < len(stuck) for t in e["to"]):
            fail("wait_for.to out of range")
        if (e["state"] == "stuck") != bool(e["to"]):
            fail("wait_for: 'to' given exactly for stuck peers")
    cycle = need(doc, "cycle", list, "")
    if "--cycle" in args:
        if len(cycle) < 2:
            fail("expected a cycle")
        # Each member waits on the next: there is a stuck edge between them.
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            if not any(e["from"] == a and b in e["to"] for e in doc["wait_for"]):
                fail(f"cycle edge {a} -> {b} is not a wait-for edge")
    if doc["protocol"]:
        d = need(doc, "diagnosis", dict, "")
        need(d, "class", str, "diagnosis")
        need(d, "evidence", list, "diagnosis")
        need(d, "fix", str, "diagnosis")
    print(f"explain ok: {len(stuck)} stuck, {len(doc['wait_for'])} edges, cycle {cycle}")


def perfetto(doc, args):
    events = need(doc, "traceEvents", list, "")
    named, used, flows = set(), set(), {}
    for i, e in enumerate(events):
        ph = need(e, "ph", str, f"traceEvents[{i}]")
        if ph not in ("X", "i", "s", "f", "M"):
            fail(f"traceEvents[{i}]: phase {ph}")
        need(e, "pid", int, f"traceEvents[{i}]")
        if ph == "M":
            if e["name"] == "thread_name":
                named.add((e["pid"], e["tid"]))
            continue
        need(e, "tid", int, f"traceEvents[{i}]")
        need(e, "ts", (int, float), f"traceEvents[{i}]")
        used.add((e["pid"], e["tid"]))
        if ph == "X" and need(e, "dur", (int, float), f"traceEvents[{i}]") < 0:
            fail(f"traceEvents[{i}]: negative duration")
        if ph in ("s", "f"):
            flows.setdefault(e["id"], []).append(ph)
    if used - named:
        fail(f"tracks without a name: {sorted(used - named)[:3]}")
    if any(sorted(v) != ["f", "s"] for v in flows.values()):
        fail("a flow without its start or end")
    want = int(args[args.index("--min-flows") + 1]) if "--min-flows" in args else 0
    if len(flows) < want:
        fail(f"{len(flows)} flows, expected at least {want}")
    print(f"perfetto ok: {len(events)} events, {len(named)} tracks, {len(flows)} flows")


kind, path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
(explain if kind == "explain" else perfetto)(json.load(open(path)), rest)
