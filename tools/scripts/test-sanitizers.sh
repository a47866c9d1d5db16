#!/usr/bin/env bash
# The sanitizer part of CI (test.sh runs it after the main build and tests):
#  1. the unit, lit and fuzz-replay tests built with AddressSanitizer and
#     UndefinedBehaviorSanitizer (-DWSV_SANITIZE=ON) in their own folder, and the PTX the main
#     build generated replayed through the front end's checks under the sanitizers;
#  2. when clang-19 with libFuzzer is installed, a short fuzz run of the PTX front end seeded
#     with the corpus, the generated PTX and the regression inputs (tests/fuzz/README.md).
# Any failing test, sanitizer report (leaks included) or fuzz finding fails the script.
#
# The ASan build leaves out what it cannot add to: no kernels are compiled (WSV_KERNELS=OFF;
# the main build's PTX is replayed instead), no benchmarks, and neither the ptxas round trips of
# tests/corpus (ptxas dominates them, and the main build runs them) nor the GPU tests.
#
# Environment: WSV_ASAN_BUILD_DIR, WSV_FUZZ_BUILD_DIR (default build-asan, build-fuzz),
# WSV_FUZZ_SECONDS (default 60; 0 skips fuzzing), WSV_JOBS.
set -euo pipefail
source "$(dirname "$0")/common.sh"

asan=${WSV_ASAN_BUILD_DIR:-$top/build-asan}
fuzz=${WSV_FUZZ_BUILD_DIR:-$top/build-fuzz}
fuzz_seconds=${WSV_FUZZ_SECONDS:-60}
start=$SECONDS

# Stop at the first report, with a stack; leaks count as findings. allow_user_poisoning=0:
# LLVM's BumpPtrAllocator poisons its free slab space only where the header is compiled with
# ASan, and the LLVM Support library we link (Debian's) is not, so memory that library hands
# out (UniqueStringSaver::save) stays poisoned and every write to it would be reported.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

echo "== sanitizer build and tests ($asan)"
# Debug keeps the asserts on; -O1 -g1 compiles faster than -O2 -g and still gives sanitizer
# reports file and line. clang 19 (install-deps.sh installs it) builds it: instrumenting, it
# compiles faster than g++ (the whole build 623 s against 743 s on CI's two cores), and the
# suite then passes under a second compiler (clang found a test that leaned on g++'s order of
# evaluating arguments).
compiler=()
if command -v clang++-19 >/dev/null; then
  compiler=(-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19)
fi
configure "$asan" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "${compiler[@]}" \
  -DWSV_SANITIZE=ON -DWSV_KERNELS=OFF -DWSV_BENCHMARKS=OFF "-DWSV_PTX_DIR=$build/ptx"
cmake --build "$asan" -j "$jobs"
# Left out besides: the symmetry cross-check, which repeats the main build's searches with and
# without symmetry over every small instance (9 of the sanitizer run's 15 minutes; the
# symmetry code itself runs here in the other explorer tests), and the two comparisons of
# Z3's bounded search with the explorer, whose time is Z3's own (not instrumented) and which
# took 134 s and 131 s here, the encoding they exercise running in VerifyTest's other tests.
# Nor the tests that repeat whole proofs or searches over every kernel and variant (the
# reduction against the full search, packed states, every kernel proved and variant refuted,
# the checked builds, one thread against three, the reduction against the full search past
# every deadlock): 194, 70, 168, 114 and 85 s here, 5 of the sanitizer run's minutes, on code
# the other explorer and proof tests run here too (ExploreReductionTest's race behind a
# deadlock runs the search past deadlocks here). Nor the
# three that prove H5's and B4's thresholds and tile counts for every K (48, 42 and 26 s
# here): lit's reference-every-k.test runs B4's merged tile counts and H5 under the
# sanitizers, and the smaller proof tests the rest of that code. Nor the one that proves H5
# and B5 again with the tile cycle merged and unmerged (46 s). Nor the unit tests that explore
# H6's launches with a bug seeded in the model (the launches drawn for unrun steps, the
# coverage launches, the stream-K launch, the proof where the stream-K term is 0: 116, 63,
# 78, 31 and 32 s here), which had brought CI past its 30 minutes: the same searches of H6
# run here through the command line, in lit's coverage-launches.test and launch.test. Nor
# the proof of Triton's Hopper persistent matmul for every K and tile count (42 s here):
# the unflattened programs' exactness test and the Blackwell kernel's bug test run here.
# Nor verify.mutants (350 runs of wsv verify on mutated reference kernels, 2 minutes here).
ctest --test-dir "$asan" --output-on-failure -j "$jobs" \
  -E '^corpus\.|^ExploreDirectedTest\.|^ExploreCoverageTest\.|^ExploreKernelsTest\.(SymmetryAgreesWithoutIt|ReductionAgreesWithTheFullSearch|PackedStatesGiveTheSameSearch|PastDeadlocksTheReductionFindsWhatTheFullSearchFinds)$|^ExploreAllTripsTest\.(ReferenceKernelsProvedVariantsRefuted|CheckedBuildsGetThePlainBuildsVerdicts|ExplorationsRunAtOnceGiveTheResultOfRunningThemInTurn|EachRoleHasAThresholdOfItsOwn|TheRingsWrapComesBeforeTwoTilesAndItsRaceIsCut|TheTileCountsOfAClassAreExploredAsOneOrTwoSystems|ExitsInsideTheCycleOfTilesProveWhatTwoSystemsProve)$|^ExploreLaunchTest\.ABugInTheStreamKPiecesIsFoundOnTheLaunch$|^ExploreRestrictionTest\.H6IsProvedForEveryLaunchWithoutStreamK$|^ExplorerZ3AgreementTest\.|^VerifyTest\.ExplorerAndZ3AgreeOnSmallTripCounts$|^ExploreUnflattenTest\.HopperPersistentMatmulIsProvedAndItsPhaseBugFound$|^verify\.mutants$' \
  -LE gpu

generated=()
for dir in "$build/ptx" "$build/ptx-corpus"; do
  if compgen -G "$dir/*.ptx" >/dev/null; then
    generated+=("$dir")
  fi
done
if [ ${#generated[@]} -gt 0 ]; then
  echo "== generated PTX through the front end's checks under the sanitizers"
  # It names every input it replays on stderr; that log matters only when one fails.
  log="$asan/replay-generated.log"
  if ! "$asan/bin/wsv_ptx_fuzz_replay" --expect-clean "${generated[@]}" 2>"$log"; then
    tail -n 80 "$log" >&2
    exit 1
  fi
fi

# libFuzzer comes with clang's compiler-rt (libclang-rt-19-dev); without it there is no fuzz run.
fuzzer_available() {
  command -v clang++-19 >/dev/null &&
    echo 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }' |
      clang++-19 -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null
}
if [ "$fuzz_seconds" -gt 0 ] && fuzzer_available; then
  echo "== fuzzing the PTX front end for $fuzz_seconds s ($fuzz)"
  configure "$fuzz" -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 -DWSV_FUZZ=ON \
    -DWSV_KERNELS=OFF -DWSV_RUNNER=OFF -DWSV_BENCHMARKS=OFF \
    "-DWSV_FUZZ_SEED_DIRS=$build/ptx;$build/ptx-corpus"
  "$top/tests/fuzz/run-fuzz.sh" "$fuzz" "$fuzz_seconds"
elif [ "$fuzz_seconds" -gt 0 ]; then
  echo "== no fuzz run: clang++-19 with libFuzzer is missing (apt-get install clang-19 libclang-rt-19-dev)"
fi
echo "== sanitizers: clean ($((SECONDS - start)) s)"
