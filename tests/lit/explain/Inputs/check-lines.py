"""Checks `wsv explain --format json` against the PTX it names: every PTX line the explanation
gives for a wait holds that kind of wait, and every line it gives for a completion holds an
instruction that arrives on or completes an mbarrier (or reaches the named barrier).

usage: check-lines.py EXPLAIN.json PTX [--min-waits N]
"""
import json
import sys

WAITS = ("mbarrier.try_wait", "mbarrier.test_wait")
NAMED = ("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "bar.red")
COMPLETIONS = ("mbarrier.arrive", "mbarrier.complete_tx", "cp.async.bulk", "tcgen05.commit",
               "cp.async.mbarrier.arrive", "clusterlaunchcontrol.try_cancel")


def main():
    doc = json.load(open(sys.argv[1]))
    lines = open(sys.argv[2]).read().split("\n")
    min_waits = int(sys.argv[sys.argv.index("--min-waits") + 1]) if "--min-waits" in sys.argv else 1
    problems, waits = [], 0

    def holds(line, words, what):
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if not any(w in text for w in words):
            problems.append(f"ptx line {line} is not {what}: {text.strip()!r}")

    for group in doc["stuck"]:
        named = group["wait"]["op"] == "bar.sync"
        for w in group.get("protocol_waits", []):
            waits += 1
            holds(w["ptx_line"], NAMED if named else WAITS, "a named barrier" if named else "a wait")
    for edge in doc["wait_for"]:
        named = doc["stuck"][edge["from"]]["wait"]["op"] == "bar.sync"
        for c in edge["completions"]:
            holds(c["ptx_line"], NAMED if named else COMPLETIONS,
                  "a named barrier" if named else "an arrival or completion")
    if waits < min_waits:
        problems.append(f"{waits} protocol waits matched, expected at least {min_waits}")
    for p in problems:
        print(p)
    print(f"checked {waits} waits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
