//===- MbarrierInitVisibility.cpp - inits other threads may not see yet ---------------===//
//
// mbarrier.init writes the barrier with ordinary stores of the initializing thread. Other
// threads may use the barrier only after the init is ordered before their use: a barrier
// among the threads (bar.sync, or barrier.cluster.arrive/wait when peer CTAs use it), and
// fence.mbarrier_init.release.cluster before it when the async proxy (TMA complete_tx,
// tcgen05.commit) or peer CTAs touch the barrier (PTX ISA, fence.mbarrier_init). An init
// that runs after the barrier was already used resets its pending and tx counts and drops the
// arrivals made so far; one inside a role branch is not ordered before the other roles' use.
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

bool isCtaBarrier(const Event &E) {
  return E.Kind == EventKind::NamedBarrier && E.Named.Threads.absent() &&
         !llvm::StringRef(E.Opcode).contains("arrive");
}

/// Per array, what the prologue did after its last init.
struct InitState {
  const Event *LastInit = nullptr;
  bool Fence = false, CtaSync = false, ClusterArrive = false, ClusterSync = false;
  const Event *CtaSyncAt = nullptr;
};

} // namespace

void wsv::analyzer::checks::MbarrierInitVisibility(CheckContext &Ctx) {
  const Protocol &P = Ctx.protocol();
  const TrafficFacts &F = analyzeTraffic(P);
  std::vector<InitState> State(P.Barriers.size());
  std::set<unsigned> Done;

  // The prologue in program order: uses before the init, and what orders the init.
  std::vector<const Event *> PrologueOrder;
  P.forEachEvent(P.Prologue, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
    PrologueOrder.push_back(&E);
    if (E.Kind == EventKind::Fence && E.Sync == models::SyncKind::FenceMbarrierInit) {
      for (InitState &S : State)
        if (S.LastInit)
          S.Fence = true;
      return;
    }
    if (isCtaBarrier(E) || E.Kind == EventKind::ClusterArrive ||
        E.Kind == EventKind::ClusterWait) {
      for (InitState &S : State) {
        if (!S.LastInit)
          continue;
        if (isCtaBarrier(E) && !S.CtaSyncAt) {
          S.CtaSync = true;
          S.CtaSyncAt = &E;
        }
        if (E.Kind == EventKind::ClusterArrive)
          S.ClusterArrive = true;
        if (E.Kind == EventKind::ClusterWait && S.ClusterArrive)
          S.ClusterSync = S.CtaSync = true;
      }
      return;
    }
    if (!E.Barrier.resolved())
      return;
    unsigned A = E.Barrier.Array;
    if (E.Kind == EventKind::Init) {
      State[A].LastInit = &E;
      State[A].Fence = State[A].CtaSync = State[A].ClusterArrive = State[A].ClusterSync = false;
      State[A].CtaSyncAt = nullptr;
      return;
    }
    if (State[A].LastInit || Done.count(A))
      return;
    // A use before any init of the array: the init that follows resets it.
    for (unsigned I : P.Barriers[A].InitEvents) {
      const Event &Init = P.Events[I];
      if (Init.Where.PtxLine <= E.Where.PtxLine)
        continue;
      Finding &Fd = Ctx.report(
          Severity::Error,
          P.Barriers[A].Name + " is initialized after `" + E.Opcode + "` (ptx " +
              std::to_string(E.Where.PtxLine) +
              ") already used it: the init resets the pending count and tx-count, so the "
              "arrivals and bytes before it are lost and their phase never completes",
          Init);
      Fd.Notes.push_back({"the earlier use", E.Where});
      Done.insert(A);
      break;
    }
  });

  // Inits inside a role branch: not ordered before the other roles' use.
  for (unsigned R = 0; R < P.Roles.size(); ++R)
    P.forEachEvent(P.Roles[R].Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
      if (E.Kind != EventKind::Init || !E.Barrier.resolved() || Done.count(E.Barrier.Array))
        return;
      unsigned A = E.Barrier.Array;
      const Event *Use = nullptr;
      for (unsigned O = 0; O < P.Roles.size() && !Use; ++O)
        if (O != R)
          P.forEachEvent(P.Roles[O].Body,
                         [&](const Event &U, llvm::ArrayRef<const ProtocolLoop *>) {
                           if (!Use && U.Barrier.resolved() && U.Barrier.Array == A &&
                               U.Kind != EventKind::Init)
                             Use = &U;
                         });
      if (!Use)
        return;
      Finding &Fd = Ctx.report(
          Severity::Error,
          P.Barriers[A].Name + " is initialized inside the " + P.Roles[R].Name +
              " branch (" + E.Threads.str() +
              "), after the roles split: no barrier orders the init before the other roles' "
              "use, so they may wait on or arrive at an uninitialized barrier",
          E);
      Fd.Notes.push_back({"used by another role here", Use->Where});
      Done.insert(A);
    });

  // Inits in the prologue: fence and barrier before the roles use them. Arrays that miss the
  // same thing are reported together, at the instruction they share.
  std::vector<unsigned> NoFence, NoClusterSync, NoSync;
  for (unsigned A = 0; A < P.Barriers.size(); ++A) {
    const InitState &S = State[A];
    if (!S.LastInit || Done.count(A))
      continue;
    bool UsedElsewhere = false;
    for (const Role &R : P.Roles)
      P.forEachEvent(R.Body, [&](const Event &U, llvm::ArrayRef<const ProtocolLoop *>) {
        UsedElsewhere |= U.Barrier.resolved() && U.Barrier.Array == A &&
                         U.Threads.str() != S.LastInit->Threads.str();
      });
    if (!UsedElsewhere)
      continue;
    const ArrayUse &U = F.Uses[A];
    if ((U.AsyncProxy || U.FromPeers) && !S.Fence)
      NoFence.push_back(A);
    else if (U.FromPeers && !S.ClusterSync)
      NoClusterSync.push_back(A);
    else if (!S.CtaSync && !S.ClusterSync)
      NoSync.push_back(A);
  }
  auto Names = [&](const std::vector<unsigned> &As) {
    std::string Out;
    for (size_t I = 0; I < As.size(); ++I)
      Out += (I == 0 ? "" : I + 1 == As.size() ? " and " : ", ") + P.Barriers[As[I]].Name;
    return Out;
  };
  // The init the finding points at: the last one in program order.
  auto LastInit = [&](const std::vector<unsigned> &As) {
    const Event *Last = State[As.front()].LastInit;
    for (unsigned A : As)
      if (State[A].LastInit->Where.PtxLine > Last->Where.PtxLine)
        Last = State[A].LastInit;
    return Last;
  };
  if (!NoFence.empty()) {
    bool Async = llvm::any_of(NoFence, [&](unsigned A) { return F.Uses[A].AsyncProxy; });
    const Event *Init = LastInit(NoFence);
    Finding &Fd = Ctx.report(
        Severity::Error,
        "no fence.mbarrier_init follows the init of " + Names(NoFence) + ", which " +
            (Async ? "async copies or tcgen05 commits complete" : "peer CTAs arrive on") +
            ": the init is not made visible to the async proxy and the cluster, so they may "
            "see an uninitialized barrier",
        *Init);
    // Where the correct program has the fence: right after the last init, before whatever
    // the prologue does next.
    auto It = llvm::find(PrologueOrder, Init);
    if (It != PrologueOrder.end() && std::next(It) != PrologueOrder.end())
      Fd.Notes.push_back({"the fence would belong before this: nothing orders the init of " +
                              Names(NoFence) + " before " +
                              (Async ? "the async proxy's" : "the peer CTAs'") + " use",
                          (*std::next(It))->Where});
    if (const Event *Sync = State[NoFence.front()].CtaSyncAt)
      Fd.Notes.push_back({"the barrier after the init orders only the CTA's threads",
                          Sync->Where});
  }
  if (!NoClusterSync.empty()) {
    const Event *Sync = State[NoClusterSync.front()].CtaSyncAt;
    const Event *Init = LastInit(NoClusterSync);
    Finding &Fd = Ctx.report(
        Severity::Error,
        "peer CTAs arrive on " + Names(NoClusterSync) +
            ", but only a CTA-wide barrier follows the init: without barrier.cluster arrive "
            "and wait, a peer may arrive before this CTA initialized them",
        Sync ? *Sync : *Init);
    Fd.Notes.push_back({"the last init", Init->Where});
  }
  if (!NoSync.empty())
    Ctx.report(Severity::Error,
               "no barrier among the threads follows the init of " + Names(NoSync) +
                   " before the roles use them, so they may see an uninitialized barrier",
               *LastInit(NoSync));
}
