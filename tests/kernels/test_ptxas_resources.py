#!/usr/bin/env python3
"""Checks that ptxas_resources.py fails where it must: a file ptxas rejects, a bug variant whose
instructions equal its kernel's, a kernel missing from the manifest; and that it records the
registers of a file that assembles. Runs the real ptxas (given with --ptxas) on tiny PTX files."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PTXAS = None

HEADER = ".version 9.0\n.target sm_100a\n.address_size 64\n"


def launch_global(threads=128, cluster=1, dyn_smem=4096):
    """A `wsv_kernel_info` initializer as nvcc writes it (wsv_abi.h KernelInfo, 188 bytes; nvcc
    leaves out the trailing zero bytes)."""
    words = [1, 128, 128, 64, 4, threads, cluster, dyn_smem, 0, 128, 128, 128, 64, 0, 1]
    data = b"".join(w.to_bytes(4, "little") for w in words) + b"p,c"
    return (".global .align 4 .b8 wsv_kernel_info[188] = {%s};\n"
            % ", ".join(str(b) for b in data))


GOOD = HEADER + launch_global() + """
.visible .entry k(.param .u64 p)
.maxntid 128, 1, 1
.reqnctapercluster 1, 1, 1
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
# The same program with other register numbers and line info: not a different program.
GOOD_RENUMBERED = GOOD.replace("%r1", "%r2").replace("ret;", ".loc 1 7 3\n  ret;")
# A real change: the store now happens only in thread 0.
GOOD_CHANGED = GOOD.replace("  st.global.u32 [%rd1], %r1;\n",
                            "  .reg .pred %p<2>;\n  setp.eq.u32 %p1, %r1, 0;\n"
                            "  @%p1 st.global.u32 [%rd1], %r1;\n")
BROKEN = HEADER + launch_global() + ".visible .entry k() {\n  not_an_instruction;\n  ret;\n}\n"


class PtxasResourcesTest(unittest.TestCase):
    def run_script(self, files, variants, kernels="k", source=None):
        if source is None:
            source = "".join(f"// BUG({bug}): seeded\n" for bug, _ in variants)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "k.cu"), "w") as f:
                f.write(source)
            for name, text in files.items():
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            manifest = {"schema": "wsv-kernels/1", "ptx_dir": tmp, "kernels": [{
                "name": "k", "arch": "sm_100a", "source": "k.cu", "ptx": "k.ptx",
                "variants": [{"bug": bug, "ptx": ptx} for bug, ptx in variants]}]}
            with open(os.path.join(tmp, "kernels.json"), "w") as f:
                json.dump(manifest, f)
            out = os.path.join(tmp, "resources.txt")
            proc = subprocess.run(
                [sys.executable, os.path.join(HERE, "ptxas_resources.py"), "--ptxas", PTXAS,
                 "--manifest", os.path.join(tmp, "kernels.json"), "--arch", "sm_100a",
                 "--kernels", kernels, "--out", out, "--source-root", tmp],
                capture_output=True, text=True)
            table = ""
            if os.path.exists(out):
                with open(out) as f:
                    table = f.read()
        return proc.returncode, proc.stderr, table

    def test_records_registers_of_each_entry(self):
        rc, err, table = self.run_script({"k.ptx": GOOD, "k.bug-x.ptx": GOOD_CHANGED},
                                         [("x", "k.bug-x.ptx")])
        self.assertEqual(rc, 0, err)
        rows = [l.split() for l in table.splitlines() if l.startswith("k")]
        self.assertEqual([r[:2] for r in rows], [["k.ptx", "k"], ["k.bug-x.ptx", "k"]])
        self.assertTrue(all(int(r[2]) > 0 for r in rows), table)

    def test_fails_when_ptxas_rejects_a_variant(self):
        rc, err, _ = self.run_script({"k.ptx": GOOD, "k.bug-x.ptx": BROKEN},
                                     [("x", "k.bug-x.ptx")])
        self.assertEqual(rc, 1)
        self.assertIn("k.bug-x.ptx: ptxas -arch=sm_100a failed", err)

    def test_fails_when_the_bug_was_optimized_away(self):
        rc, err, _ = self.run_script({"k.ptx": GOOD, "k.bug-x.ptx": GOOD_RENUMBERED},
                                     [("x", "k.bug-x.ptx")])
        self.assertEqual(rc, 1)
        self.assertIn("the seeded bug 'x' did not survive compilation", err)

    def test_fails_on_a_missing_kernel_or_file(self):
        rc, err, _ = self.run_script({"k.ptx": GOOD}, [("x", "k.bug-x.ptx")], kernels="k,other")
        self.assertEqual(rc, 1)
        self.assertIn("k.bug-x.ptx: missing", err)
        self.assertIn("other: not in", err)

    def test_fails_when_markers_and_variants_disagree(self):
        rc, err, _ = self.run_script({"k.ptx": GOOD, "k.bug-x.ptx": GOOD_CHANGED},
                                     [("x", "k.bug-x.ptx")], source="// BUG(y): seeded\n")
        self.assertEqual(rc, 1)
        self.assertIn("no `// BUG(x): ...` marker for variant x", err)
        self.assertIn("marks BUG(y) but no variant builds it", err)

    def test_reads_the_launch_description(self):
        rc, err, table = self.run_script({"k.ptx": GOOD}, [])
        self.assertEqual(rc, 0, err)
        header = table.splitlines()[4].split()
        row = dict(zip(header, table.splitlines()[5].split()))
        self.assertEqual((row["dyn_smem"], row["threads"], row["cluster_m"]), ("4096", "128", "1"))

    def test_fails_when_the_launch_description_disagrees_with_the_ptx(self):
        wrong = GOOD.replace(launch_global(), launch_global(threads=256, cluster=2,
                                                            dyn_smem=228 * 1024))
        rc, err, _ = self.run_script({"k.ptx": wrong}, [])
        self.assertEqual(rc, 1)
        self.assertIn("has .maxntid 128, the launch description 256 threads", err)
        self.assertIn("declares clusters of 1, the launch description 2", err)
        self.assertIn("B of shared memory per CTA, over 232448", err)

    def test_fails_without_a_launch_description(self):
        rc, err, _ = self.run_script({"k.ptx": GOOD.replace(launch_global(), "")}, [])
        self.assertEqual(rc, 1)
        self.assertIn("k.ptx: publishes no wsv_kernel_info", err)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas", required=True)
    args, rest = ap.parse_known_args()
    PTXAS = args.ptxas
    unittest.main(argv=[sys.argv[0]] + rest)
