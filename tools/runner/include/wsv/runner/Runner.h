// `wsv run` end to end: plan the jobs, run each in a watched child process on the GPU, print.
#pragma once

#include "wsv/runner/Plan.h"
#include "wsv/runner/Results.h"
#include "wsv/runner/Subprocess.h"

namespace wsv {
namespace runner {

/// Runs one job in this process. Emit receives the cumulative result after each step (the
/// watching parent's heartbeat). A kernel that never finishes leaves the CUDA context unusable
/// and every later CUDA call blocking, so on a hang runJob emits the result and ends the process
/// with exit code 1.
JobResult runJob(const Job &J, const RunOptions &Options, const EmitFn &Emit);

/// The whole command; returns its exit code (0 pass, 1 failure, 2 usage or refusal).
int runMain(const RunOptions &Options);

} // namespace runner
} // namespace wsv
