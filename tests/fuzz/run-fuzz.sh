#!/usr/bin/env bash
# Fuzzes the PTX front end for a while: builds the fuzzer and its seeds in a WSV_FUZZ build
# folder, then runs libFuzzer with one worker on the seeds, the regression inputs and the
# corpus it grew in earlier runs. Exits non-zero on any finding (crash, sanitizer report,
# broken check, timeout, memory blow-up); the input that caused it is left in
# <build>/tests/fuzz/findings/ and libFuzzer's report on stderr.
#
#   tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS [libFuzzer flags...]
#
# BUILD_DIR must be configured with clang and -DWSV_FUZZ=ON (README.md in this folder).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)

cmake --build "$build" --target wsv_ptx_fuzzer wsv_ptx_fuzz_seeds -j "${WSV_JOBS:-2}"

# The fuzz build lets UBSan recover (WsvOptions.cmake), so make every report a finding here.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

work="$build/tests/fuzz"
mkdir -p "$work/corpus" "$work/findings"
# -timeout: no input may take 10 s (real PTX parses at hundreds of MB/s);
# -rss_limit_mb / -malloc_limit_mb: a blow-up is a finding, not a slow machine;
# one process (with -jobs libFuzzer would log to files instead of stderr);
# -max_len: seeds are cut to about 64 KB (make_seeds.py), a large function is a bit more.
"$build/bin/wsv_ptx_fuzzer" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -max_len=131072 -dict="$here/ptx.dict" -print_final_stats=1 \
  -artifact_prefix="$work/findings/" "$@" \
  "$work/corpus" "$work/seeds" "$here/regressions"
