#!/usr/bin/env python3
"""expect-exit.py CODE CMD...: runs CMD and fails unless it exits with exactly CODE.

lit's `not` only tells zero from non-zero; wsv promises 2 for bad input and usage."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    sys.stderr.write("expected exit code %d, got %d\n" % (want, got))
    sys.exit(1)
