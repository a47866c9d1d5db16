//===- ProtocolRoles.cpp - prologue, roles, epilogue ------------------------------===//
//
// Step 3 of the protocol builder. The kernel's code is cut at the blocks every thread
// reaches outside any loop (after `if (tid == 0) init(); __syncthreads();` every thread is
// back together); each event belongs to the region of the last such block that dominates
// it. A region where every event is run by all threads or by leaders (thread 0, an elected
// lane, one warp allocating TMEM) is shared work: before the first region where threads
// diverge it is the prologue, after the last one the epilogue. The regions in between are
// where the roles are: threads are partitioned by which of those events they run (leaders
// excluded, see Roles.h), and each part is a role, named by what it does.
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Warp-wide work one warp does for the whole CTA: TMEM allocation, and the tcgen05 fences
/// around the thread syncs that order it.
bool isWarpChore(EventKind K) {
  return K == EventKind::Alloc || K == EventKind::Dealloc || K == EventKind::Relinquish ||
         K == EventKind::Fence;
}

/// Whether an event is work every thread shares or a leader does for all: it does not tell
/// roles apart. Plain shared-memory accesses and accumulator reads do not either (roles are
/// what threads do to synchronize; instrumented builds also store per-warp state from
/// whichever lane is first), nor do events whose threads are unknown.
bool isSharedWork(const Event &E, const EventInfo &I) {
  if (I.Shape == ThreadShape::All || I.Shape == ThreadShape::Leader ||
      I.Shape == ThreadShape::Unknown || E.Kind == EventKind::SmemRead ||
      E.Kind == EventKind::SmemWrite || E.Kind == EventKind::AccumulatorRead)
    return true;
  if (I.Shape == ThreadShape::Partial && isWarpChore(E.Kind)) {
    int First = I.Reach.find_first();
    return First >= 0 && static_cast<unsigned>(I.Reach.find_last()) / WarpSize ==
                             static_cast<unsigned>(First) / WarpSize;
  }
  return false;
}

class RoleAssigner {
public:
  explicit RoleAssigner(BuildState &S) : S(S) {}
  void run();

private:
  BlockId regionOf(BlockId B);
  void splitPhases();
  void partition();
  void name();

  BuildState &S;
  llvm::DenseMap<BlockId, bool> CommonCache;
  std::vector<unsigned> MainEvents;
  std::vector<llvm::BitVector> Parts;
  int UnknownRole = -1;
};

BlockId RoleAssigner::regionOf(BlockId B) {
  const DominatorTree &Dom = S.FA.dominators();
  for (BlockId X = B; X != NoIndex; X = Dom.idom(X)) {
    if (S.FA.loops().loopFor(X) != NoIndex)
      continue;
    auto [It, New] = CommonCache.try_emplace(X, false);
    if (New) {
      const Expr *C = S.FA.guards().blockCondition(X);
      llvm::SmallVector<const Expr *, 8> Parts;
      conjuncts(C ? S.values().closedForm(C) : S.ctx().boolean(false), Parts);
      It->second = C && llvm::none_of(Parts, [](const Expr *P) { return isThreadDependent(P); });
    }
    if (It->second)
      return X;
  }
  return S.cfg().entry();
}

void RoleAssigner::splitPhases() {
  // Regions in block order, and what each holds.
  std::map<unsigned, std::vector<unsigned>> Regions; // block order of the region -> events
  for (unsigned E = 0; E < S.P.Events.size(); ++E)
    Regions[S.BlockOrder[regionOf(S.Info[E].Block)]].push_back(E);
  std::vector<unsigned> Keys;
  for (auto &[K, Events] : Regions)
    Keys.push_back(K);
  int FirstSplit = -1, LastSplit = -1, FirstWait = -1, LastWait = -1;
  for (unsigned R = 0; R < Keys.size(); ++R)
    for (unsigned E : Regions[Keys[R]]) {
      if (!isSharedWork(S.P.Events[E], S.Info[E])) {
        FirstSplit = FirstSplit < 0 ? R : FirstSplit;
        LastSplit = R;
      }
      if (S.P.Events[E].Kind == EventKind::Wait) {
        FirstWait = FirstWait < 0 ? R : FirstWait;
        LastWait = R;
      }
    }
  // Without divergence, the roles' part is where the waiting is; without waits, everything.
  int First = FirstSplit >= 0 ? FirstSplit : FirstWait >= 0 ? FirstWait : 0;
  int Last = FirstSplit >= 0 ? LastSplit : FirstWait >= 0 ? LastWait : int(Keys.size()) - 1;
  for (unsigned R = 0; R < Keys.size(); ++R)
    for (unsigned E : Regions[Keys[R]]) {
      EventInfo &I = S.Info[E];
      I.Where = int(R) < First  ? EventInfo::Phase::Prologue
                : int(R) > Last ? EventInfo::Phase::Epilogue
                                : EventInfo::Phase::Main;
      if (I.Where == EventInfo::Phase::Main)
        MainEvents.push_back(E);
    }
  std::sort(MainEvents.begin(), MainEvents.end());
  // What every thread runs, outside loops, before the first role's own work (the
  // __syncthreads after the inits) or after the last one's is still shared.
  auto Everyone = [&](unsigned E) {
    return S.Info[E].Shape == ThreadShape::All && S.Info[E].Loop == NoIndex &&
           S.P.Events[E].Kind != EventKind::Wait;
  };
  unsigned Lead = 0;
  while (Lead < MainEvents.size() && Everyone(MainEvents[Lead]))
    S.Info[MainEvents[Lead++]].Where = EventInfo::Phase::Prologue;
  unsigned Trail = MainEvents.size();
  while (Trail > Lead && Everyone(MainEvents[Trail - 1]))
    S.Info[MainEvents[--Trail]].Where = EventInfo::Phase::Epilogue;
  MainEvents = std::vector<unsigned>(MainEvents.begin() + Lead, MainEvents.begin() + Trail);
}

void RoleAssigner::partition() {
  unsigned N = S.P.Launch.threads();
  std::vector<llvm::BitVector> Splitting;
  bool AnyUnknown = false;
  for (unsigned E : MainEvents) {
    const EventInfo &I = S.Info[E];
    if (I.Shape == ThreadShape::Unknown && (I.Reach.none() || I.Reach.all()))
      AnyUnknown = true;
    else if (!isSharedWork(S.P.Events[E], I))
      Splitting.push_back(I.Reach);
  }
  Parts = partitionThreads(N, Splitting);
  // A part whose work is all done by elected lanes (a warpgroup whose warp 3 loads and warp 0
  // issues MMAs, each through one lane) splits by the warps that elect: each such warp is a
  // role, as its author wrote `if (warp == 3) { if (elect_one_sync()) ... }`. A part with
  // warp-wide work of its own (setmaxnreg over a producer warpgroup) stays whole.
  std::vector<llvm::BitVector> Refined;
  for (const llvm::BitVector &Part : Parts) {
    bool OwnWork = llvm::any_of(Splitting, [&](const llvm::BitVector &S) {
      llvm::BitVector Outside = Part;
      Outside.reset(S);
      return Outside.none() && S.count() < N;
    });
    std::vector<llvm::BitVector> ByWarp;
    if (!OwnWork)
      for (unsigned E : MainEvents)
        for (const ThreadSet::ElectedGroup &G : S.P.Events[E].Threads.elected()) {
          llvm::BitVector Warps(N);
          for (unsigned W : G.Warps)
            for (unsigned T = W * WarpSize; T < std::min(N, (W + 1) * WarpSize); ++T)
              Warps.set(T);
          Warps &= Part;
          if (Warps.any() && Warps != Part)
            ByWarp.push_back(Warps);
        }
    for (llvm::BitVector Piece : partitionThreads(N, ByWarp)) {
      Piece &= Part;
      if (Piece.any())
        Refined.push_back(Piece);
    }
  }
  std::sort(Refined.begin(), Refined.end(), [](const llvm::BitVector &A, const llvm::BitVector &B) {
    return A.find_first() < B.find_first();
  });
  Parts = std::move(Refined);
  for (const llvm::BitVector &Part : Parts) {
    Role R;
    R.Threads = ThreadSet(N);
    R.Threads.Members = Part;
    S.P.Roles.push_back(std::move(R));
  }
  if (AnyUnknown) {
    UnknownRole = S.P.Roles.size();
    Role R;
    R.Name = "unknown";
    R.NamedByActivity = false;
    R.Threads = ThreadSet::unknown("events whose threads could not be computed");
    R.Active = R.Threads;
    S.P.Roles.push_back(std::move(R));
  }
  for (unsigned E : MainEvents) {
    EventInfo &I = S.Info[E];
    // Unknown threads within a bound that some roles cover belong to those roles.
    if (I.Shape == ThreadShape::Unknown && (I.Reach.none() || I.Reach.all())) {
      I.Roles.push_back(UnknownRole);
      continue;
    }
    for (unsigned R = 0; R < Parts.size(); ++R)
      if (Parts[R].anyCommon(I.Reach))
        I.Roles.push_back(R);
  }
}

void RoleAssigner::name() {
  unsigned N = S.P.Launch.threads();
  // Barriers that async copies complete: whoever waits on them consumes what was loaded.
  llvm::DenseSet<unsigned> Loaded;
  for (const Event &Ev : S.P.Events)
    if (Ev.Kind == EventKind::AsyncLoad && Ev.Barrier.resolved())
      Loaded.insert(Ev.Barrier.Array);
  std::vector<std::string> Names(S.P.Roles.size());
  for (unsigned R = 0; R < Parts.size(); ++R) {
    Role &Ro = S.P.Roles[R];
    RoleActivity A;
    llvm::BitVector Active(N);
    std::vector<const ThreadSet *> Leaders;
    bool AllLeaders = true;
    for (unsigned E : MainEvents) {
      const EventInfo &I = S.Info[E];
      bool Mine = llvm::is_contained(I.Roles, R);
      // With one role, everything it runs is its own.
      bool Own = Mine && (Parts.size() == 1 || I.Roles.size() < Parts.size());
      if (!Own)
        continue;
      const Event &Ev = S.P.Events[E];
      A.Own = true;
      switch (Ev.Kind) {
      case EventKind::AsyncLoad:
      case EventKind::AsyncCopy:
        A.TmaLoad = true;
        break;
      case EventKind::Mma:
        (Ev.Sync == models::SyncKind::WgmmaMmaAsync ? A.Wgmma : A.Tcgen05Mma) = true;
        break;
      case EventKind::TmemLoad:
        A.TmemLoad = true;
        break;
      case EventKind::SmemWrite:
        A.SmemWrite = true;
        break;
      case EventKind::AsyncStore:
        A.TmaStore = true;
        break;
      case EventKind::Wait:
        A.WaitsOnLoads |= Ev.Barrier.resolved() && Loaded.count(Ev.Barrier.Array);
        break;
      default:
        break;
      }
      // Plain memory accesses and events on unknown threads say what a role touches, not
      // who in it does the work.
      if (Ev.Kind == EventKind::SmemRead || Ev.Kind == EventKind::SmemWrite ||
          Ev.Kind == EventKind::AccumulatorRead || I.Shape == ThreadShape::Unknown)
        continue;
      llvm::BitVector Here = I.Reach;
      Here &= Parts[R];
      if (I.Shape == ThreadShape::Leader && !Ev.Threads.elected().empty())
        Leaders.push_back(&Ev.Threads);
      else {
        AllLeaders &= I.Shape == ThreadShape::Leader;
        Active |= Here;
      }
    }
    // A role whose own work is all done by elected lanes is, in effect, those lanes.
    if (AllLeaders && Active.none() && !Leaders.empty() &&
        llvm::all_of(Leaders, [&](const ThreadSet *T) {
          return T->elected()[0].Warps == Leaders.front()->elected()[0].Warps;
        }) && Leaders.front()->elected().size() == 1) {
      Ro.Active = ThreadSet(N);
      Ro.Active.Elected.push_back(Leaders.front()->elected()[0]);
      Ro.Active.Elected.back().Condition = nullptr;
    } else {
      for (const ThreadSet *T : Leaders)
        for (const ThreadSet::ElectedGroup &G : T->elected())
          for (unsigned W : G.Warps)
            for (unsigned L = 0; L < WarpSize && W * WarpSize + L < N; ++L)
              if (Parts[R].test(W * WarpSize + L))
                Active.set(W * WarpSize + L);
      Ro.Active = ThreadSet(N);
      Ro.Active.Members = Active;
    }
    Names[R] = roleName(A);
  }
  // Numbers where a name is taken twice, roleN where none fits.
  std::map<std::string, unsigned> Uses, Seen;
  for (unsigned R = 0; R < Parts.size(); ++R)
    ++Uses[Names[R]];
  for (unsigned R = 0; R < Parts.size(); ++R) {
    Role &Ro = S.P.Roles[R];
    if (Names[R].empty()) {
      Ro.Name = "role" + std::to_string(R);
      Ro.NamedByActivity = false;
    } else if (Uses[Names[R]] > 1) {
      Ro.Name = Names[R] + std::to_string(Seen[Names[R]]++);
    } else {
      Ro.Name = Names[R];
    }
  }
}

void RoleAssigner::run() {
  // A function without synchronization has no roles to tell apart.
  if (S.P.Events.empty())
    return;
  splitPhases();
  partition();
  name();
}

} // namespace

void wsv::analyzer::assignRoles(BuildState &S) { RoleAssigner(S).run(); }
