//===- RoleProgram.h - the protocol as programs of sync steps, run by agents ------===//
//
// The lowering that the Z3 encoding and the explicit-state explorer (Explore.h) share. A
// Protocol says what each role does; a RoleProgram says it as a program of synchronization
// steps, and says who runs it: the agents.
//
// Contract (what a step means; the encoding and the explorer implement exactly this):
//
//  - Programs. The prologue, every role, and the epilogue are programs. Each is a sequence
//    of steps and loops; a loop runs its body Trip times (Trip is a closed form in the kernel's
//    parameters and the iteration numbers of the loops around it), with IterationVar(L) = 0,
//    1, ... A step or loop with a `When` runs only where the condition is non-zero.
//  - Agents. Each program runs as independent copies, per CTA of the cluster: the prologue and
//    the epilogue once per CTA, with all threads of the CTA in lockstep; a role `Copies` times
//    per CTA. A role whose threads all do the same thing in lockstep is one copy; a role that
//    spans several warpgroups in which every step is executed by the same number of threads
//    is one copy per warpgroup (they reach named barriers, arrivals and wgmma groups on their
//    own) when some value of the role differs between its warpgroups (a named barrier id
//    of %tid.x / 128 + 1); warpgroups with nothing to tell them apart stay one agent. A role
//    whose warps each use values of their own (a barrier slot of %tid.x / 32) that are the
//    same inside a warp is one copy per warp. An
//    agent's thread-dependent values (a bar.sync id of %tid.x / 128 + 1) are those of
//    its first thread, and the instantiation checks that its last thread agrees. CTA ranks of
//    a cluster are separate agents; expressions read %cluster_ctarank as the agent's rank.
//  - Parts. A loop whose trip count differs between an agent's threads (each thread's count
//    is evaluated) ends the agent at the first iteration that not all of them run; each
//    group of threads with one count goes on from there as an agent of its own
//    (ConcreteAgent::After), with its own thread counts. Threads whose counter steps by 0
//    (RoleLoop::Forever) run one pass beyond the longest count and stop at a Diverge step.
//    A part that would reach a named barrier, an elected lane or a warp collective without
//    the rest of its warp stops at an Unknown step instead: the hardware counts those by
//    warp, which the model does not run for parts.
//  - Order. Role agents of a CTA start once that CTA's prologue agent has finished; the
//    epilogue agent starts once every role agent of its CTA has finished (the roles join).
//  - Thread counts. `Threads` is how many threads of one agent execute the step: elected
//    lanes count one per warp; threads whose membership depends on a CTA-uniform condition
//    count where it holds. A step executed by no thread of an agent is skipped by it.
//  - Steps:
//      Init        barrier slot := init(Count)
//      Arrive      Threads * Count arrivals on the slot (of the CTA PeerRank when set, else
//                  the agent's own); with TxBytes, expect_tx(Threads * TxBytes) first
//      ExpectTx    tx-count += Threads * TxBytes
//      Wait        blocks until the slot's phase with parity Parity has completed; with a
//                  skip condition (SkipEntry / SkipLatch), not at all where a probe that the
//                  condition reads saw the phase complete
//      Probe       try_wait once: records whether the slot's phase with parity Parity has
//                  completed, for the waits whose skip condition reads it (CUTLASS's
//                  try_wait-then-wait: a role peeks at the barrier of its next k-tile)
//      AsyncLoad   starts a copy of Bytes into each CTA of CtaMask (the agent's CTA without
//                  multicast); Writes are the buffer slots it fills; it completes later, at a
//                  time of the scheduler's choosing, with complete_tx(Bytes) on the slot in
//                  each of those CTAs
//      MmaIssue    starts an MMA (wgmma: joins the agent's open wgmma group; tcgen05: joins
//                  the agent's tcgen05 operations); Reads are the stage buffers it reads until
//                  it completes, nondeterministically; a tcgen05.mma writes the accumulator's
//                  TMEM columns (TmemColumn, TmemColumns) until then
//      MmaCommit   tcgen05.commit: one arrival on the slot (in each CTA of CtaMask with
//                  multicast) once every earlier tcgen05 operation of the agent has completed
//      GroupCommit commit_group of Queue (wgmma or bulk); GroupWait: blocks until at most WaitN
//                  groups of Queue are in flight (ReadOnly: only their source reads)
//      AsyncStore  a bulk store reading Reads, joins the agent's open bulk group
//      NamedSync / NamedArrive   the CTA's named barrier NamedId with NamedThreads threads
//                  (0: every thread of the CTA); the agent arrives with its threads rounded up
//                  to whole warps, as the hardware counts them; a sync blocks until the
//                  instance completes
//      ClusterArrive / ClusterWait   barrier.cluster: a wait blocks until every thread of
//                  every CTA of the cluster has arrived for the instance the agent arrived on
//      Read / Write   generic shared-memory accesses to buffer slots (ld.shared, stmatrix)
//      Alloc / Dealloc   tcgen05.alloc / dealloc of Columns (alloc blocks while none free)
//      TmemRead / TmemWait   tcgen05.ld of TmemColumns columns from TmemColumn, read until the
//                  agent's next tcgen05.wait::ld (only where some tcgen05.mma or dealloc
//                  could conflict with them); TmemWrite / TmemWriteWait the same for
//                  tcgen05.st and tcgen05.wait::st (only where some tcgen05.mma could)
//      Exit        the agent ends here
//      Unknown     cannot be modeled: a program that reaches one cannot be proved; the
//                  verdict is unknown with Reason
//  - Unknowns. Every value that the protocol left unknown (a trip count, a slot, a thread set)
//    stays unknown here, with its reason, on the step or loop that needs it; nothing is
//    guessed. `unknowns()` lists them.
//
// Steps that order memory but move no synchronization state (fences, setmaxnreg,
// wgmma.fence, bar.warp.sync, tcgen05.cp and tcgen05.shift) are not lowered: the lint checks
// judge them.
//
// Instantiation (instantiate) takes concrete parameter values and unrolls every agent's
// program into a straight-line list of concrete steps with concrete barrier and buffer slot
// instances, parities and counts; that is what the explorer runs. Back-to-back MMA steps of
// one agent become one concrete step (one async operation reading all their buffers): no
// wait_group or tcgen05.commit can tell them apart.
//
// Status: committed early so that the Z3 encoding can start from this contract; the explorer
// is its first user, and its tests are the lowering's tests so far.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {

enum class StepKind : uint8_t {
  Init,
  Arrive,
  ExpectTx,
  Wait,
  Probe,
  AsyncLoad,
  MmaIssue,
  MmaCommit,
  GroupCommit,
  GroupWait,
  AsyncStore,
  NamedSync,
  NamedArrive,
  ClusterArrive,
  ClusterWait,
  Read,
  Write,
  /// fence.proxy.async over shared memory: the agent's generic writes become visible to the
  /// async proxy (TMA stores, wgmma and tcgen05.mma operand reads).
  ProxyFence,
  /// A generic instruction reads wgmma accumulators (Protocol's AccumulatorRead).
  AccumulatorRead,
  /// tcgen05.ld: reads the CTA's tensor memory, which must be allocated then, and which no
  /// tcgen05.mma in flight may write; it goes on reading until the agent's next TmemWait.
  TmemRead,
  /// tcgen05.wait::ld: the agent's tcgen05.ld reads are done; a tcgen05.mma may overwrite
  /// their columns from here on.
  TmemWait,
  /// tcgen05.st: writes the CTA's tensor memory until the agent's next TmemWriteWait; no
  /// tcgen05.mma may write or read those columns meanwhile, nor another agent's tcgen05.ld.
  TmemWrite,
  /// tcgen05.wait::st: the agent's tcgen05.st writes are done.
  TmemWriteWait,
  /// mbarrier.inval: the barrier's memory may be used for something else after it.
  Inval,
  /// A plain store into a barrier's memory (its slot in Barrier), which must be invalid.
  BarrierStore,
  /// fence.mbarrier_init: the agent's inits become visible to the async proxy and the peer
  /// CTAs (TMA complete_tx, tcgen05.commit, remote arrivals).
  InitFence,
  /// setmaxnreg run by part of a warpgroup (undefined behaviour; a violation where it
  /// happens). A whole warpgroup's setmaxnreg changes nothing the model tracks: no step.
  Setmaxnreg,
  Alloc,
  Dealloc,
  Exit,
  /// Concrete only: the agent's threads stay in a loop forever from here (its counter's
  /// step is zero for them, RoleLoop::Forever). Never enabled: an agent stopped here never
  /// reaches its exit, which deadlock freedom asks of it.
  Diverge,
  /// In a program: cannot be modeled (the instantiation fails). Concrete: what the agent
  /// does from here cannot be modeled (ConcreteStep::Reason); never enabled, and a search
  /// that ends with an agent stopped here says unknown, not deadlock.
  Unknown,
};
const char *toString(StepKind K);

/// A collective event (.sync.aligned) that Unit threads, a warp or a warpgroup, must run
/// together but that some of them run and others do not: why that is undefined behaviour;
/// empty when it is not, or when Unit is 0. From the event's threads in the CTA: roles split
/// where threads diverge, so no agent alone can tell.
std::string partialCollective(const Event &E, unsigned Unit);

/// The threads that must run E together (.sync.aligned): a warp for tcgen05.alloc and
/// dealloc, a warpgroup for wgmma (its MMA, commit and wait) and setmaxnreg; 0 otherwise.
unsigned collectiveUnit(const Event &E);

/// For a setmaxnreg that only part of a warpgroup runs: the PTX lines of the other
/// setmaxnreg instructions, of the same action and count, that together with it cover every
/// warpgroup it touches (Triton's single-warp partitions each run their own); empty when
/// they do not, so some warp changes no registers at all.
std::vector<unsigned> setmaxnregPartners(const Protocol &P, const Event &E);

/// The async-operation queue a commit_group / wait_group / MMA works on.
enum class AsyncQueue : uint8_t { None, Wgmma, Tcgen05, Bulk, CpAsync };
const char *toString(AsyncQueue Q);

/// How many threads of one agent execute a step.
struct ThreadCount {
  unsigned Fixed = 0;
  /// Threads that take part where a CTA-uniform condition holds (a CTA rank).
  llvm::SmallVector<std::pair<const Expr *, unsigned>, 1> Conditional;
};

/// Threads of S among Mask (one agent's threads, bits by %tid.x): members, elected lanes
/// (one per warp with a thread in Mask), and threads under CTA-uniform conditions.
ThreadCount countIn(const ThreadSet &S, const llvm::BitVector &Mask);

/// `0`, `1-127`, `0, 32, 64`: a set of threads (bits by %tid.x) as ranges, for names.
std::string threadList(const llvm::BitVector &T);

struct SlotExpr {
  unsigned Array = NoIndex;       ///< Protocol::Barriers or Protocol::Buffers
  const Expr *Slot = nullptr;     ///< the slot, closed form
  const Expr *PeerRank = nullptr; ///< barriers: a peer CTA's (mapa); nullptr: the agent's own
  /// Buffers: an operand address no buffer claims, matched to one when instantiated.
  const Expr *Address = nullptr;
  /// Buffers: where in the slot depends on the thread (each warpgroup its own rows).
  bool PerThread = false;
};

struct RoleStep {
  StepKind Kind = StepKind::Unknown;
  unsigned Event = NoIndex; ///< into Protocol::Events
  ThreadCount Threads;
  const Expr *When = nullptr; ///< nullptr: always
  SlotExpr Barrier;
  const Expr *Count = nullptr;   ///< Init: expected arrivals; Arrive: arrivals per thread
  const Expr *TxBytes = nullptr; ///< Arrive / ExpectTx: bytes per thread
  const Expr *Parity = nullptr;  ///< Wait, Probe
  /// Wait: it is skipped where this value is non-zero, in iteration 0 of SkipLoop (entry)
  /// or a later one (latch, already in terms of the current iteration); the values read
  /// probes' results (Opaque leaves at the probe's instruction) and nothing else varying.
  const Expr *SkipEntry = nullptr, *SkipLatch = nullptr;
  LoopId SkipLoop = NoIndex;
  const Expr *Bytes = nullptr;   ///< AsyncLoad: bytes per destination CTA
  const Expr *CtaMask = nullptr; ///< AsyncLoad / MmaCommit with .multicast::cluster
  std::vector<SlotExpr> Reads;   ///< MmaIssue / AsyncStore / Read: buffer slots
  std::vector<SlotExpr> Writes;  ///< AsyncLoad / Write
  AsyncQueue Queue = AsyncQueue::None;
  const Expr *WaitN = nullptr;
  bool ReadOnly = false;
  bool WaitAll = false; ///< cp.async.wait_all: commits the open group, then waits for all
  const Expr *NamedId = nullptr;
  const Expr *NamedThreads = nullptr; ///< nullptr: every thread of the CTA
  const Expr *Columns = nullptr;
  /// MmaIssue (tcgen05) and TmemRead: the TMEM column it starts at (Event::TmemColumn;
  /// nullptr: not known) and how many it writes or reads (0: not known); TmemPair: a
  /// tcgen05.mma of .cta_group::2, which writes the accumulator of both CTAs of its pair.
  const Expr *TmemColumn = nullptr;
  uint32_t TmemColumns = 0;
  bool TmemPair = false;
  std::string Unknown; ///< non-empty: why this step cannot be modeled
};

struct RoleItem {
  bool IsLoop = false;
  unsigned Index = 0; ///< into RoleProgram::Steps or RoleProgram::Loops
};

struct RoleLoop {
  unsigned ProtocolLoop = NoIndex; ///< into Protocol::Loops
  LoopId Loop = NoIndex;           ///< the IterationVar its body reads
  const Expr *Trip = nullptr;
  /// Where this holds the loop never ends (ProtocolLoop::Forever); nullptr: never.
  const Expr *Forever = nullptr;
  const Expr *When = nullptr;
  std::string Unknown; ///< why Trip is missing
  std::vector<RoleItem> Body;
};

enum class Placement : uint8_t { Prologue, Role, Epilogue };
const char *toString(Placement P);

struct RoleProgram {
  std::string Name;
  Placement Place = Placement::Role;
  unsigned Role = NoIndex; ///< into Protocol::Roles for Placement::Role
  unsigned Copies = 1;     ///< agents per CTA
  /// The first thread and the thread count of each copy (copy C starts at First + C * Stride).
  unsigned FirstThread = 0, CopyThreads = 0, CopyStride = 0;
  const Expr *When = nullptr; ///< the role's CTA-uniform condition
  std::vector<RoleItem> Body;
  std::vector<RoleStep> Steps;
  std::vector<RoleLoop> Loops;
};

struct RolePrograms {
  const Protocol *P = nullptr;
  unsigned ClusterSize = 1;
  unsigned BlockThreads = 0;
  std::vector<RoleProgram> Programs; ///< the prologue first, the epilogue last
  /// Per Protocol::Loops: the conditions under which its closed-form trip count is exact,
  /// and whether a branch establishes each (ProtocolLoop::TripConditions), as these programs
  /// see them: programs rewritten for a part of the launches rewrite them too.
  std::vector<std::vector<std::pair<const Expr *, bool>>> TripConditions;
  /// Barrier inits count as visible to every agent and the async proxy without a
  /// fence.mbarrier_init: set for the run past barrier hygiene's counterexample of an
  /// unfenced init, whose other properties are then decided as if the fence were there.
  bool InitsVisible = false;
  /// A copy or tcgen05.commit that lands after its CTA exited lands nowhere: set for the run
  /// past barrier hygiene's counterexample of such a landing, whose other properties are
  /// then decided on the schedules of the CTA's life.
  bool LateLandingsDropped = false;
  /// Every reason a step or loop is unknown, with the program's name; empty when none.
  std::vector<std::string> unknowns() const;
};

/// Lowers a protocol. Never fails: what cannot be lowered is an unknown step or loop.
RolePrograms lowerRolePrograms(const Protocol &P);

//===- Instantiation --------------------------------------------------------------===//

/// Concrete values for one exploration: kernel parameters by display name (K) or PTX name,
/// and the grid (one cluster of the grid is simulated; its CTA of rank r has %ctaid.x =
/// FirstCta + r).
struct Instance {
  std::map<std::string, uint64_t> Params;
  uint64_t GridCtas = 0; ///< %nctaid.x; 0: one cluster
  uint64_t FirstCta = 0;
  /// The most concrete steps all agents may have together; more is unknown (too large).
  uint64_t MaxSteps = 200000;
  /// Check at every loop entry the conditions under which its closed-form trip count is
  /// exact (ProtocolLoop::TripConditions); one that fails or does not evaluate leaves the
  /// instance unknown. For a launch given as it is: the searches' launches are chosen to
  /// meet them (or their verdicts assume them).
  bool CheckTripConditions = false;
};

struct ConcreteStep {
  StepKind Kind = StepKind::Unknown;
  unsigned RoleStep = NoIndex; ///< into the program's Steps
  /// Steps of the program folded into this one (back-to-back MMAs, stmatrix into one slot):
  /// they ran too, which coverage counts.
  llvm::SmallVector<unsigned, 0> Folded;
  unsigned Event = NoIndex;    ///< into Protocol::Events
  unsigned Barrier = NoIndex;  ///< into ConcreteSystem::Barriers
  llvm::SmallVector<unsigned, 2> Targets; ///< AsyncLoad / MmaCommit: barrier instances reached
  uint32_t Count = 0;   ///< Init: expected; Arrive: total arrivals; Named: the barrier's threads
  uint32_t TxBytes = 0; ///< Arrive / ExpectTx: total bytes; AsyncLoad: bytes per target
  uint32_t Parity = 0;
  llvm::SmallVector<unsigned, 4> Reads, Writes; ///< into ConcreteSystem::Buffers
  /// The accesses land where the thread says and the role runs as one agent per warpgroup:
  /// each agent has its own part of the slot, so copies of one role do not race on it.
  bool PerCopy = false;
  AsyncQueue Queue = AsyncQueue::None;
  uint32_t WaitN = 0;
  bool ReadOnly = false;
  bool WaitAll = false; ///< cp.async.wait_all: commits the open group, then waits for all
  uint32_t NamedId = 0;
  uint32_t Arriving = 0; ///< Named / Cluster: threads the agent arrives with
  uint32_t Columns = 0;
  /// MmaIssue (tcgen05): the TMEM columns [TmemFirst, TmemEnd) of the accumulator it writes,
  /// in its CTA and, with TmemPair, in the other CTA of its pair too; TmemRead: the columns
  /// it reads. Where the column or the count is not known, every column (0 to 65536).
  uint32_t TmemFirst = 0, TmemEnd = 0;
  bool TmemPair = false;
  /// Iteration numbers of the loops around it, outermost first: (LoopId, value).
  llvm::SmallVector<std::pair<LoopId, uint64_t>, 2> Iterations;
  /// Probe: the agent flag it sets; Wait: the flag that, when set, skips it (-1: none).
  int8_t Flag = -1;
  /// MmaIssue (wgmma): the accumulators it writes; AccumulatorRead: those it reads
  /// (Event::Accumulators).
  uint32_t Accumulators = 0;
  /// Not empty: running the step is undefined behaviour (a multicast to a CTA outside the
  /// cluster), a violation when an agent reaches it.
  std::string Undefined;
  /// The check of DESIGN.md's catalog that Undefined is the symptom of
  /// (`cluster-multicast-mask`, `aligned-divergent`, ...).
  const char *UndefinedCheck = "";
  /// Diverge, Unknown: why the agent stops here.
  std::string Reason;
};

struct ConcreteAgent {
  std::string Name; ///< `producer@cta0`, `consumer.1@cta1`, `prologue@cta0`
  unsigned Program = 0;
  unsigned Cta = 0;
  unsigned Copy = 0;
  Placement Place = Placement::Role;
  unsigned FirstThread = 0, Threads = 0;
  std::vector<ConcreteStep> Steps;
  /// A periodic system (exploreAllTrips, Explore.h): Steps[CycleBegin, CycleEnd) are the last
  /// pass of the loop whose trip count varies with the parameter, which the agent may run
  /// again any number of times before it leaves for CycleEnd; CycleBegin == CycleEnd: none.
  uint32_t CycleBegin = 0, CycleEnd = 0;
  bool hasCycle() const { return CycleEnd > CycleBegin; }
  /// A periodic system of a persistent kernel: the last pass of the k-loop in each tile,
  /// [begin, end) in Steps, in order, one per tile (the outer cycle above runs over tiles).
  /// The agent may run each again any number of times; every agent runs the same tile's
  /// inner cycle the same number of times, which the first to leave it fixes.
  std::vector<std::pair<uint32_t, uint32_t>> InnerCycles;
  /// A merged system (exploreAllTrips, persistent kernels): launches that differ only in the
  /// CTA's tile count, with the same steps up to where the fewer tiles end, explored as one.
  /// The steps are those of the launch with the most tiles, then, from MainEnd, each other
  /// launch's steps after its last tile. At step At the agent may leave the tile loop for
  /// [Begin, End) and then finish; every agent leaves at the same exit, which the first to
  /// leave fixes (ExploreCycles.cpp). No exits: MainEnd is 0 and means Steps.size().
  /// An exit inside the outer cycle of tiles (InCycle) may be taken in every pass: in the
  /// first for [Begin, End) (a launch with fewer tiles than a pass), in a later one for
  /// [LateBegin, LateEnd) (one with that many tiles more than whole passes); every agent
  /// leaves at the same exit in the same pass.
  struct Exit {
    uint32_t At = 0, Begin = 0, End = 0;
    bool InCycle = false;
    uint32_t LateBegin = 0, LateEnd = 0;
    bool operator==(const Exit &O) const {
      return At == O.At && Begin == O.Begin && End == O.End && InCycle == O.InCycle &&
             LateBegin == O.LateBegin && LateEnd == O.LateEnd;
    }
  };
  std::vector<Exit> Exits;
  uint32_t MainEnd = 0;
  /// Threads of one agent that part at a loop whose trip count differs between them (B5's
  /// trip-count variant: one thread advances the tile scheduler, the others step by 0): the
  /// agent runs, with all its threads in lockstep, up to the first iteration that not all of
  /// them run, and is Forked; each group of threads with one trip count goes on from there
  /// as an agent of its own, which starts once agent After finished. NoIndex: not a part.
  unsigned After = NoIndex;
  bool Forked = false;
  /// A part's threads (bits by %tid.x); empty for every other agent (FirstThread, Threads).
  llvm::BitVector Mask;
};

struct BarrierInstance {
  unsigned Array = 0, Slot = 0, Cta = 0;
};
struct BufferInstance {
  unsigned Buffer = 0, Slot = 0, Cta = 0;
};

struct ConcreteSystem {
  const Protocol *P = nullptr;
  const RolePrograms *Programs = nullptr;
  unsigned ClusterSize = 1;
  unsigned BlockThreads = 0;
  std::vector<ConcreteAgent> Agents;
  std::vector<BarrierInstance> Barriers;
  std::vector<BufferInstance> Buffers;
  /// What the instance assumed (parameter values, matched operand addresses, grid).
  std::vector<std::string> Assumptions;
  /// Non-empty: the system could not be built (an unknown reached, too many steps).
  std::string Unknown;
  /// Non-empty: an epilogue step that threads of several roles run is started after every
  /// role finished, which no barrier of the PTX ensures (instance::startEpiloguesEarly):
  /// the system has some of the launch's schedules, not all, and its proofs are none.
  std::string UnjoinedEpilogue;
  /// The launch's %nctaid.x and the modeled cluster's first %ctaid.x.
  uint64_t GridCtas = 0, FirstCta = 0;
  /// Steps (program, step) the instance ran but left out of the agents: named barriers only
  /// one agent uses, which cannot block it. Coverage counts them.
  std::vector<std::pair<unsigned, unsigned>> Elided;

  unsigned barrierIndex(unsigned Array, unsigned Slot, unsigned Cta) const;
  std::string barrierName(unsigned Instance) const; ///< `full[2]@cta1`
  std::string bufferName(unsigned Instance) const;  ///< `A[0]@cta0`
};

ConcreteSystem instantiate(const RolePrograms &Programs, const Instance &I);

} // namespace analyzer
} // namespace wsv
