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

#include "Sampling.h"

#include "llvm/ADT/SmallVector.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Printed without spaces: forms read like the source (`(k+3)%4`).
std::string compact(const Protocol &P, const Expr *E) {
  std::string S = P.exprString(E), Out;
  for (char C : S)
    if (C != ' ')
      Out += C;
  return Out;
}

bool needsParens(const std::string &S) {
  return S.find_first_of("+-*/%&^|") != std::string::npos;
}

std::string paren(const std::string &S) { return needsParens(S) ? "(" + S + ")" : S; }

/// After a loop, a ring stands at the loop's trip count: the stage released after the last
/// k-tile is (K/64 + 3) % 4.
void addTripCounts(const Protocol &P, unsigned Width, llvm::SmallVectorImpl<const Expr *> &Out) {
  ExprContext &Ctx = P.Analysis->context();
  for (const ProtocolLoop &L : P.Loops)
    if (L.Trip.known() && !L.Trip.E->isConstant()) {
      const Expr *T = Ctx.resize(L.Trip.E, Width);
      if (!llvm::is_contained(Out, T))
        Out.push_back(T);
    }
}

/// Counters a ring in these loops may run on: the innermost loop's number and, for a loop
/// nested in another, the count of iterations over both (t * trip + k).
llvm::SmallVector<const Expr *, 4> counters(const Protocol &P,
                                            llvm::ArrayRef<const ProtocolLoop *> Loops,
                                            unsigned Width) {
  llvm::SmallVector<const Expr *, 4> Out;
  if (Loops.empty()) {
    addTripCounts(P, Width, Out);
    return Out;
  }
  ExprContext &Ctx = P.Analysis->context();
  const ProtocolLoop *Inner = Loops.back();
  const Expr *I = Ctx.resize(Ctx.iterationVar(Inner->Loop), Width);
  if (Loops.size() >= 2 && Inner->Trip.known()) {
    const ProtocolLoop *Outer = Loops[Loops.size() - 2];
    const Expr *T = Ctx.resize(Ctx.iterationVar(Outer->Loop), Width);
    Out.push_back(Ctx.add(Ctx.mul(T, Ctx.resize(Inner->Trip.E, Width)), I));
  }
  Out.push_back(I);
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
  llvm::SmallVector<const Expr *, 4> Cands;
  if (const Expr *X = ringCounter(E))
    Cands.push_back(X);
  for (const Expr *C : counters(P, Loops, W))
    Cands.push_back(C);
  for (const Expr *X : Cands) {
    std::string Xs = compact(P, X);
    for (uint64_t A : {1u, 2u, 4u})
      for (uint64_t C = 0; C < Slots; ++C) {
        const Expr *Form = Ctx.urem(Ctx.add(Ctx.mul(X, Ctx.constant(A, W)), Ctx.constant(C, W)),
                                    Ctx.constant(Slots, W));
        if (!S.agree(E, Form))
          continue;
        std::string Ring = A == 1 ? Xs : std::to_string(A) + "*" + paren(Xs);
        if (C)
          Ring += "+" + std::to_string(C);
        return paren(Ring) + "%" + std::to_string(Slots);
      }
  }
  return compact(P, E);
}

} // namespace

std::string wsv::analyzer::formatValue(const Protocol &P, const ProtocolValue &V) {
  if (V.known())
    return P.exprString(V.E);
  if (!V.Unknown.empty())
    return "unknown (" + V.Unknown + ")";
  return "-";
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
  return Out;
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
  llvm::SmallVector<const Expr *, 4> Cands;
  unsigned Slots = 1;
  if (E.Barrier.resolved()) {
    Slots = P.Barriers[E.Barrier.Array].Slots;
    if (const Expr *X = ringCounter(E.Barrier.Slot.E))
      Cands.push_back(Ctx.resize(X, W));
  }
  for (const Expr *C : counters(P, Loops, W))
    Cands.push_back(C);
  llvm::SmallVector<uint64_t, 5> Periods;
  if (Slots > 1)
    Periods.push_back(Slots);
  for (uint64_t N : {1u, 2u, 4u, 8u})
    if (N != Slots)
      Periods.push_back(N);
  for (const Expr *X : Cands) {
    std::string Xs = compact(P, X);
    for (uint64_t N : Periods)
      for (uint64_t Flip : {0u, 1u}) {
        const Expr *Form =
            Ctx.bitXor(Ctx.bitAnd(Ctx.udiv(X, Ctx.constant(N, W)), Ctx.constant(1, W)),
                       Ctx.constant(Flip, W));
        if (!S.agree(Par, Form))
          continue;
        std::string Bit = N == 1 ? paren(Xs) + "&1" : "(" + paren(Xs) + "/" + std::to_string(N) + ")&1";
        return Flip ? "(" + Bit + ")^1" : Bit;
      }
  }
  return compact(P, Par);
}
