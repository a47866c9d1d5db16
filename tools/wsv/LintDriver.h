//===- LintDriver.h - parse, build protocols and run the checks on many inputs ------===//
//
//   LintOptions O;            // checks, --kernel, -j
//   std::vector<std::vector<report::LintInput>> R = lintPaths({"a.ptx", "app.o"}, O);
//
// Each path is linted by one worker of a thread pool; R[i] holds what path i produced (one
// input for PTX text, one per PTX section for a CUDA object read through cuobjdump), so the
// output order is the command line's whatever the scheduling. Each worker owns its Z3
// solver: Z3 contexts are not thread-safe.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "../report/LintResult.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/ArrayRef.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace lint {

struct LintOptions {
  analyzer::CheckSelection Checks = analyzer::CheckSelection::all();
  std::string Kernel; ///< only entries of this name; empty for all
  unsigned Jobs = 0;  ///< workers; 0 for the hardware threads
  /// CTAs per cluster of the launch, for kernels whose PTX states none (--cluster-size); a
  /// kernel that states another makes its input bad (Unreadable, with the reason).
  std::optional<unsigned> ClusterSize;
  /// What runs on each protocol; unset runs the selected checks of the catalog. Tests put
  /// a check-shaped double here.
  std::function<std::vector<analyzer::Finding>(const analyzer::Protocol &, analyzer::Solver &)>
      Run;
};

std::vector<std::vector<report::LintInput>> lintPaths(llvm::ArrayRef<std::string> Paths,
                                                      const LintOptions &Options);

/// True when Bytes start like an ELF file or a fatbinary: an object whose PTX is read
/// through cuobjdump rather than parsed as text.
bool isCudaBinary(llvm::StringRef Bytes);

/// Splits `cuobjdump -ptx` output into its PTX sections, each named after the architecture
/// its header states (`sm_90a`, or `ptx` when there is none).
std::vector<std::pair<std::string, std::string>> splitCuobjdumpPtx(llvm::StringRef Output);

} // namespace lint
} // namespace wsv
