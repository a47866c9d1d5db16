//===- WaitFor.cpp - match a stuck snapshot to the protocol, wait-for edges, cycle ---===//
//
// Roles are matched by warps first (the trace's role names come from the kernel's own table,
// the protocol's from what the threads do: H1's `warpgroup` is the protocol's `mainloop`),
// then by name, and a silent trace role takes the protocol roles nobody else claimed.
//
//===----------------------------------------------------------------------------------===//
#include "WaitForInternal.h"

#include "wsv/analyzer/ProtocolPrinter.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <functional>
#include <set>

namespace wsv {
namespace analyzer {

const char *toString(PeerState S) {
  switch (S) {
  case PeerState::Stuck: return "stuck";
  case PeerState::Silent: return "silent";
  case PeerState::Absent: return "absent";
  case PeerState::Self: return "self";
  }
  return "?";
}

std::optional<uint64_t> evaluateAt(const Protocol &P, const Expr *E,
                                   const std::map<unsigned, uint64_t> &Iterations,
                                   const std::map<std::string, uint64_t> &Params) {
  return evaluateFor(P, E, Iterations, Params, std::nullopt);
}

std::optional<uint64_t> evaluateFor(const Protocol &P, const Expr *E,
                                    const std::map<unsigned, uint64_t> &Iterations,
                                    const std::map<std::string, uint64_t> &Params,
                                    std::optional<unsigned> Tid) {
  if (!E)
    return std::nullopt;
  return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
    switch (Leaf->kind()) {
    case ExprKind::Constant:
      return Leaf->payload();
    case ExprKind::IterationVar: {
      auto It = Iterations.find(static_cast<unsigned>(Leaf->payload()));
      if (It == Iterations.end())
        return std::nullopt;
      return It->second;
    }
    case ExprKind::Param:
      if (Leaf->payload() != 0)
        return std::nullopt; // a parameter's upper half or a struct field: not a scalar we know
      for (unsigned K = 0; K < P.ParamSymbols.size() && K < P.ParamNames.size(); ++K)
        if (P.ParamSymbols[K] == Leaf->name()) {
          auto It = Params.find(P.ParamNames[K]);
          if (It != Params.end())
            return It->second;
        }
      return std::nullopt;
    case ExprKind::SpecialReg:
      if (Tid && Leaf->payload() == static_cast<uint64_t>(SpecialRegister::TidX))
        return *Tid;
      return std::nullopt;
    default:
      return std::nullopt;
    }
  });
}

std::vector<std::vector<EventSite>> collectSites(const Protocol &P) {
  std::vector<std::vector<EventSite>> Sites(P.Roles.size());
  for (unsigned R = 0; R < P.Roles.size(); ++R) {
    unsigned Order = 0;
    std::vector<unsigned> Stack;
    std::function<void(const std::vector<ProtocolItem> &)> Walk =
        [&](const std::vector<ProtocolItem> &Items) {
          for (const ProtocolItem &I : Items) {
            if (I.isEvent()) {
              Sites[R].push_back(EventSite{I.Index, Stack, Order++});
              continue;
            }
            Stack.push_back(I.Index);
            Walk(P.Loops[I.Index].Body);
            Stack.pop_back();
          }
        };
    Walk(P.Prologue);
    Walk(P.Roles[R].Body);
    Walk(P.Epilogue);
  }
  return Sites;
}

bool completes(const Event &E) {
  switch (E.Kind) {
  case EventKind::Arrive:
  case EventKind::ArriveExpectTx:
  case EventKind::CompleteTx:
  case EventKind::CpAsyncArrive:
  case EventKind::MmaCommit:
  case EventKind::TryCancel:
    return E.Barrier.resolved();
  case EventKind::AsyncLoad:
    return E.Barrier.resolved();
  default:
    return false;
  }
}

std::optional<unsigned> barrierArray(const Protocol &P, const std::string &Name) {
  for (unsigned A = 0; A < P.Barriers.size(); ++A)
    if (P.Barriers[A].Name == Name)
      return A;
  return std::nullopt;
}

namespace {

bool roleHasThread(const Role &R, unsigned Tid) {
  const ThreadSet &T = R.Threads;
  if (Tid < T.members().size() && T.members().test(Tid))
    return true;
  for (const ThreadSet::ElectedGroup &G : T.elected())
    if (!G.Excluded && std::find(G.Warps.begin(), G.Warps.end(), Tid / 32) != G.Warps.end())
      return true;
  return false;
}

/// Protocol roles for each trace role name.
std::map<std::string, std::vector<unsigned>> matchRoles(const Protocol &P, const Snapshot &S) {
  std::map<std::string, std::set<unsigned>> ByWarp;
  for (const StuckWait &W : S.Stuck)
    for (unsigned Warp : W.Warps)
      for (unsigned R = 0; R < P.Roles.size(); ++R)
        for (unsigned L = 0; L < 32; ++L)
          if (roleHasThread(P.Roles[R], Warp * 32 + L)) {
            ByWarp[W.Role].insert(R);
            break;
          }
  std::map<std::string, std::vector<unsigned>> Out;
  std::set<unsigned> Claimed;
  for (auto &[Name, Roles] : ByWarp) {
    Out[Name].assign(Roles.begin(), Roles.end());
    Claimed.insert(Roles.begin(), Roles.end());
  }
  // Trace roles without stuck warps: the protocol role of the same name, else what is left.
  std::vector<std::string> Unmatched, Names = S.Roles;
  for (const StuckWait &W : S.Stuck) // a solver's agents may be copies of a role
    if (std::find(Names.begin(), Names.end(), W.Role) == Names.end())
      Names.push_back(W.Role);
  for (const std::string &Name : Names) {
    if (Out.count(Name))
      continue;
    for (unsigned R = 0; R < P.Roles.size(); ++R)
      if (P.Roles[R].Name == Name && !Claimed.count(R)) {
        Out[Name] = {R};
        Claimed.insert(R);
      }
    // A copy of a role named after it (`consumer#1`, `consumer.wg2`): a solver's agent.
    for (unsigned R = 0; R < P.Roles.size() && !Out.count(Name); ++R) {
      llvm::StringRef N(Name);
      if (N.consume_front(P.Roles[R].Name) && !N.empty() && !llvm::isAlnum(N.front()))
        Out[Name] = {R};
    }
    if (!Out.count(Name))
      Unmatched.push_back(Name);
  }
  std::vector<unsigned> Left;
  for (unsigned R = 0; R < P.Roles.size(); ++R)
    if (!Claimed.count(R) && !P.Roles[R].Body.empty())
      Left.push_back(R);
  for (const std::string &Name : Unmatched)
    Out[Name] = Left;
  return Out;
}

std::string slotParityText(const std::string &Barrier, uint64_t Slot, uint64_t Parity) {
  return Barrier + "[" + std::to_string(Slot) + "] parity " + std::to_string(Parity);
}

/// Checks a stuck mbarrier wait against a wait event's closed forms at the captured iteration.
/// Returns true when consistent or not decidable; fills Check with what was found.
bool checkWait(const Protocol &P, const Snapshot &S, const StuckWait &W, const EventSite &Site,
               std::string &Check, bool &Decided) {
  const Event &E = P.Events[Site.Event];
  Decided = false;
  std::vector<const ProtocolLoop *> Loops;
  for (unsigned L : Site.Loops)
    Loops.push_back(&P.Loops[L]);
  std::string Form = formatBarrier(P, E.Barrier, Loops) + " parity " + formatParity(P, E, Loops);
  if (Site.Loops.size() > 1) {
    Check = "protocol: " + Form + " (inside " + std::to_string(Site.Loops.size()) +
            " loops; the capture's one counter does not say each loop's iteration)";
    return true;
  }
  if (W.FirstIteration != W.LastIteration) {
    Check = "protocol: " + Form;
    return true;
  }
  std::map<unsigned, uint64_t> Its;
  std::string At;
  if (Site.Loops.size() == 1) {
    LoopId L = P.Loops[Site.Loops[0]].Loop;
    Its[L] = W.FirstIteration;
    At = " at " + P.loopVar(L) + "=" + std::to_string(W.FirstIteration);
  }
  std::optional<uint64_t> Slot = evaluateAt(P, E.Barrier.Slot.E, Its, S.Params);
  std::optional<uint64_t> Parity = evaluateAt(P, E.Parity.E, Its, S.Params);
  if (!Slot || !Parity) {
    Check = "protocol: " + Form + " (not evaluated" + At + ")";
    return true;
  }
  Decided = true;
  bool Same = *Slot == W.Slot && (*Parity & 1) == W.Parity;
  Check = "protocol: " + Form + At + " is " +
          slotParityText(P.Barriers[E.Barrier.Array].Name, *Slot, *Parity & 1) +
          (Same ? ", as captured" : ", not what was captured");
  return Same;
}

} // namespace

WaitForAnalysis analyzeWaitFor(const Protocol &P, const Snapshot &S) {
  WaitForAnalysis A;
  std::vector<std::vector<EventSite>> Sites = collectSites(P);
  std::map<std::string, std::vector<unsigned>> RoleMap = matchRoles(P, S);

  // Each stuck wait against the protocol's waits.
  for (const StuckWait &W : S.Stuck) {
    WaitMatch M;
    M.Roles = RoleMap[W.Role];
    std::vector<EventSite> Consistent, All;
    std::vector<std::string> Checks, ConsistentChecks;
    bool AnyDecided = false;
    std::optional<unsigned> Array = W.Named ? std::nullopt : barrierArray(P, W.Barrier);
    for (unsigned R : M.Roles)
      for (const EventSite &Site : Sites[R]) {
        const Event &E = P.Events[Site.Event];
        if (W.Named) {
          if (E.Kind != EventKind::NamedBarrier)
            continue;
          if (!namedIdMatches(P, E, W.NamedId, W.Warps, S.Params))
            continue;
          All.push_back(Site);
          continue;
        }
        if ((E.Kind != EventKind::Wait && E.Kind != EventKind::Probe) || !Array ||
            E.Barrier.Array != *Array)
          continue;
        std::string Check;
        bool Decided = false;
        bool Ok = checkWait(P, S, W, Site, Check, Decided);
        AnyDecided |= Decided;
        All.push_back(Site);
        Checks.push_back(Check);
        if (Ok) {
          Consistent.push_back(Site);
          ConsistentChecks.push_back(Check);
        }
      }
    if (!W.Other.empty()) {
      M.Check = "not a barrier wait: " + W.Other;
    } else if (!W.Named && !Array) {
      std::string Names;
      for (const BarrierArray &B : P.Barriers)
        Names += (Names.empty() ? "" : ", ") + B.Name;
      M.Check = "the protocol has no barrier named '" + W.Barrier + "' (its barriers: " +
                (Names.empty() ? "none" : Names) + ")";
    } else if (!Consistent.empty()) {
      M.Waits = Consistent;
      M.Check = ConsistentChecks.front();
    } else if (!All.empty()) {
      M.Waits = All;
      M.Contradicts = AnyDecided && !W.Named;
      if (!Checks.empty())
        M.Check = Checks.front();
    } else if (M.Roles.empty()) {
      M.Check = "no protocol role runs warps of '" + W.Role + "'";
    } else {
      M.Check = "the protocol has no such wait in role " + P.Roles[M.Roles.front()].Name;
    }
    A.Matches.push_back(std::move(M));
  }

  // Who can end each wait, and where they are.
  for (unsigned G = 0; G < S.Stuck.size(); ++G) {
    const StuckWait &W = S.Stuck[G];
    std::optional<unsigned> Array = W.Named ? std::nullopt : barrierArray(P, W.Barrier);
    if (!W.Named && !Array)
      continue;
    for (unsigned R = 0; R < P.Roles.size(); ++R) {
      WaitEdge E;
      E.From = G;
      E.Role = R;
      for (const EventSite &Site : Sites[R]) {
        const Event &Ev = P.Events[Site.Event];
        bool Counts = W.Named ? Ev.Kind == EventKind::NamedBarrier &&
                                    namedIdMatchesAnyThread(P, R, Ev, W.NamedId, S.Params)
                              : completes(Ev) && Ev.Barrier.Array == *Array &&
                                    slotMayBe(Ev, W.Slot);
        if (Counts)
          E.Completions.push_back(Site);
      }
      if (E.Completions.empty())
        continue;
      const std::vector<unsigned> &Mine = A.Matches[G].Roles;
      if (std::find(Mine.begin(), Mine.end(), R) != Mine.end()) {
        E.State = PeerState::Self;
        E.TraceRole = W.Role;
      } else {
        // Every trace role that runs it (H3's consumer0 and consumer1 are one protocol role).
        for (const std::string &Name : S.Roles) {
          const std::vector<unsigned> &Roles = RoleMap[Name];
          if (std::find(Roles.begin(), Roles.end(), R) != Roles.end())
            E.TraceRole += (E.TraceRole.empty() ? "" : ", ") + Name;
        }
        for (unsigned H = 0; H < S.Stuck.size(); ++H)
          if (H != G && std::count(A.Matches[H].Roles.begin(), A.Matches[H].Roles.end(), R))
            E.To.push_back(H);
        // A role in the trace but in no wait is silent: finished, or blocked where nothing
        // is instrumented.
        if (!E.To.empty())
          E.State = PeerState::Stuck;
        else
          E.State = E.TraceRole.empty() ? PeerState::Absent : PeerState::Silent;
      }
      if (E.State == PeerState::Stuck) {
        // Every completion has one of the role's stuck waits before it in its sequence, so
        // the role cannot reach it without getting past that wait (unrolled copies of a loop
        // each have their own wait in front).
        bool Known = false, After = true;
        for (unsigned H : E.To)
          Known |= !A.Matches[H].Waits.empty();
        for (const EventSite &C : E.Completions) {
          bool Behind = false;
          for (unsigned H : E.To)
            for (const EventSite &WaitSite : A.Matches[H].Waits)
              Behind |= WaitSite.Order < C.Order;
          After &= Behind;
        }
        if (Known)
          E.CompletesAfterItsWait = After;
      }
      A.Edges.push_back(std::move(E));
    }
  }

  A.Cycle = findCycle(S.Stuck.size(), A.Edges);
  A.Why = diagnose(P, S, A, Sites);
  return A;
}

bool slotMayBe(const Event &E, unsigned Slot) {
  std::optional<uint64_t> C = E.Barrier.Slot.constant();
  return !C || *C == Slot;
}

std::vector<unsigned> findCycle(size_t Nodes, const std::vector<WaitEdge> &Edges) {
  std::vector<std::vector<unsigned>> Next(Nodes);
  for (const WaitEdge &E : Edges)
    if (E.State == PeerState::Stuck)
      for (unsigned H : E.To)
        if (std::find(Next[E.From].begin(), Next[E.From].end(), H) == Next[E.From].end())
          Next[E.From].push_back(H);
  // Depth-first search with colors; the first back edge closes the cycle.
  std::vector<int> Color(Nodes, 0);
  std::vector<unsigned> Path, Cycle;
  std::function<bool(unsigned)> Visit = [&](unsigned N) {
    Color[N] = 1;
    Path.push_back(N);
    for (unsigned M : Next[N]) {
      if (Color[M] == 1) {
        auto It = std::find(Path.begin(), Path.end(), M);
        Cycle.assign(It, Path.end());
        return true;
      }
      if (Color[M] == 0 && Visit(M))
        return true;
    }
    Path.pop_back();
    Color[N] = 2;
    return false;
  };
  for (unsigned N = 0; N < Nodes; ++N)
    if (Color[N] == 0 && Visit(N))
      break;
  return Cycle;
}

std::optional<unsigned> namedIdAt(const Protocol &P, const Event &E, unsigned Tid,
                                  const std::map<std::string, uint64_t> &Params) {
  if (std::optional<uint64_t> C = E.Named.Id.constant())
    return static_cast<unsigned>(*C);
  std::optional<uint64_t> V = evaluateFor(P, E.Named.Id.E, {}, Params, Tid);
  if (!V)
    return std::nullopt;
  return static_cast<unsigned>(*V);
}

bool namedIdMatches(const Protocol &P, const Event &E, unsigned Id,
                    const std::vector<unsigned> &Warps,
                    const std::map<std::string, uint64_t> &Params) {
  for (unsigned W : Warps) {
    std::optional<unsigned> V = namedIdAt(P, E, W * 32, Params);
    if (!V || *V == Id)
      return true; // an id we cannot evaluate may be this one
  }
  return Warps.empty();
}

bool namedIdMatchesAnyThread(const Protocol &P, unsigned Role, const Event &E, unsigned Id,
                             const std::map<std::string, uint64_t> &Params) {
  const ThreadSet &T = E.Threads.isUnknown() ? P.Roles[Role].Threads : E.Threads;
  const llvm::BitVector &Members = T.members();
  bool Any = false;
  for (unsigned Tid = 0; Tid < Members.size(); Tid += 32) {
    if (!Members.test(Tid))
      continue;
    Any = true;
    std::optional<unsigned> V = namedIdAt(P, E, Tid, Params);
    if (!V || *V == Id)
      return true;
  }
  if (!Any) {
    std::optional<unsigned> V = E.Named.Id.constant()
                                    ? std::optional<unsigned>(*E.Named.Id.constant())
                                    : std::nullopt;
    return !V || *V == Id;
  }
  return false;
}

} // namespace analyzer
} // namespace wsv
