//===- PtxasRun.h - how long ptxas takes to assemble a PTX file --------------------===//
//
// The yardstick for parse speed: `ptxas -arch=<the file's target>` on the same file, timed
// in CPU time (as the parse is) and wall clock, killed after a time limit of wall-clock time,
// its heap capped at 8 GB. Like
// tools/scripts/ptx-roundtrip.py, a file is assembled as an executable, and as relocatable
// code (--compile-only) only when ptxas says an extern symbol is unresolved.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace wsv {
namespace bench {

struct PtxasRun {
  enum Outcome { Assembled, Failed, TimedOut } Result = Failed;
  double CpuSeconds = 0;    ///< user + system time of the run that counted (wall if unknown)
  double WallSeconds = 0;
  uint64_t PeakBytes = 0;   ///< ptxas's peak resident set, when the system reports it
  bool Relocatable = false; ///< assembled with --compile-only
  std::string Message;      ///< why it failed: ptxas's first error line, or the timeout
};

/// Assembles Path for Arch with the ptxas at Ptxas, writing scratch files to ScratchDir.
PtxasRun runPtxas(llvm::StringRef Ptxas, llvm::StringRef Path, llvm::StringRef Arch,
                  unsigned TimeoutSeconds, llvm::StringRef ScratchDir);

} // namespace bench
} // namespace wsv
