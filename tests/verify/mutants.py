#!/usr/bin/env python3
"""Mutants of the correct reference kernels' PTX: each drops or changes one synchronization
instruction, and `wsv verify --require-proof` must not pass it (exit 0: every property proved, no lint
error).

A mutant that passes is a hole in the analysis, unless it is one of the known ones listed in
mutants-expected.txt with the reason it passes (the instruction was not needed there, such as
the release of a non-persistent kernel's last stage, or a rule wsv does not model yet). The
test fails on a mutant that passes and is not listed; a listed one that no longer passes is
reported, so that the list shrinks as the analysis learns.

A mutant is named `<kernel> <operator> <instruction> @<source line>`, the source line being
the CUDA line of the instruction's `.loc`: PTX line numbers move with every change of a kernel.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

KERNELS = ["h1", "h2", "h3", "h4", "h5", "b1", "b2", "b3", "b4", "b5", "b6"]

# Instructions whose removal changes who waits for whom.
DELETABLE = re.compile(
    r"^\s*(@!?%\w+\s+)?(mbarrier\.arrive|mbarrier\.init|fence\.|cp\.async\.bulk\.wait_group|"
    r"cp\.async\.bulk\.commit_group|wgmma\.wait_group|wgmma\.commit_group|bar\.sync|"
    r"barrier\.sync|bar\.arrive|barrier\.cluster\.(arrive|wait)|tcgen05\.commit|tcgen05\.wait|"
    r"tcgen05\.fence)")


def entry_range(lines, kernel):
    start = next(i for i, l in enumerate(lines)
                 if re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(", l))
    end = next((i for i in range(start + 1, len(lines)) if re.search(r"\.entry\s", lines[i])),
               len(lines))
    return start, end


def source_lines(lines):
    """The CUDA source of each PTX line: the `.loc` lines right before it, outermost first
    (`h5_persistent.cu:213>ptx_sync.cuh:190`), as nvcc writes an inlined call's chain."""
    files = {}
    for l in lines:
        m = re.match(r'\s*\.file\s+(\d+)\s+"([^"]+)"', l)
        if m:
            files[m.group(1)] = os.path.basename(m.group(2))
    out, chain, in_group = [], [], False
    for l in lines:
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", l)
        if m:
            if not in_group:
                chain = []
            chain.append("%s:%s" % (files.get(m.group(1), m.group(1)), m.group(2)))
            in_group = True
        elif l.strip() and not l.strip().startswith("//"):
            in_group = False
        out.append(">".join(chain) or "?")
    return out


def replace_number(line, match, value):
    return line[:match.start(2)] + str(value) + line[match.end(2):]


# The operators, by group (`--operators`, all by default): `sync` drops or changes a
# synchronization instruction; `parity` replaces a parity wait's operand by the immediate 0
# and 1; `named-id` moves a named barrier to id 15. The last two mostly make deadlocks and
# collisions; what they make that passes is mostly equivalent to the kernel (a wait whose
# register holds that constant on every run, a barrier every participant reaches at that
# instruction under any unused id), listed with the reason in mutants-expected.txt.
OPERATORS = ("sync", "parity", "named-id")
PARITY_WAIT = re.compile(r"^(\s*(?:@!?%\w+\s+)?mbarrier\.(?:try|test)_wait\.parity\S*\s+"
                         r"[^,]+,\s*\[[^\]]+\],\s*)([^,;\s]+)")
NAMED_BARRIER = re.compile(r"^(\s*(?:@!?%\w+\s+)?(?:bar|barrier)\.(?:sync|arrive)\S*\s+)"
                           r"([^,;\s]+)")


def group(op):
    """The operator group of a mutant's operator name."""
    return "parity" if op.startswith("parity=") else "named-id" if op.startswith("id=") else "sync"


def mutants(lines, start, end, operators=OPERATORS):
    """(line index, operator, replacement or None to delete)."""
    for i in range(start, end):
        line = lines[i]
        if not line.strip() or line.strip().startswith("//"):
            continue
        if "parity" in operators:
            m = PARITY_WAIT.match(line)
            if m:
                for value in ("0", "1"):
                    if m.group(2) != value:
                        yield i, "parity=" + value, line[:m.start(2)] + value + line[m.end(2):]
        if "named-id" in operators:
            m = NAMED_BARRIER.match(line)
            if m and m.group(2) != "15":
                yield i, "id=15", line[:m.start(2)] + "15" + line[m.end(2):]
        if "sync" not in operators:
            continue
        if DELETABLE.match(line):
            yield i, "delete", None
        m = re.search(r"(mbarrier\.init\S*\s+\[[^\]]+\],\s*)(\d+)", line)
        if m:
            n = int(m.group(2))
            yield i, "init+1", replace_number(line, m, n + 1)
            if n > 1:
                yield i, "init-1", replace_number(line, m, n - 1)
        m = re.search(r"(expect_tx\S*\s+\S+,\s*\[[^\]]+\],\s*)(\d+)", line)
        if m:
            n = int(m.group(2))
            yield i, "tx/2", replace_number(line, m, n // 2)
            yield i, "tx*2", replace_number(line, m, n * 2)
        m = re.search(r"((?:wgmma|cp\.async\.bulk)\.wait_group\S*\s+)(\d+)", line)
        if m:
            yield i, "wait+1", replace_number(line, m, int(m.group(2)) + 1)
        # The branch back of a spin loop on try_wait: the wait passes at once.
        m = re.match(r"^\s*@!?%\w+\s+bra(\.uni)?\s+\S+;", line)
        if m and any("try_wait" in lines[j] or "test_wait" in lines[j]
                     for j in range(max(start, i - 6), i)):
            yield i, "nospin", None


def verify(wsv, path, kernel):
    """`wsv verify --require-proof`'s exit status, or 1 where `wsv lint` finds an error first:
    verify reports every lint finding and fails on an error one whatever its proofs say
    (VerifyTest and lit's verify tests hold it to that), and most mutants are such errors,
    found by lint in a tenth of the time a proof of H5 takes."""
    try:
        lint = subprocess.run([wsv, "lint", "--kernel", kernel, path], capture_output=True,
                              text=True, timeout=300)
        if lint.returncode == 1:
            return 1
        r = subprocess.run([wsv, "verify", "--require-proof", "--kernel", kernel, path],
                           capture_output=True, text=True, timeout=300)
        return r.returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--ptx-dir", required=True)
    ap.add_argument("--expected", required=True, help="mutants-expected.txt")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--operators", default=",".join(OPERATORS),
                    help="comma-separated, of %s (default: all)" % ", ".join(OPERATORS))
    ap.add_argument("kernels", nargs="*", default=KERNELS)
    a = ap.parse_args()
    operators = a.operators.split(",")
    if any(o not in OPERATORS for o in operators):
        ap.error("--operators takes %s" % ", ".join(OPERATORS))

    expected = set()
    for l in open(a.expected):
        l = l.split("#", 1)[0].strip()
        if l:
            expected.add(" ".join(l.split()))

    work = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in a.kernels:
            path = os.path.join(a.ptx_dir, k + ".ptx")
            lines = open(path).read().split("\n")
            entry = k + "_bf16"
            start, end = entry_range(lines, entry)
            src = source_lines(lines)
            for n, (i, op, repl) in enumerate(mutants(lines, start, end, operators)):
                out = list(lines)
                out[i] = "" if repl is None else repl
                mpath = os.path.join(tmp, "%s.%d.ptx" % (k, n))
                with open(mpath, "w") as f:
                    f.write("\n".join(out))
                name = " ".join(("%s %s %s @%s" % (k, op, lines[i].strip(), src[i])).split())
                work.append((k, name, mpath, entry))
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            codes = list(pool.map(lambda w: verify(a.wsv, w[2], w[3]), work))

    passed = {}
    per_kernel = {}
    for (k, name, _, _), rc in zip(work, codes):
        t = per_kernel.setdefault(k, [0, 0, 0])
        t[0] += 1
        if rc == 0:
            t[1] += 1
            passed[name] = True
        if rc == "timeout":
            t[2] += 1
    unexpected = sorted(n for n in passed if n not in expected)
    # Names of kernels and operator groups this run made (a run of a few says nothing of
    # the others).
    gone = sorted(n for n in expected if n not in passed and n.split()[0] in a.kernels and
                  group(n.split()[1]) in operators)
    print("%-6s %8s %8s %8s" % ("kernel", "mutants", "pass", "timeout"))
    for k in a.kernels:
        t = per_kernel.get(k, [0, 0, 0])
        print("%-6s %8d %8d %8d" % (k, t[0], t[1], t[2]))
    print("%d mutants, %d pass wsv verify (%d names, %d of them listed as known), %d timeouts" %
          (len(work), sum(1 for c in codes if c == 0), len(passed),
           len(passed) - len(unexpected), sum(1 for c in codes if c == "timeout")))
    for n in gone:
        print("no longer passes (remove it from %s): %s" % (os.path.basename(a.expected), n))
    for n in unexpected:
        print("FAIL: passes wsv verify, not a known case: %s" % n)
    # A timeout is no verdict: it must not hide a hole either.
    timeouts = [w[1] for w, c in zip(work, codes) if c == "timeout"]
    for n in timeouts:
        print("FAIL: timed out: %s" % n)
    return 1 if unexpected or timeouts else 0


if __name__ == "__main__":
    sys.exit(main())
