//===- MbarrierTripCount.cpp - arrivers and waiters that disagree on iterations -------===//
//
// Each phase a waiter waits for must be completed by the arrivals of the other roles. When
// their loops run different numbers of iterations (K_TILES against K_TILES - 1), the waiter's
// last waits need phases nobody completes and it hangs. A loop whose trip count depends on
// the thread (a tile scheduler only some threads of a role advance) splits one role's
// arrivals and waits across phases the same way.
//
//===----------------------------------------------------------------------------------===//
#include "Catalog.h"
#include "BarrierTraffic.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/Induction.h"
#include "wsv/analyzer/Loops.h"
#include "wsv/analyzer/Values.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

namespace {

bool threadDependent(const Expr *E) {
  return E && E->mentions([](const Expr *L) {
    if (!L->is(ExprKind::SpecialReg))
      return false;
    SpecialRegister R = L->specialRegister();
    return R == SpecialRegister::TidX || R == SpecialRegister::TidY ||
           R == SpecialRegister::TidZ || R == SpecialRegister::LaneId ||
           R == SpecialRegister::WarpId;
  });
}

bool hasBarrierEvent(const Protocol &P, const std::vector<ProtocolItem> &Body) {
  bool Any = false;
  P.forEachEvent(Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
    Any |= E.Barrier.present();
  });
  return Any;
}

/// Whether the loop body waits on a barrier (or peeks at one), or syncs at a named barrier.
bool waitsInside(const Protocol &P, const std::vector<ProtocolItem> &Body) {
  bool Any = false;
  P.forEachEvent(Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
    Any |= E.Kind == EventKind::Wait || E.Kind == EventKind::Probe ||
           E.Kind == EventKind::NamedBarrier;
  });
  return Any;
}

/// The instruction of loop L itself (not of a nested loop) that carries a thread-dependent
/// value of one of its counters back to the header: where the threads' iteration counts part
/// (a scheduler step that only some threads take). std::nullopt when none is found.
std::optional<SourceRef> threadDependentStep(const Protocol &P, LoopId L) {
  if (!P.Analysis || L == NoIndex)
    return std::nullopt;
  const Cfg &G = P.Analysis->cfg();
  const ValueAnalysis &V = P.Analysis->values();
  const LoopInfo &Loops = P.Analysis->loops();
  for (const InductionVar &IV : V.loopSummary(L).Inductions) {
    const PhiInfo *Phi = IV.Phi ? V.phiInfo(IV.Phi) : nullptr;
    if (!Phi || !threadDependent(IV.Update))
      continue;
    for (BlockId B : Loops.loop(L).Blocks) {
      if (Loops.loopFor(B) != L)
        continue;
      for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I) {
        const ptx::Instruction &Inst = *G.inst(I).I;
        if (Inst.operands().empty() || !V.isDestination(I, 0))
          continue;
        ptx::Operand Dst = Inst.operands()[0];
        if (Dst.isName() && V.registerAt(I, Dst.text()) == Phi->Register &&
            threadDependent(V.operand(I, 0)))
          return checks::sourceOf(P, I);
      }
    }
  }
  return std::nullopt;
}

/// Loops of role bodies whose trip count depends on the thread, in roles of several threads.
void threadDependentTrips(CheckContext &Ctx, const Protocol &P) {
  for (const Role &R : P.Roles) {
    std::optional<unsigned> N = R.Threads.count();
    if (N && *N <= 1)
      continue;
    std::set<const ProtocolLoop *> Seen;
    P.forEachEvent(R.Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *> Loops) {
      for (const ProtocolLoop *L : Loops) {
        if (Seen.count(L) || !threadDependent(L->Trip.E) || !hasBarrierEvent(P, L->Body))
          continue;
        Seen.insert(L);
        SourceRef Where = L->Where.PtxLine ? L->Where : E.Where;
        // A loop that only arrives (`for (i = tid; i < n; i += 128) arrive(bar)`) is a
        // count the init must match, which `wsv verify` checks; one that waits puts the
        // threads' waits into different phases.
        bool Waits = waitsInside(P, L->Body);
        std::string Trip = "the trip count of this loop of the " + R.Name +
                           " depends on the thread (" + P.exprString(L->Trip.E) +
                           "), so threads of one role run different numbers of iterations";
        Finding &Fd = Ctx.report(
            Waits ? Severity::Error : Severity::Warning,
            Waits ? Trip + " and their barrier arrivals and waits fall into different phases"
                  : Trip + ": the loop only arrives, so the barrier's count must be the sum of "
                           "every thread's arrivals (`wsv verify` checks it)",
            Where);
        if (std::optional<SourceRef> Step = threadDependentStep(P, L->Loop))
          Fd.Notes.push_back({"the loop's counter advances here by a step that depends on "
                              "the thread",
                              *Step});
      }
    });
  }
}

/// Asks the solver whether the short loop runs fewer iterations than the waiter's for every
/// parameter value under which both run: Yes turns sampled sizes into a fact for all sizes.
bool shortForAllSizes(CheckContext &Ctx, const ProtocolLoop *Short, const ProtocolLoop *Wait) {
  const Protocol &P = Ctx.protocol();
  Solver *S = Ctx.solver();
  if (!S || !P.Analysis || !Short || !Wait || Short == Wait || !Short->Trip.E || !Wait->Trip.E)
    return false;
  ExprContext &X = P.Analysis->context();
  const Expr *Cond = X.boolean(true);
  for (const ProtocolLoop *L : {Short, Wait}) {
    if (L->When.E && L->When.E->width() == 1)
      Cond = X.logicalAnd(Cond, L->When.E);
    for (const auto &[C, Established] : L->TripConditions)
      if (C && C->width() == 1)
        Cond = X.logicalAnd(Cond, C);
  }
  const Expr *A = X.resize(Short->Trip.E, 64), *B = X.resize(Wait->Trip.E, 64);
  // Valid: wherever both loops run (and their trip counts are exact), the short one runs
  // fewer iterations; unsat of the negation, in the solver's terms.
  return S->isValid(X.implies(Cond, X.ult(A, B))).Answer == SolverAnswer::Yes;
}

} // namespace

void wsv::analyzer::checks::MbarrierTripCount(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  threadDependentTrips(Ctx, P);
  const TrafficFacts &F = analyzeTraffic(P);
  if (remarkIfUndecided(Ctx, F, "iteration counts of arrivers and waiters"))
    return;
  // The innermost loop around each event, to point at the loop that runs short.
  llvm::DenseMap<unsigned, const ProtocolLoop *> LoopOf;
  auto Index = [&](const std::vector<ProtocolItem> &Items) {
    P.forEachEvent(Items, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *> Loops) {
      if (!Loops.empty())
        LoopOf[static_cast<unsigned>(&E - P.Events.data())] = Loops.back();
    });
  };
  Index(P.Prologue);
  for (const Role &R : P.Roles)
    Index(R.Body);
  Index(P.Epilogue);

  std::set<unsigned> Done;
  std::map<unsigned, std::vector<std::string>> FailingFor;
  struct Hit {
    const SlotTraffic *S;
    size_t Waiter;
    uint64_t Need, Have;
    const Expansion *X;
  };
  std::map<unsigned, Hit> First;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (F.outranked(S.Array, Problem::TripCount) || !S.WaitUnknown.empty() ||
          !S.Unknown.empty() || F.downstreamOfPhaseSkip(S.Array) ||
          F.OutsideCluster.count(S.Array) ||
          (S.Arrivers.empty() && !F.EverArrived.count({S.Array, S.Cta})))
        continue;
      uint64_t Have = F.phases(S).FullPhases;
      for (size_t W = 0; W < S.Waiters.size(); ++W) {
        uint64_t Need = needsOf(S.Waiters[W]).last();
        if (Need <= Have)
          continue;
        std::vector<std::string> &Vals = FailingFor[S.Array];
        std::string D = X.Values.describe(P);
        if (Vals.empty() || Vals.back() != D)
          Vals.push_back(D);
        First.insert({S.Array, Hit{&S, W, Need, Have, &X}});
        break;
      }
    }
  }
  // Slots whose waits or arrivals could not be evaluated: said once per array, unless a
  // finding already covers the array.
  std::set<unsigned> Undecided;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (First.count(S.Array) || Undecided.count(S.Array) ||
          F.outranked(S.Array, Problem::TripCount) || S.Waiters.empty())
        continue;
      const std::string &Why = !S.WaitUnknown.empty() ? S.WaitUnknown : S.Unknown;
      unsigned At = !S.WaitUnknown.empty() ? S.WaitUnknownEvent : S.UnknownEvent;
      if (Why.empty() || At == NoIndex)
        continue;
      Undecided.insert(S.Array);
      Ctx.report(Severity::Remark,
                 "the phases waited for on " + slotName(P, S.Array, S.Slot, S.Cta) +
                     " were not compared with the phases completed: " + Why,
                 P.Events[At]);
    }
  }
  for (const auto &[Array, H] : First) {
    const SlotTraffic &S = *H.S;
    const WaiterStream &W = S.Waiters[H.Waiter];
    std::string Name = slotName(P, S.Array, S.Slot, S.Cta);
    std::string Who = ownerName(P, W.Steps.back().Owner);
    // The arriving stream that runs short: the one with the fewest occurrences.
    const ArriverStream *Short = S.Arrivers.empty() ? nullptr : &S.Arrivers.front();
    for (const ArriverStream &A : S.Arrivers)
      if (A.Occurrences.size() < Short->Occurrences.size())
        Short = &A;
    Occurrence Last;
    if (Short && !Short->Occurrences.empty()) {
      Last = Short->Occurrences.back();
    } else {
      // No arrival reached this slot for these sizes: the loop that should have is the one
      // around the array's arrivals elsewhere.
      for (unsigned I = 0; I < P.Events.size() && Last.FirstEvent == NoIndex; ++I) {
        const Event &E = P.Events[I];
        if (E.Barrier.resolved() && E.Barrier.Array == Array &&
            (E.Kind == EventKind::Arrive || E.Kind == EventKind::ArriveExpectTx ||
             E.Kind == EventKind::MmaCommit)) {
          Last.FirstEvent = I;
          Last.Owner = PrologueOwner;
          for (unsigned R = 0; R < P.Roles.size(); ++R)
            P.forEachEvent(P.Roles[R].Body,
                           [&](const Event &X, llvm::ArrayRef<const ProtocolLoop *>) {
                             if (&X == &E)
                               Last.Owner = R;
                           });
        }
      }
    }
    std::string Arriver = Last.FirstEvent == NoIndex ? "the arrivers" : ownerName(P, Last.Owner);
    const ProtocolLoop *ShortLoop =
        Last.FirstEvent != NoIndex && LoopOf.count(Last.FirstEvent) ? LoopOf[Last.FirstEvent]
                                                                     : nullptr;
    const ProtocolLoop *WaitLoop = LoopOf.count(W.Steps.back().Event)
                                       ? LoopOf[W.Steps.back().Event]
                                       : nullptr;
    std::string Values;
    const std::vector<std::string> &Vals = FailingFor[Array];
    for (size_t I = 0; I < Vals.size() && I < 3; ++I)
      Values += (I ? "; " : "") + Vals[I];
    if (Vals.size() > 3)
      Values += "; and " + std::to_string(Vals.size() - 3) + " more sampled sizes";
    if (shortForAllSizes(Ctx, ShortLoop, WaitLoop))
      Values = "every size where both loops run, e.g. " + Vals.front();
    std::string Msg =
        Who + " waits for " + std::to_string(H.Need) + " completed phases of " + Name +
        " but " + Arriver + " completes only " + std::to_string(H.Have) +
        ": the loops disagree on iterations" +
        (ShortLoop && ShortLoop->Trip.known()
             ? " (" + Arriver + " runs " + P.exprString(ShortLoop->Trip.E) + ")"
             : std::string()) +
        ", so the last wait never completes and " + Who + " hangs (for " + Values + ")";
    SourceRef Where = ShortLoop ? ShortLoop->Where
                                : (Last.FirstEvent != NoIndex ? P.Events[Last.FirstEvent].Where
                                                               : P.Events[W.Steps.back().Event].Where);
    Finding &Fd = Ctx.report(Severity::Error, Msg, Where);
    if (Last.FirstEvent != NoIndex)
      Fd.Notes.push_back({Arriver + " completes " + P.Barriers[Array].Name + " here",
                          P.Events[Last.FirstEvent].Where});
    Fd.Notes.push_back({Who + "'s wait that never completes" +
                            (WaitLoop && WaitLoop->Trip.known()
                                 ? " (its loop runs " + P.exprString(WaitLoop->Trip.E) + ")"
                                 : std::string()),
                        P.Events[W.Steps.back().Event].Where});
  }
}
