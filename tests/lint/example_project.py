#!/usr/bin/env python3
"""examples/lint-project built with this wsv, as a user's CI would: the correct kernel builds
(its lint passes) and writes SARIF with no error result; with -DSEED_BUG=ON the build fails on
the mbarrier-initial-phase finding, the build log names it at the kernel's line, and the SARIF
carries it (and no error from another check). Then wsv_lint_ptx's other forms
(tests/lint/cmake-modes): TARGET of an executable as a ctest, PTX from a custom command.

  example_project.py --wsv BIN --source-root SRC --build-dir DIR [--cmake CMAKE] [--nvcc NVCC]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

EXPECTED = "mbarrier-initial-phase"


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def sarif_errors(path):
    with open(path) as f:
        doc = json.load(f)
    return [(r["ruleId"], r["level"]) for r in doc["runs"][0]["results"]
            if r["level"] in ("error", "warning")]


def other_forms(args):
    """tests/lint/cmake-modes: TARGET of an executable as a ctest, PTX from a custom command."""
    failures = []
    src = os.path.join(args.source_root, "tests", "lint", "cmake-modes")
    build = args.build_dir + "-modes"
    shutil.rmtree(build, ignore_errors=True)
    cmd = [args.cmake, "-S", src, "-B", build, "-G", "Ninja", "-DWSV_DIR=" + args.source_root,
           "-DWSV_EXECUTABLE=" + args.wsv]
    if args.nvcc:
        cmd.append("-DCMAKE_CUDA_COMPILER=" + args.nvcc)
    r = run(cmd)
    if r.returncode:
        return ["cmake-modes does not configure: " + (r.stdout + r.stderr)[-2000:]]
    r = run([args.cmake, "--build", build])
    if r.returncode:
        failures.append("cmake-modes: the build (PTX form, clean kernel) failed:\n"
                        + (r.stdout + r.stderr)[-2000:])
    if "wsv lint custom_lint" not in r.stdout:
        failures.append("cmake-modes: the PTX form did not lint during the build")
    ctest = os.path.join(os.path.dirname(args.cmake), "ctest")
    r = run([ctest if os.path.exists(ctest) else "ctest", "--output-on-failure"], cwd=build)
    if r.returncode == 0:
        failures.append("cmake-modes: the TARGET form's ctest passed on the seeded bug")
    if "[%s]" % EXPECTED not in r.stdout:
        failures.append("cmake-modes: the ctest output lacks the %s finding" % EXPECTED)
    report = os.path.join(build, "app.json")
    if not os.path.exists(report):
        failures.append("cmake-modes: no JSON report from the TARGET form")
    else:
        with open(report) as f:
            checks = [x["check"] for x in json.load(f)["findings"] if x["severity"] == "error"]
        if checks != [EXPECTED]:
            failures.append("cmake-modes: JSON report has %s" % checks)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--nvcc", default="")
    args = ap.parse_args()

    project = os.path.join(args.source_root, "examples", "lint-project")
    build = args.build_dir
    shutil.rmtree(build, ignore_errors=True)
    sarif = os.path.join(build, "wsv-lint.sarif")
    configure = [args.cmake, "-S", project, "-B", build, "-G", "Ninja",
                 "-DWSV_DIR=" + args.source_root, "-DWSV_EXECUTABLE=" + args.wsv]
    if args.nvcc:
        configure.append("-DCMAKE_CUDA_COMPILER=" + args.nvcc)
    failures = []

    r = run(configure + ["-DSEED_BUG=OFF"])
    if r.returncode:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        return 1
    r = run([args.cmake, "--build", build])
    print(r.stdout[-2000:])
    if r.returncode:
        failures.append("the correct kernel's build failed (exit %d)" % r.returncode)
    if not os.path.exists(sarif):
        failures.append("the correct build wrote no SARIF")
    elif sarif_errors(sarif):
        failures.append("the correct kernel's SARIF has findings: %s" % sarif_errors(sarif))

    os.remove(sarif) if os.path.exists(sarif) else None
    r = run(configure + ["-DSEED_BUG=ON"])
    if r.returncode:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        return 1
    r = run([args.cmake, "--build", build])
    log = r.stdout + r.stderr
    print(log[-3000:])
    if r.returncode == 0:
        failures.append("the build with the seeded bug passed")
    if "ring_sum.cu:" not in log or "[%s]" % EXPECTED not in log:
        failures.append("the build log does not show the %s finding with its CUDA line"
                        % EXPECTED)
    if not os.path.exists(sarif):
        failures.append("the failing build wrote no SARIF")
    else:
        found = sarif_errors(sarif)
        if (EXPECTED, "error") not in found:
            failures.append("SARIF lacks the %s error: %s" % (EXPECTED, found))
        others = [f for f in found if f[0] != EXPECTED]
        if others:
            failures.append("SARIF has other findings: %s" % others)
    # A failing lint keeps failing: the next build runs it again.
    r = run([args.cmake, "--build", build])
    if r.returncode == 0:
        failures.append("a second build after the failing lint passed")

    failures += other_forms(args)
    for f in failures:
        print("FAIL " + f)
    print("example project: %s" % ("FAILED" if failures else "clean build passes, seeded bug "
                                    "fails with [%s], SARIF written" % EXPECTED))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
