// Helpers shared by the PTX front-end tests: parse text while collecting diagnostics, and find
// statements in the result.
#pragma once

#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace wsv {
namespace ptx {
namespace test {

/// The header every module needs; tests put their items after it.
extern const char ModuleHeader[];

struct Parsed {
  ParseResult Result;
  std::vector<Diagnostic> Diags;

  const Module &module() const { return *Result.M; }
  bool ok() const { return Result.ok(); }
  /// All diagnostic messages, one per line, for failure output.
  std::string messages() const;
};

/// Parses Text as a whole file.
Parsed parse(llvm::StringRef Text, const ParseOptions &Options = {});
/// Parses ModuleHeader followed by Items.
Parsed parseItems(llvm::StringRef Items, const ParseOptions &Options = {});
/// Parses Body as the body of `.visible .entry k()` (without the braces).
Parsed parseBody(llvm::StringRef Body, const ParseOptions &Options = {});

/// The function named Name, or nullptr.
const Function *findFunction(const Module &M, llvm::StringRef Name);
/// Instructions of F in source order, nested scopes included.
std::vector<const Instruction *> instructions(const Function &F);
/// The first instruction of the module's first function definition.
const Instruction *firstInstruction(const Module &M);
/// Every Statement of kind T in F's body, in source order.
template <typename T> std::vector<const T *> statementsOf(const Function &F) {
  std::vector<const T *> Out;
  forEachStatement(*F.body(), [&](const Statement &S, const Scope &) {
    if (const auto *X = llvm::dyn_cast<T>(&S))
      Out.push_back(X);
  });
  return Out;
}

/// Prints M to a string.
std::string print(const Module &M);

} // namespace test
} // namespace ptx
} // namespace wsv
