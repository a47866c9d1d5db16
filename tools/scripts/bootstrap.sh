#!/usr/bin/env bash
# Fresh machine to first result: install what is missing, configure, build, and run wsv on every
# bundled kernel's PTX.
set -euo pipefail
source "$(dirname "$0")/common.sh"

"$top/tools/scripts/install-deps.sh"
configure "$build"
cmake --build "$build" -j "$jobs"
"$top/tools/scripts/main-job.sh"
