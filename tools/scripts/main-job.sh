#!/usr/bin/env bash
# The main job on the bundled kernels: parse every generated PTX file and print a table.
set -euo pipefail
source "$(dirname "$0")/common.sh"
shopt -s nullglob
files=("$build"/ptx/*.ptx)
if [ ${#files[@]} -eq 0 ]; then
  echo "wsv: no PTX under $build/ptx; build first" >&2
  exit 2
fi
"$build/bin/wsv" parse --stats "${files[@]}"
