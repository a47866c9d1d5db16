//===- Parser.h - PTX text to a Module --------------------------------------------===//
//
// The entry points. Problems with the input are diagnostics (the module still comes back,
// with what could be parsed); problems with the environment, such as an unreadable file, are
// llvm::Error.
//
//   auto M = wsv::ptx::parseFile("kernel.ptx", Handler);
//   if (!M) { report M.takeError(); }
//   else if ((*M).Errors) { the diagnostics went to Handler }
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Diagnostics.h"
#include "wsv/ptx_parser/Module.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace wsv {
namespace ptx {

struct ParseOptions {
  unsigned ErrorLimit = DiagnosticEngine::DefaultErrorLimit;
};

struct ParseResult {
  std::unique_ptr<Module> M; ///< never null
  unsigned Errors = 0;
  bool ok() const { return Errors == 0; }
};

/// Files this large are refused: line numbers and counts in the AST are 32-bit.
constexpr uint64_t MaxSourceBytes = 0xFFFFFFFFull;

/// Parses Buffer. Diagnostics go to Handler (printed to errs() when Handler is null).
ParseResult parseBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer,
                        DiagnosticHandler Handler = nullptr, const ParseOptions &Options = {});

/// Parses Text, named Name in diagnostics. The text is copied.
ParseResult parseString(llvm::StringRef Text, llvm::StringRef Name = "<string>",
                        DiagnosticHandler Handler = nullptr, const ParseOptions &Options = {});

/// Reads Path ("-" is standard input) into memory. Fails with an llvm::Error when it cannot be
/// read or is larger than MaxSourceBytes (checked before reading when Path is a file).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readSourceFile(llvm::StringRef Path);

/// Reads and parses Path ("-" is standard input). Fails with an llvm::Error when the file
/// cannot be read or is larger than MaxSourceBytes.
llvm::Expected<ParseResult> parseFile(llvm::StringRef Path, DiagnosticHandler Handler = nullptr,
                                      const ParseOptions &Options = {});

} // namespace ptx
} // namespace wsv
