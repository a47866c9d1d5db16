//===- TransitionSystem.cpp - lowering a Protocol to agents and flat programs ------===//
//
// See TransitionSystem.h for the model. Each protocol event becomes at most two ops; what the
// model has no state for (TMEM, register counts, fences, bulk-store groups) becomes a Nop,
// and what it cannot express (a value without a closed form, an event wsv cannot decode)
// becomes an entry of Unknowns that keeps the verdicts unknown. A cluster's CTAs are lowered
// once and copied, one set of agents per CTA (replicateForCluster).
//
//===----------------------------------------------------------------------------------===//

#include "TransitionSystem.h"

#include "wsv/analyzer/RoleProgram.h"
#include "wsv/models/SyncOp.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <set>

namespace wsv {
namespace analyzer {
namespace ts {
namespace {

class Lowering {
public:
  Lowering(const Protocol &P, TransitionSystem &TS) : P(P), TS(TS) {}

  void run();

private:
  const Protocol &P;
  TransitionSystem &TS;
  std::map<uint64_t, unsigned> NamedIndex;
  std::map<std::tuple<bool, unsigned, uint64_t, unsigned>, unsigned> KeyIndex;
  std::vector<bool> BufferFilled; ///< buffers some async load fills (the ones tracked)
  /// Copies whose bytes are the launch description's box size: PTX lines by box size, said
  /// as one assumption per size.
  std::map<uint64_t, std::vector<unsigned>> BoxCopies;
  /// Per agent, the inits (barrier array, PTX line) that no fence.mbarrier_init of its has
  /// published yet (the explorer's unpublished inits, which the model does not follow).
  std::map<std::string, std::vector<std::pair<unsigned, unsigned>>> UnfencedInits;

  std::string at(const Event &E) const {
    return "ptx line " + std::to_string(E.Where.PtxLine);
  }
  void unknown(const Event &E, const std::string &What) {
    TS.Unknowns.push_back(What + " (" + at(E) + ")");
  }
  /// The expression of a value the op needs, or nullptr after recording why it is missing.
  const Expr *need(const ProtocolValue &V, const Event &E, const char *What) {
    if (V.known())
      return V.E;
    unknown(E, std::string("the ") + What + " of " + E.Opcode + " has no closed form" +
                   (V.Unknown.empty() ? "" : ": " + V.Unknown));
    return nullptr;
  }
  std::string describe(const Event &E) const;
  std::optional<uint64_t> threadsIn(const ThreadSet &Event, const llvm::BitVector &Role);
  unsigned namedBarrier(uint64_t Id, uint64_t Threads);
  unsigned inFlightKey(bool IsLoad, unsigned Array, uint64_t Bytes, unsigned Buffer);
  void lowerItems(Agent &A, const std::vector<ProtocolItem> &Items, const llvm::BitVector &Role);
  void lowerEvent(Agent &A, unsigned Index, const llvm::BitVector &Role);
  unsigned counterFor(Agent &A, unsigned LoopIdValue);
  /// One copy of the agents per CTA of the cluster.
  void replicateForCluster();
};

std::string Lowering::describe(const Event &E) const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << toString(E.Kind);
  if (E.Barrier.resolved()) {
    OS << ' ' << P.Barriers[E.Barrier.Array].Name;
    if (P.Barriers[E.Barrier.Array].Slots > 1 && E.Barrier.Slot.known())
      OS << '[' << P.exprString(E.Barrier.Slot.E) << ']';
  }
  if (E.Parity.known())
    OS << " parity " << P.exprString(E.Parity.E);
  if (E.Kind == EventKind::NamedBarrier && E.Named.Id.known())
    OS << ' ' << P.exprString(E.Named.Id.E);
  return OS.str();
}

std::optional<uint64_t> Lowering::threadsIn(const ThreadSet &Set, const llvm::BitVector &Role) {
  if (Set.isUnknown() || !Set.conditional().empty() || Set.blockThreads() != Role.size())
    return std::nullopt;
  llvm::BitVector Members = Set.members();
  Members &= Role;
  uint64_t N = Members.count();
  for (const ThreadSet::ElectedGroup &G : Set.elected()) {
    if (G.Excluded || G.Condition)
      return std::nullopt;
    for (unsigned W : G.Warps) {
      bool InRole = false;
      for (unsigned T = W * 32; T < W * 32 + 32 && T < Role.size(); ++T)
        InRole |= Role.test(T);
      N += InRole;
    }
  }
  return N;
}

unsigned Lowering::namedBarrier(uint64_t Id, uint64_t Threads) {
  auto [It, New] = NamedIndex.try_emplace(Id, TS.NamedBarriers.size());
  if (New)
    TS.NamedBarriers.push_back({Id, Threads});
  else if (TS.NamedBarriers[It->second].Threads != Threads)
    // One id with two counts: the hardware barrier is shared, so the first count that
    // completes a generation wins; the model cannot say which (named-barrier-id-collision).
    TS.Unknowns.push_back("named barrier " + std::to_string(Id) + " is used with " +
                          std::to_string(TS.NamedBarriers[It->second].Threads) + " and " +
                          std::to_string(Threads) + " threads");
  return It->second;
}

unsigned Lowering::inFlightKey(bool IsLoad, unsigned Array, uint64_t Bytes, unsigned Buffer) {
  auto [It, New] = KeyIndex.try_emplace({IsLoad, Array, Bytes, Buffer}, TS.InFlightKeys.size());
  if (New) {
    InFlightKey K{IsLoad, Array, Bytes, Buffer, ""};
    K.Text = IsLoad ? "TMA load of " + std::to_string(Bytes) + " B" +
                          (Buffer != NoIndex ? " into " + TS.Buffers[Buffer].Name : "") +
                          " completes on " + TS.Arrays[Array].Name
                    : "commit arrives on " + TS.Arrays[Array].Name;
    TS.InFlightKeys.push_back(K);
  }
  return It->second;
}

unsigned Lowering::counterFor(Agent &A, unsigned LoopIdValue) {
  for (unsigned I = 0; I < A.Counters.size(); ++I)
    if (A.Counters[I] == LoopIdValue)
      return I;
  A.Counters.push_back(LoopIdValue);
  return A.Counters.size() - 1;
}

void Lowering::lowerItems(Agent &A, const std::vector<ProtocolItem> &Items,
                          const llvm::BitVector &Role) {
  for (const ProtocolItem &Item : Items) {
    if (Item.isEvent()) {
      lowerEvent(A, Item.Index, Role);
      continue;
    }
    const ProtocolLoop &L = P.loop(Item);
    Op Enter;
    Enter.Kind = OpKind::LoopEnter;
    Enter.ProtocolLoop = Item.Index;
    Enter.Loop = counterFor(A, L.Loop);
    Enter.When = L.When.known() ? L.When.E : nullptr;
    Enter.Text = "enter loop " + P.loopVar(L.Loop) + " (ptx line " +
                 std::to_string(L.Where.PtxLine) + ")";
    if (!L.When.known() && !L.When.absent())
      TS.Unknowns.push_back("the condition of the loop at ptx line " +
                            std::to_string(L.Where.PtxLine) + " has no closed form: " +
                            L.When.Unknown);
    if (L.Trip.known())
      Enter.Trip = L.Trip.E;
    else
      TS.Unknowns.push_back("the trip count of the loop at ptx line " +
                            std::to_string(L.Where.PtxLine) + " has no closed form" +
                            (L.Trip.Unknown.empty() ? "" : ": " + L.Trip.Unknown));
    for (const auto &[Cond, Established] : L.TripConditions)
      if (!Established) {
        // The trip count is exact only under Cond, which no branch before the loop checks.
        TS.ParamAssumptions.push_back(Cond);
        if (L.Forever && isThreadDependent(Cond))
          TS.Assumptions.push_back("threads for which " + P.exprString(Cond) +
                                   " fails never leave the loop at ptx line " +
                                   std::to_string(L.Where.PtxLine) +
                                   ": the explorer runs them apart, Z3's encoding assumes "
                                   "it holds");
        else {
          TS.Assumptions.push_back("the loop at ptx line " + std::to_string(L.Where.PtxLine) +
                                   " runs its closed-form trip count only when " +
                                   P.exprString(Cond) + "; verdicts assume it");
          TS.TripAssumptions.push_back(TS.Assumptions.back());
        }
      }
    unsigned EnterAt = A.Ops.size();
    A.Ops.push_back(Enter);
    lowerItems(A, L.Body, Role);
    Op Latch;
    Latch.Kind = OpKind::LoopLatch;
    Latch.ProtocolLoop = Item.Index;
    Latch.Loop = Enter.Loop;
    Latch.Trip = Enter.Trip;
    Latch.Target = EnterAt + 1;
    Latch.Text = "next " + P.loopVar(L.Loop);
    A.Ops.push_back(Latch);
    A.Ops[EnterAt].Target = A.Ops.size();
  }
}

void Lowering::lowerEvent(Agent &A, unsigned Index, const llvm::BitVector &Role) {
  const Event &E = P.Events[Index];
  Op O;
  O.Event = Index;
  O.Text = describe(E);
  if (E.When.known())
    O.When = E.When.E;
  else if (!E.When.absent())
    unknown(E, "the condition of " + E.Opcode + " has no closed form: " + E.When.Unknown);

  // Arrivals and expect_tx reach a peer's barrier through mapa; a wait or an init cannot
  // (shared::cta only), and a copy completes where its data lands (its multicast mask).
  auto Barrier = [&](bool PeerAllowed = false) {
    if (!E.Barrier.resolved()) {
      unknown(E, "the mbarrier of " + E.Opcode + " is not resolved: " + E.Barrier.Unresolved);
      return false;
    }
    if (E.Barrier.PeerRank.known() && PeerAllowed) {
      O.Peer = E.Barrier.PeerRank.E;
    } else if (E.Barrier.PeerRank.known() || !E.Barrier.PeerRank.absent()) {
      unknown(E, E.Opcode + " reaches a peer CTA's mbarrier" +
                     (PeerAllowed ? " whose rank has no closed form: " + E.Barrier.PeerRank.Unknown
                                  : std::string(", which the model does not follow")));
      return false;
    }
    O.Array = E.Barrier.Array;
    O.Slot = need(E.Barrier.Slot, E, "mbarrier slot");
    return O.Slot != nullptr;
  };
  auto Times = [&]() {
    std::optional<uint64_t> N = threadsIn(E.Threads, Role);
    if (!N) {
      unknown(E, "the threads that execute " + E.Opcode + " are not counted exactly" +
                     (E.Threads.isUnknown() ? ": " + E.Threads.reason() : ""));
      return false;
    }
    O.Times = *N;
    return true;
  };
  auto TrackedBuffer = [&](Op &Into, const BufferRef &R) {
    if (!R.resolved() || !BufferFilled[R.Buffer])
      return false;
    if (!R.Slot.known()) {
      TS.StageUnknowns.push_back("the slot of " + P.Buffers[R.Buffer].Name + " that " +
                                 E.Opcode + " touches has no closed form (" + at(E) + ")");
      return false;
    }
    Into.Buffer = R.Buffer;
    Into.BufferSlot = R.Slot.E;
    return true;
  };

  // A role runs in lockstep here: a warp- or warpgroup-wide instruction that only part of
  // the warp or warpgroup runs (undefined behaviour, a hygiene violation to the explorer)
  // cannot happen in the model.
  // (A setmaxnreg that other setmaxnregs complete, Triton's per-warp partitions, is whole.)
  if (std::string Partial = partialCollective(E, collectiveUnit(E));
      !Partial.empty() &&
      (E.Kind != EventKind::Setmaxnreg || setmaxnregPartners(P, E).empty()))
    TS.HygieneProofGaps.push_back(Partial + " (" + at(E) + "): the model runs a role in lockstep");

  switch (E.Kind) {
  case EventKind::Init:
    if (E.Barrier.resolved())
      UnfencedInits[A.Name].push_back({E.Barrier.Array, E.Where.PtxLine});
    O.Kind = OpKind::Init;
    if (!Barrier() || !(O.Count = need(E.Count, E, "count")))
      return;
    break;
  case EventKind::Arrive:
  case EventKind::ArriveExpectTx:
    if (E.Sync == models::SyncKind::MbarrierArriveDrop ||
        E.Sync == models::SyncKind::MbarrierArriveDropExpectTx)
      return unknown(E, "arrive_drop lowers later phases' expected count; not modeled");
    O.Kind = OpKind::Arrive;
    if (!Barrier(true) || !Times())
      return;
    O.Count = E.Count.known() ? E.Count.E : nullptr; // nullptr: one arrival per thread
    if (!E.Count.known() && !E.Count.absent())
      return unknown(E, "the arrival count of " + E.Opcode + " has no closed form");
    if (E.Kind == EventKind::ArriveExpectTx && !(O.Tx = need(E.TxBytes, E, "tx bytes")))
      return;
    break;
  case EventKind::ExpectTx:
    O.Kind = OpKind::ExpectTx;
    if (!Barrier(true) || !Times() || !(O.Tx = need(E.TxBytes, E, "tx bytes")))
      return;
    break;
  case EventKind::Wait:
    O.Kind = OpKind::Wait;
    if (E.Token.known() || !E.Token.absent())
      return unknown(E, "a wait on a state token is not modeled");
    if (!Barrier() || !(O.Parity = need(E.Parity, E, "parity")))
      return;
    break;
  case EventKind::AsyncLoad: {
    O.Kind = OpKind::AsyncLoad;
    if (!Barrier() || !Times())
      return;
    if (E.Multicast && !(O.CtaMask = need(E.CtaMask, E, "multicast mask")))
      return;
    std::optional<uint64_t> Bytes = E.Bytes.constant();
    if (!Bytes)
      return unknown(E, "the bytes of " + E.Opcode + " are not a constant");
    if (E.BytesFrom == BytesOrigin::TensorBox)
      BoxCopies[*Bytes].push_back(E.Where.PtxLine);
    else if (E.BytesFrom == BytesOrigin::AllocationBound)
      TS.Assumptions.push_back(
          "the copy at " + at(E) +
          (slotBounded(P, E) ? " fills its whole " + std::to_string(*Bytes) + "-byte slot"
                             : " moves the " + std::to_string(*Bytes) +
                                   " bytes up to the barriers after its buffer") +
          " (box size not known)");
    else if (E.BytesFrom == BytesOrigin::BarrierExpect)
      TS.Assumptions.push_back("the copy at " + at(E) + " moves the " + std::to_string(*Bytes) +
                               " bytes its barrier expects (box size not known)");
    TrackedBuffer(O, E.Dst);
    if (O.Buffer != NoIndex && O.BufferSlot != O.Slot) {
      // Completion is counted per barrier slot; a buffer slot that is a different closed
      // form cannot be tied to it.
      TS.StageUnknowns.push_back("the copy at " + at(E) + " fills slot " +
                                 P.exprString(O.BufferSlot) + " but completes on slot " +
                                 P.exprString(O.Slot));
      O.Buffer = NoIndex;
    }
    O.Tx = nullptr;
    O.InFlightKey = inFlightKey(true, O.Array, *Bytes, O.Buffer);
    break;
  }
  case EventKind::MmaCommit:
  case EventKind::CpAsyncArrive:
    if (E.Kind == EventKind::CpAsyncArrive)
      return unknown(E, "cp.async.mbarrier.arrive is not modeled");
    O.Kind = OpKind::AsyncArrive;
    if (E.Multicast && !(O.CtaMask = need(E.CtaMask, E, "multicast mask")))
      return;
    if (!Barrier() || !Times())
      return;
    O.InFlightKey = inFlightKey(false, O.Array, 0, NoIndex);
    break;
  case EventKind::Mma:
    for (const BufferRef &R : E.Reads) {
      Op Read = O;
      Read.Kind = OpKind::Read;
      if (TrackedBuffer(Read, R)) {
        Read.Text = "MMA reads " + P.Buffers[R.Buffer].Name + "[" + P.exprString(R.Slot.E) + "]";
        A.Ops.push_back(Read);
        // The model reads when the MMA is issued; the tensor cores read until its group
        // retires or its commit arrives, so a copy into the stage before then (a release
        // that comes too early) would not be seen.
        TS.StageProofGaps.push_back("the MMA at " + at(E) + " reads " +
                                   P.Buffers[R.Buffer].Name +
                                   " asynchronously, until its group retires or its commit "
                                   "arrives; the model reads it when issued");
      }
    }
    return;
  case EventKind::SmemRead:
    if (!TrackedBuffer(O, E.Src))
      return;
    O.Kind = OpKind::Read;
    break;
  case EventKind::NamedBarrier: {
    std::optional<uint64_t> Id = E.Named.Id.constant();
    std::optional<uint64_t> Count =
        E.Named.Threads.absent() ? std::optional<uint64_t>(P.Launch.threads())
                                 : E.Named.Threads.constant();
    if (!Id || !Count)
      return unknown(E, "the id or thread count of " + E.Opcode + " is not a constant");
    if (!Times())
      return;
    O.Kind = OpKind::NamedArrive;
    O.Named = namedBarrier(*Id, *Count);
    O.Text = E.Opcode + " " + std::to_string(*Id) + ", " + std::to_string(*Count);
    A.Ops.push_back(O);
    if (E.Sync != models::SyncKind::BarrierArrive) {
      O.Kind = OpKind::NamedWait;
      A.Ops.push_back(O);
    }
    return;
  }
  case EventKind::ClusterArrive:
  case EventKind::ClusterWait:
    // Every thread of every CTA completes a generation (the explorer counts the same).
    if (!Times())
      return;
    O.Kind = E.Kind == EventKind::ClusterArrive ? OpKind::ClusterArrive : OpKind::ClusterWait;
    break;
  case EventKind::Exit:
    O.Kind = OpKind::Exit;
    break;
  case EventKind::Probe:
    // A peek whose result only lets a later blocking wait be skipped: the wait still
    // decides when the agent goes on.
    O.Kind = OpKind::Nop;
    break;
  case EventKind::CompleteTx:
  case EventKind::TryCancel:
  case EventKind::AsyncCopy:
  case EventKind::Unknown:
    return unknown(E, E.Kind == EventKind::Unknown ? E.Opcode + ": " + E.Reason
                                                   : E.Opcode + " is not modeled");
  case EventKind::Alloc:
    TS.Assumptions.push_back("tcgen05.alloc at " + at(E) + " finds its columns free");
    O.Kind = OpKind::Nop;
    break;
  case EventKind::AccumulatorRead:
  case EventKind::TmemLoad:
  case EventKind::TmemStore:
    TS.StageProofGaps.push_back("accumulators (" + E.Opcode + " at " + at(E) +
                               ") are not modeled");
    O.Kind = OpKind::Nop;
    break;
  case EventKind::AsyncStore:
    TS.StageProofGaps.push_back("bulk-store staging (" + E.Opcode + " at " + at(E) +
                               ") is not modeled");
    O.Kind = OpKind::Nop;
    break;
  case EventKind::Inval:
    TS.HygieneProofGaps.push_back(E.Opcode + " at " + at(E) + " is not modeled");
    O.Kind = OpKind::Nop;
    break;
  default:
    if (E.Kind == EventKind::Fence && E.Sync == models::SyncKind::FenceMbarrierInit)
      UnfencedInits.erase(A.Name);
    O.Kind = OpKind::Nop;
    break;
  }
  // Events without effect on the model are not steps: schedules stay short.
  if (O.Kind == OpKind::Nop)
    return;
  A.Ops.push_back(O);
}

void Lowering::run() {
  for (const BarrierArray &B : P.Barriers)
    TS.Arrays.push_back({B.Name, B.Slots});
  BufferFilled.assign(P.Buffers.size(), false);
  for (const Event &E : P.Events)
    if (E.Kind == EventKind::AsyncLoad && E.Dst.resolved())
      BufferFilled[E.Dst.Buffer] = true;
  for (const analyzer::Buffer &B : P.Buffers)
    TS.Buffers.push_back({B.Name, B.Slots});
  for (unsigned I = 0; I < P.ParamSymbols.size(); ++I)
    TS.Params.push_back({P.ParamSymbols[I], I < P.ParamNames.size() ? P.ParamNames[I]
                                                                     : P.ParamSymbols[I]});
  TS.ClusterAssumption = clusterAssumption(P);
  TS.Assumptions.push_back("block of " + std::to_string(P.Launch.threads()) + " threads (" +
                           P.LaunchFrom + ")");

  llvm::BitVector All(P.Launch.threads(), true);
  Agent Prologue;
  Prologue.Name = "prologue";
  lowerItems(Prologue, P.Prologue, All);
  if (!Prologue.Ops.empty()) {
    TS.Assumptions.push_back("the prologue runs to its end before any role starts");
    TS.Agents.push_back(std::move(Prologue));
  }
  for (const Role &R : P.Roles) {
    Agent A;
    A.Name = R.Name;
    A.Starts = TS.Agents.empty() ? Agent::Start::AtLaunch : Agent::Start::AfterPrologue;
    if (R.Threads.isUnknown() || R.Threads.blockThreads() != All.size() ||
        !R.Threads.elected().empty() || !R.Threads.conditional().empty()) {
      TS.Unknowns.push_back("the threads of role " + R.Name + " are not known exactly");
      continue;
    }
    if (R.When.known()) {
      Op Guard;
      Guard.Kind = OpKind::Guard;
      Guard.When = R.When.E;
      Guard.Text = "role condition " + P.exprString(R.When.E);
      A.Ops.push_back(Guard);
    } else if (!R.When.absent()) {
      TS.Unknowns.push_back("the condition of role " + R.Name + " has no closed form");
    }
    lowerItems(A, R.Body, R.Threads.members());
    if (!A.Ops.empty() && A.Ops.front().Kind == OpKind::Guard)
      A.Ops.front().Target = A.Ops.size();
    TS.Agents.push_back(std::move(A));
  }
  Agent Epilogue;
  Epilogue.Name = "epilogue";
  Epilogue.Starts = Agent::Start::AfterRoles;
  lowerItems(Epilogue, P.Epilogue, All);
  if (!Epilogue.Ops.empty()) {
    TS.Assumptions.push_back("the epilogue starts once every role has finished");
    TS.Agents.push_back(std::move(Epilogue));
  }
  for (const auto &[Bytes, Lines] : BoxCopies) {
    std::string Where;
    for (unsigned L : Lines)
      Where += (Where.empty() ? "" : ", ") + std::to_string(L);
    TS.Assumptions.push_back(
        (Lines.size() == 1 ? "the tensor map box of the copy at ptx line "
                           : "the tensor map boxes of the copies at ptx lines ") +
        Where + (Lines.size() == 1 ? " is " : " are ") + std::to_string(Bytes) +
        " bytes (launch description)");
  }
  for (const ProtocolNote &N : P.Notes)
    TS.Assumptions.push_back("protocol note: " + N.Message);
  // An init that no fence.mbarrier_init publishes, reached by a copy's or commit's
  // completion (the async proxy) or a peer's arrival: a violation to the explorer
  // (mbarrier-init-visibility), which the model does not follow.
  auto Reached = [&](unsigned Array) {
    return llvm::any_of(TS.Agents, [&](const Agent &Ag) {
      return llvm::any_of(Ag.Ops, [&](const Op &O) {
        return O.Array == Array &&
               (O.Kind == OpKind::AsyncLoad || O.Kind == OpKind::AsyncArrive || O.Peer);
      });
    });
  };
  for (const auto &[Name, Inits] : UnfencedInits)
    for (const auto &[Array, Line] : Inits)
      if (Reached(Array))
        TS.HygieneProofGaps.push_back("the init of " + TS.Arrays[Array].Name + " by " + Name +
                                      " at ptx line " + std::to_string(Line) +
                                      " is published by no fence.mbarrier_init, and copies, "
                                      "commits or peers reach that barrier");
  // Both engines land a thread's commits oldest first (the explorer a commit's worth of
  // tcgen05 work at a time, Z3 by each commit's sequence number). Where an agent may have two
  // in flight, that is an assumption: the PTX ISA orders none between two commits' arrivals,
  // and without it a ring's last release may land after the commit the epilogue waits for,
  // in a CTA that has already left.
  auto TwoCommits = [](const Agent &A) {
    unsigned Commits = 0;
    for (unsigned I = 0; I < A.Ops.size(); ++I) {
      if (A.Ops[I].Kind != OpKind::AsyncArrive)
        continue;
      bool InLoop = llvm::any_of(llvm::seq(0u, I), [&](unsigned J) {
        return A.Ops[J].Kind == OpKind::LoopEnter && A.Ops[J].Target > I;
      });
      if (InLoop || ++Commits > 1)
        return true;
    }
    return false;
  };
  if (llvm::any_of(TS.Agents, TwoCommits)) {
    TS.CommitOrder = "one thread's tcgen05.commit arrivals happen in the order of its commits "
                     "(the PTX ISA states no order between two commits' arrivals)";
    TS.Assumptions.push_back(TS.CommitOrder);
  }
  replicateForCluster();
}

void Lowering::replicateForCluster() {
  unsigned Ctas = std::max(1u, P.Launch.ClusterSize);
  TS.ClusterThreads = uint64_t(Ctas) * P.Launch.threads();
  if (Ctas == 1)
    return;
  // The hardware's limit (16 with cudaFuncAttributeNonPortableClusterSizeAllowed); each CTA
  // multiplies the state, and the bounded search's depth with it.
  const unsigned MaxCtas = 16;
  if (Ctas > MaxCtas) {
    TS.Unknowns.push_back("clusters of " + std::to_string(Ctas) + " CTAs are beyond the " +
                          std::to_string(MaxCtas) + " the model copies");
    return;
  }
  TS.Ctas = Ctas;
  std::vector<Agent> One = std::move(TS.Agents);
  TS.Agents.clear();
  for (unsigned Cta = 0; Cta < Ctas; ++Cta)
    for (const Agent &A : One) {
      TS.Agents.push_back(A);
      TS.Agents.back().Cta = Cta;
      TS.Agents.back().Name += "@cta" + std::to_string(Cta);
    }
}

} // namespace

std::string clusterAssumption(const Protocol &P) {
  if (P.Launch.ClusterSize <= 1)
    return "";
  return "every CTA of a cluster of " + std::to_string(P.Launch.ClusterSize) +
         " is modeled, with remote arrivals, multicast copies and each CTA's exit" +
         (P.ClusterFrom == ".reqnctapercluster" ? std::string()
                                                : " (cluster size: " + P.ClusterFrom + ")");
}

TransitionSystem lower(const Protocol &P) {
  TransitionSystem TS;
  Lowering(P, TS).run();
  for (std::string &Gap : unplacedAccesses(P))
    TS.StageProofGaps.push_back(std::move(Gap));
  return TS;
}

} // namespace ts
} // namespace analyzer
} // namespace wsv
