//===- ExprArith.cpp - simplifying builders for arithmetic and widths -------------===//
#include "ExprLinear.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace wsv::analyzer;

//===- Linear form ------------------------------------------------------------------===//

void LinearForm::addScaled(const Expr *E, uint64_t Scale) {
  const uint64_t M = ExprContext::mask(Width);
  if (E->isConstant()) {
    Constant = (Constant + Scale * E->payload()) & M;
  } else if (E->is(ExprKind::Add)) {
    addScaled(E->op(0), Scale);
    addScaled(E->op(1), Scale);
  } else if (E->is(ExprKind::Mul) && E->op(1)->isConstant()) {
    addScaled(E->op(0), (Scale * E->op(1)->payload()) & M);
  } else {
    Terms.push_back({E, Scale & M});
  }
}

bool wsv::analyzer::isNegativeCoefficient(uint64_t C, unsigned Width) {
  return (C >> (Width - 1)) & 1;
}

static void mergeTerms(LinearForm &L, uint64_t M) {
  std::sort(L.Terms.begin(), L.Terms.end(),
            [](const auto &A, const auto &B) { return A.first->id() < B.first->id(); });
  unsigned Out = 0;
  for (unsigned I = 0; I < L.Terms.size(); ++I) {
    if (Out && L.Terms[Out - 1].first == L.Terms[I].first) {
      L.Terms[Out - 1].second = (L.Terms[Out - 1].second + L.Terms[I].second) & M;
      continue;
    }
    L.Terms[Out++] = L.Terms[I];
  }
  L.Terms.resize(Out);
  L.Terms.erase(std::remove_if(L.Terms.begin(), L.Terms.end(),
                               [](const auto &T) { return T.second == 0; }),
                L.Terms.end());
}

static uint64_t magicDivisor(uint64_t M, unsigned W, unsigned S);

/// y / d (signed) where Hi is the high half of y * M as a signed product and Shift is Hi
/// shifted right by s: compilers divide by a constant d as (Hi >> s) + (Hi >>u (W - 1)),
/// adding 1 to a negative quotient (Hacker's Delight 10-1). Hi is built from the unsigned
/// high half, mulhi(y, M) - (y < 0 ? M : 0), which is the signed one for 0 < M < 2^(W-1).
/// Null where the terms are not that, or M is not d's multiplier for W - 1 bits and s + 1.
static const Expr *signedMagicQuotient(ExprContext &Ctx, const Expr *Hi, uint64_t Shift,
                                       unsigned W) {
  LinearForm H;
  H.Width = W;
  H.addScaled(Hi, 1);
  if (H.Constant || H.Terms.size() != 2)
    return nullptr;
  const uint64_t Mask = ExprContext::mask(W);
  for (unsigned I = 0; I < 2; ++I) {
    const auto &[Mul, KM] = H.Terms[I];
    const auto &[Fix, KF] = H.Terms[1 - I];
    if (KM != 1 || KF != Mask || !Mul->is(ExprKind::MulHiU) || !Mul->op(1)->isConstant())
      continue;
    const Expr *Y = Mul->op(0);
    uint64_t M = Mul->op(1)->payload();
    if (M == 0 || M >= (uint64_t(1) << (W - 1)) || !Fix->is(ExprKind::Select))
      continue;
    const Expr *Neg = Fix->op(0);
    if (!Neg->is(ExprKind::SLt) || Neg->op(0) != Y || !Neg->op(1)->isConstant(0) ||
        !Fix->op(1)->isConstant(M) || !Fix->op(2)->isConstant(0))
      continue;
    // (M * d exactly 2^(W+s), a power of two, would round a negative multiple of d to the
    // quotient plus 1: compilers shift for those.)
    if (uint64_t D = magicDivisor(M, W - 1, static_cast<unsigned>(Shift) + 1))
      if (static_cast<unsigned __int128>(M) * D != static_cast<unsigned __int128>(1) << (W + Shift))
        return Ctx.sdiv(Y, Ctx.constant(D, W));
  }
  return nullptr;
}

void LinearForm::normalize(ExprContext &Ctx) {
  const uint64_t M = ExprContext::mask(Width);
  mergeTerms(*this, M);
  // k * (Hi >> s) + k * (Hi >>u (W - 1)) is k * (y / d) for a signed division by a constant.
  for (bool Changed = true; Changed && Width >= 2 && Width <= 64;) {
    Changed = false;
    for (unsigned I = 0; I < Terms.size() && !Changed; ++I) {
      const Expr *Sign = Terms[I].first;
      if (!Sign->is(ExprKind::UDiv) || !Sign->op(1)->isConstant(uint64_t(1) << (Width - 1)))
        continue;
      for (unsigned J = 0; J < Terms.size(); ++J) {
        const Expr *Shifted = Terms[J].first;
        if (J == I || Terms[J].second != Terms[I].second || !Shifted->is(ExprKind::AShr) ||
            Shifted->op(0) != Sign->op(0) || !Shifted->op(1)->isConstant())
          continue;
        const Expr *Q = signedMagicQuotient(Ctx, Sign->op(0), Shifted->op(1)->payload(), Width);
        if (!Q)
          continue;
        uint64_t K = Terms[J].second;
        Terms.erase(Terms.begin() + std::max(I, J));
        Terms.erase(Terms.begin() + std::min(I, J));
        addScaled(Q, K);
        Changed = true;
        break;
      }
    }
    if (Changed)
      mergeTerms(*this, M);
  }
  // x - c * (x / c) is x % c (the form a division by a constant leaves behind).
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned I = 0; I < Terms.size() && !Changed; ++I) {
      const Expr *Div = Terms[I].first;
      if (!Div->is(ExprKind::UDiv) || !Div->op(1)->isConstant())
        continue;
      uint64_t C = Div->op(1)->payload();
      for (unsigned J = 0; J < Terms.size(); ++J) {
        if (J == I || Terms[J].first != Div->op(0) ||
            ((Terms[J].second * C + Terms[I].second) & M) != 0)
          continue;
        Terms[J] = {Ctx.urem(Div->op(0), Div->op(1)), Terms[J].second};
        Terms.erase(Terms.begin() + I);
        Changed = true;
        break;
      }
    }
    if (Changed)
      mergeTerms(*this, M);
  }
  // Combine remainders with their quotients or dividends. Each rewrite removes a term, so
  // this ends.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned I = 0; I < Terms.size() && !Changed; ++I) {
      const Expr *Rem = Terms[I].first;
      if (!Rem->is(ExprKind::URem) || !Rem->op(1)->isConstant())
        continue;
      const Expr *X = Rem->op(0);
      uint64_t C = Rem->op(1)->payload(), K = Terms[I].second;
      for (unsigned J = 0; J < Terms.size(); ++J) {
        if (J == I)
          continue;
        const Expr *T = Terms[J].first;
        // k * (x % c) + k*c * (x / c) = k * x
        if (T->is(ExprKind::UDiv) && T->op(0) == X && T->op(1) == Rem->op(1) &&
            Terms[J].second == ((K * C) & M)) {
          Terms[I] = {X, K};
          Terms.erase(Terms.begin() + J);
          Changed = true;
          break;
        }
        // k * x - k * (x % c) = k*c * (x / c)
        if (T == X && ((Terms[J].second + K) & M) == 0) {
          Terms[I] = {Ctx.udiv(X, Rem->op(1)), (Terms[J].second * C) & M};
          Terms.erase(Terms.begin() + J);
          Changed = true;
          break;
        }
      }
    }
    if (Changed)
      mergeTerms(*this, M);
  }
}

const Expr *wsv::analyzer::buildLinear(ExprContext &Ctx, const LinearForm &L) {
  const Expr *Sum = nullptr;
  for (const auto &[Term, Coefficient] : L.Terms) {
    const Expr *T = Term;
    if (Coefficient != 1)
      T = Ctx.make(ExprKind::Mul, L.Width, {Term, Ctx.constant(Coefficient, L.Width)});
    Sum = Sum ? Ctx.make(ExprKind::Add, L.Width, {Sum, T}) : T;
  }
  const Expr *C = Ctx.constant(L.Constant, L.Width);
  if (!Sum)
    return C;
  if (L.Constant == 0)
    return Sum;
  return Ctx.make(ExprKind::Add, L.Width, {Sum, C});
}

//===- Sums and products ------------------------------------------------------------===//

const Expr *ExprContext::add(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "add of different widths");
  if (A->width() == 1)
    return bitXor(A, B);
  LinearForm L;
  L.Width = A->width();
  L.addScaled(A, 1);
  L.addScaled(B, 1);
  L.normalize(*this);
  return buildLinear(*this, L);
}

const Expr *ExprContext::sub(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "sub of different widths");
  if (A->width() == 1)
    return bitXor(A, B);
  LinearForm L;
  L.Width = A->width();
  L.addScaled(A, 1);
  L.addScaled(B, mask(L.Width));
  L.normalize(*this);
  return buildLinear(*this, L);
}

const Expr *ExprContext::neg(const Expr *A) { return sub(constant(0, A->width()), A); }

const Expr *ExprContext::mul(const Expr *A, const Expr *B) {
  assert(A->width() == B->width() && "mul of different widths");
  if (A->width() == 1)
    return bitAnd(A, B);
  if (A->isConstant())
    std::swap(A, B);
  if (B->isConstant()) {
    LinearForm L;
    L.Width = A->width();
    L.addScaled(A, B->payload());
    L.normalize(*this);
    return buildLinear(*this, L);
  }
  // Distribute over sums, so that x * (i + 1) is x * i + x and stays linear in i.
  for (int Pass = 0; Pass < 2; ++Pass, std::swap(A, B)) {
    if (!A->is(ExprKind::Add))
      continue;
    LinearForm L;
    L.Width = A->width();
    L.addScaled(A, 1);
    LinearForm R;
    R.Width = L.Width;
    for (const auto &[Term, K] : L.Terms)
      R.addScaled(mul(Term, B), K);
    R.addScaled(B, L.Constant);
    R.normalize(*this);
    return buildLinear(*this, R);
  }
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::Mul, A->width(), {A, B});
}

// Granlund and Montgomery: floor(x * M / 2^(W+s)) == floor(x / d) for every W-bit x when
// 2^(W+s) <= M * d <= 2^(W+s) + 2^s. Returns d, or 0 when M is no such multiplier.
static uint64_t magicDivisor(uint64_t M, unsigned W, unsigned S) {
  if (M == 0 || W + S >= 127)
    return 0;
  using U128 = unsigned __int128;
  U128 Pow = U128(1) << (W + S);
  uint64_t D = static_cast<uint64_t>((Pow + M - 1) / M);
  if (D < 2)
    return 0;
  U128 Product = U128(M) * D;
  if (Product < Pow || Product - Pow > (U128(1) << S))
    return 0;
  return D;
}

//===- Division and remainder -------------------------------------------------------===//

const Expr *ExprContext::udiv(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (B->isConstant(1))
    return A;
  if (A->isConstant() && B->isConstant() && B->payload())
    return constant(A->payload() / B->payload(), W);
  if (B->isConstant() && B->payload()) {
    const uint64_t C = B->payload();
    if (A->range().Hi < C)
      return constant(0, W);
    // mulhi(x, M) / 2^s with M the magic multiplier of d is x / d.
    if (A->is(ExprKind::MulHiU) && A->op(1)->isConstant() && llvm::isPowerOf2_64(C))
      if (uint64_t D = magicDivisor(A->op(1)->payload(), W, llvm::countr_zero(C)))
        return udiv(A->op(0), constant(D, W));
    // The same through mul.wide and a shift: zext(x) * M / 2^(w+s), which cannot wrap when M
    // fits x's width w.
    if (A->is(ExprKind::Mul) && llvm::isPowerOf2_64(C))
      for (unsigned Side = 0; Side < 2; ++Side) {
        const Expr *Ext = A->op(Side), *Mult = A->op(1 - Side);
        if (!Ext->is(ExprKind::ZExt) || !Mult->isConstant())
          continue;
        const Expr *X = Ext->op(0);
        unsigned XW = X->width(), K = llvm::countr_zero(C);
        if (2 * XW <= W && K >= XW && Mult->payload() <= mask(XW))
          if (uint64_t D = magicDivisor(Mult->payload(), XW, K - XW))
            return zext(udiv(X, constant(D, XW)), W);
      }
    // (x / a) / b = x / (a * b)
    if (A->is(ExprKind::UDiv) && A->op(1)->isConstant()) {
      uint64_t Inner = A->op(1)->payload();
      if (Inner <= M / C)
        return udiv(A->op(0), constant(Inner * C, W));
      return constant(0, W);
    }
    // (c*q + r) / c = q + r / c when every coefficient is a multiple of c and nothing wraps.
    if (A->range().Hi < M) {
      LinearForm L;
      L.Width = W;
      L.addScaled(A, 1);
      bool Divisible = !L.Terms.empty();
      for (const auto &T : L.Terms)
        Divisible &= T.second % C == 0 && !isNegativeCoefficient(T.second, W) &&
                     T.first->range().Hi <= M / T.second;
      if (Divisible && !isNegativeCoefficient(L.Constant, W)) {
        LinearForm Q;
        Q.Width = W;
        for (const auto &T : L.Terms)
          Q.Terms.push_back({T.first, T.second / C});
        Q.Constant = L.Constant / C;
        Q.normalize(*this);
        return buildLinear(*this, Q);
      }
    }
  }
  if (A == B && B->range().Lo > 0)
    return constant(1, W);
  return make(ExprKind::UDiv, W, {A, B});
}

const Expr *ExprContext::urem(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  const uint64_t M = mask(W);
  if (B->isConstant(1))
    return constant(0, W);
  if (A->isConstant() && B->isConstant() && B->payload())
    return constant(A->payload() % B->payload(), W);
  if (B->range().Lo > 0 && A->range().Hi < B->range().Lo)
    return A;
  if (B->isConstant() && B->payload()) {
    const uint64_t C = B->payload();
    if (A->is(ExprKind::URem) && A->op(1)->isConstant() && A->op(1)->payload() % C == 0)
      return urem(A->op(0), B);
    // Reduce a sum term by term: (x % kc + y) % c = (x + y) % c. Exact modulo 2^width when c
    // is a power of two (c divides 2^width); otherwise only when the sum does not wrap.
    if (llvm::isPowerOf2_64(C) || A->range().Hi < M) {
      LinearForm L;
      L.Width = W;
      L.addScaled(A, 1);
      LinearForm R;
      R.Width = W;
      bool Changed = false;
      for (auto [Term, K] : L.Terms) {
        if (llvm::isPowerOf2_64(C) && K % C == 0) {
          Changed = true;
          continue;
        }
        if (Term->is(ExprKind::URem) && Term->op(1)->isConstant() &&
            Term->op(1)->payload() % C == 0 && !isNegativeCoefficient(K, W)) {
          Term = Term->op(0);
          Changed = true;
        }
        R.Terms.push_back({Term, K});
      }
      R.Constant = L.Constant;
      if (llvm::isPowerOf2_64(C) && R.Constant >= C) {
        R.Constant %= C;
        Changed = true;
      }
      if (Changed) {
        R.normalize(*this);
        const Expr *Reduced = buildLinear(*this, R);
        if (Reduced != A && (llvm::isPowerOf2_64(C) || Reduced->range().Hi < M))
          return urem(Reduced, B);
      }
    }
  }
  if (A == B)
    return constant(0, W);
  return make(ExprKind::URem, W, {A, B});
}

static bool isNonNegative(const Expr *E) {
  return E->range().Hi < (1ull << (E->width() - 1));
}

const Expr *ExprContext::sdiv(const Expr *A, const Expr *B) {
  if (isNonNegative(A) && isNonNegative(B))
    return udiv(A, B);
  if (B->isConstant(1))
    return A;
  if (A->isConstant() && B->isConstant() && B->payload()) {
    auto V = evaluate(make(ExprKind::SDiv, A->width(), {A, B}),
                      [](const Expr *) { return std::nullopt; });
    if (V)
      return constant(*V, A->width());
  }
  return make(ExprKind::SDiv, A->width(), {A, B});
}

const Expr *ExprContext::srem(const Expr *A, const Expr *B) {
  if (isNonNegative(A) && isNonNegative(B))
    return urem(A, B);
  if (A->isConstant() && B->isConstant() && B->payload()) {
    auto V = evaluate(make(ExprKind::SRem, A->width(), {A, B}),
                      [](const Expr *) { return std::nullopt; });
    if (V)
      return constant(*V, A->width());
  }
  return make(ExprKind::SRem, A->width(), {A, B});
}

//===- Shifts --------------------------------------------------------------------------===//

// PTX clamps shift amounts: shl/shr.u by width or more give 0 (shr.s gives the sign).
const Expr *ExprContext::shl(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  if (B->isConstant())
    return B->payload() >= W ? constant(0, W) : mul(A, constant(1ull << B->payload(), W));
  return make(ExprKind::Shl, W, {A, resize(B, W)});
}

const Expr *ExprContext::lshr(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  if (B->isConstant())
    return B->payload() >= W ? constant(0, W) : udiv(A, constant(1ull << B->payload(), W));
  return make(ExprKind::LShr, W, {A, resize(B, W)});
}

const Expr *ExprContext::ashr(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  if (B->isConstant() && isNonNegative(A))
    return lshr(A, B);
  if (B->isConstant() && A->isConstant()) {
    int64_t S = A->signedValue() >> std::min<uint64_t>(B->payload(), W - 1);
    return constant(static_cast<uint64_t>(S), W);
  }
  return make(ExprKind::AShr, W, {A, resize(B, W)});
}

//===- Minimum and maximum ---------------------------------------------------------------===//

const Expr *ExprContext::umin(const Expr *A, const Expr *B) {
  if (A == B || A->range().Hi <= B->range().Lo)
    return A;
  if (B->range().Hi <= A->range().Lo)
    return B;
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::UMin, A->width(), {A, B});
}

const Expr *ExprContext::umax(const Expr *A, const Expr *B) {
  if (A == B || A->range().Hi <= B->range().Lo)
    return B;
  if (B->range().Hi <= A->range().Lo)
    return A;
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::UMax, A->width(), {A, B});
}

const Expr *ExprContext::smin(const Expr *A, const Expr *B) {
  if (isNonNegative(A) && isNonNegative(B))
    return umin(A, B);
  if (A == B)
    return A;
  if (A->isConstant() && B->isConstant())
    return A->signedValue() <= B->signedValue() ? A : B;
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::SMin, A->width(), {A, B});
}

const Expr *ExprContext::smax(const Expr *A, const Expr *B) {
  if (isNonNegative(A) && isNonNegative(B))
    return umax(A, B);
  if (A == B)
    return A;
  if (A->isConstant() && B->isConstant())
    return A->signedValue() >= B->signedValue() ? A : B;
  if (A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::SMax, A->width(), {A, B});
}

const Expr *ExprContext::mulhiu(const Expr *A, const Expr *B) {
  const unsigned W = A->width();
  if (A->isConstant())
    std::swap(A, B);
  if (B->isConstant() && A->isConstant())
    return constant(static_cast<uint64_t>(
                        (static_cast<unsigned __int128>(A->payload()) * B->payload()) >> W),
                    W);
  if (B->isConstant(0) || B->isConstant(1))
    return constant(0, W);
  if (!B->isConstant() && A->id() > B->id())
    std::swap(A, B);
  return make(ExprKind::MulHiU, W, {A, B});
}

const Expr *ExprContext::mapa(const Expr *Address, const Expr *Rank) {
  return make(ExprKind::MapA, Address->width(), {Address, resize(Rank, Address->width())});
}

//===- Widths --------------------------------------------------------------------------===//

const Expr *ExprContext::zext(const Expr *A, unsigned Width) {
  if (A->width() == Width)
    return A;
  if (A->width() > Width)
    return trunc(A, Width);
  if (A->isConstant())
    return constant(A->payload(), Width);
  if (A->is(ExprKind::ZExt))
    return zext(A->op(0), Width);
  // Widening what was narrowed keeps the low bits: a remainder.
  if (A->is(ExprKind::Trunc) && A->op(0)->width() == Width)
    return urem(A->op(0), constant(1ull << A->width(), Width));
  return make(ExprKind::ZExt, Width, {A});
}

const Expr *ExprContext::sext(const Expr *A, unsigned Width) {
  if (A->width() == Width)
    return A;
  if (A->width() > Width)
    return trunc(A, Width);
  if (A->isConstant())
    return constant(static_cast<uint64_t>(A->signedValue()), Width);
  if (A->width() > 1 && isNonNegative(A))
    return zext(A, Width);
  if (A->is(ExprKind::SExt))
    return sext(A->op(0), Width);
  return make(ExprKind::SExt, Width, {A});
}

const Expr *ExprContext::trunc(const Expr *A, unsigned Width) {
  if (A->width() == Width)
    return A;
  assert(A->width() > Width && "trunc to a wider type");
  if (A->isConstant())
    return constant(A->payload(), Width);
  if (A->is(ExprKind::Symbol) && A->range().Hi <= mask(Width))
    return symbol(A->name(), A->symbolSpace(), Width);
  if (A->is(ExprKind::ZExt) || A->is(ExprKind::SExt)) {
    const Expr *X = A->op(0);
    if (X->width() == Width)
      return X;
    if (X->width() > Width)
      return trunc(X, Width);
    return A->is(ExprKind::ZExt) ? zext(X, Width) : sext(X, Width);
  }
  // A quotient or remainder of a widened value that fits the narrow type.
  if ((A->is(ExprKind::UDiv) || A->is(ExprKind::URem)) && A->op(0)->is(ExprKind::ZExt) &&
      A->op(0)->op(0)->width() == Width && A->op(1)->isConstant() &&
      A->op(1)->payload() <= mask(Width)) {
    const Expr *X = A->op(0)->op(0), *D = constant(A->op(1)->payload(), Width);
    return A->is(ExprKind::UDiv) ? udiv(X, D) : urem(X, D);
  }
  // Truncation commutes with sums and products: the low bits only depend on low bits.
  if (A->is(ExprKind::Add) || (A->is(ExprKind::Mul) && A->op(1)->isConstant())) {
    LinearForm L;
    L.Width = A->width();
    L.addScaled(A, 1);
    LinearForm T;
    T.Width = Width;
    for (const auto &[Term, K] : L.Terms)
      T.Terms.push_back({trunc(Term, Width), K & mask(Width)});
    T.Constant = L.Constant & mask(Width);
    T.normalize(*this);
    return buildLinear(*this, T);
  }
  if (A->range().Hi <= mask(Width) && A->is(ExprKind::Select))
    return select(A->op(0), trunc(A->op(1), Width), trunc(A->op(2), Width));
  return make(ExprKind::Trunc, Width, {A});
}

const Expr *ExprContext::resize(const Expr *A, unsigned Width) {
  return A->width() < Width ? zext(A, Width) : trunc(A, Width);
}
