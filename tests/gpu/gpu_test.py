#!/usr/bin/env python3
"""GPU tests of `wsv run`; exit 77 (skipped) on a machine without an NVIDIA GPU.

  check    every Hopper kernel passes its default checks, bf16 and fp16 (exit code 0)
  checked  the same with --check (the instrumented builds)
  hang     h2's mbarrier-initial-phase variant hangs, and --check captures both roles' waits in a
           wsv-trace/1 file (exit code 1)
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77


def have_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def run(wsv, args):
    p = subprocess.run([wsv, "run", *args, "--format", "json"], capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        print(f"wsv run {' '.join(args)}: exit code {p.returncode}, no JSON report")
        sys.exit(1)


def main():
    mode, wsv, traces = sys.argv[1], sys.argv[2], sys.argv[3]
    if not have_gpu():
        print("no NVIDIA GPU: skipped")
        return SKIP
    os.makedirs(traces, exist_ok=True)
    if mode in ("check", "checked"):
        args = ["all"] + (["--check"] if mode == "checked" else [])
        rc, doc = run(wsv, args + ["--trace-dir", traces])
        ran = [c for j in doc["jobs"] for c in j["cases"]]
        skipped = [j for j in doc["jobs"] if j.get("skipped")]
        if not any(j["device"]["sm"] == 90 for j in doc["jobs"]):
            print("not a Hopper GPU: skipped")
            return SKIP
        failed = [c for c in ran if c["result"] != "pass"]
        for c in failed:
            print(f"FAIL {c['kernel']} {c['m']}x{c['n']}x{c['k']} {c['dtype']}: {c['result']} "
                  f"{c['message']}")
        print(f"{len(ran) - len(failed)} of {len(ran)} checks passed, {len(skipped)} kernels "
              "skipped (another architecture)")
        return 0 if rc == 0 and not failed and ran else 1
    if mode == "hang":
        rc, doc = run(wsv, ["h2", "--bug", "mbarrier-initial-phase", "--check", "--dtype", "bf16",
                            "--shape", "384x640x576", "--timeout-ms", "500",
                            "--trace-dir", traces])
        case = doc["jobs"][0]["cases"][0]
        trace = json.load(open(case["trace"])) if case.get("trace") else {}
        waits = {(s["role"], s["wait"].get("barrier"), s["wait"].get("parity"))
                 for s in trace.get("stuck", [])}
        ok = (rc == 1 and case["result"] == "hang" and trace.get("schema") == "wsv-trace/1"
              and ("producer", "empty", 0) in waits and ("consumer", "full", 0) in waits)
        print(case["message"])
        print(case["hang"])
        return 0 if ok else 1
    print(f"unknown mode {mode}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
