//===- MbarrierNoArriver.cpp - waits on a barrier nothing completes -------------------===//
//
// A wait for a phase that needs a completion (PTX ISA, mbarrier.try_wait.parity) returns only
// after arrivals or complete_tx bytes finish that phase. When no role, no async copy and no
// commit ever reaches the barrier in that CTA (a missing release, a multicast mask that leaves
// the CTA out, a role that never runs there), the waiter hangs.
//
//===----------------------------------------------------------------------------------===//
#include "BarrierTraffic.h"

#include "wsv/analyzer/Checks.h"

#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;

namespace {

/// A multicast or peer arrival on the same array that lands in other CTAs but not in Cta:
/// the likely cause when a CTA is left without arrivals.
const Event *missedBy(const Protocol &P, const Expansion &X, unsigned Array, unsigned Cta) {
  for (const SlotTraffic &S : X.Slots) {
    if (S.Array != Array || S.Cta == Cta)
      continue;
    for (const ArriverStream &A : S.Arrivers)
      for (const Occurrence &O : A.Occurrences)
        for (unsigned I : O.Events) {
          const Event &E = P.Events[I];
          if (E.Multicast || !E.Barrier.PeerRank.absent())
            return &E;
        }
  }
  return nullptr;
}

} // namespace

namespace wsv {
namespace analyzer {
namespace checks {
void MbarrierNoArriver(CheckContext &Ctx);
} // namespace checks
} // namespace analyzer
} // namespace wsv

void wsv::analyzer::checks::MbarrierNoArriver(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  if (remarkIfUndecided(Ctx, F, "arrivals on waited barriers"))
    return;
  std::set<unsigned> Done;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (Done.count(S.Array))
        continue;
      std::optional<size_t> W = starvedWaiter(S);
      if (!W || F.EverArrived.count({S.Array, S.Cta}) || F.downstreamOfPhaseSkip(S.Array) ||
          F.OutsideCluster.count(S.Array))
        continue;
      const WaiterStream &Ws = S.Waiters[*W];
      WaitNeeds N = needsOf(Ws);
      size_t Step = 0;
      while (Step + 1 < N.Need.size() && N.Need[Step] == 0)
        ++Step;
      const Event &Wait = P.Events[Ws.Steps[Step].Event];
      std::string Name = slotName(P, S.Array, S.Slot, S.Cta);
      std::string Who = ownerName(P, Ws.Steps[Step].Owner);
      const Event *Cause = missedBy(P, X, S.Array, S.Cta);
      if (Cause) {
        Finding &Fd = Ctx.report(
            Severity::Error,
            "`" + Cause->Opcode + "` reaches " + P.Barriers[S.Array].Name +
                " in other CTAs but not in CTA " + std::to_string(S.Cta) + ", where " + Who +
                " waits on it and nothing else arrives, so " + Who + " of CTA " +
                std::to_string(S.Cta) + " hangs",
            *Cause);
        Fd.Notes.push_back({"waits on " + Name + " here, parity " +
                                std::to_string(Ws.Steps[Step].Parity),
                            Wait.Where});
      } else {
        Finding &Fd = Ctx.report(
            Severity::Error,
            "nothing arrives on or completes bytes on " + Name + ", but " + Who +
                " waits here for parity " + std::to_string(Ws.Steps[Step].Parity) +
                ", which needs a completed phase, so " + Who + " hangs (for " +
                X.Values.describe(P) + ")",
            Wait);
        for (unsigned I : P.Barriers[S.Array].InitEvents)
          Fd.Notes.push_back({"the barrier is initialized here", P.Events[I].Where});
      }
      Done.insert(S.Array);
    }
  }
}
