#!/usr/bin/env python3
"""Tests of tools/scripts/ptx-roundtrip.py with stand-in printers whose verdict is known: the
identity, a printer that only moves text around, one that changes an instruction, one that is
not idempotent, one that fails, and one whose output ptxas rejects.

Environment (set by tests/corpus/CMakeLists.txt): WSV_ROUNDTRIP_SCRIPT, WSV_PTXAS,
WSV_LLVM_OBJCOPY, WSV_LLVM_READELF, WSV_CORPUS_DIR.
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.environ.get("WSV_ROUNDTRIP_SCRIPT",
                        str(pathlib.Path(__file__).resolve().parents[2]
                            / "tools" / "scripts" / "ptx-roundtrip.py"))
CORPUS = pathlib.Path(os.environ.get("WSV_CORPUS_DIR", pathlib.Path(__file__).resolve().parent))
TOOLS = []
for option, variable in (("--ptxas", "WSV_PTXAS"), ("--llvm-objcopy", "WSV_LLVM_OBJCOPY"),
                         ("--llvm-readelf", "WSV_LLVM_READELF")):
    if os.environ.get(variable):
        TOOLS += [option, os.environ[variable]]

# Two kernels, so that a change in one is reported by its own code section.
KERNELS = textwrap.dedent("""\
    // two small kernels for the round-trip script's tests
    .version 7.0
    .target sm_80
    .address_size 64

    .visible .entry first(.param .u64 out, .param .u32 n)
    {
    	.reg .b32 	%r<4>;
    	.reg .b64 	%rd<2>;

    	ld.param.u64 	%rd1, [out];
    	ld.param.u32 	%r1, [n];
    	add.s32 	%r2, %r1, 7;   // the instruction the mutating printer changes
    	st.global.u32 	[%rd1], %r2;
    	ret;
    }

    .visible .entry second(.param .u64 out)
    {
    	.reg .b32 	%r<2>;
    	.reg .b64 	%rd<2>;

    	ld.param.u64 	%rd1, [out];
    	mov.u32 	%r1, %tid.x;
    	st.global.u32 	[%rd1], %r1;
    	ret;
    }
    """)

PRINTERS = {
    # Text edits that leave the machine code alone: comments go, blank lines go, and every
    # instruction moves to another line number. Idempotent.
    "reformat": r"""
import re, sys
text = re.sub(r"//[^\n]*", "", open(sys.argv[1]).read())
lines = [line.strip() for line in text.splitlines() if line.strip()]
sys.stdout.write("\n".join(lines) + "\n")
""",
    # Changes the first kernel's add into a sub; idempotent, so only the code can tell.
    "mutate": r"""
import sys
sys.stdout.write(open(sys.argv[1]).read().replace("add.s32", "sub.s32"))
""",
    # Appends a line each time it runs.
    "grow": r"""
import sys
sys.stdout.write(open(sys.argv[1]).read() + "// printed once more\n")
""",
    "crash": r"""
import sys
sys.stderr.write("printer: cannot parse this\n")
sys.exit(3)
""",
    # Output that is no longer PTX ptxas accepts.
    "garble": r"""
import sys
sys.stdout.write(open(sys.argv[1]).read().replace("st.global", "store.global"))
""",
}


class RoundTripScriptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="roundtrip-test-")
        cls.dir = pathlib.Path(cls.tmp.name)
        cls.kernels = cls.dir / "kernels.sm_80.ptx"
        cls.kernels.write_text(KERNELS)
        for name, body in PRINTERS.items():
            (cls.dir / (name + ".py")).write_text(body)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_script(self, printer, *inputs, extra=()):
        if printer in PRINTERS:
            printer = "%s %s" % (sys.executable, self.dir / (printer + ".py"))
        result = subprocess.run([sys.executable, SCRIPT, "--printer", printer, *TOOLS, *extra,
                                 *map(str, inputs)], capture_output=True, text=True)
        return result.returncode, result.stdout, result.stderr

    def verdicts(self, stdout):
        return [line for line in stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]

    def test_identity_passes(self):
        code, out, err = self.run_script("cat", self.kernels)
        self.assertEqual(code, 0, out + err)
        self.assertRegex(out, r"PASS .*kernels\.sm_80\.ptx \[sm_80\]: 2 code sections")
        self.assertIn("1 passed, 0 failed", out)

    def test_text_layout_does_not_matter(self):
        code, out, err = self.run_script("reformat", self.kernels)
        self.assertEqual(code, 0, out + err)

    def test_changed_instruction_is_found_in_its_section(self):
        code, out, _ = self.run_script("mutate", self.kernels)
        self.assertEqual(code, 1)
        [verdict] = self.verdicts(out)
        self.assertRegex(verdict, r"^FAIL .*: section \.text\.first differs at byte 0x[0-9a-f]+")
        self.assertNotIn("idempotent", verdict)
        self.assertIn("0 passed, 1 failed", out)

    def test_non_idempotent_printer_fails(self):
        code, out, _ = self.run_script("grow", self.kernels)
        self.assertEqual(code, 1)
        [verdict] = self.verdicts(out)
        self.assertIn("printing is not idempotent", verdict)
        self.assertIn("printed again it is '// printed once more'", verdict)

    def test_failing_printer_is_reported(self):
        code, out, _ = self.run_script("crash", self.kernels)
        self.assertEqual(code, 1)
        self.assertRegex(self.verdicts(out)[0], r"printer failed .*exit 3.*cannot parse this")

    def test_printed_text_rejected_by_ptxas(self):
        code, out, _ = self.run_script("garble", self.kernels)
        self.assertEqual(code, 1)
        self.assertIn("ptxas rejected the printed text", self.verdicts(out)[0])

    def test_missing_target_is_reported(self):
        no_target = self.dir / "no_target.ptx"
        no_target.write_text(re.sub(r"\.target sm_80", "// .target sm_80", KERNELS))
        code, out, _ = self.run_script("cat", no_target)
        self.assertEqual(code, 1)
        self.assertIn("no .target directive", self.verdicts(out)[0])

    def test_unresolved_extern_falls_back_to_relocatable(self):
        # Relocatable objects name the PTX copy after a hash of the text, and have .nv.global:
        # a reformatted file must still pass.
        code, out, err = self.run_script("reformat", CORPUS / "edge" / "globals.sm_90.ptx")
        self.assertEqual(code, 0, out + err)
        self.assertIn("in relocatable objects", out)

    def test_folders_and_jobs_keep_input_order(self):
        code, out, err = self.run_script("cat", CORPUS / "edge", self.kernels, extra=("-j", "2"))
        self.assertEqual(code, 0, out + err)
        names = [re.match(r"PASS (\S+)", v).group(1) for v in self.verdicts(out)]
        expected = [str(p) for p in sorted((CORPUS / "edge").glob("*.ptx"))] + [str(self.kernels)]
        self.assertEqual(names, expected)

    def test_one_failure_fails_the_run(self):
        other = self.dir / "other.sm_80.ptx"
        other.write_text(KERNELS.replace("add.s32", "mul.lo.s32"))
        code, out, _ = self.run_script("mutate", self.kernels, other)
        self.assertEqual(code, 1)
        self.assertIn("1 passed, 1 failed", out)

    def test_no_input_is_a_usage_error(self):
        empty = self.dir / "empty-folder"
        empty.mkdir(exist_ok=True)
        code, _, err = self.run_script("cat", empty)
        self.assertEqual(code, 2)
        self.assertIn("no .ptx files", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
