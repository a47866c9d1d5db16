#!/usr/bin/env python3
"""Checks that wsv's PTX printer loses nothing that matters to the machine code.

For every PTX file given (or every *.ptx in a folder given):
  1. print it:         printed = printer(original)            (default: wsv parse --emit FILE)
  2. assemble the original and the printed text with ptxas for the file's own .target
  3. compare the two cubins with llvm-readelf (ELF header, section list, symbols) and
     llvm-objcopy --dump-section (the bytes of every section, code sections first)
  4. print the print:  printer(printed) must equal printed, text for text

One verdict line per file, a summary line, and exit status 0 when every file passed, 1 when any
failed, 2 for bad usage or a missing tool. The printer is a command so that the script can be
exercised before (or without) wsv: `--printer cat` must pass on any PTX ptxas accepts, and a
printer that alters one instruction must fail.
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Sections whose contents may differ although the machine code is the same; everything else
# must match byte for byte. With -lineinfo ptxas stores the PTX it read, comments and layout
# included, in .nv_debug_ptx_txt, and a table from SASS addresses to line numbers of that text
# in .nv_debug_line_sass; a printer may lay the text out anew, so both change, and so do the
# relocations that point into the line table (.rel/.rela.nv_debug_line_sass). sm_100 cubins carry
# the same tables again for the Mercury encoding (.nv.merc.*). The list was found by assembling
# PTX from nvcc, clang and Triton (sm_80, sm_90a, sm_100a) next to a copy with comments removed
# and lines moved: only these sections changed.
TEXT_DEPENDENT_RE = re.compile(r"^(\.nv\.merc)?(\.rela?)?\.nv_debug_(ptx_txt|line_sass)$")

# In a relocatable object (ptxas --compile-only) the PTX copy's section is named after a hash of
# the text, `.nv_debug_ptx_txt.<number>`; names are compared with that number taken off.
PTX_COPY_NAME_RE = re.compile(r"^(.*nv_debug_ptx_txt)\.[0-9]+$")

# The string tables are compared through what they name: the section list and the symbols,
# with the PTX copy's hash taken off. Their bytes hold that hash in relocatable objects.
STRING_TABLES = (".shstrtab", ".strtab")

# CUDA section types for memory that is allocated at load time, like SHT_NOBITS: .nv.global is
# 0x70000007 and .nv_debug.shared 0x7000000a. Such sections have a size but no bytes in the file
# (their offset points at whatever follows), so only their attributes are compared.
CUDA_NOBITS_TYPES = (0x70000007, 0x7000000A)

TARGET_RE = re.compile(r"^\s*\.target\s+(sm_[0-9]+[a-z]?)\b", re.MULTILINE)
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


class RoundTripError(Exception):
    """A verdict other than PASS for one file; the message is the verdict's reason."""


def read_target(text):
    """The sm_XX[a|f] of the first .target directive outside comments."""
    match = TARGET_RE.search(COMMENT_RE.sub("", text))
    if not match:
        raise RoundTripError("no .target directive")
    return match.group(1)


def first_line(text, limit=160):
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[:limit] + "..."
    return "(no output)"


def run(cmd):
    return subprocess.run(cmd, capture_output=True)


class Tools:
    def __init__(self, args):
        self.printer = args.printer_cmd
        self.ptxas = args.ptxas
        self.objcopy = args.llvm_objcopy
        self.readelf = args.llvm_readelf
        self.ptxas_options = ["-lineinfo"] + (args.ptxas_option or [])

    def print_ptx(self, src, dst):
        """Runs the printer on src and stores its standard output in dst."""
        if any("{}" in part for part in self.printer):
            cmd = [part.replace("{}", str(src)) for part in self.printer]
        else:
            cmd = self.printer + [str(src)]
        result = run(cmd)
        if result.returncode != 0:
            raise RoundTripError("printer failed on %s (exit %d): %s"
                                 % (src.name, result.returncode,
                                    first_line(result.stderr.decode(errors="replace"))))
        dst.write_bytes(result.stdout)

    def assemble(self, src, target, dst, what, relocatable):
        """Returns the seconds ptxas took.

        Executables are what a driver loads, so they are the default: in a relocatable object
        (--compile-only) ptxas drops setmaxnreg "to maintain compatibility across compilation
        units", and a printer that broke it would go unnoticed. Relocatable objects are only
        for files whose extern symbols an executable cannot resolve."""
        start = time.monotonic()
        mode = ["--compile-only"] if relocatable else []
        result = run([self.ptxas, *self.ptxas_options, *mode, "--gpu-name=" + target, str(src),
                      "-o", str(dst)])
        seconds = time.monotonic() - start
        if result.returncode != 0:
            raise RoundTripError("ptxas rejected the %s: %s"
                                 % (what, first_line(result.stderr.decode(errors="replace"))))
        return seconds

    def assemble_original(self, src, target, dst):
        """Returns (seconds, relocatable) for the original file."""
        try:
            return self.assemble(src, target, dst, "original", False), False
        except RoundTripError as err:
            if "Unresolved extern" not in str(err):
                raise
        return self.assemble(src, target, dst, "original", True), True

    def describe(self, cubin):
        """ELF header, sections and symbols of a cubin, from llvm-readelf's JSON output."""
        result = run([self.readelf, "--elf-output-style=JSON", "--file-header", "--sections",
                      "--symbols", str(cubin)])
        if result.returncode != 0:
            raise RoundTripError("llvm-readelf failed on %s: %s"
                                 % (cubin.name, first_line(result.stderr.decode())))
        return json.loads(result.stdout)[0]

    def dump_sections(self, cubin, sections, folder):
        """The bytes of the given sections (rows of section_rows), keyed by name.

        llvm-objcopy --dump-section extracts them in one call. It refuses a cubin whose
        .nv.global section claims more bytes than the file has (see CUDA_NOBITS_TYPES); for
        those files the bytes are read at the offsets llvm-readelf gave."""
        folder.mkdir()
        cmd = [self.objcopy]
        for index, section in enumerate(sections):
            cmd += ["--dump-section", "%s=%s" % (section["raw_name"], folder / str(index))]
        cmd += [str(cubin), str(folder / "objcopy-output")]
        result = run(cmd)
        if result.returncode == 0:
            return {s["name"]: (folder / str(i)).read_bytes() for i, s in enumerate(sections)}
        if b"greater than the file size" not in result.stderr:
            raise RoundTripError("llvm-objcopy failed on %s: %s"
                                 % (cubin.name, first_line(result.stderr.decode())))
        data = cubin.read_bytes()
        return {s["name"]: data[s["offset"]:s["offset"] + s["size"]] for s in sections}


def text_dependent(name):
    return TEXT_DEPENDENT_RE.match(name) is not None


def canonical_name(name):
    return PTX_COPY_NAME_RE.sub(r"\1", name)


def section_rows(elf):
    rows = []
    for entry in elf["Sections"]:
        s = entry["Section"]
        rows.append({"name": canonical_name(s["Name"]["Name"]), "type": s["Type"]["Name"],
                     "type_value": s["Type"]["Value"],
                     "flags": s["Flags"]["Value"], "size": s["Size"], "link": s["Link"],
                     "info": s["Info"], "align": s["AddressAlignment"],
                     "entsize": s["EntrySize"], "raw_name": s["Name"]["Name"],
                     "offset": s["Offset"]})
    return rows


def symbol_rows(elf):
    rows = []
    for entry in elf.get("Symbols", []):
        s = entry["Symbol"]
        rows.append((canonical_name(s["Name"]["Name"]), s["Value"], s["Size"],
                     s["Binding"]["Name"], s["Type"]["Name"], s["Other"]["Value"],
                     canonical_name(s["Section"]["Name"])))
    return rows


def header_fields(elf):
    h = elf["ElfHeader"]
    # Offsets and counts follow from the section list, which is compared on its own.
    return {"type": h["Type"], "machine": h["Machine"]["Value"], "flags": h["Flags"]["Value"],
            "os_abi": h["Ident"]["OS/ABI"], "abi_version": h["Ident"]["ABIVersion"]}


def has_file_bytes(section):
    return (section["type"] not in ("SHT_NULL", "SHT_NOBITS")
            and section["type_value"] not in CUDA_NOBITS_TYPES)


def compare_section_names(original, printed):
    if [s["name"] for s in original] != [s["name"] for s in printed]:
        only_o = [s["name"] for s in original if s["name"] not in {p["name"] for p in printed}]
        only_p = [s["name"] for s in printed if s["name"] not in {o["name"] for o in original}]
        raise RoundTripError("section lists differ (only in original: %s; only in printed: %s)"
                             % (", ".join(only_o) or "none", ", ".join(only_p) or "none"))


def compare_section_attributes(original, printed):
    """Type, flags, size, links and alignment; the text-dependent sections may differ in size."""
    for o, p in zip(original, printed):
        keys = [k for k in o if k not in ("raw_name", "offset")
                and not (k == "size" and text_dependent(o["name"]))
                and not (k == "size" and o["name"] in STRING_TABLES)]
        for key in keys:
            if o[key] != p[key]:
                raise RoundTripError("section %s: %s %s in original, %s in printed"
                                     % (o["name"], key, o[key], p[key]))


def first_difference(a, b):
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def compare_cubins(tools, original, printed, workdir):
    """Returns (code sections, code bytes, other sections compared) or raises on a mismatch."""
    elf_o, elf_p = tools.describe(original), tools.describe(printed)
    header_o, header_p = header_fields(elf_o), header_fields(elf_p)
    for key in header_o:
        if header_o[key] != header_p[key]:
            raise RoundTripError("ELF header %s: %s in original, %s in printed"
                                 % (key, header_o[key], header_p[key]))
    sections_o, sections_p = section_rows(elf_o), section_rows(elf_p)
    compare_section_names(sections_o, sections_p)

    def with_bytes(rows):
        chosen = [s for s in rows if has_file_bytes(s) and s["size"] > 0
                  and not text_dependent(s["name"]) and s["name"] not in STRING_TABLES]
        # Code first, so that a difference in code is the one reported.
        return sorted(chosen, key=lambda s: not s["name"].startswith(".text."))

    chosen_o = with_bytes(sections_o)
    names = [s["name"] for s in chosen_o]
    bytes_o = tools.dump_sections(original, chosen_o, workdir / "sections-original")
    bytes_p = tools.dump_sections(printed, with_bytes(sections_p), workdir / "sections-printed")
    code_sections = code_bytes = 0
    for name in names:
        a, b = bytes_o[name], bytes_p[name]
        if a != b:
            at = first_difference(a, b)
            raise RoundTripError("section %s differs at byte 0x%x (%d bytes in original, %d in "
                                 "printed)" % (name, at, len(a), len(b)))
        if name.startswith(".text."):
            code_sections += 1
            code_bytes += len(a)
    compare_section_attributes(sections_o, sections_p)

    symbols_o, symbols_p = symbol_rows(elf_o), symbol_rows(elf_p)
    if symbols_o != symbols_p:
        names_o = [s[0] for s in symbols_o]
        names_p = [s[0] for s in symbols_p]
        if names_o != names_p:
            raise RoundTripError("symbol names differ (only in original: %s; only in printed: %s)"
                                 % (", ".join(sorted(set(names_o) - set(names_p))) or "none",
                                    ", ".join(sorted(set(names_p) - set(names_o))) or "none"))
        index = first_difference(symbols_o, symbols_p)
        raise RoundTripError("symbol %s differs: %s in original, %s in printed"
                             % (symbols_o[index][0], symbols_o[index][1:], symbols_p[index][1:]))
    return code_sections, code_bytes, len(names) - code_sections


def check_idempotent(printed, reprinted):
    a = printed.read_text(errors="replace").splitlines()
    b = reprinted.read_text(errors="replace").splitlines()
    if a == b and printed.read_bytes() == reprinted.read_bytes():
        return
    line = first_difference(a, b)
    left = a[line].strip() if line < len(a) else "(end of text)"
    right = b[line].strip() if line < len(b) else "(end of text)"
    raise RoundTripError("printing is not idempotent: line %d of the printed text is '%s', "
                         "printed again it is '%s'" % (line + 1, left[:80], right[:80]))


def round_trip(tools, path, workdir):
    """Returns (passed, verdict line, ptxas seconds on the original) for one file; never raises.
    The machine code is compared before idempotence is, so that a printer that changes an
    instruction is reported by the section it changes; both failures are reported together."""
    label = str(path)
    target = "?"
    ptxas_seconds = 0.0
    reasons = []
    summary = ""
    try:
        target = read_target(path.read_text(errors="replace"))
        printed = workdir / "printed.ptx"
        reprinted = workdir / "reprinted.ptx"
        original_cubin = workdir / "original.cubin"
        printed_cubin = workdir / "printed.cubin"
        tools.print_ptx(path, printed)
        ptxas_seconds, relocatable = tools.assemble_original(path, target, original_cubin)
        tools.assemble(printed, target, printed_cubin, "printed text", relocatable)
        try:
            code_sections, code_bytes, others = compare_cubins(tools, original_cubin,
                                                               printed_cubin, workdir)
            summary = ("%d code sections (%d bytes) and %d other sections identical%s"
                       % (code_sections, code_bytes, others,
                          " in relocatable objects" if relocatable else ""))
        except RoundTripError as err:
            reasons.append(str(err))
        tools.print_ptx(printed, reprinted)
        check_idempotent(printed, reprinted)
    except (RoundTripError, OSError) as err:
        reasons.append(str(err))
    if reasons:
        return False, "FAIL %s [%s]: %s" % (label, target, "; ".join(reasons)), ptxas_seconds
    return True, ("PASS %s [%s]: %s, printing idempotent, ptxas %.2f s"
                  % (label, target, summary, ptxas_seconds)), ptxas_seconds


def collect_inputs(paths):
    """The files given and the *.ptx of the folders given; None if a path does not exist."""
    files = []
    for given in paths:
        p = pathlib.Path(given)
        if p.is_dir():
            files += sorted(p.glob("*.ptx"))
        elif p.is_file():
            files.append(p)
        else:
            print("ptx-roundtrip: no such file or folder: %s" % given, file=sys.stderr)
            return None
    return files


def find_tool(explicit, names, hints):
    if explicit:
        return explicit
    for name in names:
        for folder in hints:
            candidate = pathlib.Path(folder) / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        found = shutil.which(name)
        if found:
            return found
    return None


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Round-trip PTX through a printer and compare the ptxas machine code.")
    printer = parser.add_mutually_exclusive_group(required=True)
    printer.add_argument("--wsv", help="the wsv binary; the printer is `wsv parse --emit FILE`")
    printer.add_argument("--printer", help="printer command instead of wsv; the file is appended, "
                                           "or put where {} stands (e.g. --printer cat)")
    parser.add_argument("--ptxas", help="ptxas (default: from /usr/local/cuda/bin or PATH)")
    parser.add_argument("--llvm-objcopy", help="llvm-objcopy (default: LLVM 19's or PATH)")
    parser.add_argument("--llvm-readelf", help="llvm-readelf (default: LLVM 19's or PATH)")
    parser.add_argument("--ptxas-option", action="append",
                        help="extra ptxas option, repeatable (-lineinfo is always given)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="files checked in parallel")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each file's printed text and cubins under DIR/<n>-<name>/")
    parser.add_argument("paths", nargs="+", metavar="PTX", help=".ptx files or folders of them")
    args = parser.parse_args(argv)

    llvm_bin = ["/usr/lib/llvm-19/bin"]
    args.ptxas = find_tool(args.ptxas, ["ptxas"], ["/usr/local/cuda/bin"])
    args.llvm_objcopy = find_tool(args.llvm_objcopy, ["llvm-objcopy-19", "llvm-objcopy"], llvm_bin)
    args.llvm_readelf = find_tool(args.llvm_readelf, ["llvm-readelf-19", "llvm-readelf"], llvm_bin)
    for name in ("ptxas", "llvm_objcopy", "llvm_readelf"):
        if not getattr(args, name):
            parser.error("cannot find %s; pass --%s" % (name.replace("_", "-"),
                                                        name.replace("_", "-")))
    args.printer_cmd = ([args.wsv, "parse", "--emit"] if args.wsv else shlex.split(args.printer))
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def main(argv):
    args = parse_args(argv)
    tools = Tools(args)
    files = collect_inputs(args.paths)
    if files is None:
        return 2
    if not files:
        print("ptx-roundtrip: no .ptx files in %s" % " ".join(args.paths), file=sys.stderr)
        return 2

    keep = pathlib.Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)

    def check(indexed):
        index, path = indexed
        if keep:
            workdir = keep / ("%d-%s" % (index, path.stem))
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir()
            return round_trip(tools, path, workdir)
        with tempfile.TemporaryDirectory(prefix="ptx-roundtrip-") as tmp:
            return round_trip(tools, path, pathlib.Path(tmp))

    start = time.monotonic()
    passed = failed = 0
    ptxas_total = 0.0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for ok, verdict, seconds in pool.map(check, enumerate(files)):
            print(verdict, flush=True)
            ptxas_total += seconds
            passed += ok
            failed += not ok
    print("ptx-roundtrip: %d passed, %d failed (%d files, ptxas %.1f s on originals, %.1f s wall)"
          % (passed, failed, len(files), ptxas_total, time.monotonic() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
