//===- Induction.cpp - induction variables and their closed forms -----------------===//
//
// A header phi is an induction variable when the value carried back along every latch has
// one of the shapes below, in terms of the phi itself and values the loop does not change.
// Ring counters wrapped by a select are recognized by evaluating the update on every stage
// 0 .. S-1 (S a small constant): `s + 1 == S ? 0 : s + 1`, `s == S - 1 ? 0 : s + 1` and
// `s + 1 >= S ? 0 : s + 1` are the same function there, whatever shape the compiler chose.
// Phase bits are matched the same way against the wrap of a ring counter of the same loop.
// A phi whose latch value is another induction variable's phi trails it by one iteration
// (`prev = w; ++w`: nvcc keeps w - 1 that way for a loop body that reads it). A ring whose
// update runs only where another ring is at one value (`k == last ? step(s) : s`) is gated:
// its closed form counts the iterations before where the gate held.
//
//===----------------------------------------------------------------------------------===//
#include "ExprLinear.h"
#include "ValueBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace wsv;
using namespace wsv::analyzer;

const char *wsv::analyzer::toString(InductionKind K) {
  switch (K) {
  case InductionKind::Linear: return "linear";
  case InductionKind::Ring: return "ring";
  case InductionKind::Parity: return "parity";
  case InductionKind::Alternating: return "alternating";
  case InductionKind::FirstIteration: return "first-iteration";
  case InductionKind::Lagged: return "lagged";
  case InductionKind::Carried: return "carried";
  case InductionKind::Gated: return "gated";
  }
  return "?";
}

const InductionVar *LoopSummary::induction(const Expr *Phi) const {
  for (const InductionVar &IV : Inductions)
    if (IV.Phi == Phi)
      return &IV;
  return nullptr;
}

// Largest modulus checked by evaluating an update at every stage.
static constexpr uint64_t MaxEnumeratedModulus = 4096;

namespace {
/// Evaluates E with X = V, where X is the only non-constant leaf E may have.
std::optional<uint64_t> evalAt(const Expr *E, const Expr *X, uint64_t V) {
  return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L == X)
      return V & ExprContext::mask(X->width());
    return std::nullopt;
  });
}

void collectConstants(const Expr *E, llvm::SmallVectorImpl<uint64_t> &Out);

/// (S, T) where Update, a function of Phi alone, is (Phi + T) % S on every value 0 .. S - 1
/// of a ring of at most 64 stages whose S (or S - 1) is a constant of Update; (0, 0) where
/// it is none: a ring advanced T times per update, whatever shape the compiler gave it.
std::pair<uint64_t, uint64_t> ringStep(const Expr *Update, const Expr *Phi) {
  llvm::SmallVector<uint64_t, 4> Constants;
  collectConstants(Update, Constants);
  for (uint64_t K : Constants)
    for (uint64_t S : {K, K + 1}) {
      if (S < 2 || S > 64)
        continue;
      for (uint64_t T = 1; T <= 2 * S; ++T) {
        bool Ok = true;
        for (uint64_t V = 0; V < S && Ok; ++V)
          Ok = evalAt(Update, Phi, V) == (V + T) % S;
        if (Ok)
          return {S, T};
      }
    }
  return {0, 0};
}

bool onlyMentions(const Expr *E, const Expr *X) {
  return !E->mentions([&](const Expr *L) { return !L->isConstant() && L != X; });
}

/// The period 2^b (b <= 6) in which E, a function of X alone, repeats as X counts up: every
/// occurrence of X is masked (`X & (2^b - 1)`, or `X % 2^b`, which the builders make the
/// same) by at most that, so E reads only X's low b bits. 0 where E reads more of X.
/// Signed: whether E takes a signed remainder of X (nvcc -G's `rem.s32 %r, k, 2`): that
/// reads only the low bits too while X is not negative.
uint64_t lowBitsPeriod(const Expr *E, const Expr *X, bool &Signed) {
  uint64_t Period = 1;
  bool Unmasked = false;
  Signed = false;
  std::function<void(const Expr *)> Walk = [&](const Expr *N) {
    if (N == X) {
      Unmasked = true;
      return;
    }
    if ((N->is(ExprKind::URem) || N->is(ExprKind::SRem)) && N->op(0) == X &&
        N->op(1)->isConstant()) {
      Signed |= N->is(ExprKind::SRem);
      uint64_t M = N->op(1)->payload();
      if (M == 0 || (M & (M - 1)) || M > 64)
        Unmasked = true;
      else
        Period = std::max(Period, M);
      return;
    }
    if (N->isLeaf())
      return;
    for (const Expr *Op : N->ops())
      Walk(Op);
  };
  Walk(E);
  return Unmasked ? 0 : Period;
}

void collectConstants(const Expr *E, llvm::SmallVectorImpl<uint64_t> &Out) {
  if (E->isConstant()) {
    Out.push_back(E->payload());
    return;
  }
  for (const Expr *Op : E->ops())
    collectConstants(Op, Out);
}
} // namespace

BlockId ValueBuilder::leafBlock(const Expr *Leaf) const {
  const void *Site = Leaf->site();
  if (!Site)
    return NoIndex;
  auto Insts = G.instructions();
  auto Blocks = G.blocks();
  if (Site >= static_cast<const void *>(Insts.data()) &&
      Site < static_cast<const void *>(Insts.data() + Insts.size()))
    return static_cast<const CfgInst *>(Site)->Block;
  if (Site >= static_cast<const void *>(Blocks.data()) &&
      Site < static_cast<const void *>(Blocks.data() + Blocks.size()))
    return static_cast<const BasicBlock *>(Site)->Index;
  return NoIndex;
}

bool ValueBuilder::isInvariant(const Expr *E, LoopId L) const {
  const Loop &Lp = Loops.loop(L);
  return !E->mentions([&](const Expr *Leaf) {
    if (Leaf->is(ExprKind::IterationVar))
      return Loops.isNestedIn(static_cast<LoopId>(Leaf->payload()), L);
    if (Leaf->is(ExprKind::Phi) || Leaf->is(ExprKind::Opaque) || Leaf->is(ExprKind::Load) ||
        Leaf->is(ExprKind::Elect)) {
      BlockId B = leafBlock(Leaf);
      return B != NoIndex && Lp.contains(B);
    }
    return false;
  });
}

void ValueBuilder::finishLoop(LoopId L) {
  const Loop &Lp = Loops.loop(L);
  const BasicBlock &Header = G.block(Lp.Header);
  const llvm::BitVector &Defs = LoopDefs[L];
  for (unsigned R = Defs.find_first(); R != ~0u && R < Defs.size(); R = Defs.find_next(R)) {
    const Expr *Phi = Ctx.phi(Regs[R].Name, &Header, R, Regs[R].Width);
    PhiInfo &Info = Phis[Phi];
    for (BlockId Latch : Lp.Latches) {
      const Expr *V = Done[Latch] ? get(Out[Latch], R) : nullptr;
      Info.Incoming.push_back({Latch, V ? V : undefined(R)});
    }
  }
  // Phis nothing in the loop reads (a register the body always writes before reading) are
  // not worth a closed form.
  LivePhis.clear();
  llvm::SmallPtrSet<const Expr *, 32> Visited;
  llvm::SmallVector<const Expr *, 32> Work;
  auto Visit = [&](const Expr *Root) {
    if (!Root)
      return;
    Work.push_back(Root);
    while (!Work.empty()) {
      const Expr *E = Work.pop_back_val();
      if (!Visited.insert(E).second)
        continue;
      if (E->is(ExprKind::Phi) && E->site() == &Header)
        LivePhis.insert(E);
      for (const Expr *Op : E->ops())
        Work.push_back(Op);
    }
  };
  for (BlockId B : Lp.Blocks)
    for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I) {
      Visit(Guards[I]);
      for (unsigned K = OperandStart[I]; K < OperandStart[I + 1]; ++K)
        Visit(OperandValues[K]);
    }
  for (auto [From, To] : Lp.ExitEdges)
    if (const State *St = edgeState(From, To))
      for (unsigned R = Defs.find_first(); R != ~0u && R < Defs.size(); R = Defs.find_next(R))
        Visit(get(*St, R));
  recognizeSpinWait(L);
  recognizeInductions(L);
  computeTripCount(L);
  transformExits(L);
}

// Update - Phi, pushed into the arms of selects: a counter that advances by a different
// loop-invariant amount depending on the parameters (an unrolled loop and its remainder) is
// still linear, its step a select.
const Expr *ValueBuilder::subtractThroughSelects(const Expr *Update, const Expr *Phi) {
  if (Update->is(ExprKind::Select))
    return Ctx.select(Update->op(0), subtractThroughSelects(Update->op(1), Phi),
                      subtractThroughSelects(Update->op(2), Phi));
  // (select ...) + 1: into the term that holds the counter.
  if (Update->is(ExprKind::Add)) {
    auto Holds = [&](const Expr *E) { return E->mentions([&](const Expr *X) { return X == Phi; }); };
    const Expr *A = Update->op(0), *B = Update->op(1);
    if (Holds(A) && !Holds(B) && A->is(ExprKind::Select))
      return Ctx.add(subtractThroughSelects(A, Phi), B);
    if (Holds(B) && !Holds(A) && B->is(ExprKind::Select))
      return Ctx.add(A, subtractThroughSelects(B, Phi));
  }
  return Ctx.sub(Update, Phi);
}

void ValueBuilder::recognizeInductions(LoopId L) {
  const Loop &Lp = Loops.loop(L);
  LoopSummary &Sum = Summaries[L];
  const Expr *Iter = Ctx.iterationVar(L);
  struct Candidate {
    RegId R;
    const Expr *Phi, *Start, *Update;
  };
  llvm::SmallVector<Candidate, 8> Pending;
  const llvm::BitVector &Defs = LoopDefs[L];
  for (unsigned R = Defs.find_first(); R != ~0u && R < Defs.size(); R = Defs.find_next(R)) {
    const Expr *Phi = Ctx.phi(Regs[R].Name, &G.block(Lp.Header), R, Regs[R].Width);
    const PhiInfo &Info = Phis[Phi];
    const Expr *Update = Info.Incoming.size() > 1 ? Info.Incoming[1].second : nullptr;
    for (unsigned K = 2; K < Info.Incoming.size(); ++K)
      if (Info.Incoming[K].second != Update)
        Update = nullptr; // latches disagree
    if (Update && LivePhis.count(Phi))
      Pending.push_back({R, Phi, Info.Incoming[0].second, Update});
  }

  auto IterIn = [&](unsigned Width) { return Ctx.resize(Iter, Width); };
  auto Add = [&](InductionVar IV) {
    for (auto It = IV.Conditions.begin(); It != IV.Conditions.end();)
      It = (*It)->isTrue() ? IV.Conditions.erase(It) : It + 1;
    Sum.Inductions.push_back(std::move(IV));
  };
  // A ring whose constant start lies outside 0 .. S - 1 (-1, so that the first update gives
  // stage 0) is a ring from its second iteration on: (s1 + step * (i - 1)) % S there, the
  // start itself in iteration 0. A start whose first update leaves the ring too is not a
  // ring at all: (start + step * i) % S would be wrong in every iteration.
  auto AddRing = [&](InductionVar IV) {
    if (IV.Start->isConstant() && IV.Modulus->isConstant() && IV.Step->isConstant() &&
        IV.Start->payload() >= IV.Modulus->payload()) {
      std::optional<uint64_t> First = evalAt(IV.Update, IV.Phi, IV.Start->payload());
      if (!First || *First >= IV.Modulus->payload())
        return;
      const unsigned W = IV.Phi->width();
      IV.Peeled = Ctx.constant(*First, W);
      const Expr *Later = Ctx.urem(
          Ctx.add(IV.Peeled, Ctx.mul(IV.Step, Ctx.sub(IterIn(W), Ctx.constant(1, W)))),
          IV.Modulus);
      IV.ClosedForm = Ctx.select(Ctx.eq(Iter, Ctx.constant(0, Iter->width())), IV.Start, Later);
      IV.Conditions.clear();
    }
    Add(std::move(IV));
  };

  // Linear counters, rings and first-iteration flags.
  llvm::SmallVector<Candidate, 8> Rest;
  for (const Candidate &C : Pending) {
    const unsigned W = C.Phi->width();
    InductionVar IV;
    IV.Register = C.R;
    IV.Phi = C.Phi;
    IV.Start = C.Start;
    IV.Update = C.Update;
    const Expr *Delta = W > 1 ? subtractThroughSelects(C.Update, C.Phi) : nullptr;
    if (Delta && !Delta->mentions([&](const Expr *X) { return X == C.Phi; }) &&
        isInvariant(Delta, L)) {
      IV.Kind = InductionKind::Linear;
      IV.Step = Delta;
      IV.ClosedForm = Ctx.add(C.Start, Ctx.mul(Delta, IterIn(W)));
      Add(IV);
      continue;
    }
    // (s + step) % S, and (s + step) & (S - 1), which the builders make a remainder.
    if (C.Update->is(ExprKind::URem) && isInvariant(C.Update->op(1), L)) {
      const Expr *Step = Ctx.sub(C.Update->op(0), C.Phi);
      if (!Step->mentions([&](const Expr *X) { return X == C.Phi; }) && isInvariant(Step, L)) {
        IV.Kind = InductionKind::Ring;
        IV.Step = Step;
        IV.Modulus = C.Update->op(1);
        IV.ClosedForm = Ctx.urem(Ctx.add(C.Start, Ctx.mul(Step, IterIn(W))), IV.Modulus);
        IV.Conditions.push_back(Ctx.ult(C.Start, IV.Modulus));
        AddRing(IV);
        continue;
      }
    }
    // A select that wraps s + 1 to 0.
    if (C.Update->is(ExprKind::Select) && W > 1) {
      const Expr *Modulus = nullptr;
      if (onlyMentions(C.Update, C.Phi)) {
        llvm::SmallVector<uint64_t, 4> Constants;
        collectConstants(C.Update, Constants);
        for (uint64_t K : Constants) {
          for (uint64_t S : {K, K + 1}) {
            if (S < 2 || S > MaxEnumeratedModulus || Modulus)
              continue;
            bool Ok = true;
            for (uint64_t V = 0; V < S && Ok; ++V)
              Ok = evalAt(C.Update, C.Phi, V) == (V + 1) % S;
            if (Ok)
              Modulus = Ctx.constant(S, W);
          }
        }
      } else if (C.Update->op(0)->is(ExprKind::Eq) && C.Update->op(1)->isConstant(0) &&
                 C.Update->op(2) == Ctx.add(C.Phi, Ctx.constant(1, W))) {
        // s == X ? 0 : s + 1 with X the loop-invariant S - 1.
        const Expr *Cond = C.Update->op(0);
        const Expr *Other = Cond->op(0) == C.Phi ? Cond->op(1) : Cond->op(1) == C.Phi ? Cond->op(0)
                                                                                     : nullptr;
        if (Other && isInvariant(Other, L))
          Modulus = Ctx.add(Other, Ctx.constant(1, W));
      }
      if (Modulus) {
        IV.Kind = InductionKind::Ring;
        IV.Step = Ctx.constant(1, W);
        IV.Modulus = Modulus;
        IV.ClosedForm = Ctx.urem(Ctx.add(C.Start, IterIn(W)), Modulus);
        IV.Conditions.push_back(Ctx.ult(C.Start, Modulus));
        AddRing(IV);
        continue;
      }
    }
    // A ring advanced several times per iteration (an unrolled loop over `s = (s + 1) % S`,
    // each % a magic-number division): on every value of the ring, the update is (s + T) % S.
    // (Bits flipped with xor are phases, recognized below.)
    if (W > 1 && onlyMentions(C.Update, C.Phi) && !C.Update->is(ExprKind::Xor) &&
        !C.Update->is(ExprKind::Not)) {
      if (auto [S, Step] = ringStep(C.Update, C.Phi); S) {
        const Expr *Modulus = Ctx.constant(S, W);
        IV.Kind = InductionKind::Ring;
        IV.Step = Ctx.constant(Step, W);
        IV.Modulus = Modulus;
        IV.ClosedForm =
            Ctx.urem(Ctx.add(C.Start, Ctx.mul(IV.Step, IterIn(W))), Modulus);
        IV.Conditions.push_back(Ctx.ult(C.Start, Modulus));
        AddRing(IV);
        continue;
      }
    }
    if (!C.Update->mentions([&](const Expr *X) { return X == C.Phi; }) &&
        isInvariant(C.Update, L)) {
      IV.Kind = InductionKind::FirstIteration;
      IV.Next = C.Update;
      IV.ClosedForm = Ctx.select(Ctx.eq(Iter, Ctx.constant(0, 32)), C.Start, C.Update);
      Add(IV);
      continue;
    }
    Rest.push_back(C);
  }
  {
    llvm::SmallVector<const Expr *, 8> Phis;
    for (const Candidate &C : Rest)
      Phis.push_back(C.Phi);
    recognizeGated(L, Phis);
  }

  // Phase bits: flipped every iteration, or when a ring counter of this loop wraps.
  const unsigned NumRings = Sum.Inductions.size();
  for (const Candidate &C : Rest) {
    const unsigned W = C.Phi->width();
    const Expr *Flip = nullptr;
    const Expr *U = C.Update;
    if (U == Ctx.bitNot(C.Phi) && W == 1)
      Flip = Ctx.boolean(true);
    else if (U->is(ExprKind::Xor) && (U->op(0) == C.Phi || U->op(1) == C.Phi))
      Flip = U->op(0) == C.Phi ? U->op(1) : U->op(0);
    else if (U->is(ExprKind::Xor)) {
      // p ^ f1 ^ f2 ^ ...: an unrolled loop flips once per copy that wraps the ring.
      llvm::SmallVector<const Expr *, 8> Terms, Work{U};
      while (!Work.empty()) {
        const Expr *X = Work.pop_back_val();
        if (X->is(ExprKind::Xor)) {
          Work.push_back(X->op(0));
          Work.push_back(X->op(1));
        } else {
          Terms.push_back(X);
        }
      }
      if (llvm::count(Terms, C.Phi) == 1) {
        Flip = Ctx.constant(0, W);
        for (const Expr *X : Terms)
          if (X != C.Phi)
            Flip = Ctx.bitXor(Flip, X);
      }
    }
    else if (U->is(ExprKind::Select) && U->op(2) == C.Phi &&
             U->op(1) == Ctx.bitXor(C.Phi, Ctx.constant(1, W)))
      Flip = Ctx.select(U->op(0), Ctx.constant(1, W), Ctx.constant(0, W));
    else if (U->is(ExprKind::Select) && U->op(1) == C.Phi &&
             U->op(2) == Ctx.bitXor(C.Phi, Ctx.constant(1, W)))
      Flip = Ctx.select(U->op(0), Ctx.constant(0, W), Ctx.constant(1, W));
    // Flipped as a gated ring wraps, in the iterations its gate holds: `g ? p ^ f : p`.
    const Expr *Gate = nullptr;
    if (!Flip && U->is(ExprKind::Select) && (U->op(1) == C.Phi) != (U->op(2) == C.Phi)) {
      const bool Taken = U->op(2) == C.Phi;
      const Expr *Arm = Taken ? U->op(1) : U->op(2);
      if (Arm->is(ExprKind::Xor) && (Arm->op(0) == C.Phi || Arm->op(1) == C.Phi)) {
        Flip = Arm->op(0) == C.Phi ? Arm->op(1) : Arm->op(0);
        Gate = Taken ? U->op(0) : Ctx.bitNot(U->op(0));
      }
    }
    if (!Flip || Flip->mentions([&](const Expr *X) { return X == C.Phi; }))
      continue;
    InductionVar IV;
    IV.Register = C.R;
    IV.Phi = C.Phi;
    IV.Start = C.Start;
    IV.Update = C.Update;
    if (Flip->isConstant(1)) {
      IV.Kind = InductionKind::Alternating;
      IV.ClosedForm =
          Ctx.bitXor(C.Start, Ctx.resize(Ctx.urem(Iter, Ctx.constant(2, 32)), W));
      Add(IV);
      continue;
    }
    bool Found = false;
    for (unsigned K = 0; K < NumRings && !Found; ++K) {
      const InductionVar &Ring = Sum.Inductions[K];
      if (Ring.Kind != InductionKind::Ring && Ring.Kind != InductionKind::Gated)
        continue;
      // A gated phase flips with the ring of the same gate, in that ring's count.
      // A phase flipped in every iteration where the ring's update would wrap it, while the
      // ring advances only in a first run of iterations i < G (Triton's attention:
      // `p ^= s + 1 == 2` every iteration, `s = gate ? next : s`): past the run the ring
      // stands still, and the phase flips in each further iteration where its flip holds
      // on the ring's last value (Stuck: that G).
      const Expr *Stuck = nullptr;
      if (Ring.Gate != Gate) {
        // (prefixGateAdvances's count: `gate ? i : G`.)
        if (Gate || !Ring.Advances || !Ring.Advances->is(ExprKind::Select) ||
            Ring.Advances->op(1) != Ctx.resize(Iter, Ring.Advances->width()))
          continue;
        Stuck = Ring.Advances->op(2);
      }
      const Expr *Count = Ring.Advances ? Ring.Advances : Iter;
      const unsigned RW = Ring.Phi->width();
      bool Matches = false;
      const Expr *Step = Ring.Step;
      if (Ring.Peeled && !onlyMentions(Flip, Ring.Phi))
        continue;
      if (Ring.Step->isConstant() && Ring.Modulus->isConstant() &&
          Ring.Modulus->payload() <= MaxEnumeratedModulus && onlyMentions(Flip, Ring.Phi)) {
        // Flipped once per wrap: an iteration from ring value V wraps (V + T) / S times. The
        // ring's values only fix T modulo S (4 stages of a 3-ring look like 1); the wraps
        // tell which T it is.
        uint64_t S = Ring.Modulus->payload();
        for (uint64_t T = Ring.Step->payload(); T <= Ring.Step->payload() + 4 * S && !Matches;
             T += S) {
          Matches = true;
          for (uint64_t V = 0; V < S && Matches; ++V) {
            std::optional<uint64_t> F = evalAt(Flip, Ring.Phi, V);
            Matches = F && (*F & 1) == (((V + T) / S) & 1) && (*F >> 1) == 0;
          }
          if (Matches)
            Step = Ctx.constant(T, RW);
        }
      } else {
        // The ring advanced by a whole inner loop: the flip is the parity of the wraps.
        const Expr *Wraps = Ctx.urem(Ctx.udiv(Ctx.add(Ring.Phi, Ring.Step), Ring.Modulus),
                                     Ctx.constant(2, RW));
        Matches = Flip == Ctx.resize(Wraps, W) || Ctx.resize(Flip, RW) == Wraps;
      }
      if (!Matches)
        continue;
      IV.Kind = InductionKind::Parity;
      IV.Ring = K;
      IV.Modulus = Ring.Modulus;
      IV.Conditions = Ring.Conditions;
      if (Ring.Peeled) {
        // Counted from the ring's second iteration, after the flip of the first.
        std::optional<uint64_t> First = evalAt(Flip, Ring.Phi, Ring.Start->payload());
        if (!First)
          continue;
        const Expr *One = Ctx.constant(1, RW);
        const Expr *Count =
            Ctx.add(Ring.Peeled, Ctx.mul(Step, Ctx.sub(Ctx.resize(Iter, RW), One)));
        const Expr *Wraps = Ctx.urem(Ctx.udiv(Count, Ring.Modulus), Ctx.constant(2, RW));
        const Expr *Later = Ctx.bitXor(Ctx.bitXor(C.Start, Ctx.constant(*First & 1, W)),
                                       Ctx.resize(Wraps, W));
        IV.ClosedForm =
            Ctx.select(Ctx.eq(Iter, Ctx.constant(0, Iter->width())), C.Start, Later);
        Add(IV);
        Found = true;
        break;
      }
      const Expr *Stages = Ctx.add(Ring.Start, Ctx.mul(Step, Ctx.resize(Count, RW)));
      const Expr *Wraps = Ctx.urem(Ctx.udiv(Stages, Ring.Modulus), Ctx.constant(2, RW));
      IV.ClosedForm = Ctx.bitXor(C.Start, Ctx.resize(Wraps, W));
      if (Stuck) {
        // The i - min(i, G) iterations past the run, each flipping where the flip holds on
        // the ring's value at G.
        const Expr *Last = Ctx.substitute(Ring.ClosedForm, Iter, Ctx.resize(Stuck, 32));
        const Expr *FlipThere = Ctx.resize(Ctx.substitute(Flip, Ring.Phi, Last), W);
        const unsigned AW = Ring.Advances->width();
        const Expr *Past = Ctx.sub(Ctx.resize(Iter, AW), Ring.Advances);
        const Expr *Odd = Ctx.resize(Ctx.urem(Past, Ctx.constant(2, AW)), W);
        IV.ClosedForm = Ctx.bitXor(IV.ClosedForm,
                                   Ctx.bitAnd(Ctx.bitAnd(FlipThere, Ctx.constant(1, W)), Odd));
        Add(IV);
        Found = true;
        break;
      }
      IV.Gate = Ring.Gate;
      IV.Advances = Ring.Advances;
      Add(IV);
      Found = true;
    }
    // Flipped by the low bits of a counter: `if (k % S == S - 1) phase ^= 1` with a stage
    // k % S that no register holds, which nvcc writes `phase ^= k & 1` for S = 2. Over a
    // period of the counter's low bits the flips are a fixed pattern: the phase before
    // iteration i is the start xor the parity of the flips in the periods before i and in
    // the part of the current one.
    for (unsigned K = 0; K < NumRings && !Found && !Gate; ++K) {
      const InductionVar &Lin = Sum.Inductions[K];
      if (Lin.Kind != InductionKind::Linear || !Lin.Start->isConstant() ||
          !Lin.Step->isConstant() || !onlyMentions(Flip, Lin.Phi))
        continue;
      bool Signed = false;
      uint64_t Period = lowBitsPeriod(Flip, Lin.Phi, Signed);
      if (!Period)
        continue;
      // A signed remainder is the unsigned one while the counter is not negative: from a
      // start of at least 0, counting up by at most 64, for the first 2^24 iterations
      // (the most any launch the verdicts state runs: K < 2^24) and far beyond.
      const unsigned LW = Lin.Phi->width();
      if (Signed && (LW < 32 || Lin.Start->payload() >= (uint64_t(1) << (LW - 2)) ||
                     Lin.Step->payload() == 0 || Lin.Step->payload() > 64))
        continue;
      // Iteration j sees the counter at Start + Step * j, whose low bits repeat every
      // Period iterations (a power of two divides Period * Step).
      llvm::SmallVector<uint64_t, 64> Flips;
      for (uint64_t J = 0; J < Period && Flips.size() == J; ++J)
        if (std::optional<uint64_t> F =
                evalAt(Flip, Lin.Phi, Lin.Start->payload() + Lin.Step->payload() * J);
            F && *F <= 1)
          Flips.push_back(*F);
      if (Flips.size() != Period)
        continue;
      const unsigned IW = Iter->width();
      uint64_t PerPeriod = llvm::count(Flips, 1u) & 1;
      // The parity of the flips before position r of a period: a select chain over r.
      const Expr *R = Ctx.urem(Iter, Ctx.constant(Period, IW));
      const Expr *Before = Ctx.constant(0, IW);
      uint64_t Parity = 0;
      for (uint64_t J = 0; J + 1 < Period; ++J) {
        Parity ^= Flips[J];
        if (Parity)
          Before = Ctx.select(Ctx.eq(R, Ctx.constant(J + 1, IW)), Ctx.constant(1, IW), Before);
      }
      const Expr *Whole = PerPeriod ? Ctx.udiv(Iter, Ctx.constant(Period, IW))
                                    : Ctx.constant(0, IW);
      const Expr *Flipped = Ctx.urem(Ctx.add(Whole, Before), Ctx.constant(2, IW));
      IV.Kind = InductionKind::Parity;
      IV.Ring = K;
      IV.Modulus = Ctx.constant(Period, Lin.Phi->width());
      IV.ClosedForm = Ctx.bitXor(C.Start, Ctx.resize(Flipped, W));
      Add(IV);
      Found = true;
    }
  }

  llvm::SmallVector<const Expr *, 8> Others;
  for (const Candidate &C : Rest)
    Others.push_back(C.Phi);
  recognizeLagged(L, Others);
}

const Expr *ValueBuilder::prefixGateAdvances(LoopId L, const Expr *Gate) {
  // The gate in the iteration number: the loop's linear counters by their closed forms.
  const LoopSummary &Sum = Summaries[L];
  const Expr *Iter = Ctx.iterationVar(L);
  for (const InductionVar &IV : Sum.Inductions)
    if (IV.Kind == InductionKind::Linear)
      Gate = Ctx.substitute(Gate, IV.Phi, IV.ClosedForm);
  // a * i + b < X (signed or not) with a >= 1 and b constants and X loop-invariant; a <= 1024
  // and |b| < 2^20 keep a * i + b from wrapping below 2^21 iterations, more than any loop
  // wsv runs (an instance has at most 200000 steps; a k-loop of K < 2^24 has < 2^18).
  const bool Signed = Gate->is(ExprKind::SLt);
  if (!Signed && !Gate->is(ExprKind::ULt))
    return nullptr;
  const Expr *Lhs = Gate->op(0), *X = Gate->op(1);
  const unsigned W = Lhs->width();
  if (W < 32 || !isInvariant(X, L) || X->mentions([&](const Expr *E) { return E == Iter; }))
    return nullptr;
  LinearForm F;
  F.Width = W;
  F.addScaled(Lhs, 1);
  F.normalize(Ctx);
  const Expr *IterW = Ctx.resize(Iter, W);
  if (F.Terms.size() != 1 || F.Terms[0].first != IterW)
    return nullptr;
  const uint64_t A = F.Terms[0].second;
  const int64_t B = static_cast<int64_t>(
      W < 64 && (F.Constant >> (W - 1)) & 1 ? F.Constant | (~uint64_t(0) << W) : F.Constant);
  if (A < 1 || A > 1024 || B >= (int64_t(1) << 20) || B <= -(int64_t(1) << 20))
    return nullptr;
  // The gate holds for i < G = ceil((X - b) / a) where X - b > 0, for no i otherwise.
  const Expr *Room = Ctx.sub(X, Ctx.constant(static_cast<uint64_t>(B), W));
  if (!Signed && B < 0)
    return nullptr;
  const Expr *None = Signed ? Ctx.sle(Room, Ctx.constant(0, W))
                            : Ctx.ule(X, Ctx.constant(static_cast<uint64_t>(B), W));
  const Expr *G = Ctx.select(None, Ctx.constant(0, W),
                             Ctx.udiv(Ctx.add(Room, Ctx.constant(A - 1, W)), Ctx.constant(A, W)));
  // min(i, G), written as the gate chooses it (the gate holds exactly for i < G): the
  // periodicity lemmas decide a test `a * i + b < K` by the iteration's distance to the end
  // of a k-loop, where Z3 gave up on the minimum with a division by 64 in it.
  return Ctx.select(Gate, IterW, G);
}

void ValueBuilder::recognizeGated(LoopId L, llvm::ArrayRef<const Expr *> Phis) {
  LoopSummary &Sum = Summaries[L];
  const Expr *Iter = Ctx.iterationVar(L);
  const unsigned NumRings = Sum.Inductions.size();
  for (const Expr *Phi : Phis) {
    const PhiInfo &Info = this->Phis[Phi];
    const unsigned W = Phi->width();
    if (Info.Incoming.size() < 2 || W < 2)
      continue;
    const Expr *Update = Info.Incoming[1].second;
    if (!llvm::all_of(llvm::drop_begin(Info.Incoming),
                      [&](const auto &In) { return In.second == Update; }) ||
        !Update->is(ExprKind::Select) || (Update->op(1) == Phi) == (Update->op(2) == Phi))
      continue;
    // `g ? step(s) : s`: the gate must not read the ring itself; the step is a ring's
    // (s + T) % S on every one of its S values.
    const bool Taken = Update->op(2) == Phi;
    const Expr *Arm = Taken ? Update->op(1) : Update->op(2);
    const Expr *Gate = Taken ? Update->op(0) : Ctx.bitNot(Update->op(0));
    if (!onlyMentions(Arm, Phi) || Gate->mentions([&](const Expr *X) { return X == Phi; }))
      continue;
    auto [S, T] = ringStep(Arm, Phi);
    if (!S)
      continue;
    auto AddGated = [&](const Expr *Advances, unsigned RingIndex,
                        llvm::ArrayRef<const Expr *> Conditions) {
      InductionVar IV;
      IV.Kind = InductionKind::Gated;
      IV.Register = Info.Register;
      IV.Phi = Phi;
      IV.Start = Info.Incoming[0].second;
      IV.Update = Update;
      IV.Step = Ctx.constant(T, W);
      IV.Modulus = Ctx.constant(S, W);
      IV.Ring = RingIndex;
      IV.Gate = Gate;
      IV.Advances = Advances;
      IV.ClosedForm = Ctx.urem(Ctx.add(IV.Start, Ctx.mul(IV.Step, Ctx.resize(Advances, W))),
                               IV.Modulus);
      IV.Conditions.assign(Conditions.begin(), Conditions.end());
      IV.Conditions.push_back(Ctx.ult(IV.Start, IV.Modulus));
      for (auto It = IV.Conditions.begin(); It != IV.Conditions.end();)
        It = (*It)->isTrue() ? IV.Conditions.erase(It) : It + 1;
      Sum.Inductions.push_back(std::move(IV));
    };
    // A gate that holds in a first run of iterations and never after (Triton's attention
    // advances the ring of its next key block while one is left: `i * 64 < K - 128`): it
    // held min(i, G) times before iteration i.
    if (const Expr *Advances = prefixGateAdvances(L, Gate)) {
      AddGated(Advances, NoIndex, {});
      continue;
    }
    // The gate: another ring of the loop, of step 1, at one loop-invariant value V. It
    // holds once every Modulus iterations, from the first iteration whose ring value is V:
    // d = (V - start) mod Modulus; before iteration i it held (i + Modulus - 1 - d) /
    // Modulus times.
    if (!Gate->is(ExprKind::Eq))
      continue;
    for (unsigned K = 0; K < NumRings; ++K) {
      const InductionVar &Ring = Sum.Inductions[K];
      if (Ring.Kind != InductionKind::Ring || Ring.Peeled || !Ring.Step ||
          !Ring.Step->isConstant(1))
        continue;
      const Expr *Value = Gate->op(0) == Ring.Phi   ? Gate->op(1)
                          : Gate->op(1) == Ring.Phi ? Gate->op(0)
                                                    : nullptr;
      if (!Value || !isInvariant(Value, L))
        continue;
      const unsigned RW = Ring.Phi->width();
      const Expr *M = Ring.Modulus, *One = Ctx.constant(1, RW);
      const Expr *D = Ctx.urem(Ctx.add(Ctx.sub(Value, Ring.Start), M), M);
      const Expr *Advances =
          Ctx.udiv(Ctx.add(Ctx.resize(Iter, RW), Ctx.sub(Ctx.sub(M, One), D)), M);
      llvm::SmallVector<const Expr *, 4> Conditions(Ring.Conditions.begin(),
                                                    Ring.Conditions.end());
      Conditions.push_back(Ctx.ult(Value, M));
      AddGated(Advances, K, Conditions);
      break;
    }
  }
}

void ValueBuilder::recognizeLagged(LoopId L, llvm::ArrayRef<const Expr *> Phis) {
  LoopSummary &Sum = Summaries[L];
  const Expr *Iter = Ctx.iterationVar(L);
  const Expr *Previous = Ctx.sub(Iter, Ctx.constant(1, Iter->width()));
  // Until nothing changes: a variable may trail one that trails another.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const Expr *Phi : Phis) {
      if (Sum.induction(Phi))
        continue;
      const PhiInfo &Info = this->Phis[Phi];
      if (Info.Incoming.size() < 2)
        continue;
      const Expr *Update = Info.Incoming[1].second;
      bool Agree = llvm::all_of(llvm::drop_begin(Info.Incoming),
                                [&](const auto &In) { return In.second == Update; });
      auto Variable = [&](InductionKind Kind) {
        InductionVar IV;
        IV.Kind = Kind;
        IV.Register = Info.Register;
        IV.Phi = Phi;
        IV.Start = Info.Incoming[0].second;
        IV.Update = Update;
        return IV;
      };
      for (unsigned K = 0; K < Sum.Inductions.size() && Agree; ++K) {
        const InductionVar &Led = Sum.Inductions[K];
        if (Led.Phi != Update || Led.Phi->width() != Phi->width())
          continue;
        InductionVar IV = Variable(InductionKind::Lagged);
        IV.Ring = K;
        IV.ClosedForm = Ctx.select(Ctx.eq(Iter, Ctx.constant(0, Iter->width())), IV.Start,
                                   Ctx.substitute(Led.ClosedForm, Iter, Previous));
        IV.Conditions = Led.Conditions;
        Sum.Inductions.push_back(std::move(IV));
        Changed = true;
        break;
      }
      if (!Agree || Sum.induction(Phi) || Update->mentions([&](const Expr *X) { return X == Phi; }))
        continue;
      // A value computed from other induction variables in one iteration and read in the
      // next (Triton's `bar = empty + 8 * stage` at the end of the body, waited on at the top
      // of the next): in iteration i > 0, the latch value as of iteration i - 1. Every leaf
      // of that must be the iteration number or a value the loop does not change.
      const Expr *Before = atIteration(Update, L, Previous);
      if (!Before || Before == Update)
        continue;
      bool Closed = !Before->mentions([&](const Expr *Leaf) {
        return Leaf != Iter && !isInvariant(Leaf, L);
      });
      if (!Closed)
        continue;
      InductionVar IV = Variable(InductionKind::Carried);
      // Only where the start is what the latch value gives for iteration -1 (the stage
      // before the first): then one form serves every iteration. `i == 0 ? empty + 8 :
      // empty + 8 * ((i + 1) % 2)` is right too, but names no barrier array: the checks took
      // it for a barrier of its own that nothing arrives on (false errors), where an
      // unresolved barrier is only a remark.
      if (Ctx.substitute(Before, Iter, Ctx.constant(0, Iter->width())) != IV.Start)
        continue;
      IV.ClosedForm = Before;
      // What the variables it reads assume.
      for (const InductionVar &Other : Sum.Inductions)
        if (Update->mentions([&](const Expr *X) { return X == Other.Phi || X == Other.Update; }))
          IV.Conditions.append(Other.Conditions.begin(), Other.Conditions.end());
      Sum.Inductions.push_back(std::move(IV));
      Changed = true;
    }
  }
}

const Expr *ValueBuilder::atIteration(const Expr *E, LoopId L, const Expr *Iter) {
  const LoopSummary &Sum = Summaries[L];
  const Expr *IterVar = Ctx.iterationVar(L);
  const Expr *Next = Ctx.add(Iter, Ctx.constant(1, Iter->width()));
  const BasicBlock *Header = &G.block(Loops.loop(L).Header);
  bool Failed = false;
  const Expr *R = Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
    for (const InductionVar &IV : Sum.Inductions) {
      if (N == IV.Phi)
        return Ctx.substitute(IV.ClosedForm, IterVar, Iter);
      // An update is the closed form one iteration later (only updates that read the phi:
      // a first-iteration flag's update is a plain value that can appear anywhere).
      if (N == IV.Update && IV.Update->mentions([&](const Expr *X) { return X == IV.Phi; }))
        return Ctx.substitute(IV.ClosedForm, IterVar, Next);
    }
    if (N->is(ExprKind::Phi) && N->site() == Header)
      Failed = true;
    if (N == IterVar)
      return Iter;
    return nullptr;
  });
  return Failed ? nullptr : R;
}

const Expr *ValueBuilder::closedForm(const Expr *E) {
  auto It = ClosedForms.find(E);
  if (It != ClosedForms.end())
    return It->second;
  const Expr *R = Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
    if (!N->is(ExprKind::Phi))
      return nullptr;
    auto P = Phis.find(N);
    if (P == Phis.end() || P->second.Loop == NoIndex)
      return nullptr;
    const InductionVar *IV = Summaries[P->second.Loop].induction(N);
    // A closed form mentions only phis of enclosing loops, so this recursion ends.
    return IV ? closedForm(IV->ClosedForm) : nullptr;
  });
  ClosedForms[E] = R;
  return R;
}
