#!/usr/bin/env python3
"""Prints the short tables of a device run from the wsv-run/1 JSON files device-run.sh wrote:
checks per kernel, every seeded variant against the failure its bug predicts, and benchmarks."""
import glob
import json
import os
import sys

# What each seeded bug must do on hardware: "hang" (a wait that never completes, captured under
# --check) or "wrong" (the kernel finishes with wrong elements). "fault" accepts a launch error.
PREDICTED = {
    "mbarrier-init-visibility": "hang",
    "mbarrier-tx-bytes": "hang",
    "smem-raw-wait": "wrong",
    "aligned-divergent": "hang",
    "mbarrier-initial-phase": "hang",
    "mbarrier-trip-count": "hang",
    "mbarrier-no-arriver": "hang",
    "barrier-divergent": "hang",
    "accumulator-early-read": "wrong",
    "mbarrier-arrival-count": "hang",
    "smem-war-release": "wrong",
    "setmaxnreg-nonuniform": "hang",
    "cluster-multicast-mask": "fault",
    "cluster-exit-early": "fault",
    "mbarrier-phase-skip": "wrong",
    "proxy-fence-missing": "wrong",
    "bulk-store-reuse": "wrong",
    "named-barrier-count": "hang",
    "named-barrier-id-collision": "wrong",
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cases(doc):
    for job in (doc or {}).get("jobs", []):
        if job.get("error"):
            yield {"result": "skipped" if job.get("skipped") else "error",
                   "message": job["error"]}
        for c in job.get("cases", []):
            yield c


def first_line(text):
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def main(out):
    print("\n== checks")
    print(f"{'file':<26} {'pass':>5} {'of':>4}  {'worst rel.err':>13}  failures")
    for path in sorted(glob.glob(os.path.join(out, "check-*.json")) +
                       glob.glob(os.path.join(out, "clang-*.json"))):
        cs = list(cases(load(path)))
        ok = [c for c in cs if c.get("result") == "pass"]
        worst = max((c.get("comparison", {}).get("rel_frobenius", 0) for c in ok), default=0)
        bad = [f"{c.get('m')}x{c.get('n')}x{c.get('k')} {c.get('dtype')}: {c.get('result')} "
               f"{first_line(c.get('message'))}" for c in cs if c.get("result") != "pass"]
        name = os.path.basename(path)[:-5]
        print(f"{name:<26} {len(ok):>5} {len(cs):>4}  {worst:>13.2e}  {'; '.join(bad)[:150]}")

    print("\n== seeded bugs (--check)")
    print(f"{'kernel':<6} {'bug':<36} {'predicted':<9} {'outcome':<18} {'as pr':<5} detail")
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "bug-*.json"))):
        name = os.path.basename(path)[4:-5]
        kernel, bug = name.split("-", 1)
        tag = ""
        for suffix in ("-plain", "-stress", "-small"):
            if bug.endswith(suffix):
                bug, tag = bug[: -len(suffix)], suffix[1:]
        row = tag if tag in ("plain", "small") else ""
        runs.setdefault((kernel, bug, row), []).append((tag, list(cases(load(path)))))
    for (kernel, bug, row), attempts in sorted(runs.items()):
        # The default sizes first, then the stress run if the default passed.
        attempts.sort(key=lambda a: a[0] == "stress")
        outcome, detail, where = "no result", "", ""
        for tag, cs in attempts:
            failing = [c for c in cs if c.get("result") not in ("pass", "not-run")]
            if failing:
                c = failing[0]
                outcome = c["result"]
                detail = first_line(c.get("hang")) or first_line(c.get("message"))
                detail = f"{c.get('m')}x{c.get('n')}x{c.get('k')}: {detail}"
                where = tag
                break
            if cs:
                outcome = f"pass ({len(cs)})" if not tag else f"pass (+{len(cs)} stress)"
        pred = PREDICTED.get(bug, "?")
        # A fault is undefined behaviour: any failure shows it.
        match = outcome == pred or (pred == "fault" and outcome in ("launch-error", "hang", "wrong"))
        label = bug + {"plain": " (no --check)", "small": " (one k-tile)"}.get(row, "") + \
            (" [stress]" if where == "stress" else "")
        print(f"{kernel:<6} {label:<36} {pred:<9} {outcome:<18} {'yes' if match else 'NO':<5} "
              f"{detail[:100]}")

    print("\n== bench (median TFLOP/s)")
    print(f"{'file':<22} {'dtype':<5} {'size':>5} {'kernel':>8} {'cuBLAS':>8} {'ratio':>6} "
          f"{'checked':>8} {'check%':>7} {'spread':>7} {'ctas':>5} verified")
    for path in sorted(glob.glob(os.path.join(out, "bench-*.json")) +
                       glob.glob(os.path.join(out, "sweep-*.json")) +
                       glob.glob(os.path.join(out, "tune-*.json"))):
        doc = load(path)
        for job in (doc or {}).get("jobs", []):
            if job.get("error"):
                print(f"{os.path.basename(path)[:-5]:<22} error: {job['error'][:100]}")
            for b in job.get("bench", []):
                chk = f"{b['checked_ms'] and 2 * b['size']**3 / b['checked_ms'] / 1e9:8.1f}" \
                    if b.get("checked_ms") else f"{'-':>8}"
                pct = f"{b['check_overhead_pct']:+6.2f}%" if b.get("checked_ms") else f"{'-':>7}"
                ver = "pass" if b.get("verified_pass") else ("FAIL" if b.get("verified") else "no")
                print(f"{os.path.basename(path)[:-5]:<22} {b['dtype']:<5} {b['size']:>5} "
                      f"{b['kernel_tflops']:8.1f} {b['cublas_tflops']:8.1f} {b['ratio']:6.3f} "
                      f"{chk} {pct} {b['spread_pct']:6.1f}% {b.get('grid_ctas', 0):>5} {ver}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
