#!/usr/bin/env bash
# The main job on the bundled kernels: parse every generated PTX file (a table of sizes and
# speeds), then lint every reference kernel and bug variant and print, per PTX file, the check
# its seeded bug should trip, the checks that fired and the CUDA line they point at
# (tests/lint/precision.py). Exits non-zero when a correct kernel gets a finding or a variant is
# missed or caught by the wrong check.
set -euo pipefail
source "$(dirname "$0")/common.sh"
shopt -s nullglob
files=("$build"/ptx/*.ptx)
if [ ${#files[@]} -eq 0 ]; then
  echo "wsv: no PTX under $build/ptx; build first" >&2
  exit 2
fi
echo "== wsv parse --stats (every generated PTX file)"
"$build/bin/wsv" parse --stats "${files[@]}"
if "$build/bin/wsv" help 2>/dev/null | grep -q '^  lint'; then
  echo
  echo "== wsv lint (every reference kernel and seeded-bug variant)"
  python3 "$top/tests/lint/precision.py" --wsv "$build/bin/wsv" \
    --manifest "$build/ptx/kernels.json" --source-root "$top" -j "$jobs"
fi
