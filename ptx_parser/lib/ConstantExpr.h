//===- ConstantExpr.h - PTX constant expressions (internal) -----------------------===//
//
// PTX lets an integer constant be an expression: `(1 << 4) + 3`, `(0x100 - 1) & 0xF0`,
// `(.s64) -1 >> 3`. The operators and their precedence are C's; arithmetic is 64-bit, unsigned
// when an operand is (a `U` literal, a literal too large for .s64, a `(.u64)` cast).
//
// One evaluator serves the parser, which runs it over its own token stream to find where the
// expression ends and to reject bad ones at their location, and Operand::integerValue(),
// which runs it again over the stored text.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Token.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace wsv {
namespace ptx {

struct ConstantValue {
  uint64_t Bits = 0;
  bool Unsigned = false;
};

struct ConstantError {
  const char *Ptr = nullptr;
  const char *Message = nullptr;
};

/// Tokens that can continue an expression after an operand: binary operators and '?'.
bool isBinaryOperator(TokenKind Kind);

/// Parses and evaluates the expression that starts at Cur. Advance() must move Cur to the
/// next token. On return Cur is the first token after the expression. Returns true on error.
bool evaluateConstantExpression(Token &Cur, llvm::function_ref<void()> Advance,
                                ConstantValue &Value, ConstantError &Error);

/// Evaluates the expression text of an Expression operand.
bool evaluateConstantText(llvm::StringRef Text, ConstantValue &Value);

} // namespace ptx
} // namespace wsv
