//===- Diagnostics.h - errors about PTX text at a location ------------------------===//
//
// Every problem with the input is reported here, at a location, in the clang style:
//
//   kernel.ptx:12:7: error: expected ']' after address
//       ld.shared.u32 %r1, [%r2+4;
//         ^
//
// Messages are lowercase, without a final period, tokens in quotes. Printing goes through
// llvm::SMDiagnostic, but the source line shown is cut to a window around the caret so that
// an error on a ten-megabyte line prints a line, not ten megabytes. After ErrorLimit errors
// the engine says so once and tells the parser to stop.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace wsv {
namespace ptx {

struct Diagnostic {
  llvm::SourceMgr::DiagKind Kind = llvm::SourceMgr::DK_Error;
  llvm::SMLoc Loc; ///< invalid for a diagnostic about the whole input
  std::string File;
  unsigned Line = 0;   ///< 1-based; 0 without a location
  unsigned Column = 0; ///< 1-based, in bytes
  std::string Message;
};

using DiagnosticHandler = std::function<void(const Diagnostic &)>;

class DiagnosticEngine {
public:
  /// At most this many errors are reported per input before parsing stops.
  static constexpr unsigned DefaultErrorLimit = 20;
  /// Characters of the source line shown on each side of the caret.
  static constexpr unsigned LineWindow = 100;

  /// Diagnostics for the buffer(s) of SM go to Handler; by default they are printed to errs().
  explicit DiagnosticEngine(const llvm::SourceMgr &SM, DiagnosticHandler Handler = nullptr,
                            unsigned ErrorLimit = DefaultErrorLimit);

  /// Reports an error at Loc; returns true so that parse steps can `return error(...)`.
  bool error(llvm::SMLoc Loc, const llvm::Twine &Message);
  void warning(llvm::SMLoc Loc, const llvm::Twine &Message);
  void note(llvm::SMLoc Loc, const llvm::Twine &Message);

  unsigned errorCount() const { return Errors; }
  unsigned warningCount() const { return Warnings; }
  /// True once the error limit was reached; the parser stops then.
  bool tooManyErrors() const { return LimitReached; }

  /// Prints D the way clang does, the source line cut around the caret.
  static void print(const Diagnostic &D, const llvm::SourceMgr &SM, llvm::raw_ostream &OS,
                    bool Colors);

private:
  void report(llvm::SourceMgr::DiagKind Kind, llvm::SMLoc Loc, const llvm::Twine &Message);

  const llvm::SourceMgr &SM;
  DiagnosticHandler Handler;
  unsigned ErrorLimit;
  unsigned Errors = 0;
  unsigned Warnings = 0;
  bool LimitReached = false;
};

/// A handler that prints every diagnostic to OS (colors when OS supports them).
DiagnosticHandler printingHandler(const llvm::SourceMgr &SM, llvm::raw_ostream &OS);

} // namespace ptx
} // namespace wsv
