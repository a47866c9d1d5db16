//===- PtxInputCheck.h - what the PTX front end promises for any input ------------===//
//
// One function runs the whole front end on one input and checks its promises; the libFuzzer
// target and the replay tool (which runs saved inputs without fuzzing) both call it, so a
// finding and its regression test check exactly the same things. A broken promise prints what
// broke to stderr and aborts: libFuzzer records that as a crash, ctest as a failed test.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace wsv {
namespace fuzz {

struct CheckOptions {
  /// The input is PTX that ptxas accepts (the corpus, the generated kernels): the parser
  /// must report no error at all.
  bool ExpectClean = false;
  /// The name diagnostics show for the input.
  llvm::StringRef Name = "input.ptx";
};

/// Runs lexer, parser, diagnostics, AST walks, printer, reparse and structural equality on
/// Input, and aborts with a message on the first broken promise.
void checkPtxInput(llvm::StringRef Input, const CheckOptions &Options = {});

} // namespace fuzz
} // namespace wsv
