//===- SolverZ3Integers.h - Expr questions as linear integer arithmetic -------------===//
//
// The lemmas of the parametric argument are linear: loop counters, K / 64 and tile counts,
// added, scaled by constants, divided by constants and compared. As bit-vectors Z3 proves
// them by reasoning about carries, bit by bit: a lemma of Triton's persistent matmul took
// 700-900 ms to prove and gave up within its budget, and the same lemma over integers took
// 5 ms. So a predicate whose operations all have an exact linear reading is encoded over
// integers, each value of width w as its unsigned value in [0, 2^w): an addition that may
// wrap becomes `s >= 2^w ? s - 2^w : s`, a product by a negative constant -n
// `n * a == 0 ? 0 : 2^w - n * a`, a mask of contiguous bits a difference of two
// remainders, a signed comparison one of values moved down by 2^w above 2^(w-1). Each term carries bounds of its value, so the
// wrap is left out where the operands' bounds rule it out (the common case: counters far
// below 2^32). The answers are those of the bit-vector encoding, exactly; a predicate with
// an operation that has no linear reading (a product or quotient of two unknowns, a
// bitwise or, a shift by an unknown amount, mapa) is not encoded, and goes to bit-vectors,
// as is one where Z3's integer search does badly: the value of a product that wraps more
// than once (a remainder by 2^w of a much larger term), or a quotient of a value that may
// have wrapped. A remainder by a power of two reads a sum or product without its wraps,
// which leave the low bits as they are.
//
//===----------------------------------------------------------------------------------===//
#ifndef WSV_ANALYZER_LIB_SOLVERZ3INTEGERS_H
#define WSV_ANALYZER_LIB_SOLVERZ3INTEGERS_H

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

#include <z3++.h>

namespace wsv::analyzer {

class IntegerEncoder {
public:
  explicit IntegerEncoder(z3::context &C) : C(C) {}

  /// The predicate (width 1), or with Negate its negation, as a Z3 formula over integers
  /// and booleans to assert; nothing where an operation in it has no exact linear reading.
  /// The bounds its top-level conjuncts set on leaves (`k < 4096` in a lemma's hypothesis)
  /// hold in every model of it, so they bound those leaves' terms too: a product or sum of
  /// them that cannot wrap within them is read without a wrap.
  std::optional<z3::expr> assertion(const Expr *Predicate, bool Negate);

  /// Each leaf's bounds: its width's, narrowed by its range and the conjuncts.
  void addRanges(z3::solver &S);

private:
  using Wide = unsigned __int128;
  /// A value: a Bool for width 1, else an Int in [Lo, Hi], within [0, 2^width). Raw, where
  /// set, is a term without the wraps, equal to X modulo 2^width: what a remainder by a
  /// power of two (a mask, a truncation, a slot) reads, so that it needs no wrap.
  struct Term {
    z3::expr X;
    Wide Lo, Hi;
    std::optional<z3::expr> Raw = std::nullopt;
  };
  static z3::expr raw(const Term &T) { return T.Raw ? *T.Raw : T.X; }

  /// Fixes a leaf that the conjunct E (negated with Negate) equates with a constant.
  void learnValue(const Expr *E, bool Negate);
  /// Narrows the bounds of a leaf that the conjunct E orders with a constant or a term
  /// (T < 4096, k < T, k < K / 64), from the other side's bounds.
  void learnOrder(const Expr *E, bool Negate);
  /// A leaf's bounds: its range's, narrowed by the conjuncts.
  std::pair<Wide, Wide> bounds(const Expr *Leaf);
  std::optional<Term> encode(const Expr *E);
  std::optional<Term> build(const Expr *E);
  std::optional<Term> buildPredicate(const Expr *E);
  std::optional<Term> buildArithmetic(const Expr *E);
  z3::expr num(Wide V);
  /// a + b for two values of width W, wrapped as bit-vectors wrap.
  Term addWrapped(const Term &A, const Term &B, unsigned W);
  /// a * c for a constant c, wrapped.
  std::optional<Term> scaled(const Term &A, uint64_t Factor, unsigned W);
  /// a mod 2^Bits, for Bits at most a's width.
  Term lowBits(const Term &A, unsigned Bits);
  /// Choice, a wrap of a sum or product, recorded for dividesWrap.
  z3::expr wrap(const z3::expr &Choice);
  /// Whether A's value has a wrap in it: a quotient or remainder of it (but by a power of
  /// two, which reads Raw) stays with bit-vectors. Z3's integer search spent seconds on
  /// H2's `(4 * (T / 4) - 4) / 4` where T / 4 may be 0, and bit-vectors milliseconds.
  bool dividesWrap(const Term &A) const;
  /// Whether F reads the value of a product that wraps more than once (a Wrapped constant).
  bool readsWrappedProduct(const z3::expr &F) const;
  /// Whether F has a subterm with one of the ids.
  static bool mentions(const z3::expr &F, const llvm::DenseSet<unsigned> &Ids);
  /// The signed reading of a value of width W.
  z3::expr signedValue(const Term &A, unsigned W);
  /// A width-1 operand as 0 or 1.
  Term asNumber(const Term &B);

  z3::context &C;
  unsigned Leaves = 0;
  llvm::DenseMap<const Expr *, std::optional<Term>> Memo;
  llvm::DenseMap<const Expr *, std::pair<Wide, Wide>> Bounds; ///< of leaves, from conjuncts
  llvm::SmallVector<std::pair<const Expr *, bool>, 8> Orders; ///< conjuncts ordering a leaf
  std::vector<std::pair<const Expr *, z3::expr>> LeafBounds;
  /// Ids of stand-ins for the values of products that wrap more than once, left undefined:
  /// such a value may only be read modulo a power of two, through its Raw form.
  llvm::DenseSet<unsigned> Wrapped;
  std::vector<z3::expr> Kept; ///< the stand-ins, alive while their ids are in use
  llvm::DenseSet<unsigned> Wraps; ///< ids of the wraps' choices
};

} // namespace wsv::analyzer

#endif
