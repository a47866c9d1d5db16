#!/usr/bin/env python3
"""Precision of `wsv lint` on the reference kernels, from the PTX manifest (kernels.json).

  - No error or warning finding on a correct kernel: its nvcc, clang and instrumented
    (.checked) builds.
  - Every bug variant (and its .checked build) is flagged by exactly its check: at least one
    error or warning of that check whose finding (or one of its notes) comes, through its
    CUDA .loc chain, from the variant's `// BUG(<check>): ...` mark or the statement right
    after it; no error or warning from any other check.
  - A variant whose check is not registered yet fails too, listed as such.
  - A variant in ELSEWHERE (its seeded change compiles to no instruction near the mark) must
    still be flagged by exactly its check; where is listed, and reporting it at the mark
    turns the row into a failure so that the list is kept short.

Prints a table (file, expected check, found checks, CUDA line of the match, verdict) and exits
1 when any row fails, 2 when the lint run itself failed (a file that does not parse).

  precision.py --wsv BUILD/bin/wsv --manifest BUILD/ptx/kernels.json --source-root SRC [-j N]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

MARK = re.compile(r"//\s*BUG\(([a-z0-9-]+)\)")
# `[static] [constexpr|const] Type name = ...` or `Type<...> name{...}`: group 1 the type's
# first word, group 2 the name.
DECLARATION = re.compile(
    r"\s*(?:(?:static|constexpr|const|auto)\s+)*([A-Za-z_][\w:]*)(?:<[^;=]*>)?\s+(\w+)\s*[={]")
# `name = value` (not ==, <=, >=, !=): a variable the seeded statement assigns.
ASSIGNMENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*=(?!=)")
KEYWORDS = {"if", "else", "for", "while", "do", "return", "switch", "case", "goto", "throw"}


def statement_end(lines, start):
    """Index of the last line of the statement that begins at lines[start]: the first line
    after which parentheses and braces are balanced and the line ends a statement (';' or a
    closing '}'). A preprocessor line (#pragma) on its own is part of what follows."""
    depth = 0
    for i in range(start, len(lines)):
        code = lines[i].split("//", 1)[0].rstrip()
        if code.lstrip().startswith("#"):
            continue
        for ch in code:
            if ch in "({[":
                depth += 1
            elif ch in ")}]":
                depth -= 1
        if depth <= 0 and (code.endswith(";") or code.endswith("}")):
            # `if (...) a(); else b();` is one statement: it goes on through the else branch.
            n = i + 1
            while n < len(lines) and (not lines[n].strip() or
                                      lines[n].strip().startswith(("//", "#"))):
                n += 1
            if n < len(lines) and re.match(r"else\b", lines[n].strip()):
                return statement_end(lines, n)
            return i
    return len(lines) - 1


def statement_around(lines, u):
    """1-based range of the statement that line u is part of (a call continued over several
    lines). For a loop header, its first body line too: a rotated loop's compare and branch
    carry the body's first line in .loc, and that is where the loop is reported."""
    start = u
    while start > 0:
        prev = lines[start - 1].split("//", 1)[0].rstrip()
        if not prev or prev.endswith((";", "{", "}")) or prev.lstrip().startswith("#"):
            break
        start -= 1
    head = lines[start].split("//", 1)[0].strip()
    if re.match(r"(for|while)\b", head):
        body = u + 1
        while body < len(lines) and (not lines[body].strip() or
                                     lines[body].strip().startswith(("//", "#"))):
            body += 1
        return (start + 1, min(body, len(lines) - 1) + 1)
    return (start + 1, statement_end(lines, u) + 1)


# Variants whose seeded change leaves no instruction of its own anywhere near the mark, so the
# right check can only report the first instruction that goes wrong: listed with the reason,
# shown in the table as `elsewhere`, and a failure again once they are reported at the mark.
ELSEWHERE = {
    "b6.bug-smem-raw-wait":
        "the peek is folded to true, so the wait it guards (b6_cutedsl_ws.cu:147) and every "
        "use of the peek compile to nothing; reported at the UMMA that reads the unwaited "
        "stage (154), with a note where its k-loop iteration begins",
}


def variant_name(ptx_file):
    """`b6.bug-smem-raw-wait` for b6.bug-smem-raw-wait.ptx and its .checked build."""
    name = os.path.basename(ptx_file)
    for suffix in (".ptx", ".checked"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    return name


def emitted_lines(ptx_path, source_path):
    """Lines of source_path that instructions of the PTX file come from (its `.loc` lines,
    inlined_at frames included); None when the PTX cannot be read."""
    try:
        with open(ptx_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    base = os.path.basename(source_path)
    files = {m.group(1) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', text, re.M)
             if os.path.basename(m.group(2)) == base}
    lines = set()
    for m in re.finditer(r"\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)", text):
        if m.group(1) in files:
            lines.add(int(m.group(2)))
        for fm in re.finditer(r"inlined_at\s+(\d+)\s+(\d+)", m.group(3)):
            if fm.group(1) in files:
                lines.add(int(fm.group(2)))
    return lines


def mark_ranges(source_path, check, emitted=None):
    """1-based inclusive line ranges of each `// BUG(check)` mark in the file: the mark, the
    comment lines continuing it, and the statement right after. `emitted` (emitted_lines of
    the variant's PTX) lets code that only the correct build has be placed at the next
    statement that still generates instructions in the variant."""
    with open(source_path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    ranges = []
    for i, line in enumerate(lines):
        m = MARK.search(line)
        if not m or m.group(1) != check:
            continue
        j = i + 1
        code_before = line.split("//", 1)[0].strip()
        if code_before:
            # A mark at the end of a code line is about that line.
            ranges.append((i + 1, i + 1))
            continue
        while j < len(lines) and (lines[j].strip().startswith("//") or not lines[j].strip()):
            j += 1
        end = statement_end(lines, j) if j < len(lines) else i
        ranges.append((i + 1, end + 1))
        # Code that only the correct build has (`if (!wsv_bug(...)) fence();`) generates
        # nothing in the variant: the first instruction where it is missing is the next
        # statement's.
        if "!wsv_bug(" in " ".join(lines[j:end + 1]):
            k = end + 1
            while k < len(lines):
                while k < len(lines) and (not lines[k].strip() or
                                          lines[k].strip().startswith(("//", "#", "}"))):
                    k += 1
                if k >= len(lines):
                    break
                stop = statement_end(lines, k)
                ranges.append((k + 1, stop + 1))
                # A statement the variant compiles to nothing (it only fed the removed code)
                # is no place for the missing instruction: go on to the next one.
                if emitted is None or any(k + 1 <= l <= stop + 1 for l in emitted):
                    break
                k = stop + 1
        # A seeded constant or variable (declared, or assigned under the mark: a counter
        # reset) has no instruction of its own: the PTX generated from it is where the kernel
        # uses it (a file-scope constant anywhere after it, a local until its block closes),
        # and where it uses what is computed from it (`buf = staging + slot * BYTES`).
        seeded = []
        decl = DECLARATION.match(lines[j])
        if decl and decl.group(1) not in KEYWORDS and decl.group(2) not in KEYWORDS:
            seeded.append((decl.group(2), end + 1))
        for k in range(j, end + 1):
            for name in ASSIGNMENT.findall(lines[k].split("//", 1)[0]):
                if name not in KEYWORDS and all(name != n for n, _ in seeded):
                    seeded.append((name, end + 1))
        ranges += use_ranges(lines, seeded)
    return ranges


def use_ranges(lines, seeded):
    """Ranges of the statements that use the seeded names, each from the line after it was
    set until its block closes; a declaration among them seeds its own name in turn."""
    ranges, seen = [], {n for n, _ in seeded}
    while seeded:
        name, start = seeded.pop()
        use = re.compile(r"\b%s\b" % re.escape(name))
        depth = 0
        for u in range(start, len(lines)):
            code = lines[u].split("//", 1)[0]
            if use.search(code):
                ranges.append(statement_around(lines, u))
                decl = DECLARATION.match(lines[u])
                if decl and decl.group(2) not in seen and decl.group(2) not in KEYWORDS:
                    seen.add(decl.group(2))
                    seeded.append((decl.group(2), u + 1))
            depth += code.count("{") - code.count("}")
            if depth < 0:
                break
    return ranges


def same_file(frame_file, source_abs, source_rel):
    if os.path.isabs(frame_file) and os.path.exists(frame_file):
        return os.path.realpath(frame_file) == os.path.realpath(source_abs)
    return frame_file.replace("\\", "/").endswith(source_rel)


def located_at_mark(finding, source_abs, source_rel, ranges):
    """The CUDA line of the finding (or of one of its notes) inside a mark range, with where
    it was found: ("finding" | "note", line), or None."""
    places = [("finding", finding)] + [("note", n) for n in finding.get("notes", [])]
    for where, place in places:
        for frame in place.get("cuda", []):
            if not same_file(frame["file"], source_abs, source_rel):
                continue
            if any(lo <= frame["line"] <= hi for lo, hi in ranges):
                return where, frame["line"]
    return None


def run_lint(wsv, paths, jobs):
    cmd = [wsv, "lint", "--format", "json"] + (["-j", str(jobs)] if jobs else []) + paths
    return subprocess.run(cmd, capture_output=True, text=True)


def lint_all(wsv, paths, jobs):
    """Findings and input statuses by file name, from one `wsv lint` over every file. When
    that run crashes, each file is linted alone, so the table names the files that crash."""
    by_file, status, crashed = {}, {}, {}
    run = run_lint(wsv, paths, jobs)
    if run.returncode in (0, 1, 2):
        docs = [json.loads(run.stdout)]
    else:
        print("wsv lint crashed (exit %d) on the whole set; linting each file alone"
              % run.returncode)
        docs = []
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs or os.cpu_count())) as pool:
            for path, one in zip(paths, pool.map(lambda p: run_lint(wsv, [p], 1), paths)):
                if one.returncode in (0, 1, 2):
                    docs.append(json.loads(one.stdout))
                else:
                    crashed[os.path.basename(path)] = "%d %s" % (
                        one.returncode, (one.stderr.strip().splitlines() or [""])[-1])
    for doc in docs:
        for finding in doc["findings"]:
            by_file.setdefault(os.path.basename(finding["file"]), []).append(finding)
        for i in doc["inputs"]:
            status[os.path.basename(i["file"])] = i["status"]
    for name, why in crashed.items():
        status[name] = "crashed (exit %s)" % why
    return by_file, status, crashed


def where(finding):
    """`ptx 212 = h2_producer_consumer.cu:66` for a failure message: the PTX line and the
    kernel's own CUDA line (the outermost frame's file, innermost line in it)."""
    chain = finding.get("cuda", [])
    text = "ptx %s" % finding["line"]
    if chain:
        outer = chain[-1]["file"]
        frame = next(f for f in chain if f["file"] == outer)
        text += " = %s:%d" % (os.path.basename(frame["file"]), frame["line"])
    return text


def registered_checks(wsv):
    out = subprocess.run([wsv, "lint", "--list-checks"], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("  ")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wsv", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=0)
    args = ap.parse_args()

    with open(args.manifest) as f:
        manifest = json.load(f)
    ptx_dir = os.path.dirname(os.path.abspath(args.manifest))
    registered = registered_checks(args.wsv)

    correct = []   # (file, kernel)
    variants = []  # (file, kernel, check, source)
    for k in manifest["kernels"]:
        for key in ("ptx", "checked_ptx", "clang_ptx"):
            if k.get(key):
                correct.append((k[key], k["name"]))
        for v in k.get("variants", []):
            for key in ("ptx", "checked_ptx"):
                if v.get(key):
                    variants.append((v[key], k["name"], v["bug"], k["source"]))
    files = [f for f, _ in correct] + [v[0] for v in variants]
    by_file, status, crashed = lint_all(args.wsv, [os.path.join(ptx_dir, f) for f in files],
                                        args.jobs)
    if by_file is None:
        return 2

    rows, failures = [], []
    for f, kernel in correct:
        bad = [x for x in by_file.get(f, []) if x["severity"] in ("error", "warning")]
        found = sorted({x["check"] for x in bad})
        ok = not bad and status.get(f) == "checked"
        line = ",".join(str(x["line"]) for x in bad[:3])
        rows.append((f, "-", ",".join(found) or "-", line or "-", "ok" if ok else "FAIL"))
        if not ok:
            failures.append("%s: a correct kernel, but %s" % (
                f, "; ".join("%s:%s: %s [%s]" % (x["severity"], x["line"], x["message"],
                                                   x["check"]) for x in bad)
                or "its status is %s" % status.get(f, "missing")))
    unregistered = set()
    elsewhere = []
    for f, kernel, check, source in variants:
        source_abs = os.path.join(args.source_root, source)
        ranges = mark_ranges(source_abs, check,
                             emitted_lines(os.path.join(ptx_dir, f), source_abs))
        bad = [x for x in by_file.get(f, []) if x["severity"] in ("error", "warning")]
        found = sorted({x["check"] for x in bad})
        hits = [located_at_mark(x, source_abs, source, ranges) for x in bad if x["check"] == check]
        hit = next((h for h in hits if h), None)
        why = None
        if check not in registered:
            unregistered.add(check)
        if os.path.getmtime(os.path.join(ptx_dir, f)) < os.path.getmtime(source_abs):
            # Marks are read from today's source: PTX from an older one has other lines.
            why = "the PTX is older than %s: build the wsv_ptx target" % source
        elif status.get(f) != "checked":
            why = "not checked: %s" % status.get(f, "missing from the report")
        elif check not in registered:
            why = "check '%s' is not registered" % check
        elif not ranges:
            why = "no '// BUG(%s)' mark in %s" % (check, source)
        elif check not in found:
            why = "'%s' reported nothing" % check
        elif not hit and variant_name(f) not in ELSEWHERE:
            why = "'%s' fired, but not at lines %s of %s (its findings: %s)" % (
                check, ",".join("%d-%d" % r for r in ranges), os.path.basename(source),
                ", ".join(where(x) for x in bad if x["check"] == check))
        elif hit and variant_name(f) in ELSEWHERE:
            why = "now reported at its mark: remove it from ELSEWHERE"
        if [c for c in found if c != check]:
            extra = "other checks fired: " + ", ".join(c for c in found if c != check)
            why = why + "; " + extra if why else extra
        line = "%s:%d%s" % (os.path.basename(source), hit[1],
                            " (note)" if hit[0] == "note" else "") if hit else "-"
        verdict = "FAIL" if why else "ok" if hit else "elsewhere"
        rows.append((f, check, ",".join(found) or "-", line, verdict))
        if why:
            failures.append("%s: %s" % (f, why))
        elif not hit:
            elsewhere.append("%s: %s (%s)" % (f, ELSEWHERE[variant_name(f)],
                                              ", ".join(where(x) for x in bad)))

    widths = [max(len(r[i]) for r in rows + [("file", "expected", "found", "line", "")])
              for i in range(5)]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    print(fmt % ("file", "expected", "found", "line", "verdict"))
    for r in rows:
        print(fmt % r)
    print()
    print("%d files: %d correct builds, %d variant builds; %d failed" % (
        len(rows), len(correct), len(variants), len(failures)))
    if unregistered:
        print("checks not registered yet (%d): %s" % (len(unregistered),
                                                       " ".join(sorted(unregistered))))
    for f in elsewhere:
        print("elsewhere " + f)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
