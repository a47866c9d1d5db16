//===- SolverZ3Integers.cpp - Expr questions as linear integer arithmetic -----------===//
#include "SolverZ3Integers.h"

#include "wsv/analyzer/Solver.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

using Wide = unsigned __int128;

Wide pow2(unsigned Bits) { return Wide(1) << Bits; }

/// A leaf the encoding gives a variable (not a constant).
bool isVariable(const Expr *E) { return E->isLeaf() && !E->isConstant(); }

std::string decimal(Wide V) {
  if (V == 0)
    return "0";
  std::string S;
  for (; V; V /= 10)
    S.push_back(static_cast<char>('0' + static_cast<unsigned>(V % 10)));
  std::reverse(S.begin(), S.end());
  return S;
}

/// The bits [Lo, Hi) a contiguous mask sets, or nothing.
std::optional<std::pair<unsigned, unsigned>> contiguousBits(uint64_t Mask) {
  if (Mask == 0)
    return std::nullopt;
  unsigned Lo = __builtin_ctzll(Mask);
  uint64_t Shifted = Mask >> Lo;
  if (Shifted & (Shifted + 1))
    return std::nullopt; // not of the form 2^n - 1 after the shift
  unsigned Len = Shifted == ~0ull ? 64 : 64 - __builtin_clzll(Shifted);
  return std::make_pair(Lo, Lo + Len);
}

} // namespace

bool wsv::analyzer::hasLinearReading(const Expr *Predicate) {
  z3::context C;
  return IntegerEncoder(C).assertion(Predicate, /*Negate=*/true).has_value();
}

z3::expr IntegerEncoder::num(Wide V) {
  if (V <= ~0ull)
    return C.int_val(static_cast<uint64_t>(V));
  return C.int_val(decimal(V).c_str());
}

std::optional<z3::expr> IntegerEncoder::assertion(const Expr *Predicate, bool Negate) {
  if (Predicate->width() != 1)
    return std::nullopt;
  // The conjuncts of what is asserted: of P's ands, or of the ors of P negated.
  llvm::SmallVector<std::pair<const Expr *, bool>, 16> Work{{Predicate, Negate}};
  while (!Work.empty()) {
    auto [E, Neg] = Work.pop_back_val();
    if (E->kind() == ExprKind::Not) {
      Work.push_back({E->op(0), !Neg});
      continue;
    }
    if (E->kind() == (Neg ? ExprKind::Or : ExprKind::And) && E->width() == 1) {
      Work.push_back({E->op(0), Neg});
      Work.push_back({E->op(1), Neg});
      continue;
    }
    learnValue(E, Neg);
    if (E->isComparison() && E->op(0)->width() > 1 &&
        (isVariable(E->op(0)) || isVariable(E->op(1))))
      Orders.push_back({E, Neg});
  }
  // A leaf ordered by a conjunct takes bounds from the other side: a constant (T < 4096),
  // or a term the hypothesis bounds (the k-tile below a tile count). The constants go
  // first, so that the terms are encoded with their bounds; a few rounds settle chains.
  std::stable_partition(Orders.begin(), Orders.end(), [](const auto &O) {
    return O.first->op(0)->isConstant() || O.first->op(1)->isConstant();
  });
  for (unsigned Round = 0; Round < 3; ++Round)
    for (auto [E, Neg] : Orders)
      learnOrder(E, Neg);
  std::optional<Term> T = encode(Predicate);
  if (!T || readsWrappedProduct(T->X))
    return std::nullopt;
  return Negate ? !T->X : T->X;
}

void IntegerEncoder::learnOrder(const Expr *E, bool Negate) {
  // As A < B (Strict) or A <= B.
  const Expr *A = E->op(0), *B = E->op(1);
  bool Strict;
  switch (E->kind()) {
  case ExprKind::ULt: Strict = !Negate; break; // !(a < b): b <= a
  case ExprKind::ULe: Strict = Negate; break;  // !(a <= b): b < a
  default: return;
  }
  if (Negate)
    std::swap(A, B);
  // The other side's bounds are those of its term: sound with the bounds known so far,
  // which only narrow.
  auto Range = [&](const Expr *X) -> std::optional<std::pair<Wide, Wide>> {
    if (isVariable(X))
      return bounds(X);
    std::optional<Term> T = encode(X);
    if (!T)
      return std::nullopt;
    return std::make_pair(T->Lo, T->Hi);
  };
  std::optional<std::pair<Wide, Wide>> RA = Range(A), RB = Range(B);
  if (!RA || !RB)
    return;
  const Wide Max = ExprContext::mask(A->width()), Gap = Strict ? 1 : 0;
  if (isVariable(A)) {
    auto &AB = Bounds.try_emplace(A, Wide(0), Max).first->second;
    AB.first = std::max(AB.first, RA->first);
    // a < b <= BHi: a <= BHi - 1; no value where BHi is 0 (Lo > Hi says so).
    if (RB->second >= Gap)
      AB.second = std::min(RA->second, RB->second - Gap);
    else
      AB = {1, 0};
  }
  if (isVariable(B)) {
    auto &BB = Bounds.try_emplace(B, Wide(0), Max).first->second;
    BB.first = std::max(RB->first, RA->first + Gap);
    BB.second = std::min(BB.second, RB->second);
  }
}

void IntegerEncoder::learnValue(const Expr *E, bool Negate) {
  if (E->kind() != ExprKind::Eq || Negate)
    return;
  const Expr *A = E->op(0), *B = E->op(1);
  const Expr *Leaf = isVariable(A) && B->isConstant()   ? A
                     : isVariable(B) && A->isConstant() ? B
                                                        : nullptr;
  if (!Leaf || Leaf->width() == 1)
    return;
  const Wide V = (Leaf == A ? B : A)->payload();
  auto &LB = Bounds.try_emplace(Leaf, Wide(0), Wide(ExprContext::mask(Leaf->width())))
                 .first->second;
  // x == v with v outside the bounds: Lo > Hi says the assertion is false.
  LB = {std::max(LB.first, V), std::min(LB.second, V)};
}

void IntegerEncoder::addRanges(z3::solver &S) {
  for (auto &[E, X] : LeafBounds) {
    auto [Lo, Hi] = bounds(E);
    S.add(X >= num(Lo));
    S.add(X <= num(Hi));
  }
  LeafBounds.clear();
}

std::pair<IntegerEncoder::Wide, IntegerEncoder::Wide> IntegerEncoder::bounds(const Expr *Leaf) {
  URange R = Leaf->range();
  Wide Hi = std::min(R.Hi, ExprContext::mask(Leaf->width())), Lo = std::min<Wide>(R.Lo, Hi);
  auto It = Bounds.find(Leaf);
  if (It == Bounds.end())
    return {Lo, Hi};
  return {std::max(Lo, It->second.first), std::min(Hi, It->second.second)};
}

std::optional<IntegerEncoder::Term> IntegerEncoder::encode(const Expr *E) {
  auto It = Memo.find(E);
  if (It != Memo.end())
    return It->second;
  std::optional<Term> T = build(E);
  Memo.try_emplace(E, T);
  return T;
}

IntegerEncoder::Term IntegerEncoder::asNumber(const Term &B) {
  return {z3::ite(B.X, C.int_val(1), C.int_val(0)), 0, 1};
}

IntegerEncoder::Term IntegerEncoder::addWrapped(const Term &A, const Term &B, unsigned W) {
  const Wide M = pow2(W);
  z3::expr S = A.X + B.X;
  std::optional<z3::expr> Raw;
  if (A.Raw || B.Raw)
    Raw = raw(A) + raw(B);
  const Wide Lo = A.Lo + B.Lo, Hi = A.Hi + B.Hi;
  if (Hi < M)
    return {S, Lo, Hi, Raw};
  if (Lo >= M)
    return {S - num(M), Lo - M, Hi - M, raw(A) + raw(B)};
  // Both below 2^W, so the sum wraps at most once.
  return {wrap(z3::ite(S >= num(M), S - num(M), S)), 0, M - 1, raw(A) + raw(B)};
}

std::optional<IntegerEncoder::Term> IntegerEncoder::scaled(const Term &A, uint64_t Factor,
                                                             unsigned W) {
  const Wide M = pow2(W), N = M - Factor; // Factor as a negative number: -N
  if (Factor == 0)
    return Term{C.int_val(0), 0, 0};
  std::optional<z3::expr> Raw;
  if (A.Raw)
    Raw = *A.Raw * num(Factor);
  if (Wide(Factor) * A.Hi < M)
    return Term{A.X * num(Factor), A.Lo * Factor, A.Hi * Factor, Raw};
  // The product of a small negative factor: the negation of N * a, 0 or 2^W - N * a.
  z3::expr Negated = C.int_val(0) - raw(A) * num(N);
  if (N * A.Hi < M) {
    z3::expr P = A.X * num(N);
    return Term{wrap(z3::ite(P == 0, C.int_val(0), num(M) - P)), 0, M - 1, Negated};
  }
  // A product that wraps more than once. Its value, a remainder by 2^W of a term up to
  // 2^64 times larger, sent Z3's integer search into seconds where bit-vectors took
  // milliseconds (H1's slot addresses, `8 * k` masked): it is left undefined, and a
  // predicate that reads it goes to bit-vectors. A mask or a slot reads only its low bits,
  // from the product without the wraps.
  z3::expr Value = C.int_const(("wrapped!" + std::to_string(Wrapped.size())).c_str());
  Wrapped.insert(Value.id());
  Kept.push_back(Value);
  return Term{Value, 0, M - 1, N < Factor ? Negated : raw(A) * num(Factor)};
}

IntegerEncoder::Term IntegerEncoder::lowBits(const Term &A, unsigned Bits) {
  const Wide M = pow2(Bits);
  if (A.Hi < M)
    return A;
  // raw(A) equals A modulo 2^width, so modulo 2^Bits too. The remainder is its own raw
  // form: A's agrees with it only modulo 2^Bits, not modulo a mask's or remainder's width.
  return {z3::mod(raw(A), num(M)), 0, M - 1};
}

z3::expr IntegerEncoder::wrap(const z3::expr &Choice) {
  Wraps.insert(Choice.id());
  return Choice;
}

bool IntegerEncoder::dividesWrap(const Term &A) const { return mentions(A.X, Wraps); }

bool IntegerEncoder::readsWrappedProduct(const z3::expr &F) const {
  return mentions(F, Wrapped);
}

bool IntegerEncoder::mentions(const z3::expr &F, const llvm::DenseSet<unsigned> &Ids) {
  if (Ids.empty())
    return false;
  llvm::DenseSet<unsigned> Seen;
  llvm::SmallVector<z3::expr, 32> Work{F};
  while (!Work.empty()) {
    z3::expr E = Work.pop_back_val();
    if (!Seen.insert(E.id()).second)
      continue;
    if (Ids.contains(E.id()))
      return true;
    if (E.is_app())
      for (unsigned I = 0; I < E.num_args(); ++I)
        Work.push_back(E.arg(I));
  }
  return false;
}

z3::expr IntegerEncoder::signedValue(const Term &A, unsigned W) {
  const Wide Half = pow2(W - 1);
  if (A.Hi < Half)
    return A.X;
  if (A.Lo >= Half)
    return A.X - num(pow2(W));
  return z3::ite(A.X >= num(Half), A.X - num(pow2(W)), A.X);
}

std::optional<IntegerEncoder::Term> IntegerEncoder::build(const Expr *E) {
  const unsigned W = E->width();
  if (W > 64)
    return std::nullopt;
  if (E->isConstant()) {
    if (W == 1)
      return Term{C.bool_val(E->payload() != 0), E->payload(), E->payload()};
    return Term{num(E->payload()), E->payload(), E->payload()};
  }
  if (E->isLeaf()) {
    std::string Name = "x" + std::to_string(Leaves++);
    if (W == 1) {
      // A predicate leaf fixed by its range is that constant.
      URange R = E->range();
      if (R.Lo == R.Hi)
        return Term{C.bool_val(R.Lo != 0), R.Lo, R.Lo};
      return Term{C.bool_const(Name.c_str()), 0, 1};
    }
    z3::expr X = C.int_const(Name.c_str());
    LeafBounds.push_back({E, X});
    auto [Lo, Hi] = bounds(E);
    // Contradictory bounds make the assertion false whatever the terms say.
    return Term{X, std::min(Lo, Hi), Hi};
  }
  if (W == 1 || E->kind() == ExprKind::Select || E->kind() >= ExprKind::Eq)
    return buildPredicate(E);
  return buildArithmetic(E);
}

std::optional<IntegerEncoder::Term> IntegerEncoder::buildPredicate(const Expr *E) {
  const unsigned W = E->width();
  if (E->kind() == ExprKind::Select) {
    std::optional<Term> Cond = encode(E->op(0)), A = encode(E->op(1)), B = encode(E->op(2));
    if (!Cond || !A || !B)
      return std::nullopt;
    std::optional<z3::expr> Raw;
    if (A->Raw || B->Raw)
      Raw = z3::ite(Cond->X, raw(*A), raw(*B));
    return Term{z3::ite(Cond->X, A->X, B->X), std::min(A->Lo, B->Lo), std::max(A->Hi, B->Hi),
                Raw};
  }
  if (E->kind() >= ExprKind::Eq) {
    std::optional<Term> A = encode(E->op(0)), B = encode(E->op(1));
    if (!A || !B)
      return std::nullopt;
    const unsigned OW = E->op(0)->width();
    if (OW == 1) {
      // Booleans: 1-bit values, signed -1 and 0.
      switch (E->kind()) {
      case ExprKind::Eq: return Term{A->X == B->X, 0, 1};
      case ExprKind::ULt: return Term{!A->X && B->X, 0, 1};
      case ExprKind::ULe: return Term{!A->X || B->X, 0, 1};
      case ExprKind::SLt: return Term{A->X && !B->X, 0, 1};
      case ExprKind::SLe: return Term{A->X || !B->X, 0, 1};
      default: return std::nullopt;
      }
    }
    switch (E->kind()) {
    case ExprKind::Eq: return Term{A->X == B->X, 0, 1};
    case ExprKind::ULt: return Term{A->X < B->X, 0, 1};
    case ExprKind::ULe: return Term{A->X <= B->X, 0, 1};
    case ExprKind::SLt: return Term{signedValue(*A, OW) < signedValue(*B, OW), 0, 1};
    case ExprKind::SLe: return Term{signedValue(*A, OW) <= signedValue(*B, OW), 0, 1};
    default: return std::nullopt;
    }
  }
  // Width 1: the logic of predicates, arithmetic modulo 2.
  if (E->kind() == ExprKind::Trunc) {
    std::optional<Term> A = encode(E->op(0));
    if (!A)
      return std::nullopt;
    return Term{z3::mod(raw(*A), C.int_val(2)) == 1, 0, 1};
  }
  if (E->kind() == ExprKind::Not) {
    std::optional<Term> A = encode(E->op(0));
    if (!A)
      return std::nullopt;
    return Term{!A->X, 0, 1};
  }
  if (E->ops().size() != 2 || W != 1)
    return std::nullopt;
  std::optional<Term> A = encode(E->op(0)), B = encode(E->op(1));
  if (!A || !B)
    return std::nullopt;
  switch (E->kind()) {
  case ExprKind::And:
  case ExprKind::Mul:
  case ExprKind::UMin: return Term{A->X && B->X, 0, 1};
  case ExprKind::Or:
  case ExprKind::UMax: return Term{A->X || B->X, 0, 1};
  case ExprKind::Xor:
  case ExprKind::Add: return Term{A->X != B->X, 0, 1};
  default: return std::nullopt;
  }
}

std::optional<IntegerEncoder::Term> IntegerEncoder::buildArithmetic(const Expr *E) {
  const unsigned W = E->width();
  const Wide M = pow2(W), Max = M - 1, Half = pow2(W - 1);
  auto Operand = [&](unsigned I) -> std::optional<Term> {
    std::optional<Term> T = encode(E->op(I));
    if (T && E->op(I)->width() == 1)
      return asNumber(*T);
    return T;
  };
  const Expr *Rhs = E->ops().size() == 2 ? E->op(1) : nullptr;
  const bool ConstRhs = Rhs && Rhs->isConstant();
  switch (E->kind()) {
  case ExprKind::ZExt: {
    // The same value; a Raw form agrees with it only modulo the narrower width.
    std::optional<Term> A = Operand(0);
    if (!A)
      return std::nullopt;
    return Term{A->X, A->Lo, A->Hi};
  }
  case ExprKind::SExt: {
    std::optional<Term> A = Operand(0);
    if (!A)
      return std::nullopt;
    const unsigned From = E->op(0)->width();
    if (From == 1)
      return Term{z3::ite(A->X == 1, num(Max), C.int_val(0)), 0, Max};
    if (A->Hi < pow2(From - 1))
      return Term{A->X, A->Lo, A->Hi};
    z3::expr Up = A->X + num(M - pow2(From));
    return Term{z3::ite(A->X >= num(pow2(From - 1)), Up, A->X), 0, Max};
  }
  case ExprKind::Trunc: {
    std::optional<Term> A = Operand(0);
    if (!A)
      return std::nullopt;
    return lowBits(*A, W);
  }
  case ExprKind::Not: {
    std::optional<Term> A = Operand(0);
    if (!A)
      return std::nullopt;
    std::optional<z3::expr> Raw;
    if (A->Raw)
      Raw = C.int_val(-1) - *A->Raw;
    return Term{num(Max) - A->X, Max - A->Hi, Max - A->Lo, Raw};
  }
  default:
    break;
  }
  if (!Rhs)
    return std::nullopt;
  std::optional<Term> A = Operand(0), B = Operand(1);
  if (!A || !B)
    return std::nullopt;
  const uint64_t K = ConstRhs ? Rhs->payload() : 0;
  // A signed quotient or remainder of a non-negative value by a positive constant: the
  // unsigned one.
  const bool Unsigned = ConstRhs && K != 0 && K < Half && A->Hi < Half;
  switch (E->kind()) {
  case ExprKind::Add: return addWrapped(*A, *B, W);
  case ExprKind::Mul:
    if (ConstRhs)
      return scaled(*A, K, W);
    if (E->op(0)->isConstant())
      return scaled(*B, E->op(0)->payload(), W);
    // A predicate times a value: the value or 0.
    if (E->op(0)->kind() == ExprKind::ZExt && E->op(0)->op(0)->width() == 1)
      return Term{z3::ite(A->X == 1, B->X, C.int_val(0)), 0, B->Hi,
                  z3::ite(A->X == 1, raw(*B), C.int_val(0))};
    if (E->op(1)->kind() == ExprKind::ZExt && E->op(1)->op(0)->width() == 1)
      return Term{z3::ite(B->X == 1, A->X, C.int_val(0)), 0, A->Hi,
                  z3::ite(B->X == 1, raw(*A), C.int_val(0))};
    return std::nullopt;
  case ExprKind::SDiv:
    if (!Unsigned)
      return std::nullopt;
    [[fallthrough]];
  case ExprKind::UDiv:
    if (!ConstRhs || dividesWrap(*A))
      return std::nullopt;
    if (K == 0)
      return Term{num(Max), Max, Max};
    return Term{A->X / num(K), A->Lo / K, A->Hi / K};
  case ExprKind::SRem:
    if (!Unsigned)
      return std::nullopt;
    [[fallthrough]];
  case ExprKind::URem:
    if (!ConstRhs)
      return std::nullopt;
    if (K == 0 || A->Hi < K)
      return A;
    if ((K & (K - 1)) == 0) // a slot of a ring of 2^n: the low bits
      return lowBits(*A, __builtin_ctzll(K));
    if (dividesWrap(*A))
      return std::nullopt;
    return Term{z3::mod(A->X, num(K)), 0, std::min<Wide>(A->Hi, K - 1)};
  case ExprKind::AShr:
  case ExprKind::LShr:
    if (!ConstRhs || (E->kind() == ExprKind::AShr && A->Hi >= Half) || dividesWrap(*A))
      return std::nullopt;
    if (K >= W)
      return Term{C.int_val(0), 0, 0};
    return Term{A->X / num(pow2(K)), A->Lo >> K, A->Hi >> K};
  case ExprKind::Shl:
    if (!ConstRhs)
      return std::nullopt;
    if (K >= W)
      return Term{C.int_val(0), 0, 0};
    return scaled(*A, uint64_t(1) << K, W);
  case ExprKind::And: {
    // A mask of contiguous bits [Lo, Hi): a mod 2^Hi - a mod 2^Lo.
    const Term *V = ConstRhs ? &*A : E->op(0)->isConstant() ? &*B : nullptr;
    uint64_t Mask = ConstRhs ? K : E->op(0)->isConstant() ? E->op(0)->payload() : 0;
    if (!V)
      return std::nullopt;
    if (Mask == 0)
      return Term{C.int_val(0), 0, 0};
    std::optional<std::pair<unsigned, unsigned>> Bits = contiguousBits(Mask);
    if (!Bits)
      return std::nullopt;
    Term High = lowBits(*V, Bits->second);
    if (Bits->first == 0)
      return High;
    Term Low = lowBits(*V, Bits->first);
    return Term{High.X - Low.X, 0, std::min<Wide>(High.Hi, Mask)};
  }
  case ExprKind::UMin:
    return Term{z3::ite(A->X <= B->X, A->X, B->X), std::min(A->Lo, B->Lo),
                std::min(A->Hi, B->Hi)};
  case ExprKind::UMax:
    return Term{z3::ite(A->X <= B->X, B->X, A->X), std::max(A->Lo, B->Lo),
                std::max(A->Hi, B->Hi)};
  case ExprKind::SMin:
  case ExprKind::SMax: {
    z3::expr Le = signedValue(*A, W) <= signedValue(*B, W);
    bool Min = E->kind() == ExprKind::SMin;
    return Term{z3::ite(Le, Min ? A->X : B->X, Min ? B->X : A->X), std::min(A->Lo, B->Lo),
                std::max(A->Hi, B->Hi)};
  }
  default:
    return std::nullopt; // Or, Xor, MulHiU, MapA, products of two unknowns
  }
}
