// A watched child process: `wsv run` forks one per job before touching CUDA, so a kernel that
// hangs or traps (which poisons the CUDA context for good) costs only its own job, and the
// parent is a watchdog no GPU state can block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace wsv {
namespace runner {

struct ChildOutcome {
  std::string LastLine; ///< the last complete line the child emitted
  bool Killed = false;  ///< the parent killed it after SilenceLimitMs without a line
  bool Exited = false;  ///< exited normally, with ExitCode
  int ExitCode = 0;
  int Signal = 0;       ///< the signal that ended it, if any
  std::string Error;    ///< fork or pipe failure
};

using EmitFn = std::function<void(const std::string &Line)>;

/// Runs Body in a forked child. Body reports through Emit (one line per call, no newlines in it)
/// and returns the child's exit code. The parent kills the child when SilenceLimitMs pass with
/// no new line.
ChildOutcome runWatchedChild(const std::function<int(const EmitFn &Emit)> &Body,
                             uint32_t SilenceLimitMs);

} // namespace runner
} // namespace wsv
