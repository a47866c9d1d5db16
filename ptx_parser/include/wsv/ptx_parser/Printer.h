//===- Printer.h - a Module back to PTX text --------------------------------------===//
//
// The printed text assembles with ptxas to the same machine code as the original: every
// token that matters is written as it was read (register names, opcodes, literals), only
// layout and comments change. Printing is deterministic, so parse(print(M)) is structurally
// equal to M (Equality.h) and print(parse(print(M))) == print(M) byte for byte.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Module.h"

#include "llvm/Support/raw_ostream.h"

namespace wsv {
namespace ptx {

void printModule(const Module &M, llvm::raw_ostream &OS);
/// One statement (a whole function for a Function, a whole scope for a Scope).
void printStatement(const Statement &S, llvm::raw_ostream &OS);
void printOperand(Operand Op, llvm::raw_ostream &OS);

} // namespace ptx
} // namespace wsv
