//===- MbarrierNoArriver.cpp - waits on a barrier nothing completes -------------------===//
//
// A wait for a phase that needs a completion (PTX ISA, mbarrier.try_wait.parity) returns only
// after arrivals or complete_tx bytes finish that phase. When no role, no async copy and no
// commit ever reaches the barrier in that CTA (a missing release, a multicast mask that leaves
// the CTA out, a role that never runs there), the waiter hangs.
//
//===----------------------------------------------------------------------------------===//
#include "Catalog.h"
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

/// The place a missing release belongs: a role that waits, inside a loop, on an array the
/// starved waiter's role fills consumes what that role produces and should release Array in
/// the same loop. Returns the role and the first event after that loop (where the compiled
/// code resumes), or the loop's header when nothing follows it.
std::optional<std::pair<unsigned, SourceRef>> missingRelease(const Protocol &P,
                                                             const TrafficFacts &F,
                                                             unsigned Starved, unsigned Array) {
  for (unsigned B = 0; B < P.Roles.size(); ++B) {
    if (B == Starved)
      continue;
    const std::vector<ProtocolItem> &Body = P.Roles[B].Body;
    for (size_t I = 0; I < Body.size(); ++I) {
      if (!Body[I].isLoop())
        continue;
      bool Consumes = false, Releases = false;
      P.forEachEvent(P.loop(Body[I]).Body,
                     [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
                       if (!E.Barrier.resolved())
                         return;
                       auto It = F.ArrivingOwners.find(E.Barrier.Array);
                       if (E.Kind == EventKind::Wait && It != F.ArrivingOwners.end() &&
                           It->second.count(Starved))
                         Consumes = true;
                       if (E.Barrier.Array == Array && E.Kind != EventKind::Wait &&
                           E.Kind != EventKind::Probe)
                         Releases = true;
                     });
      if (!Consumes || Releases)
        continue;
      for (size_t J = I + 1; J < Body.size(); ++J) {
        const Event *Next = nullptr;
        P.forEachEvent({Body[J]}, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
          if (!Next)
            Next = &E;
        });
        if (Next)
          return std::make_pair(B, Next->Where);
      }
      return std::make_pair(B, P.loop(Body[I]).Where);
    }
  }
  return std::nullopt;
}

} // namespace

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
        if (auto Missing = missingRelease(P, F, Ws.Steps[Step].Owner, S.Array))
          Fd.Notes.push_back({"the " + P.Roles[Missing->first].Name + " consumes what " + Who +
                                  " produces in the loop before this point but never arrives "
                                  "on " + P.Barriers[S.Array].Name +
                                  ": the release belongs at the end of that loop",
                              Missing->second});
        for (unsigned I : P.Barriers[S.Array].InitEvents)
          Fd.Notes.push_back({"the barrier is initialized here", P.Events[I].Where});
      }
      Done.insert(S.Array);
    }
  }
}
