//===- ExprLogic.cpp - simplifying builders for bits, predicates and selects ------===//
//
// Predicates are kept in a small canonical vocabulary so that a condition and its negation
// meet: x == y (and not(x == y) for x != y), x < c, c <= x, and their signed forms. A branch
// condition and its fall-through (the negation) are then recognized as complementary when the
// paths join again.
//
//===----------------------------------------------------------------------------------===//
#include "ExprLinear.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace wsv::analyzer;

namespace {
bool isNonNegative(const Expr *E) { return E->range().Hi < (1ull << (E->width() - 1)); }

// Conjuncts (or disjuncts) of a predicate, flattened.
void flatten(const Expr *E, ExprKind Kind, llvm::SmallVectorImpl<const Expr *> &Out) {
  if (E->is(Kind)) {
    flatten(E->op(0), Kind, Out);
    flatten(E->op(1), Kind, Out);
  } else {
    Out.push_back(E);
  }
}

void sortUnique(llvm::SmallVectorImpl<const Expr *> &V) {
  std::sort(V.begin(), V.end(), [](const Expr *A, const Expr *B) { return A->id() < B->id(); });
  V.erase(std::unique(V.begin(), V.end()), V.end());
}
} // namespace

//===- Bitwise and logical operations ---------------------------------------------------===//

const Expr *ExprContext::bitNot(const Expr *A) {
  const unsigned W = A->width();
  if (A->isConstant())
    return constant(~A->payload(), W);
  if (W > 1)
    return sub(constant(mask(W), W), A); // ~x = -x - 1, kept linear
  switch (A->kind()) {
  case ExprKind::Not:
    return A->op(0);
  case ExprKind::ULt:
    return ule(A->op(1), A->op(0));
  case ExprKind::ULe:
    return ult(A->op(1), A->op(0));
  case ExprKind::SLt:
    return sle(A->op(1), A->op(0));
  case ExprKind::SLe:
    return slt(A->op(1), A->op(0));
  // Negations go to the leaves (De Morgan), so `!(!elected || k == 0)` is a conjunction.
  case ExprKind::And:
    return bitOr(bitNot(A->op(0)), bitNot(A->op(1)));
  case ExprKind::Or:
    return bitAnd(bitNot(A->op(0)), bitNot(A->op(1)));
  default:
    return make(ExprKind::Not, 1, {A});
  }
}

static bool isLowMask(uint64_t C) { return C != 0 && llvm::isPowerOf2_64(C + 1); }

/// Low bits of E known to be zero.
static unsigned knownTrailingZeros(const Expr *E) {
  const unsigned W = E->width();
  switch (E->kind()) {
  case ExprKind::Constant:
    return E->payload() ? std::min<unsigned>(llvm::countr_zero(E->payload()), W) : W;
  case ExprKind::Mul:
    return std::min(W, knownTrailingZeros(E->op(0)) + knownTrailingZeros(E->op(1)));
  case ExprKind::Add:
  case ExprKind::Or:
  case ExprKind::Select:
    return std::min(knownTrailingZeros(E->ops().back()),
                    knownTrailingZeros(E->ops()[E->ops().size() - 2]));
  case ExprKind::And:
    return std::max(knownTrailingZeros(E->op(0)), knownTrailingZeros(E->op(1)));
  case ExprKind::ZExt:
    return knownTrailingZeros(E->op(0));
  default:
    return 0;
  }
}

const Expr *ExprContext::bitAnd(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "and of different widths");
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (W == 1) {
    llvm::SmallVector<const Expr *, 8> Terms;
    flatten(A, ExprKind::And, Terms);
    flatten(B, ExprKind::And, Terms);
    sortUnique(Terms);
    llvm::SmallVector<const Expr *, 8> Kept;
    llvm::SmallPtrSet<const Expr *, 8> Present(Terms.begin(), Terms.end());
    for (const Expr *T : Terms) {
      if (T->isFalse())
        return T;
      if (T->isTrue())
        continue;
      if (Present.count(bitNot(T)))
        return boolean(false);
      Kept.push_back(T);
    }
    if (Kept.empty())
      return boolean(true);
    const Expr *R = Kept[0];
    for (unsigned I = 1; I < Kept.size(); ++I)
      R = make(ExprKind::And, 1, {R, Kept[I]});
    return R;
  }
  if (A->isConstant())
    std::swap(A, B);
  if (B->isConstant()) {
    uint64_t C = B->payload();
    if (A->isConstant())
      return constant(A->payload() & C, W);
    if (C == 0)
      return B;
    if (C == M || A->range().Hi <= (isLowMask(C) ? C : 0))
      return A;
    // x & (2^n - 1) is x % 2^n; x & -2^n is (x / 2^n) * 2^n.
    if (isLowMask(C))
      return urem(A, constant(C + 1, W));
    uint64_t Low = (~C) & M;
    if (isLowMask(Low))
      return mul(udiv(A, constant(Low + 1, W)), constant(Low + 1, W));
    // (x * 2^k) & c, c without its low k bits set, is (x & (c >> k)) * 2^k: a masked stage
    // index scaled to a barrier stride.
    if (A->is(ExprKind::Mul) && A->op(1)->isConstant() && llvm::isPowerOf2_64(A->op(1)->payload())) {
      unsigned K = llvm::countr_zero(A->op(1)->payload());
      if ((C & ((1ull << K) - 1)) == 0)
        return mul(bitAnd(A->op(0), constant(C >> K, W)), A->op(1));
    }
  }
  if (A == B)
    return A;
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::And, W, {A, B});
}

// Disjunctions of conjunctions: drop absorbed disjuncts (a || (a && b) is a) and factor what all
// disjuncts share ((a && x) || (a && !x) is a).
namespace wsv {
namespace analyzer {
const Expr *buildDisjunction(ExprContext &Ctx, llvm::SmallVectorImpl<const Expr *> &Terms);
} // namespace analyzer
} // namespace wsv

const Expr *ExprContext::bitOr(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "or of different widths");
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (W == 1) {
    llvm::SmallVector<const Expr *, 8> Terms;
    flatten(A, ExprKind::Or, Terms);
    flatten(B, ExprKind::Or, Terms);
    return buildDisjunction(*this, Terms);
  }
  if (A->isConstant())
    std::swap(A, B);
  if (B->isConstant()) {
    uint64_t C = B->payload();
    if (A->isConstant())
      return constant(A->payload() | C, W);
    if (C == 0)
      return A;
    if (C == M)
      return B;
    // Setting bits above every bit x can have is an addition.
    if (A->range().Hi < (C & (~C + 1)))
      return add(A, B);
  }
  if (A == B)
    return A;
  // Setting bits below the known zero bits of the other side is an addition too (an
  // aligned base or'ed with an offset).
  for (int Pass = 0; Pass < 2; ++Pass, std::swap(A, B)) {
    unsigned Zeros = knownTrailingZeros(A);
    if (Zeros > 0 && Zeros < 64 && B->range().Hi < (1ull << Zeros))
      return add(A, B);
  }
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::Or, W, {A, B});
}

const Expr *wsv::analyzer::buildDisjunction(ExprContext &Ctx,
                                            llvm::SmallVectorImpl<const Expr *> &Terms) {
  sortUnique(Terms);
  llvm::SmallPtrSet<const Expr *, 8> Present(Terms.begin(), Terms.end());
  llvm::SmallVector<llvm::SmallVector<const Expr *, 4>, 8> Conjs;
  for (const Expr *T : Terms) {
    if (T->isTrue())
      return T;
    if (T->isFalse())
      continue;
    if (Present.count(Ctx.bitNot(T)))
      return Ctx.boolean(true);
    Conjs.emplace_back();
    flatten(T, ExprKind::And, Conjs.back());
    sortUnique(Conjs.back());
  }
  if (Conjs.empty())
    return Ctx.boolean(false);
  auto Subset = [](const llvm::SmallVectorImpl<const Expr *> &Small,
                   const llvm::SmallVectorImpl<const Expr *> &Big) {
    return std::includes(Big.begin(), Big.end(), Small.begin(), Small.end(),
                         [](const Expr *A, const Expr *B) { return A->id() < B->id(); });
  };
  // Absorption.
  llvm::SmallVector<bool, 8> Dropped(Conjs.size(), false);
  for (unsigned I = 0; I < Conjs.size(); ++I)
    for (unsigned J = 0; J < Conjs.size(); ++J)
      if (I != J && !Dropped[J] && !Dropped[I] && Conjs[J].size() <= Conjs[I].size() &&
          Subset(Conjs[J], Conjs[I]) && (Conjs[J].size() < Conjs[I].size() || J < I))
        Dropped[I] = true;
  llvm::SmallVector<llvm::SmallVector<const Expr *, 4>, 8> Live;
  for (unsigned I = 0; I < Conjs.size(); ++I)
    if (!Dropped[I])
      Live.push_back(Conjs[I]);
  auto Conj = [&](llvm::ArrayRef<const Expr *> Parts) {
    const Expr *R = Ctx.boolean(true);
    for (const Expr *P : Parts)
      R = Ctx.bitAnd(R, P);
    return R;
  };
  if (Live.size() == 1)
    return Conj(Live[0]);
  // Factor the conjuncts every disjunct shares.
  llvm::SmallVector<const Expr *, 4> Common(Live[0].begin(), Live[0].end());
  for (unsigned I = 1; I < Live.size(); ++I) {
    llvm::SmallVector<const Expr *, 4> Next;
    std::set_intersection(Common.begin(), Common.end(), Live[I].begin(), Live[I].end(),
                          std::back_inserter(Next),
                          [](const Expr *A, const Expr *B) { return A->id() < B->id(); });
    Common = Next;
  }
  if (!Common.empty()) {
    llvm::SmallPtrSet<const Expr *, 4> CommonSet(Common.begin(), Common.end());
    llvm::SmallVector<const Expr *, 8> Rests;
    for (auto &C : Live) {
      llvm::SmallVector<const Expr *, 4> Rest;
      for (const Expr *P : C)
        if (!CommonSet.count(P))
          Rest.push_back(P);
      Rests.push_back(Conj(Rest));
    }
    return Ctx.bitAnd(Conj(Common), buildDisjunction(Ctx, Rests));
  }
  const Expr *R = nullptr;
  for (auto &C : Live) {
    const Expr *D = Conj(C);
    R = R ? Ctx.make(ExprKind::Or, 1, {R, D}) : D;
  }
  return R;
}

const Expr *ExprContext::bitXor(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "xor of different widths");
  const unsigned W = A->width();
  if (A->isConstant())
    std::swap(A, B);
  if (B->isConstant()) {
    if (A->isConstant())
      return constant(A->payload() ^ B->payload(), W);
    if (B->payload() == 0)
      return A;
    if (W == 1)
      return bitNot(A);
    // (x ^ c1) ^ c2 = x ^ (c1 ^ c2)
    if (A->is(ExprKind::Xor) && A->op(1)->isConstant())
      return bitXor(A->op(0), constant(A->op(1)->payload() ^ B->payload(), W));
  }
  if (A == B)
    return constant(0, W);
  if (W == 1) {
    if (bitNot(A) == B)
      return boolean(true);
    if (A->is(ExprKind::Not))
      return bitNot(bitXor(A->op(0), B));
    if (B->is(ExprKind::Not))
      return bitNot(bitXor(A, B->op(0)));
  }
  if (!B->isConstant() && A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::Xor, W, {A, B});
}

//===- Comparisons ------------------------------------------------------------------------===//

const Expr *ExprContext::eq(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "comparison of different widths");
  const unsigned W = A->width();
  if (A == B)
    return boolean(true);
  if (A->isConstant() && B->isConstant())
    return boolean(A->payload() == B->payload());
  if (A->isConstant())
    std::swap(A, B);
  if (W == 1)
    return B->isConstant() ? (B->isTrue() ? A : bitNot(A)) : bitNot(bitXor(A, B));
  // (c ? a : b) == k with c the same in every thread, a or b a constant and the other
  // depending on the thread is c ? a == k : b == k, which folds to a conjunction: a state
  // chosen by a launch condition and then by the warp compares as the condition and the
  // warp's test, which the thread sets can take apart. (Not for values of the launch alone:
  // the lemmas of the argument for every K read those as they are, and Z3 decides them
  // faster so.)
  if (B->isConstant() && A->is(ExprKind::Select) && !isThreadDependent(A->op(0)) &&
      ((A->op(1)->isConstant() && isThreadDependent(A->op(2))) ||
       (A->op(2)->isConstant() && isThreadDependent(A->op(1)))))
    return select(A->op(0), eq(A->op(1), B), eq(A->op(2), B));
  // Move everything to one side, constants to the other.
  LinearForm L;
  L.Width = W;
  L.addScaled(A, 1);
  L.addScaled(B, mask(W));
  L.normalize(*this);
  if (L.isConstant())
    return boolean(L.Constant == 0);
  LinearForm Left, Right;
  Left.Width = Right.Width = W;
  for (const auto &[Term, K] : L.Terms) {
    if (isNegativeCoefficient(K, W))
      Right.Terms.push_back({Term, (~K + 1) & mask(W)});
    else
      Left.Terms.push_back({Term, K});
  }
  Right.Constant = (~L.Constant + 1) & mask(W);
  if (Left.Terms.empty()) {
    std::swap(Left.Terms, Right.Terms);
    Left.Constant = 0;
    Right.Constant = L.Constant;
  }
  const Expr *X = buildLinear(*this, Left);
  const Expr *Y = buildLinear(*this, Right);
  if (Y->isConstant()) {
    uint64_t V = Y->payload();
    if (!X->range().contains(V))
      return boolean(false);
    // x / c == 0 is x < c.
    if (V == 0 && X->is(ExprKind::UDiv) && X->op(1)->isConstant())
      return ult(X->op(0), X->op(1));
    if (X->is(ExprKind::ZExt))
      return V > mask(X->op(0)->width()) ? boolean(false)
                                          : eq(X->op(0), constant(V, X->op(0)->width()));
    if (X->is(ExprKind::Select) && X->op(1)->isConstant() && X->op(2)->isConstant())
      return select(X->op(0), boolean(X->op(1)->payload() == V),
                    boolean(X->op(2)->payload() == V));
    if (X->range().Lo == X->range().Hi)
      return boolean(X->range().Lo == V);
  } else if (X->id() > Y->id()) {
    std::swap(X, Y);
  }
  return make(ExprKind::Eq, 1, {X, Y});
}

const Expr *ExprContext::ne(const Expr *A, const Expr *B) { return bitNot(eq(A, B)); }

const Expr *ExprContext::ult(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "comparison of different widths");
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (A == B)
    return boolean(false);
  if (A->range().Hi < B->range().Lo)
    return boolean(true);
  if (A->range().Lo >= B->range().Hi)
    return boolean(false);
  if (W == 1)
    return bitAnd(bitNot(A), B);
  if (B->isConstant()) {
    uint64_t C = B->payload();
    if (C == 1)
      return eq(A, constant(0, W));
    // x / d < c is x < c * d (and always true when c * d does not fit).
    if (A->is(ExprKind::UDiv) && A->op(1)->isConstant()) {
      uint64_t D = A->op(1)->payload();
      if (C > M / D)
        return boolean(true);
      return ult(A->op(0), constant(C * D, W));
    }
    if (A->is(ExprKind::ZExt))
      return C > mask(A->op(0)->width()) ? boolean(true)
                                          : ult(A->op(0), constant(C, A->op(0)->width()));
  }
  if (A->isConstant())
    return ule(constant(A->payload() + 1, W), B); // A < x is A + 1 <= x; A != max here
  return make(ExprKind::ULt, 1, {A, B});
}

const Expr *ExprContext::ule(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "comparison of different widths");
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (A == B)
    return boolean(true);
  if (A->range().Hi <= B->range().Lo)
    return boolean(true);
  if (A->range().Lo > B->range().Hi)
    return boolean(false);
  if (W == 1)
    return bitOr(bitNot(A), B);
  if (B->isConstant())
    return ult(A, constant(B->payload() + 1, W)); // B != max here
  if (A->isConstant()) {
    uint64_t C = A->payload();
    // 1 <= x is x != 0, the form a negated `x == 0` takes.
    if (C == 1)
      return bitNot(eq(B, constant(0, W)));
    // c <= x / d is c * d <= x (never when c * d does not fit).
    if (B->is(ExprKind::UDiv) && B->op(1)->isConstant()) {
      uint64_t D = B->op(1)->payload();
      if (C > M / D)
        return boolean(false);
      return ule(constant(C * D, W), B->op(0));
    }
    if (B->is(ExprKind::ZExt))
      return C > mask(B->op(0)->width()) ? boolean(false)
                                          : ule(constant(C, B->op(0)->width()), B->op(0));
  }
  return make(ExprKind::ULe, 1, {A, B});
}

const Expr *ExprContext::slt(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "comparison of different widths");
  const unsigned W = A->width();
  if (isNonNegative(A) && isNonNegative(B))
    return ult(A, B);
  if (A == B)
    return boolean(false);
  if (A->isConstant() && B->isConstant())
    return boolean(A->signedValue() < B->signedValue());
  const int64_t SMaxV = W >= 64 ? INT64_MAX : static_cast<int64_t>((1ull << (W - 1)) - 1);
  // A non-negative x is below no negative constant.
  if (B->isConstant() && isNonNegative(A) && B->signedValue() <= 0)
    return boolean(false);
  if (A->isConstant() && A->signedValue() != SMaxV)
    return sle(constant(static_cast<uint64_t>(A->signedValue() + 1), W), B);
  return make(ExprKind::SLt, 1, {A, B});
}

const Expr *ExprContext::sle(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "comparison of different widths");
  const unsigned W = A->width();
  if (isNonNegative(A) && isNonNegative(B))
    return ule(A, B);
  if (A == B)
    return boolean(true);
  if (A->isConstant() && B->isConstant())
    return boolean(A->signedValue() <= B->signedValue());
  const int64_t SMaxV = W >= 64 ? INT64_MAX : static_cast<int64_t>((1ull << (W - 1)) - 1);
  if (B->isConstant()) {
    if (B->signedValue() == SMaxV)
      return boolean(true);
    return slt(A, constant(static_cast<uint64_t>(B->signedValue() + 1), W));
  }
  if (A->isConstant() && isNonNegative(B))
    return A->signedValue() <= 0 ? boolean(true) : ule(A, B);
  return make(ExprKind::SLe, 1, {A, B});
}

//===- Select -------------------------------------------------------------------------------===//

bool wsv::analyzer::containsNode(const Expr *E, const Expr *Node) {
  llvm::SmallVector<const Expr *, 16> Work{E};
  llvm::SmallPtrSet<const Expr *, 16> Seen;
  while (!Work.empty()) {
    const Expr *X = Work.pop_back_val();
    if (X == Node)
      return true;
    if (!Seen.insert(X).second)
      continue;
    for (const Expr *Op : X->ops())
      Work.push_back(Op);
  }
  return false;
}

const Expr *ExprContext::select(const Expr *Cond, const Expr *A, const Expr *B) {
  assert(Cond->width() == 1 && "select condition must be a predicate");
  assert(A->width() == B->width() && "select arms of different widths");
  if (Cond->isConstant())
    return Cond->isTrue() ? A : B;
  if (A == B)
    return A;
  if (Cond->is(ExprKind::Not))
    return select(Cond->op(0), B, A);
  // Each arm is evaluated knowing the condition: c ? f(c) : g(c) is c ? f(true) : g(false).
  // Of a condition and its negation, the older node is the condition: c ? a : b and
  // !c ? b : a are one expression.
  const Expr *NotCond = bitNot(Cond);
  if (NotCond->id() < Cond->id())
    return select(NotCond, B, A);
  auto Mentions = [&](const Expr *E) {
    return !E->isLeaf() && (containsNode(E, Cond) || containsNode(E, NotCond));
  };
  auto Assume = [&](const Expr *E, bool Holds) {
    return rewrite(E, [&](const Expr *N) -> const Expr * {
      if (N == Cond)
        return boolean(Holds);
      if (N == NotCond)
        return boolean(!Holds);
      return nullptr;
    });
  };
  if (Mentions(A) || Mentions(B)) {
    const Expr *NewA = Mentions(A) ? Assume(A, true) : A;
    const Expr *NewB = Mentions(B) ? Assume(B, false) : B;
    if (NewA != A || NewB != B)
      return select(Cond, NewA, NewB);
  }
  if (A->width() == 1) {
    if (A->isTrue())
      return bitOr(Cond, B);
    if (A->isFalse())
      return bitAnd(bitNot(Cond), B);
    if (B->isTrue())
      return bitOr(bitNot(Cond), A);
    if (B->isFalse())
      return bitAnd(Cond, A);
  }
  return make(ExprKind::Select, A->width(), {Cond, A, B});
}
