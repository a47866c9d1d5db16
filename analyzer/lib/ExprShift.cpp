//===- ExprShift.cpp - how an expression moves when an iteration number moves ---------===//
//
// The periodicity lemmas ask whether an expression of iteration k equals itself at
// k + p*M for every pass p. Z3 answers most of them at once, but not those that divide the
// iteration number by a constant at 64 bits and then keep a bit of the quotient: Triton
// computes a ring's phase as (~(i / 3)) & 1 from a 64-bit counter, and Z3 gave up on
// ((-(i / 3) + 1) % 2) repeating every 6 iterations. Such expressions are shifts and
// residues of a linear form, which a walk over the expression settles exactly:
// E(X + Q*S) = E(X) + c*S modulo 2^width for every S, with c from the rules below, and
// c = 0 is the lemma. A division (or a widening) is exact only where the dividend does not
// wrap: it must be m*X + b with small m and b, which the lemmas' iteration numbers (below
// 2^26) keep below 2^31.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/DenseMap.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

uint64_t mask(unsigned W) { return W >= 64 ? ~uint64_t(0) : (uint64_t(1) << W) - 1; }

/// m and b with E = m*X + b, where E is X, constants, sums and products by constants, with
/// 0 <= m <= 16 and |b| < 2^20 (so that m*X + b < 2^31 for X < 2^26). A constant with its top
/// bit set reads as negative (i - 1 is i + 0xffffffff).
bool smallLinear(const Expr *E, const Expr *X, uint64_t &M, int64_t &B) {
  const int64_t Bound = int64_t(1) << 20;
  if (E == X) {
    M = 1, B = 0;
    return true;
  }
  if (E->isConstant()) {
    M = 0, B = E->signedValue();
    return B < Bound && B > -Bound;
  }
  if (E->kind() == ExprKind::ZExt)
    return smallLinear(E->op(0), X, M, B);
  uint64_t M0, M1;
  int64_t B0, B1;
  if (E->kind() == ExprKind::Add && smallLinear(E->op(0), X, M0, B0) &&
      smallLinear(E->op(1), X, M1, B1)) {
    M = M0 + M1, B = B0 + B1;
    return M <= 16 && B < Bound && B > -Bound;
  }
  if (E->kind() == ExprKind::Mul && E->op(1)->isConstant() &&
      smallLinear(E->op(0), X, M0, B0)) {
    uint64_t F = E->op(1)->payload();
    if (F > 16)
      return false;
    M = M0 * F, B = B0 * int64_t(F);
    return M <= 16 && B < Bound && B > -Bound;
  }
  return false;
}

class Shift {
public:
  Shift(const Expr *X, uint64_t Q, uint64_t MinX) : X(X), Q(Q), MinX(MinX) {}

  /// c (modulo 2^width) with E(X + Q*S) = E(X) + c*S, or nothing.
  std::optional<uint64_t> of(const Expr *E) {
    auto It = Memo.find(E);
    if (It != Memo.end())
      return It->second;
    std::optional<uint64_t> C = compute(E);
    if (C)
      *C &= mask(E->width());
    Memo[E] = C;
    return C;
  }

private:
  const Expr *X;
  uint64_t Q, MinX;
  llvm::DenseMap<const Expr *, std::optional<uint64_t>> Memo;

  /// 0 when no operand moves.
  std::optional<uint64_t> still(const Expr *E) {
    for (const Expr *Op : E->ops()) {
      std::optional<uint64_t> C = of(Op);
      if (!C || *C)
        return std::nullopt;
    }
    return 0;
  }

  /// The coefficient of a division or residue's dividend when it is exact: a small linear
  /// form, whose shift m*Q the divisor D divides.
  std::optional<uint64_t> exactQuotient(const Expr *A, uint64_t D) {
    uint64_t M;
    int64_t B;
    if (!D || A->width() < 32 || !smallLinear(A, X, M, B) || (M * Q) % D ||
        int64_t(M * MinX) + B < 0)
      return std::nullopt; // (a dividend below 0 would wrap)
    return M * Q / D;
  }

  /// The value of a condition that is the same for X and every X + Q*S with X >= MinX:
  /// m*X + b == k (or !=) with m >= 1, false once m*MinX + b > k.
  std::optional<bool> decided(const Expr *C) {
    bool Negated = C->kind() == ExprKind::Not;
    if (Negated)
      C = C->op(0);
    if (C->kind() != ExprKind::Eq)
      return std::nullopt;
    const Expr *L = C->op(0), *R = C->op(1);
    if (L->isConstant())
      std::swap(L, R);
    uint64_t M;
    int64_t B;
    if (!R->isConstant() || L->width() < 32 || !smallLinear(L, X, M, B) || M == 0 ||
        int64_t(M * MinX) + B <= R->signedValue() || R->signedValue() < 0)
      return std::nullopt;
    return Negated;
  }

  std::optional<uint64_t> compute(const Expr *E) {
    if (E == X)
      return Q;
    if (E->isLeaf())
      return 0;
    const Expr *A = E->op(0);
    const Expr *Const = E->ops().size() == 2 && E->op(1)->isConstant() ? E->op(1) : nullptr;
    switch (E->kind()) {
    case ExprKind::Add: {
      std::optional<uint64_t> CA = of(A), CB = of(E->op(1));
      if (!CA || !CB)
        return std::nullopt;
      return *CA + *CB;
    }
    case ExprKind::Mul:
      if (Const) {
        std::optional<uint64_t> CA = of(A);
        if (!CA)
          return std::nullopt;
        return *CA * Const->payload();
      }
      return still(E);
    case ExprKind::Trunc:
      return of(A);
    case ExprKind::ZExt:
      if (std::optional<uint64_t> CA = of(A); CA && *CA == 0)
        return 0;
      return exactQuotient(A, 1);
    case ExprKind::Select:
      if (std::optional<bool> Taken = decided(A))
        return of(E->op(*Taken ? 1 : 2));
      return still(E);
    case ExprKind::UDiv:
      if (std::optional<uint64_t> CA = of(A); CA && *CA == 0)
        return still(E); // a dividend that does not move
      if (Const)
        return exactQuotient(A, Const->payload());
      return still(E);
    case ExprKind::URem:
    case ExprKind::And: {
      if (std::optional<uint64_t> CA = of(A); CA && *CA == 0)
        return still(E);
      // A residue by 2^k (or the mask 2^k - 1) keeps the low k bits: modular arithmetic.
      if (Const) {
        uint64_t V = Const->payload();
        uint64_t Mod = E->kind() == ExprKind::URem ? V : V + 1;
        if (Mod && (Mod & (Mod - 1)) == 0) {
          std::optional<uint64_t> CA = of(A);
          if (CA && (*CA & (Mod - 1)) == 0)
            return 0;
          if (E->kind() == ExprKind::And)
            return std::nullopt;
        }
        if (E->kind() == ExprKind::URem) {
          std::optional<uint64_t> C = exactQuotient(A, V);
          if (C)
            return 0; // the dividend moves by a multiple of V without wrapping
        }
      }
      return still(E);
    }
    default:
      return still(E);
    }
  }
};

} // namespace

bool wsv::analyzer::shiftInvariant(const Expr *E, const Expr *X, uint64_t Q, uint64_t MinX) {
  std::optional<uint64_t> C = Shift(X, Q, MinX).of(E);
  return C && *C == 0;
}
