//===- Diagnostics.h - `wsv lint` findings as clang-style text ----------------------===//
//
//   h2.ptx:212:5: error: <fact>, <consequence> [check-name]
//       mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;
//       ^
//   h2.ptx:180:5: note: <related instruction>
//   h2_producer_consumer.cu:65:9: note: from this CUDA source line
//
// The PTX line and caret come from the parsed module's SourceMgr (cut around the caret on
// very long lines); the CUDA line is shown when its file can be read from here.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "LintResult.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace wsv {
namespace report {

/// CUDA source files read once each, for the lines that .loc points at.
class CudaSources {
public:
  /// The file's SourceMgr (buffer 1), or null when it cannot be read.
  llvm::SourceMgr *get(llvm::StringRef Path);

private:
  llvm::StringMap<std::unique_ptr<llvm::SourceMgr>> Files;
};

/// The statement of the kernel body an instruction comes from: the deepest frame of its .loc
/// chain in the file of the outermost frame (SourceRef::kernelFrame). The outermost frame
/// itself is often only the `__global__` wrapper or the macro that instantiates the kernel
/// template; inlined helpers from headers are inner frames. Null without a line.
inline const analyzer::CudaFrame *outerFrame(const analyzer::SourceRef &Where) {
  const analyzer::CudaFrame *K = Where.kernelFrame();
  return K && K->Line ? K : nullptr;
}

/// Prints what one input produced: its parse errors, or why it was not read, or its findings
/// with their notes.
void printText(const LintInput &In, llvm::raw_ostream &OS, bool Colors, CudaSources &Cuda);

/// `2 errors, 1 warning in 3 files`, with remarks and baseline suppressions when there are any.
std::string summaryLine(const LintTotals &T);

} // namespace report
} // namespace wsv
