#!/usr/bin/env bash
# Builds the GPU-only configuration (no LLVM, Z3 or packaged nlohmann/json: the header folder
# comes from .carry/include) and runs the Hopper reference kernels on the GPU: correctness checks,
# every seeded-bug variant under --check, and benchmarks against cuBLAS. Logs, JSON and hang
# traces go to build-device/out; when DEVICE_OUT names a folder they are also packed into
# $DEVICE_OUT/device-out.tar.gz next to summary.txt. A short table is printed last.
#
# usage: tools/gpu/device-run.sh [step...]
#   info     the GPU, driver and toolkit
#   check    every kernel, bf16 and fp16, default sizes plus extra shapes, plain and --check
#   clang    the clang-19 builds (built here if clang-19 is, else carried in .carry/ptx/)
#   bugs     every seeded variant under --check, then every hang variant without --check
#   bench    every kernel at 4096^3 and 8192^3 against cuBLAS; the fastest with --check too
#   tune     extra builds of the fastest kernel with other constants (TUNE_DEFINES), benched
#   gputests tests/gpu/gpu_test.py (what ctest -L gpu runs)
#   profile  Nsight Compute (detailed set, clocks left alone) of the fastest kernel and cuBLAS at
#            PROFILE_SIZE^3 (default 4096)
#   sweep    the fastest kernel against cuBLAS over cube sizes 1024..8192
#   (default: info check clang bugs bench sweep gputests)
# env: KERNELS (default "h1 h2 h3 h4 h5 h6"), FAST (default h5), JOBS (default 16),
#      TUNE_DEFINES ("name:-DX=1 -DY=2;name2:..."), BENCH_SIZES (default 4096,8192)
#
# tools/gpu/device-run.sh carry   (here, before the device call) fills .carry, the folder the
#   device call carries: nlohmann/json's headers and the clang-19 PTX of build/ptx.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = carry ]; then
  rm -rf "$top/.carry"
  mkdir -p "$top/.carry/include" "$top/.carry/ptx"
  cp -r /usr/include/nlohmann "$top/.carry/include/" || exit 1
  cp "$top"/build/ptx/*.clang.ptx "$top/.carry/ptx/" 2>/dev/null ||
    echo "no clang PTX in build/ptx: the clang step will skip"
  du -sh "$top/.carry"
  exit 0
fi
build=${WSV_DEVICE_BUILD:-$top/build-device}
out=$build/out
kernels=${KERNELS:-h1 h2 h3 h4 h5 h6}
fast=${FAST:-h5}
jobs=${JOBS:-16}
sizes=${BENCH_SIZES:-4096,8192}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(info check clang bugs bench sweep gputests)
rm -rf "$out"
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH

echo "== build ($build)"
if ! cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWSV_ANALYZER=OFF \
      -DWSV_TESTS=OFF -DWSV_BENCHMARKS=OFF -DCMAKE_PREFIX_PATH="$top/.carry" \
      >"$out/configure.log" 2>&1 ||
   ! ninja -C "$build" -j "$jobs" >"$out/build.log" 2>&1; then
  tail -40 "$out/configure.log" "$out/build.log" 2>/dev/null
  echo "build failed"
  exit 1
fi
wsv="$build/bin/wsv"
"$wsv" kernels --format json >"$out/kernels.json"

run() { # run <label> <wsv run args...>: JSON into $out/<label>.json, text log appended
  local label=$1; shift
  "$wsv" run "$@" --trace-dir "$out/traces" --format json >"$out/$label.json" 2>>"$out/errors.log"
  echo "$label rc=$?" >>"$out/rc.log"
}
mkdir -p "$out/traces"

for step in "${steps[@]}"; do
  echo "== $step"
  case $step in
  info)
    { nvidia-smi; nvcc --version; ls /usr/local/cuda/lib64 | grep -E 'cublas|cudart'; } \
      >"$out/info.txt" 2>&1
    head -15 "$out/info.txt"
    ;;
  check)
    for k in $kernels; do
      run "check-$k" "$k"
      run "check-$k-checked" "$k" --check
      # H6's stream-K piece of 2 k-tiles after a whole tile, whose leftover chunks are stored
      # after the piece (a path only such launches run; wsv verify draws launches for it): on
      # 132 CTAs, the 100 cluster tiles leave 34 for stream-K, cluster 31's share starts at
      # k-tile 64 of 66.
      if [ "$k" = h6 ]; then
        run "check-h6-short-piece" h6 --shape 2560x2560x4224
        run "check-h6-short-piece-checked" h6 --check --shape 2560x2560x4224
      fi
    done
    ;;
  clang)
    # The GPU machine has no clang-19: clang's PTX is built where it is and carried in
    # .carry/ptx/<kernel>.clang.ptx, then run with the kernel's launch description.
    for k in $kernels; do
      if python3 -c "import json,sys; d=json.load(open('$out/kernels.json'));
sys.exit(0 if any(x['name']=='$k' and x['clang_ptx'] for x in d['kernels']) else 1)"; then
        run "clang-$k" "$k" --clang
      elif [ -f "$top/.carry/ptx/$k.clang.ptx" ]; then
        run "clang-$k" "$k" --ptx "$top/.carry/ptx/$k.clang.ptx"
      fi
    done
    ;;
  bugs)
    python3 - "$out/kernels.json" "$kernels" >"$out/variants.txt" <<'EOF'
import json, sys
kernels = sys.argv[2].split()
for k in json.load(open(sys.argv[1]))["kernels"]:
    if k["name"] in kernels:
        for v in k["variants"]:
            print(k["name"], v["bug"])
EOF
    while read -r k bug; do
      run "bug-$k-$bug" "$k" --bug "$bug" --check --dtype bf16 --timeout-ms 1000
      # A race that did not fire at the default sizes gets more tiles, waves and draws.
      if grep -q "bug-$k-$bug rc=0" "$out/rc.log"; then
        run "bug-$k-$bug-stress" "$k" --bug "$bug" --check --dtype bf16 --timeout-ms 1000 \
          --shape 8192x8192x1024 --repeat 3
      fi
    done <"$out/variants.txt"
    # With one k-tile there is no refill behind the early read: the wrong result alone shows.
    if grep -q "^h1 smem-raw-wait$" "$out/variants.txt"; then
      run "bug-h1-smem-raw-wait-small" h1 --bug smem-raw-wait --check --dtype bf16 \
        --shape 128x128x64
    fi
    # Without --check the host watchdog alone ends a hang.
    if grep -q "^h2 mbarrier-initial-phase$" "$out/variants.txt"; then
      run "bug-h2-mbarrier-initial-phase-plain" h2 --bug mbarrier-initial-phase --dtype bf16 \
        --shape 384x640x576 --watchdog-ms 3000
    fi
    ;;
  bench)
    for k in $kernels; do
      if [ "$k" = "$fast" ]; then
        # Twice: the difference between the two is the noise any comparison must beat.
        run "bench-$k" "$k" --bench --check --sizes "$sizes"
        run "bench-$k-again" "$k" --bench --check --sizes "$sizes"
      else
        run "bench-$k" "$k" --bench --sizes "$sizes"
      fi
    done
    ;;
  sweep)
    run "sweep-$fast" "$fast" --sweep
    ;;
  tune)
    IFS=';' read -ra variants <<<"${TUNE_DEFINES:-}"
    src=$(python3 -c "import json; print([k['source'] for k in json.load(open('$out/kernels.json'))['kernels'] if k['name']=='$fast'][0])")
    for v in "${variants[@]}"; do
      name=${v%%:*}
      defs=${v#*:}
      # shellcheck disable=SC2086
      nvcc -ptx -lineinfo -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a \
        -I"$top/reference_kernels/common" $defs "$top/$src" -o "$out/tune-$name.ptx" &&
        run "tune-$name" "$fast" --ptx "$out/tune-$name.ptx" --bench --sizes "$sizes"
    done
    ;;
  profile)
    size=${PROFILE_SIZE:-4096}
    # Warm-up launches alternate kernel and cuBLAS; skip the first two of each.
    ncu --clock-control none --set detailed -k "regex:${fast}_bf16|nvjet|xmma|gemm" \
      --launch-skip 4 --launch-count 2 \
      "$wsv" run "$fast" --bench --sizes "$size" --iters 2 --no-verify --no-isolate \
      >"$out/ncu-$size.txt" 2>&1
    echo "profile rc=$?" >>"$out/rc.log"
    grep -E "^  [a-z_0-9]+.*\(|Duration|Throughput|Pipe|Stall|L2 Hit|Registers|Elapsed Cycles|SM Frequency" \
      "$out/ncu-$size.txt" | head -60
    ;;
  gputests)
    for mode in check checked hang; do
      python3 "$top/tests/gpu/gpu_test.py" $mode "$wsv" "$out/traces" >"$out/gputest-$mode.log" 2>&1
      echo "gputest-$mode rc=$?" | tee -a "$out/rc.log"
    done
    ;;
  *)
    echo "unknown step $step" >&2
    ;;
  esac
done

python3 "$top/tools/gpu/summarize.py" "$out" >"$out/summary.txt"
if [ -n "${DEVICE_OUT:-}" ]; then
  tar czf "$DEVICE_OUT/device-out.tar.gz" -C "$out" .
  cp "$out/summary.txt" "$DEVICE_OUT/"
fi
cat "$out/summary.txt"
