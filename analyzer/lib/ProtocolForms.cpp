//===- ProtocolForms.cpp - readable forms of stages, parities and values ----------===//
//
// Closed forms are exact but not always what an author would write: clang's producer parity
// comes out as `(-k - 1) / 4 % 2`, a release of the previous stage as `(24 & k * 8 + 24) / 8`.
// The forms here are the ones pipelines are written in, ring counters (a*X + c) % N and
// phase bits ((X / N) & 1) ^ p, over the loop counters around the event (X = k, or t*(K/64)+k
// for a ring carried across persistent tiles); one is shown only when it agrees with the
// closed form on every sample. The IR keeps the closed form.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/analyzer/Solver.h"

#include "Sampling.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdlib>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Printed without spaces: forms read like the source (`(k+3)%4`).
std::string compact(const Protocol &P, const Expr *E) { return P.exprString(E, true); }

bool needsParens(const std::string &S) {
  return S.find_first_of("+-*/%&^|") != std::string::npos;
}

std::string paren(const std::string &S) { return needsParens(S) ? "(" + S + ")" : S; }

/// After a loop, a ring stands at the loop's trip count: the stage released after the last
/// k-tile is (K/64 + 3) % 4.
/// An unrolled loop's iterations each take several k-tiles: after K/128 iterations of a
/// loop unrolled twice the ring stands at K/128*2.
void addTripCounts(const Protocol &P, unsigned Width, llvm::SmallVectorImpl<const Expr *> &Out) {
  ExprContext &Ctx = P.Analysis->context();
  for (const ProtocolLoop &L : P.Loops)
    if (L.Trip.known() && !L.Trip.E->isConstant())
      for (uint64_t Unroll : {1u, 2u, 4u}) {
        const Expr *T = Ctx.resize(simplifyInvariants(P, L.Trip.E, L.When.E), Width);
        if (Unroll > 1)
          T = Ctx.mul(T, Ctx.constant(Unroll, Width));
        if (!llvm::is_contained(Out, T))
          Out.push_back(T);
      }
}

/// Counters a ring in these loops may run on: a multiple of the innermost loop's number (an
/// unrolled loop advances the ring by its unroll factor per iteration) plus, for each loop
/// around it, its number times nothing or a step one of its counters advances by per
/// iteration (a ring carried across persistent tiles advances by the tiles' K / 64).
llvm::SmallVector<const Expr *, 16> counters(const Protocol &P,
                                             llvm::ArrayRef<const ProtocolLoop *> Loops,
                                             unsigned Width) {
  llvm::SmallVector<const Expr *, 16> Out;
  if (Loops.empty())
    return Out;
  ExprContext &Ctx = P.Analysis->context();
  const ValueAnalysis &V = P.Analysis->values();
  std::vector<llvm::SmallVector<const Expr *, 4>> Options(Loops.size());
  for (unsigned J = 0; J < Loops.size(); ++J) {
    auto &O = Options[J];
    if (J + 1 == Loops.size()) {
      // In a thread's own loop over its words of one stage (a trip count per thread) the
      // slot is the outer counters' alone: `t%4`, not `(i*4+t)%4`. An unrolled k-loop keeps
      // its counter: `(k*4+K/64*t)%4` says which k-tile the copy is.
      if (Loops.size() > 1 && Loops[J]->Trip.known() && isThreadDependent(Loops[J]->Trip.E))
        O.push_back(Ctx.constant(0, Width));
      // An unrolled loop's own counter advances by the unroll factor: k-tile 4*i + c.
      for (const InductionVar &IV : V.loopSummary(Loops[J]->Loop).Inductions)
        if (IV.Kind == InductionKind::Linear && IV.Step && IV.Step->isConstant() &&
            std::abs(IV.Step->signedValue()) > 1 && std::abs(IV.Step->signedValue()) <= 8) {
          // (A count-down counter steps by -4 just the same.)
          const Expr *Step = Ctx.constant(std::abs(IV.Step->signedValue()), Width);
          if (!llvm::is_contained(O, Step))
            O.push_back(Step);
        }
      for (uint64_t C : {1u, 2u, 4u}) {
        const Expr *Step = Ctx.constant(C, Width);
        if (!llvm::is_contained(O, Step))
          O.push_back(Step);
      }
      // A persistent loop whose ring advances by a whole k-loop per tile.
      for (const InductionVar &IV : V.loopSummary(Loops[J]->Loop).Inductions)
        if ((IV.Kind == InductionKind::Linear || IV.Kind == InductionKind::Ring) && IV.Step &&
            !IV.Step->isConstant()) {
          const Expr *Step = Ctx.resize(simplifyInvariants(P, V.closedForm(IV.Step)), Width);
          if (!llvm::is_contained(O, Step))
            O.push_back(Step);
        }
      continue;
    }
    O.push_back(Ctx.constant(0, Width));
    O.push_back(Ctx.constant(1, Width));
    for (const InductionVar &IV : V.loopSummary(Loops[J]->Loop).Inductions)
      if ((IV.Kind == InductionKind::Linear || IV.Kind == InductionKind::Ring) && IV.Step &&
          !IV.Step->isConstant()) {
        const Expr *Step = Ctx.resize(simplifyInvariants(P, V.closedForm(IV.Step)), Width);
        if (!llvm::is_contained(O, Step))
          O.push_back(Step);
      }
  }
  // Every combination, the simplest first (the outer coefficients vary slowest).
  std::vector<unsigned> Pick(Loops.size(), 0);
  while (Out.size() < 24) {
    const Expr *X = Ctx.constant(0, Width);
    for (unsigned J = 0; J < Loops.size(); ++J)
      X = Ctx.add(X, Ctx.mul(Options[J][Pick[J]], Ctx.resize(Ctx.iterationVar(Loops[J]->Loop), Width)));
    if (!X->isConstant() && !llvm::is_contained(Out, X))
      Out.push_back(X);
    int J = Loops.size() - 1;
    for (; J >= 0; --J) {
      if (++Pick[J] < Options[J].size())
        break;
      Pick[J] = 0;
    }
    if (J < 0)
      break;
  }
  return Out;
}

/// Where a ring stands after the loops nested in the innermost of Loops ran, for an event that
/// follows them in the same iteration (the remainder after an unrolled k-loop of a persistent
/// tile is at K/64*t + K/256*4): each counter plus each such loop's trip count, times an
/// unroll factor.
llvm::SmallVector<const Expr *, 16> countersAfterInnerLoops(
    const Protocol &P, llvm::ArrayRef<const ProtocolLoop *> Loops,
    llvm::ArrayRef<const Expr *> Counters, unsigned Width) {
  llvm::SmallVector<const Expr *, 16> Out;
  if (Loops.empty())
    return Out;
  ExprContext &Ctx = P.Analysis->context();
  const LoopInfo &Info = P.Analysis->loops();
  llvm::SmallVector<const Expr *, 4> Trips;
  for (const ProtocolLoop &L : P.Loops) {
    if (L.Loop == NoIndex || Info.loop(L.Loop).Parent != Loops.back()->Loop || !L.Trip.known() ||
        L.Trip.E->isConstant())
      continue;
    const Expr *T = Ctx.resize(simplifyInvariants(P, L.Trip.E, L.When.E), Width);
    for (uint64_t Unroll : {1u, 2u, 4u}) {
      const Expr *U = Unroll > 1 ? Ctx.mul(T, Ctx.constant(Unroll, Width)) : T;
      if (!llvm::is_contained(Trips, U))
        Trips.push_back(U);
    }
  }
  for (const Expr *T : Trips)
    for (const Expr *X : Counters)
      Out.push_back(Ctx.add(X, T));
  return Out;
}

/// The number a ring of Slots slots counts with: X in `X % Slots`, if the slot is written so.
const Expr *ringCounter(const Expr *Slot) {
  if (Slot && Slot->is(ExprKind::URem) && Slot->op(1)->isConstant())
    return Slot->op(0);
  return nullptr;
}

std::string formatSlot(const Protocol &P, const ProtocolValue &Slot, unsigned Slots,
                       llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!Slot.known())
    return "?";
  const Expr *E = Slot.E;
  if (E->isConstant())
    return std::to_string(E->payload());
  if (Slots <= 1)
    return compact(P, E);
  ExprContext &Ctx = P.Analysis->context();
  Sampler S(P.Launch, P.MaxIterations);
  unsigned W = E->width();
  // The loop counters first: after an unrolled loop the ring may restart at a multiple of
  // its size, and `k % 4` says more than `(K/256*4+k) % 4`.
  llvm::SmallVector<const Expr *, 16> Cands;
  llvm::SmallVector<const Expr *, 16> Counters = counters(P, Loops, W);
  Cands.append(Counters.begin(), Counters.end());
  for (const Expr *C : countersAfterInnerLoops(P, Loops, Counters, W))
    Cands.push_back(C);
  // Outside loops, where a loop left the ring: `(K/128*2+3)%4` after a loop unrolled twice.
  if (Loops.empty())
    addTripCounts(P, W, Cands);
  if (const Expr *X = ringCounter(E))
    Cands.push_back(simplifyInvariants(P, X));
  for (const Expr *X : Cands) {
    std::string Xs = compact(P, X);
    for (uint64_t C = 0; C < Slots; ++C) {
      const Expr *Form =
          Ctx.urem(Ctx.add(X, Ctx.constant(C, W)), Ctx.constant(Slots, W));
      if (!S.agree(E, Form))
        continue;
      std::string Ring = C ? Xs + "+" + std::to_string(C) : Xs;
      return paren(Ring) + "%" + std::to_string(Slots);
    }
  }
  return compact(P, simplifyInvariants(P, E));
}

/// N's values on every sample of its leaves (and Assuming's), computed once for the forty
/// candidate forms Par/D*C and Par/D%C compared with it: Sampler::agree would evaluate N, and
/// Assuming (a loop's entry condition, as long as the rest on H6), again for each. Outside
/// Assuming both sides read 0, so only the samples where it holds compare. Same answers as
/// Sampler::agree(select(Assuming, N, 0), select(Assuming, Candidate, 0)).
class SampledValues {
public:
  SampledValues(const Sampler &S, const Expr *N, const Expr *Par, const Expr *Assuming) {
    llvm::SmallVector<const Expr *, 2> Exprs{N};
    if (Assuming)
      Exprs.insert(Exprs.begin(), Assuming);
    // N and Assuming are large (hundreds of nodes on H6) and evaluated on every sample.
    Sampler::Flat FlatN(N), FlatPar(Par);
    std::optional<Sampler::Flat> FlatAssuming;
    if (Assuming)
      FlatAssuming.emplace(Assuming);
    Complete = S.forEach(Exprs, [&](Sampler::Assignment A) {
      std::optional<uint64_t> Holds = Assuming ? (*FlatAssuming)(A) : 1;
      if (Holds && !*Holds) {
        AnyOutside = true; // both sides read 0 here
        return true;
      }
      if (Holds)
        if (std::optional<uint64_t> V = FlatN(A))
          if (std::optional<uint64_t> P = FlatPar(A))
            Values.push_back({*P, *V});
      return true;
    });
  }

  /// Whether forEach could enumerate the samples (else agree fails for every candidate).
  bool complete() const { return Complete; }

  /// Whether N is Par/D*C (Mul) or Par/D%C at width W on every sample (and there was one).
  /// The candidates are computed here rather than evaluated as expressions: forty of them per
  /// part, on every sample, made the evaluator's setup the listing's main cost.
  bool agree(uint64_t D, uint64_t C, bool Mul, unsigned W) const {
    uint64_t Mask = W >= 64 ? ~uint64_t(0) : (uint64_t(1) << W) - 1;
    for (const auto &[P, V] : Values) {
      uint64_t Q = P / D;
      if (((Mul ? Q * C : Q % C) & Mask) != V)
        return false;
    }
    return AnyOutside || !Values.empty();
  }

private:
  bool Complete = false;
  bool AnyOutside = false;
  /// Par's and N's values on the samples where Assuming holds and N has a value.
  std::vector<std::pair<uint64_t, uint64_t>> Values;
};

const Expr *simplifyInvariantsOnce(const Protocol &P, const Expr *E, const Expr *Assuming) {
  ExprContext &Ctx = P.Analysis->context();
  Sampler S(P.Launch, P.MaxIterations);
  auto Varies = [](const Expr *X) {
    return X->mentions([](const Expr *L) {
      return L->is(ExprKind::IterationVar) || L->is(ExprKind::Phi) || L->is(ExprKind::Opaque) ||
             L->is(ExprKind::Load) || L->is(ExprKind::Elect) ||
             (L->is(ExprKind::SpecialReg) && !isCtaUniform(L->specialRegister()));
    });
  };
  auto FirstParam = [](const Expr *X) {
    const Expr *Found = nullptr;
    X->mentions([&](const Expr *L) {
      if (L->is(ExprKind::Param) && !Found)
        Found = L;
      return false;
    });
    return Found;
  };
  auto Size = [](const Expr *X) { return X->str().size(); };
  if (Assuming && Assuming->isTrue())
    Assuming = nullptr;
  // Samples propose, Z3 decides: a few launches can agree by chance (H6's count of stream-K
  // pieces, 1 or 2, matched M / 256 on every sample that enters its loop). Z3 decides for
  // every parameter below 2^30, sizes of a tensor (Triton's signed division by 256 has a term
  // for negative sizes, of no use in a listing). A form Z3 cannot show equal within a small
  // budget is not used; the listing keeps the longer one. Claims past 600 characters
  // are not asked: on H6 hundreds agree on every sample (up to 7000 characters), each ran
  // into the time limit, and none was shown equal.
  std::unique_ptr<Solver> Z3;
  auto Equal = [&](const Expr *N, const Expr *Cand) {
    const Expr *Same = Ctx.eq(N, Cand);
    if (Assuming)
      Same = Ctx.logicalOr(Ctx.logicalNot(Assuming), Same);
    if (Size(Same) > 600)
      return SolverAnswer::Unknown;
    const Expr *Sizes = Ctx.boolean(true);
    llvm::SmallPtrSet<const Expr *, 4> Params;
    Same->mentions([&](const Expr *L) {
      if (L->is(ExprKind::Param) && L->width() >= 32 && Params.insert(L).second)
        Sizes = Ctx.logicalAnd(Sizes, Ctx.ult(L, Ctx.constant(uint64_t(1) << 30, L->width())));
      return false;
    });
    if (!Z3)
      Z3 = Solver::createZ3(/*TimeoutMs=*/300, /*ResourceLimit=*/300000);
    return Z3->isValid(Ctx.implies(Sizes, Same)).Answer;
  };
  auto Shorter = [&](const Expr *N) -> const Expr * {
    const Expr *Param = FirstParam(N);
    if (!Param)
      return nullptr;
    const Expr *Par = Ctx.resize(Param, N->width());
    unsigned W = N->width();
    // The candidates that agree on every sample, tried on Z3 shortest first.
    std::vector<std::pair<size_t, const Expr *>> Agreeing;
    // Sampled when a candidate is shorter than N, which most small parts are not.
    std::optional<SampledValues> Values;
    for (uint64_t D : {1u, 64u, 128u, 256u, 512u})
      for (uint64_t C : {1u, 2u, 4u, 8u}) {
        const Expr *Q = D == 1 ? Par : Ctx.udiv(Par, Ctx.constant(D, W));
        for (bool Mul : {true, false}) {
          const Expr *Cand = Mul ? Ctx.mul(Q, Ctx.constant(C, W)) : Ctx.urem(Q, Ctx.constant(C, W));
          if (Size(Cand) >= Size(N))
            continue;
          if (!Values)
            Values.emplace(S, N, Par, Assuming);
          if (!Values->complete())
            return nullptr;
          if (Values->agree(D, C, Mul, W))
            Agreeing.push_back({Size(Cand), Cand});
        }
      }
    std::stable_sort(Agreeing.begin(), Agreeing.end(),
                     [](const auto &A, const auto &B) { return A.first < B.first; });
    // A part whose shortest agreeing form Z3 cannot decide in its budget is a hard one (H6's
    // stream-K tile arithmetic): its longer forms ran out of the budget as well, each, and
    // made up most of the H6 listing's time, so the first undecided form ends the search.
    for (const auto &[Length, Cand] : Agreeing)
      switch (Equal(N, Cand)) {
      case SolverAnswer::Yes:
        return Cand;
      case SolverAnswer::No:
        continue;
      case SolverAnswer::Unknown:
        return nullptr;
      }
    return nullptr;
  };
  return Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
    if (N->isLeaf() || N->width() == 1 || Varies(N))
      return nullptr;
    {
      std::lock_guard<std::mutex> Hold(P.Simplified->Lock);
      auto It = P.Simplified->Parts.find({N, Assuming});
      if (It != P.Simplified->Parts.end())
        return It->second == N ? nullptr : It->second;
    }
    const Expr *Found = Shorter(N);
    std::lock_guard<std::mutex> Hold(P.Simplified->Lock);
    P.Simplified->Parts[{N, Assuming}] = Found ? Found : N;
    return Found;
  });
}

} // namespace

/// Parts that only depend on kernel parameters, in a shorter form that agrees on every
/// sample and that Z3 shows equal for parameters below 2^30: nvcc's start of a remainder
/// loop `K/64-1 < 3 ? 0 : (K/256*4-4)/4*4+4` is K/256*4.
const Expr *wsv::analyzer::simplifyInvariants(const Protocol &P, const Expr *E,
                                              const Expr *Assuming) {
  if (!E)
    return E;
  {
    std::lock_guard<std::mutex> Hold(P.Simplified->Lock);
    auto It = P.Simplified->Forms.find({E, Assuming});
    if (It != P.Simplified->Forms.end())
      return It->second;
  }
  const Expr *Form = simplifyInvariantsOnce(P, E, Assuming);
  std::lock_guard<std::mutex> Hold(P.Simplified->Lock);
  P.Simplified->Forms[{E, Assuming}] = Form;
  return Form;
}

std::string wsv::analyzer::formatValue(const Protocol &P, const ProtocolValue &V) {
  if (V.known())
    return P.exprString(V.E);
  if (!V.Unknown.empty())
    return "unknown (" + V.Unknown + ")";
  return "-";
}

std::string wsv::analyzer::formatCtaMask(const Protocol &P, const ProtocolValue &Mask) {
  std::optional<uint64_t> Value = Mask.constant();
  if (!Value)
    return formatValue(P, Mask);
  std::string Bits;
  for (uint64_t M = *Value; M; M >>= 1)
    Bits.insert(Bits.begin(), M & 1 ? '1' : '0');
  return "0b" + (Bits.empty() ? std::string("0") : Bits);
}

std::string wsv::analyzer::formatBarrier(const Protocol &P, const BarrierRef &R,
                                         llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!R.resolved()) {
    std::string Out = "unresolved barrier";
    if (R.Address)
      Out += " " + P.exprString(R.Address);
    return Out + " (" + (R.Unresolved.empty() ? "no address" : R.Unresolved) + ")";
  }
  const BarrierArray &A = P.Barriers[R.Array];
  std::string Out = A.Name;
  if (A.Slots > 1)
    Out += "[" + formatSlot(P, R.Slot, A.Slots, Loops) + "]";
  if (R.PeerRank.known())
    Out += " in CTA rank " + compact(P, R.PeerRank.E);
  return Out;
}

std::string wsv::analyzer::formatBuffer(const Protocol &P, const BufferRef &R,
                                        llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!R.resolved()) {
    std::string Out = "smem";
    if (R.Address)
      Out += " " + P.exprString(R.Address);
    return R.Unresolved.empty() ? Out : Out + " (" + R.Unresolved + ")";
  }
  const Buffer &B = P.Buffers[R.Buffer];
  std::string Out = B.Name;
  if (B.Slots > 1)
    Out += "[" + formatSlot(P, R.Slot, B.Slots, Loops) + "]";
  if (R.ByteOffset)
    Out += "+" + std::to_string(R.ByteOffset);
  if (R.InSlot.known())
    Out += isThreadDependent(R.InSlot.E)
               ? "+(per thread)"
               : "+" + paren(compact(P, simplifyInvariants(P, R.InSlot.E)));
  return Out;
}

std::string wsv::analyzer::formatCondition(const Protocol &P, const Expr *E) {
  return P.exprString(simplifyInvariants(P, E));
}

std::string wsv::analyzer::formatParity(const Protocol &P, const Event &E,
                                        llvm::ArrayRef<const ProtocolLoop *> Loops) {
  if (!E.Parity.known())
    return E.Token.known() ? "token " + P.exprString(E.Token.E) : formatValue(P, E.Parity);
  const Expr *Par = E.Parity.E;
  if (Par->isConstant())
    return std::to_string(Par->payload() & 1);
  ExprContext &Ctx = P.Analysis->context();
  Sampler S(P.Launch, P.MaxIterations);
  unsigned W = Par->width();
  for (uint64_t C : {0u, 1u})
    if (S.agree(Par, Ctx.constant(C, W)))
      return std::to_string(C);
  llvm::SmallVector<const Expr *, 16> Cands = counters(P, Loops, W);
  for (const Expr *C : countersAfterInnerLoops(P, Loops, Cands, W))
    Cands.push_back(C);
  unsigned Slots = 1;
  if (E.Barrier.resolved()) {
    Slots = P.Barriers[E.Barrier.Array].Slots;
    if (const Expr *X = ringCounter(E.Barrier.Slot.E))
      Cands.push_back(simplifyInvariants(P, Ctx.resize(X, W)));
  }
  if (Loops.empty())
    addTripCounts(P, W, Cands);
  llvm::SmallVector<uint64_t, 5> Periods;
  if (Slots > 1)
    Periods.push_back(Slots);
  for (uint64_t N : {1u, 2u, 4u, 8u})
    if (!llvm::is_contained(Periods, N))
      Periods.push_back(N);
  for (const Expr *X : Cands) {
    for (uint64_t N : Periods)
      for (uint64_t C = 0; C < std::max<uint64_t>(N, 1); ++C)
        for (uint64_t Flip : {0u, 1u}) {
          const Expr *Counter = C ? Ctx.add(X, Ctx.constant(C, W)) : X;
          const Expr *Form = Ctx.bitXor(
              Ctx.bitAnd(Ctx.udiv(Counter, Ctx.constant(N, W)), Ctx.constant(1, W)),
              Ctx.constant(Flip, W));
          if (!S.agree(Par, Form))
            continue;
          // An unrolled loop's (k*4/4)&1 is k&1: a counter that steps by a multiple of the
          // period reads better divided first.
          const Expr *Shown = X;
          uint64_t Period = N;
          if (!C && X->is(ExprKind::Mul) && X->op(1)->isConstant() && X->op(1)->payload() &&
              N % X->op(1)->payload() == 0) {
            Period = N / X->op(1)->payload();
            Shown = X->op(0);
          }
          std::string Xs = compact(P, Shown) + (C ? "+" + std::to_string(C) : "");
          std::string Bit = Period == 1 ? paren(Xs) + "&1"
                                        : "(" + paren(Xs) + "/" + std::to_string(Period) + ")&1";
          return Flip ? "(" + Bit + ")^1" : Bit;
        }
  }
  return compact(P, simplifyInvariants(P, Par));
}
