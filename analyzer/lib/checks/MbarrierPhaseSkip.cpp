//===- MbarrierPhaseSkip.cpp - a waiter two phases behind its barrier ----------------===//
//
// try_wait.parity only sees the parity of the current phase (PTX ISA, mbarrier.try_wait), so
// it cannot tell phase n from phase n + 2. A waiter must therefore ask for the other parity
// on each successive wait of a slot, and nobody may complete two phases of the slot between
// two of its waits. Two shapes break this: a waiter that asks for the same parity twice in a
// row (a stage and phase that restart on every persistent tile instead of carrying over),
// and a role that fills a slot twice before its own wait on it (a prefill one stage too
// deep). Either way the wait passes on the wrong phase or blocks for a phase that already
// went by.
//
//===----------------------------------------------------------------------------------===//
#include "Catalog.h"
#include "BarrierTraffic.h"
#include "SyncSupport.h"

#include "wsv/analyzer/Checks.h"

#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::traffic;
using wsv::analyzer::checks::EventSite;
using wsv::analyzer::checks::eventSites;

namespace {
/// The fill of the lapping stream that completes the phase the lapped wait needs: the
/// occurrence before L.By in By's stream; none when the wait needs no completion.
const Occurrence *wantedFill(const SlotTraffic &S, const Lap &L) {
  if (L.Need == 0)
    return nullptr;
  for (const ArriverStream &A : S.Arrivers)
    for (size_t I = 1; I < A.Occurrences.size(); ++I)
      if (&A.Occurrences[I] == L.By)
        return &A.Occurrences[I - 1];
  return nullptr;
}
/// Whether an init in one loop of a constant trip count gives each iteration a slot of its
/// own (clang -O1 keeps `for (s = 0; s < STAGES; ++s) mbarrier_init(full[s])` a loop): each
/// slot is then initialized once, not again in every iteration.
bool initsEachSlotOnce(const Protocol &P, const EventSite &Site) {
  if (Site.Loops.size() != 1 || !Site.E->Barrier.Slot.known())
    return false;
  const ProtocolLoop &L = *Site.Loops.front();
  if (!L.Trip.known() || !L.Trip.E->isConstant() || L.Loop == NoIndex)
    return false;
  const Expr *Iter = P.Analysis->context().iterationVar(L.Loop);
  std::set<uint64_t> Slots;
  for (uint64_t I = 0; I < L.Trip.E->payload(); ++I) {
    std::optional<uint64_t> S =
        ExprContext::evaluate(Site.E->Barrier.Slot.E, [&](const Expr *Leaf) {
          return Leaf == Iter ? std::optional<uint64_t>(I) : std::nullopt;
        });
    if (!S || !Slots.insert(*S).second)
      return false;
  }
  return true;
}
} // namespace

void wsv::analyzer::checks::MbarrierPhaseSkip(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  if (remarkIfUndecided(Ctx, F, "phase order"))
    return;
  std::set<unsigned> Done;
  // A barrier initialized again in a loop (a persistent kernel that sets a tile's barriers up
  // at its start and invalidates them at its end) restarts at phase 0 in each iteration; the
  // traffic follows one initialization's phases, so its phase order is not judged.
  for (const EventSite &Site : eventSites(P)) {
    const Event &E = *Site.E;
    if (E.Kind != EventKind::Init || !E.Barrier.resolved() || Site.Loops.empty() ||
        initsEachSlotOnce(P, Site) || !Done.insert(E.Barrier.Array).second)
      continue;
    Ctx.report(Severity::Remark,
               "phase order of " + P.Barriers[E.Barrier.Array].Name +
                   " not checked: it is initialized again in every iteration of the loop at "
                   "ptx line " + std::to_string(Site.Loops.back()->Where.PtxLine) +
                   ", and the phases are followed from one initialization",
               E);
  }
  for (const Expansion &X : F.Expansions) {
    if (!X.Unknown.empty())
      continue;
    for (const SlotTraffic &S : X.Slots) {
      if (Done.count(S.Array) || F.outranked(S.Array, Problem::PhaseSkip) ||
          !S.WaitUnknown.empty())
        continue;
      std::string Name = slotName(P, S.Array, S.Slot, S.Cta);
      for (const WaiterStream &W : S.Waiters) {
        WaitNeeds N = needsOf(W);
        if (!N.RepeatedParity)
          continue;
        const WaitStep &St = W.Steps[*N.RepeatedParity];
        const WaitStep &Prev = W.Steps[*N.RepeatedParity - 1];
        std::string Who = ownerName(P, St.Owner);
        Finding &Fd = Ctx.report(
            Severity::Error,
            Who + " waits on " + Name + " for parity " + std::to_string(St.Parity) +
                " twice in a row (wait " + std::to_string(*N.RepeatedParity + 1) +
                " on the slot, for " + X.Values.describe(P) +
                "): the phase is not carried over, so the wait passes on the phase it "
                "already consumed while the barrier may be two phases ahead",
            P.Events[St.Event]);
        Fd.Notes.push_back({"the previous wait on " + Name + ", also parity " +
                                std::to_string(Prev.Parity),
                            P.Events[Prev.Event].Where});
        Done.insert(S.Array);
        break;
      }
      if (Done.count(S.Array))
        continue;
      if (std::optional<Lap> L = lappedWaiter(S)) {
        const WaitStep &St = S.Waiters[L->Waiter].Steps[L->Step];
        std::string Who = ownerName(P, St.Owner);
        Finding &Fd = Ctx.report(
            Severity::Error,
            "this fill completes phase " + std::to_string(L->Need + 2) + " of " + Name +
                " before " + Who + " waits for phase " + std::to_string(L->Need + 1) +
                " (for " + X.Values.describe(P) + "): the slot is filled again before it is "
                "consumed, and the parity wait cannot tell the two phases apart",
            P.Events[L->By->FirstEvent]);
        Fd.Notes.push_back({"the wait that is lapped", P.Events[St.Event].Where});
        // The fill that completes the phase the wait is for is where the ring ran one fill
        // too deep (a prefill that fills every stage): point at it too.
        if (const Occurrence *Wanted = wantedFill(S, *L))
          Fd.Notes.push_back({"this fill completes phase " + std::to_string(L->Need + 1) +
                                  " of " + Name + ", the one the lapped wait is for",
                              P.Events[Wanted->FirstEvent].Where});
        Done.insert(S.Array);
      }
    }
  }
}
