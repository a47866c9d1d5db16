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
#include "SyncSupport.h"

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

/// Whether Bar runs, under no condition, in every thread that may run E (Bar's threads are
/// exact and contain all of E's possible threads).
bool covers(const Event &Bar, const Event &E) {
  if (Bar.When.known() || !Bar.Threads.isExact())
    return false;
  llvm::BitVector Need = checks::possibleThreads(E.Threads);
  llvm::BitVector Have = Bar.Threads.members();
  Have.resize(std::max(Have.size(), Need.size()));
  Need.resize(Have.size());
  return !Need.test(Have);
}

/// Whether Outer's loops are a prefix of Inner's: then Outer, earlier in the walk, runs
/// before Inner in every iteration that reaches Inner.
bool enclosing(const checks::EventSite &Outer, const checks::EventSite &Inner) {
  if (Outer.Loops.size() > Inner.Loops.size())
    return false;
  for (size_t I = 0; I < Outer.Loops.size(); ++I)
    if (Outer.Loops[I] != Inner.Loops[I])
      return false;
  return true;
}

/// Whether every use of the hardware barrier that CTA-wide instruction First names is itself
/// an instruction every thread of the CTA executes with no count (`bar.sync 0` of a kernel
/// whose threads all run the same code): then every thread passes the same instances in the
/// same order, and the instance of one such instruction is one instance for all of them,
/// whatever the threads passed before it.
bool onlyCtaWideUses(const Protocol &P, const Event &First) {
  std::optional<uint64_t> Id = First.Named.Id.constant();
  if (First.Kind != EventKind::NamedBarrier || !Id || !checks::isCtaWideSync(P, First) ||
      checks::alignedGranule(First) == 0)
    return false;
  for (const Event &E : P.Events) {
    if (E.Kind != EventKind::NamedBarrier)
      continue;
    std::optional<uint64_t> Other = E.Named.Id.constant();
    if ((!Other || *Other == *Id) && !checks::isCtaWideSync(P, E))
      return false;
  }
  return true;
}

/// An init inside a role is still ordered before the other roles' use when a CTA-wide barrier
/// separates them. Two shapes:
///  - the initializing thread reaches its first instance of barrier X (a `barrier.sync 1`
///    without .aligned, which every thread of the CTA must reach from whichever branch), and
///    every other role passes an instance of X before its use. Because the role ran no X
///    before the init, the init precedes the completion of every instance the other roles
///    can pass. This is how Triton's warp-specialized kernels order inits that the default
///    partition makes after the roles split;
///  - X is an aligned `bar.sync` that every thread executes, and every use of its id is one
///    (onlyCtaWideUses): the roles are then parts of one code that all threads run (Triton's
///    kernels without warp specialization, whose elected lane initializes the barriers of a
///    loop, in a persistent kernel once per tile), and the instance after the init, in the
///    same iteration, is the one the others pass before their use in that iteration.
const checks::EventSite *orderedByCtaBarrier(const Protocol &P,
                                            const std::vector<checks::EventSite> &Sites,
                                            const std::vector<std::optional<uint64_t>> &Keys,
                                            size_t InitSite) {
  const checks::EventSite &I = Sites[InitSite];
  if (I.In != checks::Part::Role)
    return nullptr;
  std::optional<uint64_t> Key;
  const checks::EventSite *Chosen = nullptr;
  for (size_t S = 0; S < Sites.size() && !Key; ++S) {
    const checks::EventSite &B = Sites[S];
    if (B.R == I.R && B.In == checks::Part::Role && Keys[S] && B.Order > I.Order &&
        B.Loops == I.Loops && covers(*B.E, *I.E)) {
      Key = Keys[S];
      Chosen = &B;
    }
  }
  if (!Key)
    return nullptr;
  const Event *First = Chosen->E;
  bool Uniform = onlyCtaWideUses(P, *First);
  if (!I.Loops.empty() && !Uniform)
    return nullptr;
  // The barrier after the init must be the role's first instance of it: the same hardware
  // barrier passed before the init would let the others' instance complete without it.
  auto SameBarrier = [&](const Event &E, std::optional<uint64_t> K) {
    if (K == Key)
      return true;
    if (E.Kind != First->Kind)
      return false;
    if (E.Kind != EventKind::NamedBarrier)
      return true;
    std::optional<uint64_t> Id = E.Named.Id.constant();
    return !Id || Id == First->Named.Id.constant();
  };
  for (size_t S = 0; S < Sites.size() && !Uniform; ++S)
    if (Sites[S].R == I.R && Sites[S].In == checks::Part::Role && Sites[S].Order < I.Order &&
        (Sites[S].E->Kind == EventKind::NamedBarrier ||
         Sites[S].E->Kind == EventKind::ClusterWait) &&
        SameBarrier(*Sites[S].E, Keys[S]))
      return nullptr;
  unsigned A = I.E->Barrier.Array;
  for (const checks::EventSite &U : Sites) {
    if (U.In != checks::Part::Role || U.R == I.R || !U.E->Barrier.resolved() ||
        U.E->Barrier.Array != A || U.E->Kind == EventKind::Init)
      continue;
    bool Passed = false;
    for (size_t S = 0; S < Sites.size() && !Passed; ++S) {
      const checks::EventSite &B = Sites[S];
      Passed = B.R == U.R && B.In == checks::Part::Role && Keys[S] == Key &&
               B.Order < U.Order && enclosing(B, U) && covers(*B.E, *U.E);
    }
    if (!Passed)
      return nullptr;
  }
  return Chosen;
}

/// Whether the role of the init site runs fence.mbarrier_init between the init and Until.
bool fencedBefore(const std::vector<checks::EventSite> &Sites, const checks::EventSite &Init,
                  const checks::EventSite &Until) {
  return llvm::any_of(Sites, [&](const checks::EventSite &F) {
    return F.R == Init.R && F.In == Init.In && F.Order > Init.Order && F.Order < Until.Order &&
           F.E->Kind == EventKind::Fence && F.E->Sync == models::SyncKind::FenceMbarrierInit;
  });
}

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

  // Inits inside a role branch: not ordered before the other roles' use, unless a CTA-wide
  // barrier that every role reaches does it.
  std::vector<EventSite> Sites = eventSites(P);
  std::vector<unsigned> InRoleNoFence;
  std::vector<std::optional<uint64_t>> Keys = ctaBarrierKeys(P, Sites);
  for (size_t SI = 0; SI < Sites.size(); ++SI) {
    const EventSite &Site = Sites[SI];
    const Event &E = *Site.E;
    if (Site.In != Part::Role || E.Kind != EventKind::Init || !E.Barrier.resolved() ||
        Done.count(E.Barrier.Array))
      continue;
    if (const EventSite *Bar = orderedByCtaBarrier(P, Sites, Keys, SI)) {
      // Ordered for the CTA's threads; the async proxy still needs the fence.
      const ArrayUse &U = F.Uses[E.Barrier.Array];
      if ((U.AsyncProxy || U.FromPeers) && !fencedBefore(Sites, Site, *Bar)) {
        InRoleNoFence.push_back(E.Barrier.Array);
        State[E.Barrier.Array].LastInit = &E;
        State[E.Barrier.Array].CtaSyncAt = Bar->E;
      }
      Done.insert(E.Barrier.Array);
      continue;
    }
    unsigned R = Site.R - P.Roles.data();
    {
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
        continue;
      Finding &Fd = Ctx.report(
          Severity::Error,
          P.Barriers[A].Name + " is initialized inside the " + P.Roles[R].Name +
              " branch (" + E.Threads.str() +
              "), after the roles split: no barrier orders the init before the other roles' "
              "use, so they may wait on or arrive at an uninitialized barrier",
          E);
      Fd.Notes.push_back({"used by another role here", Use->Where});
      Done.insert(A);
    }
  }

  // Inits in the prologue: fence and barrier before the roles use them. Arrays that miss the
  // same thing are reported together, at the instruction they share.
  std::vector<unsigned> NoFence = InRoleNoFence, NoClusterSync, NoSync;
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
    bool Peers = llvm::any_of(NoFence, [&](unsigned A) { return F.Uses[A].FromPeers; });
    const Event *Init = LastInit(NoFence);
    // Peer CTAs need the fence's release at cluster scope: without it they may arrive on an
    // uninitialized barrier. Within one CTA the PTX ISA asks for the fence before the async
    // proxy uses the barrier (CUTLASS fences, Triton does not, and kernels without it run
    // in practice), so that is what may go wrong, not what must.
    Finding &Fd = Ctx.report(
        Peers ? Severity::Error : Severity::Warning,
        "no fence.mbarrier_init follows the init of " + Names(NoFence) + ", which " +
            (Peers ? "peer CTAs arrive on" : "async copies or tcgen05 commits complete") +
            (Peers ? ": the init is not released to the cluster, so a peer may arrive on an "
                     "uninitialized barrier"
                   : ": the init is not made visible to the async proxy, which may then "
                     "complete bytes or arrivals on an uninitialized barrier"),
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
