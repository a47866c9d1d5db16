"""selection.py ALL FIRST: `--checks='-*,FIRST'` lists exactly FIRST; `--checks='*,-FIRST'`
lists every other check; a glob `FIRST-prefix*` lists the checks sharing that prefix."""
import subprocess
import sys

def listed(globs):
    out = subprocess.run(["wsv", "lint", "--checks=" + globs, "--list-checks"],
                         capture_output=True, text=True, check=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.startswith("  ")]

every = [l.split()[0] for l in open(sys.argv[1]) if l.startswith("  ")]
first = open(sys.argv[2]).read().strip()
assert listed("-*," + first) == [first], listed("-*," + first)
assert listed("*,-" + first) == [c for c in every if c != first], listed("*,-" + first)
prefix = first.split("-")[0] + "-"
assert listed("-*," + prefix + "*") == [c for c in every if c.startswith(prefix)]
print("ok: %d checks, selection of %s" % (len(every), first))
