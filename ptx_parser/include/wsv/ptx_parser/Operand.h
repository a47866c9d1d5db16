//===- Operand.h - instruction operands and initializer values --------------------===//
//
//   %r1  %tid.x  $L__BB0_3  _  42  0x2AU  -7  0f3F800000  1.5  "nounroll"  (2 + 3) * 4
//   [%r1+8]  [%r1+-8]  [sym]  [tmap, {%r1, %r2}]  {%f1, %f2, _}  %r5|%p2  (param0, param1)
//   generic(table)+16  $L__func_end0-$L__func_begin0
//
// Operands are the bulk of a module, so each is stored in 8 bytes (an OperandSlot): where its
// text starts, as an offset from the start of the statement that owns it, its length, a kind
// and flags. Composite operands (addresses, vectors, pairs, call lists, symbol expressions)
// keep their elements in the same array, after the top-level operands. What code works with
// is Operand, a 16-byte handle (the owning statement's start plus the slot), returned by
// value from OperandRange.
//
// Integer and floating-point values are decoded from the text on demand: the text is what
// the printer writes back, so printing loses nothing ptxas would see.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cassert>
#include <cstdint>
#include <iterator>
#include <optional>

namespace wsv {
namespace ptx {

enum class OperandKind : uint8_t {
  Name,             ///< a register, variable, function or label: `%r1`, `P1`, `smem`
  SpecialRegister,  ///< `%tid.x`, `%laneid`, `%cluster_ctarank`, `%envreg3`
  Sink,             ///< `_`: a result nobody reads
  Integer,          ///< text is the literal without a leading '-'; isNegated() says if one was there
  Float,            ///< `0f...`, `0d...` or decimal; negation as for Integer
  String,           ///< `"nounroll"`, quotes included in text()
  Expression,       ///< a constant expression such as `(2 + 3) * 4`; text() is its source span
  Address,          ///< `[base]`, `[base+offset]`, `[base, extra, ...]`
  Vector,           ///< `{a, b, _}`; in initializers also nested `{{1, 2}, {3, 4}}`
  Pair,             ///< `d|p`: two destinations
  List,             ///< `(a, b)`: call return and argument lists
  SymbolOffset,     ///< `sym+imm`, `sym-imm`, `generic(sym)+imm` in initializers and data
  SymbolDifference, ///< `label1-label2` in debug sections
  Assignment,       ///< `filter_mode = nearest` in a `.samplerref` initializer
};

const char *toString(OperandKind Kind);

namespace detail {

/// The stored form of an operand; see Operand for what the fields mean.
struct OperandSlot {
  enum : uint8_t {
    FlagNegated = 1,
    FlagGeneric = 2,
    FlagHasOffset = 4,
    /// Address written `[name]` or `[name+offset]`: Offset locates the name, Len holds the
    /// name's length (low 8 bits) and the offset (high 16 bits, signed); no elements.
    FlagInlineAddress = 8,
  };
  /// Leaves and inline addresses: text start minus the owning statement's start.
  /// Composites: index of the first element minus the index of this slot.
  int32_t Offset;
  uint32_t Len : 24; ///< text length of leaves; element count of composites
  uint32_t Kind : 4;
  uint32_t Flags : 4;
};
static_assert(sizeof(OperandSlot) == 8, "operands must stay compact: they dominate memory");

} // namespace detail

class OperandRange;

/// A handle to one operand. Cheap to copy; valid as long as its Module.
class Operand {
public:
  Operand() = default;
  Operand(const char *Base, const detail::OperandSlot *Slot) : Base(Base), Slot(Slot) {}

  bool isValid() const { return Slot != nullptr; }
  explicit operator bool() const { return isValid(); }

  OperandKind kind() const { return static_cast<OperandKind>(Slot->Kind); }
  bool is(OperandKind K) const { return kind() == K; }
  bool isLeaf() const { return kind() <= OperandKind::Expression; }
  /// A name that a scope can declare: registers, variables, labels, functions.
  bool isName() const { return kind() == OperandKind::Name; }

  /// Where the operand starts in the source: its text, or for a composite its first
  /// element (the owning statement's start when it has none).
  const char *ptr() const;
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(ptr()); }

  /// The text of a leaf (Name, SpecialRegister, Sink, Integer, Float, String, Expression);
  /// empty for composites.
  llvm::StringRef text() const {
    return isLeaf() ? llvm::StringRef(Base + Slot->Offset, Slot->Len) : llvm::StringRef();
  }

  /// `!%p` for a predicate operand, `-5` for a literal.
  bool isNegated() const { return Slot->Flags & detail::OperandSlot::FlagNegated; }
  /// `generic(sym)` in an initializer.
  bool isGeneric() const { return Slot->Flags & detail::OperandSlot::FlagGeneric; }

  /// Elements of a Vector, Pair, List, SymbolOffset or SymbolDifference, and of an address
  /// written with an integer base or extra parts (base, offset if any, extras); empty for
  /// leaves and for `[name]` / `[name+offset]` addresses.
  OperandRange elements() const;

  /// Integer literals and constant expressions: the value with the sign applied, as 64-bit
  /// two's complement; std::nullopt for anything else or a literal too large for 64 bits.
  std::optional<int64_t> integerValue() const;
  /// Float literals: the value as a double (0f patterns are widened exactly).
  std::optional<double> floatValue() const;
  /// For a `0f`/`0d` literal, the bit pattern as written.
  std::optional<uint64_t> floatBits() const;

  // Addresses. The base is a register or symbol name, or an integer for absolute addresses.
  /// The base name: `%r1` in `[%r1+8]`; empty when the base is an integer.
  llvm::StringRef addressBaseName() const;
  /// The base of an absolute address such as `[0x100]`; nullopt when the base is a name.
  std::optional<int64_t> addressBaseInteger() const;
  /// Whether an offset was written (`[%r1+0]` has one, `[%r1]` has none).
  bool hasAddressOffset() const { return Slot->Flags & detail::OperandSlot::FlagHasOffset; }
  /// The byte offset, 0 when none was written; nullopt if it does not fit 64 bits.
  std::optional<int64_t> addressOffset() const;
  /// The parts after the first comma: `{%r1, %r2}` in `[tmap, {%r1, %r2}]`.
  OperandRange addressExtras() const;
  /// `[name]` or `[name+offset]` stored in one slot (no elements to look at).
  bool isInlineAddress() const { return Slot->Flags & detail::OperandSlot::FlagInlineAddress; }

  /// Pairs, SymbolOffset, SymbolDifference and Assignment: the first and second element.
  Operand first() const;
  Operand second() const;

  const detail::OperandSlot *slot() const { return Slot; }
  const char *base() const { return Base; }

private:
  const char *Base = nullptr;
  const detail::OperandSlot *Slot = nullptr;
};

/// Operands in an array, handed out as Operand handles.
class OperandRange {
public:
  class iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Operand;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Operand;

    iterator() = default;
    iterator(const char *Base, const detail::OperandSlot *P) : Base(Base), P(P) {}
    Operand operator*() const { return Operand(Base, P); }
    Operand operator[](difference_type N) const { return Operand(Base, P + N); }
    iterator &operator++() { ++P; return *this; }
    iterator operator++(int) { iterator T = *this; ++P; return T; }
    iterator &operator--() { --P; return *this; }
    iterator &operator+=(difference_type N) { P += N; return *this; }
    iterator operator+(difference_type N) const { return iterator(Base, P + N); }
    difference_type operator-(const iterator &O) const { return P - O.P; }
    bool operator==(const iterator &O) const { return P == O.P; }
    bool operator!=(const iterator &O) const { return P != O.P; }
    bool operator<(const iterator &O) const { return P < O.P; }

  private:
    const char *Base = nullptr;
    const detail::OperandSlot *P = nullptr;
  };

  OperandRange() = default;
  OperandRange(const char *Base, const detail::OperandSlot *Begin, size_t Size)
      : Base(Base), Begin(Begin), Count(Size) {}

  iterator begin() const { return iterator(Base, Begin); }
  iterator end() const { return iterator(Base, Begin + Count); }
  size_t size() const { return Count; }
  bool empty() const { return Count == 0; }
  Operand operator[](size_t I) const {
    assert(I < Count && "operand index out of range");
    return Operand(Base, Begin + I);
  }
  Operand front() const { return (*this)[0]; }
  Operand back() const { return (*this)[Count - 1]; }
  OperandRange drop_front(size_t N = 1) const {
    assert(N <= Count && "dropping more operands than there are");
    return OperandRange(Base, Begin + N, Count - N);
  }

private:
  const char *Base = nullptr;
  const detail::OperandSlot *Begin = nullptr;
  size_t Count = 0;
};

inline OperandRange Operand::elements() const {
  if (isLeaf() || isInlineAddress())
    return {};
  return OperandRange(Base, Slot + Slot->Offset, Slot->Len);
}
inline Operand Operand::first() const { return elements()[0]; }
inline Operand Operand::second() const { return elements()[1]; }

/// Special register names without a component (`%tid`, `%laneid`, `%envreg3`); names that start
/// with one of these followed by a `.x`-style component or nothing are special registers.
bool isSpecialRegisterName(llvm::StringRef Name);

} // namespace ptx
} // namespace wsv
