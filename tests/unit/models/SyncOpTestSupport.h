//===- SyncOpTestSupport.h - one PTX instruction, parsed and decoded --------------===//
//
// The SyncOp tests decode instruction lines taken from real compiler output. A line is parsed
// inside a small kernel whose declarations give every register the type ptxas expects
// (%r: .b32, %rd: .b64, %p: .pred, %rs: .b16, %f: .f32), so the same text is valid input for
// ptxas as well.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace wsv {
namespace models {
namespace test {

/// The kernel a line is put in: `.version`, `.target`, declarations, the line, `exit`.
std::string wrapInKernel(llvm::StringRef Line, llvm::StringRef Target = "sm_100a");

/// One instruction line, parsed and decoded. The module lives as long as the object, and with
/// it the operands that records point to.
class Line {
public:
  explicit Line(llvm::StringRef Text, llvm::StringRef Target = "sm_100a");
  Line(const Line &) = delete;
  Line &operator=(const Line &) = delete;

  /// Whether the text parsed without errors into exactly one instruction before `exit`.
  bool parsed() const { return Inst != nullptr; }
  const ptx::Instruction &instruction() const { return *Inst; }
  const SyncDecodeResult &result() const { return Result; }
  const SyncOp &op() const { return Result.op(); }
  /// What the test prints when an expectation fails: the record or the reason.
  std::string describe() const;

private:
  ptx::ParseResult Parsed;
  const ptx::Instruction *Inst = nullptr;
  SyncDecodeResult Result;
};

/// The printed text of an operand (`[%r1+8]`, `{%r2, %r3}`, `_`); empty for an invalid one.
std::string text(ptx::Operand Op);

/// The roles of a record in order, as `role,role,...`: one string to compare.
std::string roleList(const SyncOp &Op);

} // namespace test
} // namespace models
} // namespace wsv
