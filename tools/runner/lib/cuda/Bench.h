// `wsv run --bench`: the kernel and cuBLAS timed in the same process on the same inputs, and
// with --check the plain build against the instrumented one.
#pragma once

#include "Cublas.h"
#include "GemmModule.h"

#include "wsv/runner/Plan.h"
#include "wsv/runner/Results.h"
#include "wsv/runner/Subprocess.h"

namespace wsv {
namespace runner {

/// Appends one BenchRow per size and dtype to R, emitting R after each. Method: every input set
/// is a fresh random draw, enough sets rotate that together they exceed 3x the L2 cache, so each
/// launch reads its operands from memory; 10 warm-up launches of each contender; then the
/// contenders alternate launch by launch (so clock and temperature drift hits all alike), each
/// launch bracketed by its own pair of CUDA events; the median of a contender's launches is its
/// time.
void runBench(const DriverApi &Driver, GemmModule &Module, Cublas &Blas, cudaStream_t Stream,
              const Job &J, const RunOptions &O, const cudaDeviceProp &Prop, JobResult &R,
              const EmitFn &Emit);

/// Median and the 10th/90th percentiles of Samples (sorted in place).
struct Percentiles {
  double P10 = 0, Median = 0, P90 = 0;
};
Percentiles percentiles(std::vector<float> &Samples);

} // namespace runner
} // namespace wsv
