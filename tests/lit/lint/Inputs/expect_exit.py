"""expect_exit.py N CMD...: run CMD, copy its stdout and stderr, exit 0 iff it exited with N."""
import subprocess
import sys

want = int(sys.argv[1])
run = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stdout.buffer.write(run.stdout)
sys.stdout.flush()
sys.stderr.buffer.write(run.stderr)
if run.returncode != want:
    sys.stderr.write("expect_exit: '%s' exited with %d, expected %d\n"
                     % (" ".join(sys.argv[2:]), run.returncode, want))
    sys.exit(1)
