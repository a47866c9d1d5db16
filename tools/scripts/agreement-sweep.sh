#!/usr/bin/env bash
# The explorer against Z3's bounded search on every reference kernel and variant
# (ExplorerZ3AgreementTest.EveryKernelAndVariantOnRequest), split into shards that run at once,
# with the tallies added up at the end. Z3's time per property makes the sweep long (minutes per
# entry at 20 s), so it is run on request, not in CI: here, or on a machine with more cores.
#
# usage: tools/scripts/agreement-sweep.sh pack            (here) fills .carry/sweep with the
#          stripped test binary, libz3 and the reference PTX, for a machine without them
#        tools/scripts/agreement-sweep.sh run [MS] [JOBS]  Z3's milliseconds per property
#          (default 20000) and shards (default: the processors); uses .carry/sweep where it
#          exists, else build/. Logs go to $OUT (or build/sweep-out); the tally is printed last.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
pack=$top/.carry/sweep
case ${1:-} in
pack)
  rm -rf "$pack"
  mkdir -p "$pack/ptx"
  cp "$top/build/bin/wsv_analyzer_tests" "$pack/" && strip "$pack/wsv_analyzer_tests" || exit 1
  cp "$(ldd "$top/build/bin/wsv_analyzer_tests" | awk '/libz3/ {print $3}')" "$pack/" || exit 1
  cp "$top/build/ptx/kernels.json" "$pack/ptx/" || exit 1
  for f in "$top"/build/ptx/*.ptx; do
    case $f in *.checked.ptx | *.clang.ptx) ;; *) cp "$f" "$pack/ptx/" ;; esac
  done
  du -sh "$pack"
  ;;
run)
  ms=${2:-20000}
  jobs=${3:-$(nproc)}
  if [ -x "$pack/wsv_analyzer_tests" ]; then
    bin=$pack/wsv_analyzer_tests ptx=$pack/ptx
    export LD_LIBRARY_PATH=$pack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  else
    bin=$top/build/bin/wsv_analyzer_tests ptx=$top/build/ptx
  fi
  out=${OUT:-$top/build/sweep-out}
  mkdir -p "$out"
  echo "sweep: $jobs shards, Z3 ${ms} ms per property, logs in $out"
  start=$(date +%s)
  for ((i = 0; i < jobs; i++)); do
    WSV_AGREEMENT_SWEEP=1 WSV_AGREEMENT_SWEEP_MS=$ms WSV_AGREEMENT_SWEEP_SHARD=$i/$jobs \
      WSV_PTX_DIR=$ptx "$bin" --gtest_filter='ExplorerZ3AgreementTest.EveryKernelAndVariantOnRequest' \
      >"$out/shard-$i.log" 2>&1 &
  done
  wait
  failed=$(grep -l "FAILED" "$out"/shard-*.log | wc -l)
  grep -h "explorer" "$out"/shard-*.log | sort >"$out/entries.txt"
  cat "$out/entries.txt"
  grep -h "answers of Z3 compared" "$out"/shard-*.log |
    sed -E 's/^([0-9]+) answers.*\(([0-9]+) counterexamples, ([0-9]+) proofs\); ([0-9]+) .*/\1 \2 \3 \4/' |
    awk '{ c += $1; r += $2; p += $3; s += $4 }
      END { printf "total: %d answers of Z3 compared with the explorer'"'"'s (%d counterexamples, %d proofs); %d kernels or variants skipped\n", c, r, p, s }'
  echo "shards failed: $failed of $jobs; $(($(date +%s) - start)) s"
  [ "$failed" -eq 0 ]
  ;;
*)
  echo "usage: $0 pack | run [MS] [JOBS]" >&2
  exit 2
  ;;
esac
