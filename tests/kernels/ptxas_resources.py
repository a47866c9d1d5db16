#!/usr/bin/env python3
"""Assembles every PTX file of the given kernels with `ptxas -arch=<arch> -v` and records what
ptxas reports per entry (registers, static shared memory, named barriers, stack and spills).

The kernels come from the manifest the build writes (kernels.json): each kernel's own PTX and
every seeded-bug variant. The run fails when
  - an expected kernel is missing from the manifest, or has a different architecture,
  - a listed PTX file is missing or does not assemble,
  - ptxas reports no resource line for an entry the file declares,
  - a bug variant compiles to the same instructions as its kernel (the seeded bug was optimized
    away, so the variant would test nothing),
  - the kernel's source does not mark each variant's bug with `// BUG(<check>): ...`, or marks a
    check that no variant builds,
  - the launch description the PTX publishes for `wsv run` (`wsv_kernel_info`, a KernelInfo of
    reference_kernels/common/wsv_abi.h) is missing, or disagrees with the PTX: threads vs
    .maxntid, cluster size vs .reqnctapercluster (where the PTX declares one), or static plus
    dynamic shared memory over the 227 KB an sm_100 CTA may have.
The table goes to stdout and to --out.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

BUG_RE = re.compile(r"//\s*BUG\(([\w-]+)\):")
LAUNCH_RE = re.compile(r"\bwsv_kernel_info\[(\d+)\]\s*=\s*\{([^}]*)\}")
# KernelInfo's uint32 fields, in order (wsv_abi.h); its two char[64] name lists follow.
LAUNCH_FIELDS = ("version", "tile_m", "tile_n", "tile_k", "stages", "threads", "cluster_m",
                 "dyn_smem", "persistent", "box_a_rows", "box_b_rows", "box_d_rows", "box_d_cols",
                 "tensor_maps", "min_k_tiles")
MAX_SMEM_PER_CTA = 227 * 1024
ENTRY_RE = re.compile(r"^\s*\.(?:visible\s+)?\.entry\s+([A-Za-z_$][\w$]*)", re.M)
COMPILING_RE = re.compile(r"Compiling entry function '([^']+)'")
PROPS_RE = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED_RE = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")


def parse_ptxas(stderr):
    """Maps entry name -> dict of the figures ptxas -v printed for it."""
    info = {}
    current = None
    for line in stderr.splitlines():
        m = COMPILING_RE.search(line)
        if m:
            current = info.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = PROPS_RE.search(line)
        if m:
            current["stack"], current["spill_st"], current["spill_ld"] = map(int, m.groups())
            continue
        m = USED_RE.search(line)
        if m:
            current["regs"] = int(m.group(1))
            current["barriers"] = int(m.group(2) or 0)
            current["smem"] = int(m.group(3) or 0)
    return info


def launch_description(ptx_text):
    """The uint32 fields of the `wsv_kernel_info` initializer (little endian), or None."""
    m = LAUNCH_RE.search(ptx_text)
    if not m:
        return None
    data = bytes(int(b) for b in m.group(2).split(","))
    data = data.ljust(int(m.group(1)), b"\0")
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, 4 * len(LAUNCH_FIELDS), 4)]
    return dict(zip(LAUNCH_FIELDS, words))


def entry_directive(ptx_text, entry, directive):
    """The integers of `directive` (.maxntid, .reqnctapercluster) on `entry`, or None."""
    m = re.search(r"\.entry\s+%s\s*\(.*?\)\s*((?:\.\w+[^{]*?)*)\{" % re.escape(entry),
                  ptx_text, re.S)
    if not m:
        return None
    d = re.search(r"\.%s\s+([\d,\s]+)" % directive, m.group(1))
    return [int(x) for x in d.group(1).replace(",", " ").split()] if d else None


def instructions(ptx_text):
    """The instruction stream with register numbers, label names, debug lines and comments
    erased, so two files compare equal when they differ only in numbering or line info. Labels
    stay as markers: where a branch lands is what makes an instruction conditional."""
    out = []
    for line in ptx_text.splitlines():
        line = line.split("//", 1)[0].strip()
        if not line or line.startswith((".loc", ".file", ".reg", ".section", ".b8", ".b32",
                                        ".b64", "$L__info", "$L__func")):
            continue
        line = re.sub(r"%[a-z]+\d+", "%r", line)
        line = re.sub(r"\$L__\w+", "L", line)
        out.append(line)
    return out


def assemble(ptxas, arch, path):
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([ptxas, f"-arch={arch}", "-v", path, "-o",
                               os.path.join(tmp, "out.cubin")],
                              capture_output=True, text=True)
    return proc.returncode, proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--manifest", required=True, help="kernels.json written by the build")
    ap.add_argument("--arch", required=True, help="for example sm_100a")
    ap.add_argument("--kernels", required=True, help="comma-separated kernel names to check")
    ap.add_argument("--out", required=True, help="where the resource table is written")
    ap.add_argument("--source-root", required=True,
                    help="the repository root the manifest's source paths are relative to")
    args = ap.parse_args()

    with open(args.manifest) as f:
        manifest = json.load(f)
    ptx_dir = manifest["ptx_dir"]
    by_name = {k["name"]: k for k in manifest["kernels"]}

    errors = []
    rows = []
    version = subprocess.run([args.ptxas, "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()
    for name in args.kernels.split(","):
        kernel = by_name.get(name)
        if kernel is None:
            errors.append(f"{name}: not in {args.manifest}")
            continue
        if kernel["arch"] != args.arch:
            errors.append(f"{name}: built for {kernel['arch']}, expected {args.arch}")
        files = [(None, kernel["ptx"])] + [(v["bug"], v["ptx"]) for v in kernel["variants"]]
        source = os.path.join(args.source_root, kernel["source"])
        if os.path.exists(source):
            with open(source) as f:
                marked = set(BUG_RE.findall(f.read()))
            built = {bug for bug, _ in files[1:]}
            for bug in sorted(built - marked):
                errors.append(f"{kernel['source']}: no `// BUG({bug}): ...` marker for variant "
                              f"{bug}")
            for bug in sorted(marked - built):
                errors.append(f"{kernel['source']}: marks BUG({bug}) but no variant builds it")
        else:
            errors.append(f"{name}: source {source} not found")
        base_instructions = None
        for bug, ptx in files:
            path = os.path.join(ptx_dir, ptx)
            if not os.path.exists(path):
                errors.append(f"{ptx}: missing (is the build up to date?)")
                continue
            with open(path) as f:
                text = f.read()
            entries = ENTRY_RE.findall(text)
            if not entries:
                errors.append(f"{ptx}: declares no .entry")
            insts = instructions(text)
            if bug is None:
                base_instructions = insts
            elif base_instructions is not None and insts == base_instructions:
                errors.append(f"{ptx}: same instructions as {kernel['ptx']}: the seeded bug "
                              f"'{bug}' did not survive compilation")
            launch = launch_description(text)
            if launch is None:
                errors.append(f"{ptx}: publishes no wsv_kernel_info")
                launch = {}
            rc, stderr = assemble(args.ptxas, args.arch, path)
            if rc != 0:
                errors.append(f"{ptx}: ptxas -arch={args.arch} failed (exit {rc}):\n{stderr}")
                continue
            info = parse_ptxas(stderr)
            for entry in entries:
                figures = info.get(entry)
                if not figures or "regs" not in figures:
                    errors.append(f"{ptx}: ptxas printed no resource usage for {entry}")
                    continue
                figures = dict(figures, **{k: launch.get(k, 0)
                                           for k in ("threads", "cluster_m", "dyn_smem")})
                if not launch:
                    rows.append((ptx, entry, figures))
                    continue
                maxntid = entry_directive(text, entry, "maxntid")
                if maxntid and maxntid[0] != launch["threads"]:
                    errors.append(f"{ptx}: {entry} has .maxntid {maxntid[0]}, the launch "
                                  f"description {launch['threads']} threads")
                cluster = entry_directive(text, entry, "reqnctapercluster")
                if cluster and cluster[0] != launch["cluster_m"]:
                    errors.append(f"{ptx}: {entry} declares clusters of {cluster[0]}, the "
                                  f"launch description {launch['cluster_m']}")
                total = figures["smem"] + launch["dyn_smem"]
                if total > MAX_SMEM_PER_CTA:
                    errors.append(f"{ptx}: {entry} needs {total} B of shared memory per CTA, "
                                  f"over {MAX_SMEM_PER_CTA}")
                rows.append((ptx, entry, figures))

    header = ("# ptxas -arch=%s -v, %s\n"
              "# smem: static shared memory (barriers, padded to the 1024 B alignment of the\n"
              "# tile buffers); dyn_smem, threads, cluster_m: from the launch description the\n"
              "# PTX publishes for `wsv run` (wsv_kernel_info), as the runner launches it.\n"
              % (args.arch, version[-1] if version else "unknown ptxas"))
    cols = ("ptx", "entry", "regs", "smem", "dyn_smem", "threads", "cluster_m", "barriers",
            "stack", "spill_st", "spill_ld")
    width = max([len(r[0]) for r in rows] + [len(cols[0])])
    lines = [header + f"{cols[0]:<{width}}  {cols[1]:<8} " +
             " ".join(f"{c:>8}" for c in cols[2:])]
    for ptx, entry, fig in rows:
        lines.append(f"{ptx:<{width}}  {entry:<8} " + " ".join(
            f"{fig.get(c, 0):>8}" for c in cols[2:]))
    table = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(table)
    sys.stdout.write(table)
    sys.stdout.write(f"{len(rows)} entries in {len({r[0] for r in rows})} files assembled for "
                     f"{args.arch}; table written to {args.out}\n")

    for e in errors:
        sys.stderr.write(f"error: {e}\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
