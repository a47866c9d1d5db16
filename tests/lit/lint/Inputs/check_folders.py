"""check_folders.py DIR: each registered check has DIR/<check>/ with at least two tests (a
buggy case and a clean one); each folder of DIR is a registered check."""
import os
import subprocess
import sys

root = sys.argv[1]
out = subprocess.run(["wsv", "lint", "--list-checks"], capture_output=True, text=True,
                     check=True).stdout
checks = {l.split()[0] for l in out.splitlines() if l.startswith("  ")}
folders = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
problems = []
for c in sorted(checks):
    tests = [f for f in os.listdir(os.path.join(root, c))
             if f.endswith((".ptx", ".test"))] if c in folders else []
    if len(tests) < 2:
        problems.append("check %s: %d test(s) in tests/lit/checks/%s/, a buggy and a clean "
                        "case needed" % (c, len(tests), c))
for d in sorted(folders - checks):
    problems.append("tests/lit/checks/%s/ names no registered check" % d)
for p in problems:
    print(p)
print("%d checks, %d folders, %d problems" % (len(checks), len(folders), len(problems)))
sys.exit(1 if problems else 0)
