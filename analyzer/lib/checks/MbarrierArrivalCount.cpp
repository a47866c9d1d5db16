//===- MbarrierArrivalCount.cpp - arrivals per phase against the init count -----------===//
//
// An mbarrier phase completes when its pending count, set to the init count, reaches zero
// (PTX ISA, mbarrier: "phase completion"). Fewer arrivals per phase than the init count leave
// the phase open forever and every waiter hangs; more complete it before all of them are in,
// and the rest count towards the next phase. The arrivals of one phase are one occurrence of
// every stream that arrives on the slot (BarrierTraffic.h), so the check compares their sum
// with the slot's init count, in every CTA of the cluster (arrivals through mapa and
// multicast commits land in the CTA they name).
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

/// `from tid 0 (1 thread) of the writeback`, or with several streams
/// `128 from warpgroup 0 of the writeback, 128 from warpgroup 0 of the writeback in CTA 1`.
std::string arriversText(const Protocol &P, const SlotTraffic &S, size_t Phase) {
  std::vector<std::string> Parts;
  for (const ArriverStream &A : S.Arrivers) {
    if (Phase >= A.Occurrences.size() || !A.Occurrences[Phase].Arrivals)
      continue;
    const Occurrence &O = A.Occurrences[Phase];
    std::string Part =
        std::to_string(O.Arrivals) + " from " + A.Threads + " of " + ownerName(P, O.Owner);
    if (A.SourceCta != S.Cta)
      Part += " in CTA " + std::to_string(A.SourceCta);
    Parts.push_back(std::move(Part));
  }
  if (Parts.size() == 1)
    return Parts.front().substr(Parts.front().find(' ') + 1);
  std::string Out;
  for (const std::string &Part : Parts)
    Out += (Out.empty() ? "" : ", ") + Part;
  return Out;
}

/// The event a reader should look at: the arrive when one role was meant to arrive with
/// all its threads (the init count is its size) but only some of them do; else the init.
const Event &culprit(const Protocol &P, const SlotTraffic &S, size_t Phase, uint64_t Init,
                     uint64_t Got, unsigned InitEvent) {
  if (Got < Init)
    for (const ArriverStream &A : S.Arrivers) {
      if (Phase >= A.Occurrences.size() || A.SourceCta != S.Cta)
        continue;
      const Occurrence &O = A.Occurrences[Phase];
      if (O.Owner >= P.Roles.size() || !O.Arrivals)
        continue;
      std::optional<unsigned> RoleThreads = P.Roles[O.Owner].Threads.count();
      if (RoleThreads && *RoleThreads == Init)
        return P.Events[O.FirstEvent];
    }
  return P.Events[InitEvent];
}

/// A tcgen05.commit that several lanes of one warp issue: each lane's commit arrives, which
/// is tcgen05-commit-multi-thread's finding (the count follows from it).
bool multiThreadCommit(const Protocol &P, const SlotTraffic &S, size_t Phase) {
  for (const ArriverStream &A : S.Arrivers) {
    if (Phase >= A.Occurrences.size())
      continue;
    for (unsigned I : A.Occurrences[Phase].Events) {
      const Event &E = P.Events[I];
      if (E.Kind != EventKind::MmaCommit)
        continue;
      llvm::SmallVector<unsigned, 8> PerWarp(E.Threads.blockThreads() / 32 + 1, 0);
      for (unsigned T : E.Threads.members().set_bits())
        if (++PerWarp[T / 32] > 1)
          return true;
    }
  }
  return false;
}

} // namespace

void wsv::analyzer::checks::MbarrierArrivalCount(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  std::set<unsigned> Done;
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (Done.count(S.Array) || F.outranked(S.Array, Problem::ArrivalCount))
        continue;
      if (!initCount(P, S.Array, S.Slot) && !S.Waiters.empty() && !S.Arrivers.empty()) {
        const ProtocolValue &V = P.Barriers[S.Array].InitCounts.size() > S.Slot
                                     ? P.Barriers[S.Array].InitCounts[S.Slot]
                                     : ProtocolValue::unknown("no init was found");
        const Event &W = P.Events[S.Waiters.front().Steps.front().Event];
        Ctx.report(Severity::Remark,
                   "the init count of " + slotName(P, S.Array, S.Slot, S.Cta) +
                       " is not known (" + (V.Unknown.empty() ? "not a constant" : V.Unknown) +
                       "), so its arrivals per phase were not checked",
                   W);
        Done.insert(S.Array);
        continue;
      }
      if (!S.Unknown.empty() && !S.Waiters.empty() && S.UnknownEvent != NoIndex) {
        Ctx.report(Severity::Remark,
                   "arrivals per phase on " + slotName(P, S.Array, S.Slot, S.Cta) +
                       " were not counted: " + S.Unknown,
                   P.Events[S.UnknownEvent]);
        Done.insert(S.Array);
        continue;
      }
      SlotPhases Ph = F.phases(S);
      std::optional<size_t> J = arrivalMismatch(P, S, Ph);
      if (!J || multiThreadCommit(P, S, *J) || F.OutsideCluster.count(S.Array))
        continue;
      uint64_t Init = *initCount(P, S.Array, S.Slot);
      uint64_t Got = Ph.Phases[*J].Arrivals;
      unsigned InitEvent = S.Inits.empty() ? P.Barriers[S.Array].InitEvents.front()
                                           : S.Inits.front().first;
      std::string Waiters;
      for (const WaiterStream &W : S.Waiters) {
        std::string Name = ownerName(P, W.Steps.front().Owner);
        if (Waiters.find(Name) == std::string::npos)
          Waiters += (Waiters.empty() ? "" : " and ") + Name;
      }
      if (Waiters.empty())
        Waiters = "its waiters";
      std::string Consequence =
          Got < Init ? "so the phase never completes and " + Waiters + " hang" +
                           (Waiters.find(" and ") == std::string::npos ? "s" : "")
                     : "so the phase completes before all of them are in and the surplus "
                       "completes the next phase early, releasing " +
                           Waiters + " too soon";
      const Event &At = culprit(P, S, *J, Init, Got, InitEvent);
      Finding &Fd = Ctx.report(
          Severity::Error,
          "arrivals per phase on " + slotName(P, S.Array, S.Slot, S.Cta) + " are " +
              std::to_string(Got) + " (" + arriversText(P, S, *J) + ") but its init count is " +
              std::to_string(Init) + " (ptx " + std::to_string(P.Events[InitEvent].Where.PtxLine) +
              "), " + Consequence,
          At);
      if (&At != &P.Events[InitEvent])
        Fd.Notes.push_back({"the barrier is initialized here with count " +
                                std::to_string(Init),
                            P.Events[InitEvent].Where});
      for (const ArriverStream &A : S.Arrivers)
        if (*J < A.Occurrences.size() && A.Occurrences[*J].Arrivals &&
            &P.Events[A.Occurrences[*J].FirstEvent] != &At)
          Fd.Notes.push_back({"arrives with " + std::to_string(A.Occurrences[*J].Arrivals) +
                                  " per phase (" + A.Threads + ")",
                              P.Events[A.Occurrences[*J].FirstEvent].Where});
      if (!S.Waiters.empty())
        Fd.Notes.push_back({"waits for the phase here",
                            P.Events[S.Waiters.front().Steps.front().Event].Where});
      Done.insert(S.Array);
    }
  }
}
