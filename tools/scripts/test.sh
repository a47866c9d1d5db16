#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): install what is missing, build, run every test
# (unit, lit, round-trip through ptxas), then the sanitizer build of the unit tests and a short
# fuzz run. Fails on the first failing step.
set -euo pipefail
source "$(dirname "$0")/common.sh"

"$top/tools/scripts/install-deps.sh"

echo "== build and test ($build)"
configure "$build"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

if [ -f "$top/tools/scripts/test-sanitizers.sh" ]; then
  "$top/tools/scripts/test-sanitizers.sh"
fi
echo "== all tests passed"
