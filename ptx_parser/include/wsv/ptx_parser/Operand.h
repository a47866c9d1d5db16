//===- Operand.h - instruction operands and initializer values --------------------===//
//
// An operand is 16 bytes: a pointer to its text in the source buffer, a length or element count,
// a kind and a few flags. Composite operands (addresses, vectors, pairs, call lists, symbol
// expressions) keep their elements in the same array as the instruction's operands, after the
// top-level ones, and find them by a relative index; so an operand must stay where the parser
// put it and is neither copied nor moved (use references).
//
//   %r1  %tid.x  $L__BB0_3  _  42  0x2AU  -7  0f3F800000  1.5  "nounroll"
//   [%r1+8]  [%r1+-8]  [sym]  [tmap, {%r1, %r2}]  {%f1, %f2, _}  %r5|%p2  (param0, param1)
//   generic(table)+16  $L__func_end0-$L__func_begin0
//
// Integer and floating-point values are decoded from the text on demand: the text is what the
// printer writes back, so printing loses nothing ptxas would see.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <optional>

namespace wsv {
namespace ptx {

class Parser;
struct OperandBuilder;

enum class OperandKind : uint8_t {
  Name,             ///< a register, variable, function or label: `%r1`, `P1`, `smem`
  SpecialRegister,  ///< `%tid.x`, `%laneid`, `%cluster_ctarank`, `%envreg3`
  Sink,             ///< `_`: a result nobody reads
  Integer,          ///< text is the literal without a leading '-', isNegated() says if one was there
  Float,            ///< `0f...`, `0d...` or decimal; negation as for Integer
  String,           ///< `"nounroll"`, quotes included in text()
  Expression,       ///< a constant expression such as `(2 + 3) * 4`; text() is its source span
  Address,          ///< `[base]`, `[base+offset]`, `[base, extra, ...]`
  Vector,           ///< `{a, b, _}`; in initializers also nested `{{1, 2}, {3, 4}}`
  Pair,             ///< `d|p`: two destinations
  List,             ///< `(a, b)`: call return and argument lists
  SymbolOffset,     ///< `sym+imm`, `sym-imm`, `generic(sym)+imm` in initializers and data
  SymbolDifference, ///< `label1-label2` in debug sections
};

const char *toString(OperandKind Kind);

class Operand {
public:
  Operand(const Operand &) = delete;
  Operand &operator=(const Operand &) = delete;

  OperandKind kind() const { return static_cast<OperandKind>(Kind); }
  bool is(OperandKind K) const { return kind() == K; }
  /// Where the operand starts in the source (the '[' of an address, '{' of a vector).
  const char *ptr() const { return Ptr; }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(Ptr); }

  /// The text of a leaf operand (Name, SpecialRegister, Sink, Integer, Float, String,
  /// Expression) and the
  /// base name of an address written as `[name]` or `[name+offset]`; empty otherwise.
  llvm::StringRef text() const {
    return isLeaf() || isInlineAddress() ? llvm::StringRef(Ptr, Len) : llvm::StringRef();
  }
  bool isLeaf() const { return kind() <= OperandKind::Expression; }
  /// A name that a scope can declare: registers, variables, labels, functions.
  bool isName() const { return kind() == OperandKind::Name; }

  /// `!%p` for a predicate operand, `-5` for a literal.
  bool isNegated() const { return Flags & FlagNegated; }
  /// `generic(sym)` in an initializer.
  bool isGeneric() const { return Flags & FlagGeneric; }

  /// Elements of a Vector, Pair, List, SymbolOffset, SymbolDifference, or of an address with
  /// extra parts; empty for leaves.
  llvm::ArrayRef<Operand> elements() const {
    if (isLeaf() || isInlineAddress())
      return {};
    return {this + Rel, Len};
  }

  /// Integer literals and constant expressions: the value with the sign applied, as 64-bit
  /// two's complement. Literals too large for 64 bits give std::nullopt.
  std::optional<int64_t> integerValue() const;
  /// Float literals: the value as a double (0f patterns are widened exactly).
  std::optional<double> floatValue() const;
  /// For a `0f`/`0d` literal, the bit pattern as written.
  std::optional<uint64_t> floatBits() const;

  // Addresses. The base is a register or symbol name, or an integer for absolute addresses.
  /// The base name: `%r1` in `[%r1+8]`; empty when the base is an integer.
  llvm::StringRef addressBaseName() const;
  /// The base as an operand when the address is written with extra parts or an integer base;
  /// nullptr for `[name]` and `[name+offset]`, which store the base name inline.
  const Operand *addressBaseOperand() const;
  /// Whether an offset was written (`[%r1+0]` has one, `[%r1]` has none).
  bool hasAddressOffset() const { return Flags & FlagHasOffset; }
  /// The byte offset, 0 when none was written; nullopt if it does not fit 64 bits.
  std::optional<int64_t> addressOffset() const;
  /// The parts after the first comma: `{%r1, %r2}` in `[tmap, {%r1, %r2}]`.
  llvm::ArrayRef<Operand> addressExtras() const;

  /// Pairs: the two destinations.
  const Operand &first() const { return elements()[0]; }
  const Operand &second() const { return elements()[1]; }

private:
  friend class Parser;
  friend struct OperandBuilder;
  Operand() = default;

  enum : uint8_t {
    FlagNegated = 1,
    FlagGeneric = 2,
    FlagHasOffset = 4,
    FlagInlineAddress = 8, ///< Address: base name in Ptr/Len, offset in Rel, no elements
  };
  bool isInlineAddress() const { return Flags & FlagInlineAddress; }

  const char *Ptr = nullptr;
  /// Elements: index of the first one relative to this operand. Inline addresses: the offset.
  int32_t Rel = 0;
  uint32_t Len : 24; ///< text length of leaves, element count of composites
  uint32_t Kind : 4;
  uint32_t Flags : 4;
};

static_assert(sizeof(Operand) == 16, "operands must stay compact: they dominate memory");

/// Special register names without a component (`%tid`, `%laneid`, `%envreg3`); names that start
/// with one of these followed by a `.x`-style component or nothing are special registers.
bool isSpecialRegisterName(llvm::StringRef Name);

} // namespace ptx
} // namespace wsv
