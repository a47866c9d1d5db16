//===- TransitionSystem.h - a protocol as agents running flat step programs --------===//
//
// The form of a Protocol that the Z3 encoding reads (DESIGN.md, Proofs). Plain data, no Z3:
//
// - An agent is one role of one CTA, running in lockstep (its warps wait together and arrive
//   with the number of their threads that execute each event). The prologue and the epilogue
//   are agents too: the prologue runs first and every role starts after it (the prologue ends
//   with a CTA-wide barrier in the kernels this models; an assumption says so), the epilogue
//   starts once every role has finished. All of this holds within one CTA.
// - A cluster is every one of its CTAs: each runs its own copy of the agents (`producer@cta1`)
//   on its own barriers, buffers and named barriers. What crosses CTAs is explicit: an arrival
//   on a peer's barrier (mapa), a multicast copy or commit (one completion per CTA of its mask),
//   and barrier.cluster. A CTA has exited once all its agents have finished; anything that
//   reaches it afterwards is a hygiene violation.
// - An agent's program is a flat list of ops with explicit jumps: loops become LoopEnter (the
//   counter set to 0, the body entered when the loop's condition holds and its trip count is
//   positive) and LoopLatch (the counter incremented, back to the body while below the trip
//   count). Expressions (slots, parities, counts, conditions, trip counts) are the protocol's
//   closed forms over the agents' loop counters and the kernel parameters.
// - Barrier instances are the slots of the protocol's barrier arrays; buffers are the slots of
//   the buffers that async copies fill. Async operations in flight are counted per key (an
//   async load's barrier array, bytes and buffer; a tcgen05.commit's barrier array) and slot,
//   and complete in any order.
//
// What the lowering cannot model exactly is listed in Unknowns (every verdict that could
// depend on it stays unknown) or, when it only narrows the parameters or the launch, in
// Assumptions.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace ts {

enum class OpKind : uint8_t {
  LoopEnter,   ///< Counter := 0; to the body if When and 0 < Trip, else to Target
  LoopLatch,   ///< Counter += 1; back to Target (the body) while Counter < Trip
  Guard,       ///< to Target unless When holds (a role's CTA-uniform condition)
  Init,        ///< mbarrier.init: Array[Slot] gets Count expected arrivals, phase 0, tx 0
  Arrive,      ///< tx += Tx (arrive.expect_tx), then pending -= Count; completes the phase
  ExpectTx,    ///< tx += Tx
  Wait,        ///< blocks until Array[Slot]'s completed phases have a parity other than Parity
  AsyncLoad,   ///< a copy of Tx bytes into Buffer[BufferSlot] completing on Array[Slot]
  AsyncArrive, ///< an arrival that happens later (tcgen05.commit, cp.async.mbarrier.arrive)
  NamedArrive, ///< bar.arrive / first half of bar.sync: Count threads on named barrier Named
  NamedWait,   ///< second half of bar.sync: blocks until the named barrier's generation moves
  ClusterArrive, ///< barrier.cluster.arrive: Times threads of the cluster's barrier
  ClusterWait, ///< barrier.cluster.wait: blocks until the cluster barrier's generation moves
  Read,        ///< a read of Buffer[BufferSlot] (an MMA operand, ld.shared)
  Exit,        ///< the agent ends here
  Nop,         ///< an event without effect on these properties (fences, wgmma.fence, ...)
};

struct Op {
  OpKind Kind = OpKind::Nop;
  unsigned Event = NoIndex;       ///< into Protocol::Events; NoIndex for loop ops
  unsigned Loop = NoIndex;        ///< LoopEnter/LoopLatch: index into Agent::Counters
  unsigned ProtocolLoop = NoIndex; ///< into Protocol::Loops
  unsigned Target = 0;            ///< LoopEnter: the exit; LoopLatch: the body's first op
  const Expr *When = nullptr;     ///< nullptr: always
  const Expr *Trip = nullptr;
  unsigned Array = NoIndex;       ///< into TransitionSystem::Arrays
  const Expr *Slot = nullptr;
  /// Arrive / ExpectTx on a peer's barrier (mapa): the rank of the CTA it reaches; nullptr:
  /// the agent's own CTA.
  const Expr *Peer = nullptr;
  /// AsyncLoad / AsyncArrive with .multicast: the CTAs it completes in, a bit per rank;
  /// nullptr: the agent's own CTA alone.
  const Expr *CtaMask = nullptr;
  const Expr *Count = nullptr;    ///< arrivals per thread, or the init count
  uint64_t Times = 1;             ///< threads of the agent that execute it (arrivals multiply)
  const Expr *Tx = nullptr;       ///< bytes
  const Expr *Parity = nullptr;
  unsigned Buffer = NoIndex;      ///< into TransitionSystem::Buffers
  const Expr *BufferSlot = nullptr;
  unsigned InFlightKey = NoIndex; ///< AsyncLoad / AsyncArrive: into InFlightKeys
  unsigned Named = NoIndex;       ///< into TransitionSystem::NamedBarriers
  std::string Text;               ///< how a schedule prints it
};

struct Agent {
  std::string Name;
  enum class Start : uint8_t { AtLaunch, AfterPrologue, AfterRoles } Starts = Start::AtLaunch;
  std::vector<Op> Ops;
  std::vector<unsigned> Counters; ///< the LoopId each counter stands for
  unsigned Cta = 0;               ///< its CTA's rank in the cluster
};

struct Array {
  std::string Name;
  unsigned Slots = 1;
};

struct Buffer {
  std::string Name;
  unsigned Slots = 1;
};

struct NamedBarrier {
  uint64_t Id = 0;
  uint64_t Threads = 0; ///< threads that complete a generation
};

/// Async operations that complete alike: a load's bytes, buffer and barrier array, or an
/// arrival on a barrier array.
struct InFlightKey {
  bool IsLoad = true;
  unsigned Array = NoIndex;
  uint64_t Bytes = 0;         ///< loads: tx bytes the completion delivers
  unsigned Buffer = NoIndex;  ///< loads: the buffer filled, NoIndex when none is tracked
  std::string Text;
};

struct TransitionSystem {
  /// The CTAs of a cluster, each with its own copy of the agents (in CTA order) and of every
  /// array, buffer, named barrier and in-flight count below.
  unsigned Ctas = 1;
  /// Threads that complete a generation of barrier.cluster: every thread of every CTA.
  uint64_t ClusterThreads = 0;
  std::vector<Agent> Agents;
  std::vector<Array> Arrays;
  std::vector<Buffer> Buffers;
  std::vector<NamedBarrier> NamedBarriers;
  std::vector<InFlightKey> InFlightKeys;
  /// Parameters the expressions mention: PTX symbol and display name.
  std::vector<std::pair<std::string, std::string>> Params;
  /// Conditions on parameters the model relies on (trip-count conditions the code does not
  /// establish).
  std::vector<const Expr *> ParamAssumptions;
  std::vector<std::string> Assumptions;
  /// Those of Assumptions that a closed-form trip count is exact (TripConditions no branch
  /// establishes): a launch explored as it is checks them instead.
  std::vector<std::string> TripAssumptions;
  /// The model's view of a cluster (every CTA of it), apart from Assumptions: the explorer
  /// says the same in its own words.
  std::string ClusterAssumption;
  /// That one thread's commits arrive in order, where an agent may have two in flight (also
  /// in Assumptions); empty where none may.
  std::string CommitOrder;
  /// Reasons no verdict can be trusted (by property; DeadlockFreedom's also hold for all).
  std::vector<std::string> Unknowns;
  std::vector<std::string> StageUnknowns;
  /// Hazards of a property the model lacks (an MMA's asynchronous reads, accumulators, a
  /// warpgroup-wide instruction part of the warpgroup runs): a bad state it reaches is a real
  /// one, but finding none proves nothing.
  std::vector<std::string> StageProofGaps, HygieneProofGaps;
};

/// What a verdict on a cluster kernel assumes of its cluster (both engines model every CTA);
/// empty without a cluster.
std::string clusterAssumption(const Protocol &P);

/// Lowers the protocol; never fails: what it cannot lower is in Unknowns.
TransitionSystem lower(const Protocol &P);

} // namespace ts
} // namespace analyzer
} // namespace wsv
