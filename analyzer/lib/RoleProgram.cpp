//===- RoleProgram.cpp - lowering a protocol into programs of sync steps ----------===//
#include "wsv/analyzer/RoleProgram.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/Roles.h"

#include "ProtocolBuild.h"

#include <algorithm>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

const char *wsv::analyzer::toString(StepKind K) {
  switch (K) {
  case StepKind::Init: return "init";
  case StepKind::Arrive: return "arrive";
  case StepKind::ExpectTx: return "expect_tx";
  case StepKind::Wait: return "wait";
  case StepKind::Probe: return "try_wait";
  case StepKind::AsyncLoad: return "async-load";
  case StepKind::MmaIssue: return "mma";
  case StepKind::MmaCommit: return "tcgen05.commit";
  case StepKind::GroupCommit: return "commit_group";
  case StepKind::GroupWait: return "wait_group";
  case StepKind::AsyncStore: return "async-store";
  case StepKind::NamedSync: return "bar.sync";
  case StepKind::NamedArrive: return "bar.arrive";
  case StepKind::ClusterArrive: return "barrier.cluster.arrive";
  case StepKind::ClusterWait: return "barrier.cluster.wait";
  case StepKind::Read: return "read";
  case StepKind::Write: return "write";
  case StepKind::ProxyFence: return "fence.proxy.async";
  case StepKind::AccumulatorRead: return "accumulator-read";
  case StepKind::TmemRead: return "tcgen05.ld";
  case StepKind::TmemWait: return "tcgen05.wait::ld";
  case StepKind::TmemWrite: return "tcgen05.st";
  case StepKind::TmemWriteWait: return "tcgen05.wait::st";
  case StepKind::Inval: return "mbarrier.inval";
  case StepKind::BarrierStore: return "store into a barrier";
  case StepKind::InitFence: return "fence.mbarrier_init";
  case StepKind::Setmaxnreg: return "setmaxnreg";
  case StepKind::Alloc: return "tcgen05.alloc";
  case StepKind::Dealloc: return "tcgen05.dealloc";
  case StepKind::Exit: return "exit";
  case StepKind::Diverge: return "loop forever";
  case StepKind::Unknown: return "unknown";
  }
  return "unknown";
}

std::vector<unsigned> wsv::analyzer::setmaxnregPartners(const Protocol &P, const Event &E) {
  std::optional<uint64_t> Count = E.RegCount.constant();
  if (E.Kind != EventKind::Setmaxnreg || !Count || E.Threads.isUnknown())
    return {};
  const unsigned Unit = 4 * WarpSize;
  llvm::BitVector Mine = reachingThreads(E.Threads), All = Mine;
  // The threads of the warpgroups it touches: the others' setmaxnreg are not partners.
  llvm::BitVector Groups(Mine.size());
  for (unsigned First = 0; First < Mine.size(); First += Unit) {
    unsigned End = std::min<unsigned>(First + Unit, Mine.size());
    if (Mine.find_first_in(First, End) != -1)
      Groups.set(First, End);
  }
  std::vector<unsigned> Lines;
  for (const Event &X : P.Events) {
    if (&X == &E || X.Kind != EventKind::Setmaxnreg || X.Increase != E.Increase ||
        X.RegCount.constant() != Count || X.Threads.isUnknown())
      continue;
    llvm::BitVector Theirs = reachingThreads(X.Threads);
    Theirs.resize(Mine.size());
    Theirs &= Groups;
    if (Theirs.none() || Theirs.anyCommon(Mine))
      continue; // another warpgroup's, or the same warps again in another round
    All |= Theirs;
    if (!llvm::is_contained(Lines, X.Where.PtxLine))
      Lines.push_back(X.Where.PtxLine);
  }
  for (unsigned First = 0; First < Mine.size(); First += Unit) {
    unsigned End = std::min<unsigned>(First + Unit, Mine.size());
    if (Groups.test(First) && All.find_first_unset_in(First, End) != -1)
      return {};
  }
  std::sort(Lines.begin(), Lines.end());
  return Lines;
}

unsigned wsv::analyzer::collectiveUnit(const Event &E) {
  switch (E.Kind) {
  case EventKind::Alloc:
  case EventKind::Dealloc:
    return WarpSize;
  case EventKind::Setmaxnreg:
    return 4 * WarpSize;
  case EventKind::Mma:
  case EventKind::GroupCommit:
  case EventKind::GroupWait:
    return E.Sync == models::SyncKind::WgmmaMmaAsync ||
                   E.Sync == models::SyncKind::WgmmaCommitGroup ||
                   E.Sync == models::SyncKind::WgmmaWaitGroup
               ? 4 * WarpSize
               : 0;
  default:
    return 0;
  }
}

std::string wsv::analyzer::partialCollective(const Event &E, unsigned Unit) {
  if (!Unit || E.Threads.isUnknown() || !E.Threads.elected().empty())
    return "";
  llvm::BitVector Reach = reachingThreads(E.Threads);
  for (unsigned First = 0; First < Reach.size(); First += Unit) {
    unsigned In = 0;
    for (unsigned T = First; T < std::min<unsigned>(First + Unit, Reach.size()); ++T)
      In += Reach.test(T);
    if (In && In < Unit)
      return E.Opcode + " is " + (Unit == WarpSize ? "warp" : "warpgroup") +
             "-wide (.sync.aligned), but only " + std::to_string(In) + " of the " +
             std::to_string(Unit) + " threads of " + (Unit == WarpSize ? "warp " : "warpgroup ") +
             std::to_string(First / Unit) + " run it (undefined behaviour)";
  }
  return "";
}

const char *wsv::analyzer::toString(AsyncQueue Q) {
  switch (Q) {
  case AsyncQueue::None: return "none";
  case AsyncQueue::Wgmma: return "wgmma";
  case AsyncQueue::Tcgen05: return "tcgen05";
  case AsyncQueue::Bulk: return "bulk";
  case AsyncQueue::CpAsync: return "cp.async";
  }
  return "none";
}

const char *wsv::analyzer::toString(Placement P) {
  switch (P) {
  case Placement::Prologue: return "prologue";
  case Placement::Role: return "role";
  case Placement::Epilogue: return "epilogue";
  }
  return "role";
}

std::vector<std::string> RolePrograms::unknowns() const {
  std::vector<std::string> Out;
  for (const RoleProgram &R : Programs) {
    for (const RoleStep &S : R.Steps)
      if (!S.Unknown.empty())
        Out.push_back(R.Name + ": " + S.Unknown);
    for (const RoleLoop &L : R.Loops)
      if (!L.Unknown.empty())
        Out.push_back(R.Name + ": " + L.Unknown);
  }
  return Out;
}

/// Threads of S among Mask (one agent's threads): members, elected lanes (one per warp
/// with a thread in Mask), and threads under CTA-uniform conditions.
ThreadCount wsv::analyzer::countIn(const ThreadSet &S, const llvm::BitVector &Mask) {
  ThreadCount C;
  llvm::BitVector Both = S.members();
  Both.resize(Mask.size());
  Both &= Mask;
  C.Fixed = Both.count();
  for (const ThreadSet::ElectedGroup &G : S.Elected) {
    unsigned Warps = 0;
    for (unsigned W : G.Warps) {
      bool InMask = false;
      for (unsigned T = W * WarpSize; T < (W + 1) * WarpSize && T < Mask.size(); ++T)
        InMask |= Mask.test(T);
      Warps += InMask;
    }
    if (G.Excluded)
      C.Fixed -= std::min(C.Fixed, Warps); // members hold the whole warps
    else if (G.Condition)
      C.Conditional.push_back({G.Condition, Warps});
    else
      C.Fixed += Warps;
  }
  for (const ThreadSet::ConditionalGroup &G : S.Conditional) {
    llvm::BitVector In = G.Threads;
    In.resize(Mask.size());
    In &= Mask;
    if (unsigned N = In.count())
      C.Conditional.push_back({G.Condition, N});
  }
  return C;
}

namespace {

llvm::BitVector range(unsigned Size, unsigned First, unsigned Length) {
  llvm::BitVector M(Size);
  M.set(std::min(First, Size), std::min(First + Length, Size));
  return M;
}

bool sameCount(const ThreadCount &A, const ThreadCount &B) {
  return A.Fixed == B.Fixed && A.Conditional == B.Conditional;
}

bool executes(const ThreadCount &C) { return C.Fixed || !C.Conditional.empty(); }

class Lowering {
public:
  explicit Lowering(const Protocol &P) : P(P) {}

  RolePrograms run() {
    // The probes' instructions, then each wait's skip condition (found once: lowering a
    // wait reads it back) and the probes those read.
    if (P.Analysis)
      for (const Event &E : P.Events)
        if (E.Kind == EventKind::Probe)
          ProbeSites.insert(&P.Analysis->cfg().inst(E.Inst));
    ProxyOrdered = proxyOrderedBuffers();
    Deallocates = llvm::any_of(P.Events, [](const Event &E) { return E.Kind == EventKind::Dealloc; });
    WritesTmem = llvm::any_of(P.Events, [](const Event &E) {
      return E.Kind == EventKind::Mma && E.Sync == models::SyncKind::Tcgen05Mma;
    });
    Skips.resize(P.Events.size());
    for (unsigned I = 0; I < P.Events.size(); ++I)
      if (P.Events[I].Kind == EventKind::Wait && (Skips[I] = skipOf(P.Events[I])))
        for (const Expr *V : {Skips[I]->Entry, Skips[I]->Latch})
          V->mentions([&](const Expr *L) {
            if (isProbeResult(L))
              UsedProbes.insert(L->site());
            return false;
          });
    RolePrograms Out;
    Out.P = &P;
    Out.ClusterSize = std::max(1u, P.Launch.ClusterSize);
    Out.BlockThreads = P.Launch.threads();
    for (const ProtocolLoop &L : P.Loops)
      Out.TripConditions.push_back(L.TripConditions);
    Out.Programs.push_back(shared("prologue", Placement::Prologue, P.Prologue));
    for (unsigned R = 0; R < P.Roles.size(); ++R)
      Out.Programs.push_back(role(R));
    Out.Programs.push_back(shared("epilogue", Placement::Epilogue, P.Epilogue));
    return Out;
  }

private:
  RoleProgram shared(const char *Name, Placement Place, const std::vector<ProtocolItem> &Items) {
    RoleProgram R;
    R.Name = Name;
    R.Place = Place;
    R.CopyThreads = P.Launch.threads();
    Mask = range(P.Launch.threads(), 0, P.Launch.threads());
    R.Body = lowerItems(R, Items);
    return R;
  }

  RoleProgram role(unsigned Index) {
    const Role &Ro = P.Roles[Index];
    RoleProgram R;
    R.Name = Ro.Name;
    R.Role = Index;
    R.When = Ro.When.E;
    const llvm::BitVector &M = Ro.Threads.members();
    int First = M.find_first();
    if (First < 0) {
      // No thread for sure (an unknown or conditional set): one copy over the whole CTA, so
      // that every step's own thread set decides who executes it.
      R.CopyThreads = P.Launch.threads();
    } else {
      R.FirstThread = static_cast<unsigned>(First);
      R.CopyThreads = M.count();
      chooseCopies(R, Ro);
    }
    if (First < 0)
      Mask = range(P.Launch.threads(), 0, P.Launch.threads());
    else if (R.Copies > 1)
      Mask = range(M.size(), R.FirstThread, R.CopyThreads);
    else
      Mask = M;
    R.Body = lowerItems(R, Ro.Body);
    return R;
  }

  /// A wait that a probe may let the role skip: CUTLASS's peek, carried in a flag from the
  /// end of one k-tile (or before the loop) to the wait of the next. The wait's condition
  /// has a conjunct that holds exactly where a loop-header phi is zero, and what flows into
  /// the phi reads probe results and values the instance knows.
  struct Skip {
    const Expr *Rest = nullptr; ///< the condition without that conjunct (nullptr: always)
    const Expr *Entry = nullptr, *Latch = nullptr;
    LoopId Loop = NoIndex;
  };

  bool isProbeResult(const Expr *L) const {
    return L->is(ExprKind::Opaque) && ProbeSites.count(L->site());
  }

  std::optional<Skip> skipOf(const Event &E) const {
    if (!E.When.known() || !P.Analysis)
      return std::nullopt;
    ExprContext &Ctx = P.Analysis->context();
    const ValueAnalysis &VA = P.Analysis->values();
    llvm::SmallVector<const Expr *, 4> Parts;
    conjuncts(E.When.E, Parts);
    std::optional<Skip> Found;
    const Expr *Rest = nullptr;
    for (const Expr *C : Parts) {
      const Expr *Phi = nullptr;
      unsigned Phis = 0;
      C->mentions([&](const Expr *L) {
        if (L->is(ExprKind::Phi) && L != Phi) {
          Phi = L;
          ++Phis;
        }
        return false;
      });
      const PhiInfo *PI = Phis == 1 ? VA.phiInfo(Phi) : nullptr;
      if (Found || !PI || PI->Loop == NoIndex || PI->Incoming.size() != 2) {
        Rest = Rest ? Ctx.logicalAnd(Rest, C) : C;
        continue;
      }
      const Expr *Zero = Ctx.substitute(C, Phi, Ctx.constant(0, Phi->width()));
      const Expr *One = Ctx.substitute(C, Phi, Ctx.constant(1, Phi->width()));
      if (!Zero->isConstant() || !Zero->payload() || !One->isConstant() || One->payload())
        return std::nullopt; // the phi decides the wait some other way
      Skip K;
      K.Loop = PI->Loop;
      K.Entry = VA.closedForm(PI->Incoming[0].second);
      const Expr *Iter = Ctx.iterationVar(PI->Loop);
      K.Latch = Ctx.substitute(VA.closedForm(PI->Incoming[1].second), Iter,
                               Ctx.sub(Iter, Ctx.constant(1, Iter->width())));
      bool ReadsProbe = false, Other = false;
      for (const Expr *V : {K.Entry, K.Latch})
        V->mentions([&](const Expr *L) {
          if (isProbeResult(L))
            ReadsProbe = true;
          else if (L->is(ExprKind::Phi) || L->is(ExprKind::Opaque) || L->is(ExprKind::Load) ||
                   L->is(ExprKind::Elect) || isThreadDependent(L))
            Other = true;
          return false;
        });
      if (!ReadsProbe || Other)
        return std::nullopt;
      Found = K;
    }
    if (Found)
      Found->Rest = Rest;
    return Found;
  }

  /// Values whose differences between the role's threads make it several agents.
  template <typename Fn> void forEachSplittingValue(const Role &Ro, Fn &&F) const {
    P.forEachEvent(Ro.Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
      for (const ProtocolValue *V : {&E.Named.Id, &E.Named.Threads, &E.Barrier.Slot, &E.Count,
                                     &E.Barrier.PeerRank, &E.When})
        if (V->known() && isThreadDependent(V->E))
          F(V->E);
    });
  }

  /// Whether every splitting value is the same at the first and the last thread of each
  /// Unit-thread copy (as instantiation checks it), with %tid.x the only thread index
  /// substituted; unknown analyses count as the same.
  bool uniformWithin(const Role &Ro, unsigned First, unsigned Count, unsigned Unit) const {
    if (!P.Analysis)
      return true;
    ExprContext &Ctx = P.Analysis->context();
    const Expr *Tid = Ctx.specialRegister(SpecialRegister::TidX);
    bool Same = true;
    forEachSplittingValue(Ro, [&](const Expr *E) {
      for (unsigned T = First; T < First + Count && Same; T += Unit) {
        const Expr *A = Ctx.substitute(E, Tid, Ctx.constant(T, Tid->width()));
        const Expr *B = Ctx.substitute(E, Tid, Ctx.constant(T + Unit - 1, Tid->width()));
        Same = A == B;
      }
    });
    return Same;
  }

  /// One copy per warpgroup, or per warp, when the role is whole contiguous units, a value
  /// differs between them but not inside one, and every event splits evenly across them;
  /// else one copy. Warpgroups are tried first (fewer agents); warps are for roles whose
  /// warps each use a barrier slot of their own (B5's MMA warps).
  void chooseCopies(RoleProgram &R, const Role &Ro) {
    constexpr unsigned WarpgroupThreads = 128;
    const llvm::BitVector &M = Ro.Threads.members();
    unsigned Count = M.count();
    for (unsigned T = R.FirstThread; T < R.FirstThread + Count; ++T)
      if (T >= M.size() || !M.test(T))
        return;
    // Units in lockstep are one agent unless a value differs between them (a named barrier
    // id of %tid.x / 128 + 1): fewer agents, far fewer interleavings to explore.
    bool Differs = false;
    forEachSplittingValue(Ro, [&](const Expr *) { Differs = true; });
    if (!Differs)
      return;
    for (unsigned Unit : {WarpgroupThreads, WarpSize}) {
      if (R.FirstThread % Unit || Count % Unit || Count == Unit)
        continue;
      // Warpgroups as before, whatever a value does inside one (instantiation then says
      // so); warps only where they make every value uniform.
      if (Unit == WarpSize && !uniformWithin(Ro, R.FirstThread, Count, Unit))
        return;
      if (Unit == WarpgroupThreads && !uniformWithin(Ro, R.FirstThread, Count, Unit) &&
          uniformWithin(Ro, R.FirstThread, Count, WarpSize))
        continue;
      unsigned Copies = Count / Unit;
      bool Even = true;
      P.forEachEvent(Ro.Body, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *>) {
        if (E.Threads.isUnknown()) {
          Even = false;
          return;
        }
        ThreadCount C0 = countIn(E.Threads, range(M.size(), R.FirstThread, Unit));
        for (unsigned C = 1; C < Copies; ++C)
          if (!sameCount(C0, countIn(E.Threads, range(M.size(), R.FirstThread + C * Unit,
                                                      Unit))))
            Even = false;
      });
      if (!Even)
        return;
      R.Copies = Copies;
      R.CopyThreads = Unit;
      R.CopyStride = Unit;
      return;
    }
  }

  std::vector<RoleItem> lowerItems(RoleProgram &R, const std::vector<ProtocolItem> &Items) {
    std::vector<RoleItem> Out;
    for (const ProtocolItem &I : Items) {
      if (I.isLoop()) {
        const ProtocolLoop &L = P.loop(I);
        RoleLoop RL;
        RL.ProtocolLoop = I.Index;
        RL.Loop = L.Loop;
        RL.Trip = L.Trip.E;
        RL.Forever = L.Forever;
        RL.When = L.When.E;
        if (!L.Trip.known())
          RL.Unknown = "trip count of loop " + P.loopVar(L.Loop) + " (ptx line " +
                       std::to_string(L.Where.PtxLine) + "): " +
                       (L.Trip.Unknown.empty() ? "not found" : L.Trip.Unknown);
        else if (!L.When.known() && !L.When.absent())
          RL.Unknown = "entry condition of loop " + P.loopVar(L.Loop) + ": " + L.When.Unknown;
        RL.Body = lowerItems(R, L.Body);
        R.Loops.push_back(std::move(RL));
        Out.push_back({true, static_cast<unsigned>(R.Loops.size() - 1)});
        continue;
      }
      std::optional<RoleStep> S = lowerEvent(I.Index);
      if (!S)
        continue;
      R.Steps.push_back(std::move(*S));
      Out.push_back({false, static_cast<unsigned>(R.Steps.size() - 1)});
    }
    return Out;
  }

  /// Records an unknown operand; returns the expression (nullptr when unknown).
  const Expr *value(const ProtocolValue &V, const char *What, RoleStep &S) {
    if (V.known())
      return V.E;
    if (S.Unknown.empty())
      S.Unknown = std::string(What) + ": " + (V.Unknown.empty() ? "not found" : V.Unknown);
    return nullptr;
  }

  void barrier(const Event &E, RoleStep &S) {
    if (!E.Barrier.resolved()) {
      if (S.Unknown.empty())
        S.Unknown = "barrier operand: " +
                    (E.Barrier.Unresolved.empty() ? std::string("not found")
                                                  : E.Barrier.Unresolved);
      return;
    }
    S.Barrier.Array = E.Barrier.Array;
    S.Barrier.Slot = value(E.Barrier.Slot, "barrier slot", S);
    if (E.Barrier.PeerRank.known())
      S.Barrier.PeerRank = E.Barrier.PeerRank.E;
    else if (!E.Barrier.PeerRank.absent() && S.Unknown.empty())
      S.Unknown = "peer CTA rank: " + E.Barrier.PeerRank.Unknown;
  }

  /// The barrier and the phase parity a wait or a probe looks at (What names it).
  void phaseOperands(const Event &E, RoleStep &S, const std::string &What) {
    barrier(E, S);
    if (!E.Token.absent() && S.Unknown.empty())
      S.Unknown = "a " + What + " on a state token is not modeled";
    else
      S.Parity = value(E.Parity, (What + " parity").c_str(), S);
  }

  /// A buffer operand; nothing when the access is not to a buffer that async copies use.
  void buffer(const BufferRef &B, std::vector<SlotExpr> &Out, RoleStep &S) {
    if (B.resolved()) {
      SlotExpr X;
      X.Array = B.Buffer;
      X.PerThread = !B.InSlot.absent() && (!B.InSlot.known() || isThreadDependent(B.InSlot.E));
      X.Slot = value(B.Slot, "buffer slot", S);
      Out.push_back(X);
      return;
    }
    if (B.Address) {
      // Matched against the buffers when the instance gives the loop variables values.
      SlotExpr X;
      X.Address = B.Address;
      Out.push_back(X);
    }
  }

  static AsyncQueue queueOf(const Event &E) {
    if (!E.Sync)
      return AsyncQueue::None;
    switch (*E.Sync) {
    case models::SyncKind::WgmmaMmaAsync:
    case models::SyncKind::WgmmaCommitGroup:
    case models::SyncKind::WgmmaWaitGroup:
      return AsyncQueue::Wgmma;
    case models::SyncKind::Tcgen05Mma:
      return AsyncQueue::Tcgen05;
    case models::SyncKind::BulkCommitGroup:
    case models::SyncKind::BulkWaitGroup:
      return AsyncQueue::Bulk;
    case models::SyncKind::CpAsync:
    case models::SyncKind::CpAsyncCommitGroup:
    case models::SyncKind::CpAsyncWaitGroup:
    case models::SyncKind::CpAsyncWaitAll:
      return AsyncQueue::CpAsync;
    default:
      return AsyncQueue::None;
    }
  }

  std::optional<RoleStep> lowerEvent(unsigned Index) {
    const Event &E = P.Events[Index];
    RoleStep S;
    S.Event = Index;
    if (E.Threads.isUnknown())
      S.Unknown = "threads of " + E.Opcode + ": " + E.Threads.reason();
    else
      S.Threads = countIn(E.Threads, Mask);
    if (E.When.known())
      S.When = E.When.E;
    else if (!E.When.absent())
      S.Unknown = "condition of " + E.Opcode + ": " + E.When.Unknown;
    switch (E.Kind) {
    case EventKind::Init:
      S.Kind = StepKind::Init;
      barrier(E, S);
      S.Count = value(E.Count, "init count", S);
      break;
    case EventKind::Arrive:
    case EventKind::ArriveExpectTx:
      S.Kind = StepKind::Arrive;
      barrier(E, S);
      S.Count = E.Count.absent() ? nullptr : value(E.Count, "arrival count", S);
      if (E.Kind == EventKind::ArriveExpectTx)
        S.TxBytes = value(E.TxBytes, "expect_tx bytes", S);
      if (E.Sync == models::SyncKind::MbarrierArriveDrop ||
          E.Sync == models::SyncKind::MbarrierArriveDropExpectTx)
        S.Unknown = "mbarrier.arrive_drop is not modeled";
      break;
    case EventKind::ExpectTx:
      S.Kind = StepKind::ExpectTx;
      barrier(E, S);
      S.TxBytes = value(E.TxBytes, "expect_tx bytes", S);
      break;
    case EventKind::Wait:
      S.Kind = StepKind::Wait;
      phaseOperands(E, S, "wait");
      if (const std::optional<Skip> &K = Skips[Index]) {
        S.When = K->Rest;
        S.SkipEntry = K->Entry;
        S.SkipLatch = K->Latch;
        S.SkipLoop = K->Loop;
      }
      break;
    case EventKind::Probe:
      if (!P.Analysis || !UsedProbes.count(&P.Analysis->cfg().inst(E.Inst)))
        return std::nullopt; // its result decides nothing the model runs
      S.Kind = StepKind::Probe;
      phaseOperands(E, S, "probe");
      break;
    case EventKind::AsyncLoad:
    case EventKind::TryCancel:
      S.Kind = StepKind::AsyncLoad;
      barrier(E, S);
      S.Bytes = value(E.Bytes, "copy bytes", S);
      if (E.Multicast)
        S.CtaMask = value(E.CtaMask, "multicast CTA mask", S);
      buffer(E.Dst, S.Writes, S);
      break;
    case EventKind::AsyncStore:
      S.Kind = StepKind::AsyncStore;
      S.Queue = AsyncQueue::Bulk;
      buffer(E.Src, S.Reads, S);
      break;
    case EventKind::Mma:
      S.Kind = StepKind::MmaIssue;
      S.Queue = queueOf(E);
      for (const BufferRef &B : E.Reads)
        buffer(B, S.Reads, S);
      tmem(E, S);
      break;
    case EventKind::MmaCommit:
      S.Kind = StepKind::MmaCommit;
      S.Queue = AsyncQueue::Tcgen05;
      barrier(E, S);
      if (E.Multicast)
        S.CtaMask = value(E.CtaMask, "multicast CTA mask", S);
      break;
    case EventKind::GroupCommit:
    case EventKind::GroupWait:
      S.Kind = E.Kind == EventKind::GroupCommit ? StepKind::GroupCommit : StepKind::GroupWait;
      S.Queue = queueOf(E);
      S.ReadOnly = E.ReadOnly;
      if (S.Queue == AsyncQueue::None)
        S.Unknown = E.Opcode + " is not modeled";
      else if (E.Sync == models::SyncKind::CpAsyncWaitAll)
        S.WaitAll = true; // every cp.async of the thread, committed or not
      else if (S.Kind == StepKind::GroupWait)
        S.WaitN = value(E.WaitN, "wait_group count", S);
      break;
    case EventKind::NamedBarrier:
      S.Kind = E.Sync == models::SyncKind::BarrierArrive ? StepKind::NamedArrive
                                                         : StepKind::NamedSync;
      S.NamedId = value(E.Named.Id, "named barrier id", S);
      if (!E.Named.Threads.absent())
        S.NamedThreads = value(E.Named.Threads, "named barrier thread count", S);
      break;
    case EventKind::ClusterArrive:
      S.Kind = StepKind::ClusterArrive;
      break;
    case EventKind::ClusterWait:
      S.Kind = StepKind::ClusterWait;
      break;
    case EventKind::SmemRead:
      S.Kind = StepKind::Read;
      if (!E.Src.resolved())
        return std::nullopt; // not a buffer async copies touch
      buffer(E.Src, S.Reads, S);
      break;
    case EventKind::SmemWrite:
      S.Kind = StepKind::Write;
      if (!E.Dst.resolved())
        return barrierStore(E, S);
      buffer(E.Dst, S.Writes, S);
      break;
    case EventKind::Inval:
      S.Kind = StepKind::Inval;
      barrier(E, S);
      break;
    case EventKind::AccumulatorRead:
      S.Kind = StepKind::AccumulatorRead;
      break;
    case EventKind::TmemLoad:
      // A dealloc can free what it reads, a tcgen05.mma may still write it: without either
      // the step would only add states.
      if (!Deallocates && !WritesTmem)
        return std::nullopt;
      S.Kind = StepKind::TmemRead;
      tmem(E, S);
      break;
    case EventKind::TmemWait:
      // wait::ld ends the reads a tcgen05.mma may not overwrite, wait::st the writes it may
      // not overlap (without MMAs neither matters).
      if (!WritesTmem)
        return std::nullopt;
      S.Kind = E.Detail == "st" ? StepKind::TmemWriteWait : StepKind::TmemWait;
      break;
    case EventKind::TmemStore:
      // tcgen05.st, where some MMA may overlap it; tcgen05.cp and shift are not modeled.
      if (!WritesTmem || E.Detail != "st")
        return std::nullopt;
      S.Kind = StepKind::TmemWrite;
      tmem(E, S);
      break;
    case EventKind::Alloc:
    case EventKind::Dealloc:
      S.Kind = E.Kind == EventKind::Alloc ? StepKind::Alloc : StepKind::Dealloc;
      S.Columns = value(E.Columns, "TMEM columns", S);
      break;
    case EventKind::Exit:
      S.Kind = StepKind::Exit;
      break;
    case EventKind::AsyncCopy:
      // sm_80 cp.async: a copy in flight in the thread's cp.async groups until a
      // cp.async.wait_group retires it (only the thread's own wait observes it).
      if (!E.Dst.resolved())
        return std::nullopt; // not a buffer the model tracks
      S.Kind = StepKind::AsyncLoad;
      S.Queue = AsyncQueue::CpAsync;
      buffer(E.Dst, S.Writes, S);
      break;
    case EventKind::CompleteTx:
    case EventKind::CpAsyncArrive:
      S.Kind = StepKind::Unknown;
      S.Unknown = E.Opcode + " is not modeled";
      break;
    case EventKind::Unknown:
      S.Kind = StepKind::Unknown;
      S.Unknown = E.Opcode + ": " + (E.Reason.empty() ? "not modeled" : E.Reason);
      break;
    case EventKind::Fence:
      // Only the proxy fences over shared memory matter, and only where some buffer is both
      // written by st.shared / stmatrix and read by the async proxy: elsewhere the step
      // would only add states.
      if (ProxyOrdered && E.Sync == models::SyncKind::FenceProxyAsync &&
          E.Opcode.find(".global") == std::string::npos) {
        S.Kind = StepKind::ProxyFence;
        break;
      }
      if (E.Sync == models::SyncKind::FenceMbarrierInit) {
        S.Kind = StepKind::InitFence;
        break;
      }
      return std::nullopt;
    case EventKind::Setmaxnreg:
      // A step only where part of a warpgroup runs it (a violation when reached): it
      // changes nothing the model tracks.
      if (partialCollective(E, 4 * WarpSize).empty() || !setmaxnregPartners(P, E).empty())
        return std::nullopt;
      S.Kind = StepKind::Setmaxnreg;
      break;
    case EventKind::WgmmaFence:
    case EventKind::WarpSync:
    case EventKind::Relinquish:
      // They order memory or registers, not synchronization state (see the header).
      return std::nullopt;
    }
    if (!E.Threads.isUnknown() && !executes(S.Threads))
      return std::nullopt; // nobody of this program runs it
    return S;
  }

  /// The TMEM columns an MMA writes or a tcgen05.ld reads (unknown: every column).
  static void tmem(const Event &E, RoleStep &S) {
    S.TmemColumn = E.TmemColumn.E;
    S.TmemColumns = E.TmemColumns;
    S.TmemPair = E.Kind == EventKind::Mma && E.CtaGroup == 2;
  }

  /// A store outside every buffer that lands in a barrier's bytes (its memory reused as a
  /// flag or staging), as a BarrierStore step; otherwise nothing the model runs.
  std::optional<RoleStep> barrierStore(const Event &E, RoleStep &S) const {
    for (unsigned A = 0; A < P.Barriers.size(); ++A) {
      const BarrierArray &Array = P.Barriers[A];
      std::optional<int64_t> Off = P.offsetIntoBarrier(A, E.Dst.Address);
      if (!Off || *Off < 0 || uint64_t(*Off) >= Array.Slots * Array.Stride ||
          uint64_t(*Off) % Array.Stride >= 8)
        continue;
      S.Kind = StepKind::BarrierStore;
      S.Barrier.Array = A;
      S.Barrier.Slot = P.Analysis->context().constant(uint64_t(*Off) / Array.Stride, 32);
      return S;
    }
    return std::nullopt;
  }

  /// Whether a buffer is written through the generic proxy and read through the async one.
  bool proxyOrderedBuffers() const {
    std::set<unsigned> Written;
    for (const Event &E : P.Events)
      if (E.Kind == EventKind::SmemWrite && E.Dst.resolved())
        Written.insert(E.Dst.Buffer);
    for (const Event &E : P.Events) {
      if (E.Kind == EventKind::AsyncStore && E.Src.resolved() && Written.count(E.Src.Buffer))
        return true;
      if (E.Kind == EventKind::Mma)
        for (const BufferRef &R : E.Reads)
          if (R.resolved() && Written.count(R.Buffer))
            return true;
    }
    return false;
  }

  const Protocol &P;
  bool ProxyOrdered = false, Deallocates = false, WritesTmem = false;
  /// The probes (their instructions) whose results a wait's skip condition reads.
  std::set<const void *> UsedProbes, ProbeSites;
  /// Per event: a wait's skip condition (skipOf).
  std::vector<std::optional<Skip>> Skips;
  /// The threads of the first copy of the program being lowered.
  llvm::BitVector Mask;
};

} // namespace

RolePrograms wsv::analyzer::lowerRolePrograms(const Protocol &P) { return Lowering(P).run(); }
