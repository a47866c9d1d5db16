//===- Equality.h - structural equality of two modules ----------------------------===//
//
// Two modules are equal when they have the same statements with the same contents, whatever
// their layout, comments and locations. parse(print(parse(x))) must equal parse(x); the
// round-trip tests and the fuzzer check exactly that. The comparison is iterative, so deep
// nesting is fine, and on a difference it says where the first one is.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Module.h"

#include <string>

namespace wsv {
namespace ptx {

/// True when A and B are structurally equal. Otherwise, when Difference is given, it
/// receives a description of the first difference, located in A
/// ("a.ptx:12:2: opcode 'add.s32' differs from 'sub.s32'").
bool structurallyEqual(const Module &A, const Module &B, std::string *Difference = nullptr);

/// Operand trees, ignoring where they are.
bool operandsEqual(Operand A, Operand B);

} // namespace ptx
} // namespace wsv
