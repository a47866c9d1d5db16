//===- Explore.h - exhaustive exploration of a protocol instance ------------------===//
//
// Runs the agents of a ConcreteSystem (RoleProgram.h) on the reference models of models/
// (Mbarrier, NamedBarrierFile, AsyncGroupQueue, Tcgen05CommitTracker, TmemAllocator) over
// every interleaving, breadth first, so the first bad state found is one with the shortest
// schedule the reduction below keeps (a race's or violation's schedule then loses the steps
// it does not need). A transition is one agent executing its next step, or asynchronous work
// completing at a moment the scheduler chooses: a TMA load's copy (its complete_tx), the
// tcgen05 MMAs that one commit waits for (the commit's arrival is all that others see of
// them). wgmma and bulk-store completions are seen only by their owner's wait_group, so they
// complete there (or once the owner finished); completing them earlier would only end reads
// sooner, which hides races and enables nothing. States are hashed. A partial-order
// reduction takes a step alone when nothing that may run before it touches what it touches:
// no operation in flight, and no step another agent can reach before stopping at an mbarrier
// wait whose phase cannot complete first (too few arrivals, or no bytes, can come from what
// may run first; a wait for a later phase of a barrier the walk already waited on needs
// that many phases, not the parity the barrier has now, and a wait a probe may skip passes
// where the phase the probe peeks at may complete; a commit in flight arrives once;
// a walk that ends a pass goes both into the next pass and out of the loop, and at an
// exit inside a cycle of tiles also into what follows leaving there in the pass it walks
// in, while no agent went past that exit),
// or at a barrier.cluster.wait whose phase lacks the held-back agent's threads; agents that
// start only once it finished (the epilogue after the roles) run nothing first.
// Such a step commutes with everything that may precede it, so the schedules it skips reach
// the same states. Touching is by kind: writes conflict with everything, reads with writes
// and updates, and updates that commute with each other (arrivals on a barrier whose
// arrivals are all the same operation, TMA fills of one slot) only with writes and reads. An
// arrive.expect_tx commutes with the copies in flight or issued first to its barrier unless
// one order completes the phase and the other does not; a copy's landing likewise commutes
// with the arrivals, expect_tx and other landings that may reach its barrier first when no
// phase can complete before it lands and, with it, only all of them complete one (B4's peer
// CTA copies landing before the leader's arrive.expect_tx). A phase that needs an
// expect_tx arrival needs at least its bytes to land too; tcgen05 operations in flight
// arrive only through the commits pending now; an agent that starts only once others
// finished (the roles after their CTA's prologue) runs nothing first while one of those
// cannot finish first. A landing taken alone goes before any step taken alone, so that the
// copies in flight when agents move on depend less on the path, except one that did not
// commute in the state a step taken alone came from: it is tried after the steps then (its
// test walks everything that may come first, and mostly fails again); tcgen05 work
// completes alone on the same terms. Copies of one role reach their own parts of a slot (as in the
// race check), so their accesses commute once the slot is filled. Reaching another CTA's barrier touches that CTA's exit, which may come first when
// every one of its agents may finish first. A step that ends its agent is never taken alone
// (the next phase starts), nor the end of a free pass of one agent with a cycle (the anchor:
// states recur only after every agent with a cycle ran a pass more, so every cycle of states
// keeps a state with every transition taken). With the reduction comes symmetry: copies of
// a role in one CTA that run the same steps, each on named barriers of its own (H5's
// consumer warpgroups), are interchangeable, and a state whose swapped image was seen is not
// expanded again (ExploreSymmetry.cpp says why that keeps the reduction sound).
//
// The schedule of a bug is then cut to the steps it needs (races and violations) and
// reordered to continue with the agent that moved last wherever that agent's next step
// commutes with what it is brought past (gatherAgents): the same steps, the same end, fewer
// switches between roles for the reader.
//
// What is found:
//  - deadlock: a state where some agent has not finished and nothing can move; each blocked
//    agent says what it waits for (barrier slot and parity, named barrier, wait_group, ...),
//    or that its threads never leave a loop (a Diverge step: their counter steps by 0)
//  - race: a TMA load into a buffer slot while an MMA, bulk store or a copy of the slot may
//    still be reading or filling it; a read (MMA operand, bulk store source, ld.shared) of a
//    slot whose fill is in flight or that nothing filled yet; a generic write into a slot a
//    bulk store or MMA may still read; a TMA store or MMA reading (through the async proxy)
//    a slot that an agent wrote with st.shared / stmatrix and has not run fence.proxy.async
//    after; a generic instruction reading wgmma accumulators whose wgmma no wait_group
//    retired yet (ProtocolAccumulators.cpp); a tcgen05.ld while its CTA has no TMEM
//    allocated (the epilogue's steps before its first barrier of all threads run at the end
//    of the role whose threads run them, RoleProgramInstance.cpp)
//  - violation: an operation the PTX ISA leaves undefined in the models (a barrier used
//    before its init, more arrivals than pending, a named barrier whose participants name
//    different counts, a TMEM dealloc of columns not allocated, a copy's complete_tx, a
//    tcgen05.commit or a peer CTA's arrival on a barrier whose init no fence.mbarrier_init
//    published, a plain store into a valid barrier's memory, a .sync.aligned collective
//    that part of a warp or warpgroup runs: ConcreteStep::Undefined; agents reaching one
//    named barrier together with more threads than it counts, whose warps may mix in one
//    instance), and an arrival, copy or
//    tcgen05.commit reaching a CTA's barrier after every agent of that CTA finished (its
//    shared memory is gone: a cluster peer left early, or a CTA left with a copy in flight)
//  - clean: every schedule ends with every agent finished and nothing in flight
//  - unknown: the system could not be built (ConcreteSystem::Unknown), the state bound
//    was reached before the search ended, or a schedule ended with an agent at a step the
//    model cannot run (a concrete Unknown step; other states may still show a bug)
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/RoleProgram.h"
#include "wsv/models/Mbarrier.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

enum class ExploreVerdict : uint8_t { Clean, Deadlock, Race, Violation, Unknown };
const char *toString(ExploreVerdict V);

/// One transition of a schedule.
struct ScheduleStep {
  enum class Kind : uint8_t {
    Execute,  ///< Agent executes Agents[Agent].Steps[Step]
    Complete, ///< the async operation that Agents[Agent].Steps[Step] issued completes
  } K = Kind::Execute;
  unsigned Agent = 0;
  unsigned Step = 0;
  unsigned Copy = 0; ///< which of a step's copies (a TMA load issued by several threads)
  /// Execute: Copy holds the choices where the step ends a pass of a periodic system's
  /// cycle; LeaveTiles instead: the agent leaves the tile loop before the step (merged
  /// systems, ConcreteAgent::Exits).
  static constexpr unsigned LeaveTiles = 4;

  friend bool operator==(const ScheduleStep &A, const ScheduleStep &B) {
    return A.K == B.K && A.Agent == B.Agent && A.Step == B.Step && A.Copy == B.Copy;
  }
};

/// An agent that cannot move at the end of a deadlocked schedule.
struct BlockedAgent {
  unsigned Agent = 0;
  unsigned Step = 0;   ///< the step it is blocked at (its program counter)
  std::string Reason;  ///< `waits for full[0] parity 0 (phase 0 pending 1, tx 0)`
};

struct ExploreOptions {
  /// States to visit at most; reaching it is an unknown verdict, never clean.
  uint64_t MaxStates = 2000000;
  bool PartialOrder = true;
  /// With PartialOrder: copies of a role that are interchangeable (consumer warpgroups with
  /// their own named barriers) are visited once per class of swapped states.
  bool Symmetry = true;
  /// States waiting to be expanded beyond this many are kept packed (a few hundred bytes
  /// each instead of kilobytes); the search is the same either way.
  uint64_t PackBeyond = 20000;
  /// Periodic systems: the most passes of the loop one agent may run ahead of another
  /// before the search gives up (unknown).
  uint32_t MaxLag = 16;
  /// Expands the newest state first instead of the oldest: within MaxStates it reaches the
  /// late k-tiles of a launch too large to search in full. For bugs only: its schedule is
  /// a real one (replayed) but not the shortest.
  bool DepthFirst = false;
  /// A race's or violation's schedule loses the steps it does not need: agents stop early,
  /// one last step at a time, while the schedule still replays to the same bug.
  bool Shorten = true;
  /// False: a state where unfinished agents can no longer move ends its schedule as a
  /// finished one does, and the search goes on; clean then means no race or violation in
  /// any reachable state (the safety properties of a protocol that may deadlock).
  bool StopAtDeadlock = true;
  /// False: a step that races (a stage read before its fill, overwritten under a read, ...)
  /// goes on as if it did not, and the search goes on; clean then means no deadlock and no
  /// barrier violation in any reachable state (those properties of a protocol that races:
  /// what the barriers do does not depend on the data a race corrupts).
  bool StopAtRace = true;
  /// The schedule then continues with the agent that moved last wherever that agent's next
  /// step commutes with the transitions it is brought past (the same steps, the same end):
  /// it reads one role at a time.
  bool Gather = true;
};

struct ExploreResult {
  ExploreVerdict Verdict = ExploreVerdict::Unknown;
  std::string Message; ///< the race, violation or reason for unknown; the deadlock in words
  /// The shortest schedule to the bad state that the reduction keeps, less the steps of
  /// agents a race or violation does not need (one schedule with DepthFirst).
  std::vector<ScheduleStep> Schedule;
  std::vector<BlockedAgent> Blocked;  ///< deadlock: every unfinished agent
  /// Race: the buffer slot instance and the two steps involved (the second is the one that
  /// made the race: Schedule.back()).
  unsigned RaceBuffer = NoIndex;
  ScheduleStep RaceWith;
  /// Race or violation: the catalog check whose bug it is the symptom of, or "".
  std::string Check;
  /// Violation: a barrier init that no fence.mbarrier_init made visible was used
  /// (RolePrograms::InitsVisible decides the other properties past it).
  bool UnpublishedInit = false;
  /// Violation: a copy or tcgen05.commit landed after its CTA exited
  /// (RolePrograms::LateLandingsDropped decides the other properties past it).
  bool LateLanding = false;
  /// Every barrier instance's state at the end of the schedule.
  std::vector<models::Mbarrier> Barriers;
  uint64_t States = 0;      ///< distinct states visited
  unsigned SymmetryGroups = 0; ///< groups of interchangeable agents (ExploreOptions::Symmetry)
  uint64_t Transitions = 0; ///< transitions taken
};

/// Explores every interleaving of S; S.Unknown makes the verdict unknown at once.
ExploreResult explore(const ConcreteSystem &S, const ExploreOptions &Options = {});

/// Re-executes Schedule on the models from the initial state. The verdict is that of the
/// state it ends in: deadlock when nothing can move there, race or violation when the last
/// step makes one, clean when every agent finished, unknown (with the reason) when a step of
/// the schedule is not enabled where it is taken.
ExploreResult replay(const ConcreteSystem &S, llvm::ArrayRef<ScheduleStep> Schedule,
                     bool StopAtRace = true);

/// Where a deadlock became certain (ExploreInevitable.cpp): Step is the fewest steps of the
/// deadlock's schedule after which no schedule of the launch lets every agent finish
/// without a barrier misuse; 0 when none does from the start (every schedule deadlocks).
struct Inevitability {
  size_t Step = 0;
  uint64_t States = 0; ///< states the searches visited
  /// Where Step > 0: a schedule from the state after Step - 1 steps in which every agent
  /// finishes (what the timing could still have done).
  std::vector<ScheduleStep> Escape;
};
/// Nothing where Schedule is not a deadlock's schedule of S, or the searches need more than
/// MaxStates states in all.
std::optional<Inevitability> whereInevitable(const ConcreteSystem &S,
                                             llvm::ArrayRef<ScheduleStep> Schedule,
                                             uint64_t MaxStates = 500000);

/// Schedule reordered so that an agent's next step follows its last wherever it can be
/// brought forward: adjacent transitions are swapped only where both orders are enabled,
/// raise nothing and end in the same state (ExploreGather.cpp), so the result reaches the
/// same state. With KeepLast, the last transition (a race's or violation's) stays last. A
/// schedule that is not one of S comes back as it is.
std::vector<ScheduleStep> gatherAgents(const ConcreteSystem &S,
                                       std::vector<ScheduleStep> Schedule, bool KeepLast);

/// A schedule in atomic steps: every private transition (what it touches, no step of an
/// agent that may run at the same time and no completion touches; it cannot block) moved to
/// right before its agent's next transition and folded into it (ExploreFold.cpp says why
/// that is sound).
/// Step[I]: the step, from 0 in order, that Schedule[I] belongs to; a step's transitions
/// are consecutive. A schedule that does not replay to the same end folded, and those of
/// periodic or merged systems, come back as they are, a step per transition.
struct FoldedSchedule {
  std::vector<ScheduleStep> Schedule;
  std::vector<uint32_t> Step;
  uint32_t steps() const { return Step.empty() ? 0 : Step.back() + 1; }
};
FoldedSchedule foldPrivateSteps(const ConcreteSystem &S, std::vector<ScheduleStep> Schedule,
                                bool StopAtRace);

/// A small instance of a reference-style GEMM kernel (parameters K, M, N): K = KTiles * TileK
/// and, when some loop's trip count reads %ctaid / %nctaid (a persistent tile loop), M, N and
/// the grid chosen so that CTA 0 runs Tiles tiles. Tiles is ignored for kernels without such
/// a loop. std::nullopt when no candidate shape gives Tiles tiles.
std::optional<Instance> chooseInstance(const RolePrograms &Programs, uint64_t TileK,
                                       unsigned KTiles, unsigned Tiles);

/// The k-tile of a kernel that names none (no wsv_kernel_info): the step of the parameter the
/// k-loops count with that adds one iteration to each of them (`for k < k_tiles`: 1; K / 64
/// or (K + 63) / 64: 64), a power of two up to Default; Default where there is no such
/// parameter or step. The argument for every value then runs its small launches on the
/// fewest iterations: 64 k-tiles of a loop over a count would be out of its reach.
uint64_t inferKTile(const RolePrograms &Programs, uint64_t Default);

//===- Every trip count (ExploreParametric.cpp) ------------------------------------===//

struct ParametricOptions {
  uint64_t TileK = 64;   ///< the parameter's step (K = TileK * j)
  uint64_t MinTiles = 1; ///< the fewest k-tiles the kernel accepts (LaunchSpec::MinKTiles)
  /// The k-tile and tile counts the lemmas assume below these (a statement for the
  /// launches whose counts are, where the caller lowers them: ExploreUnflatten.cpp).
  uint64_t TripsBelow = uint64_t(1) << 24, TilesBelow = uint64_t(1) << 28;
  /// Other parameters' values (M, N): they must not change the protocol (the lemmas check
  /// that only the trip count's parameter matters).
  std::map<std::string, uint64_t> Params = {{"M", 256}, {"N", 256}};
  uint64_t ScanTiles = 256; ///< multiples of TileK evaluated for the small trip counts
  uint64_t MaxStates = 2000000;
  /// States all the explorations together may visit (0: no limit); spent, the verdict is
  /// unknown, never clean.
  uint64_t MaxTotalStates = 0;
  uint32_t MaxLag = 16;
  /// Per Z3 query: the work it may do, in units of Z3's resource count (Solver::createZ3),
  /// and the time that stops a query gone wrong. The work binds first, so that which
  /// lemmas hold, and with them the classes explored and the verdict, do not depend on the
  /// machine's load; the reference kernels' queries take at most about 370,000 units (0.1 s
  /// here). Queries that read the grid's tile count get ten times both.
  uint64_t ResourceLimit = 1000000;
  unsigned TimeoutMs = 5000;
  /// Persistent kernels: explore the periodic tile counts of each class of K as one system,
  /// and its small tile counts from 1 as another (ConcreteAgent::Exits), or both as one
  /// with exits inside the cycle of tiles, rather than one by one; the verdict is the same.
  bool MergeTileCounts = true;
  /// With MergeTileCounts: both as one system with exits inside the cycle, where a tile has
  /// at least as many k-tiles as the deepest ring has slots (ExploreParametricTiles.cpp).
  bool MergeTileCycle = true;
  /// ExploreOptions::StopAtDeadlock of every exploration: false proves freedom from races
  /// and violations alone.
  bool StopAtDeadlock = true;
  /// ExploreOptions::StopAtRace of every exploration: false proves deadlock freedom and
  /// barrier hygiene of a protocol that races.
  bool StopAtRace = true;
  /// Where no statement for every parameter is made: after the small launches, explore
  /// larger ones that run steps those did not (ExploreCoverage.cpp).
  bool CoverSteps = true;
  /// With CoverSteps: then launches drawn until one meets the path to each step no launch
  /// ran, explored where they run it (ExploreDirected.cpp).
  bool DrawLaunches = true;
  /// Explorations run at once where the argument needs several (the classes of K): each
  /// has its own simulator, the results are taken in order, and the verdict, message and
  /// state count are those of running them one by one. 0: the cores, at most 4 (each may
  /// hold MaxStates states).
  unsigned Threads = 0;
  /// Called after each exploration with its line of ParametricResult::Runs and its time:
  /// progress for a caller to show while a long argument runs.
  std::function<void(const std::string &Run, double Milliseconds)> OnRun;
  /// The values the user fixed (`--param`): a counterexample counts only on a launch that
  /// has them (those the protocol reads, and Launch's grid where it reads %nctaid.x). One
  /// found elsewhere is stated in the reason, and launches with the fixed values are
  /// searched instead: Launch when it is given, the small launches otherwise.
  std::map<std::string, uint64_t> Fixed;
  /// A launch given in full (every parameter the protocol reads, and GridCtas): where no
  /// statement for every parameter can be made, each cluster of its grid is explored, for
  /// a verdict on this launch alone (ParametricResult::WholeLaunch).
  std::optional<Instance> Launch;
};

struct ParametricResult {
  /// Clean: no deadlock, race or violation for any value in ForParameters; Deadlock, Race,
  /// Violation: Found is the shortest schedule on Launch.
  ExploreVerdict Verdict = ExploreVerdict::Unknown;
  std::string Parameter;     ///< `K`; empty when no trip count depends on a parameter
  std::string ForParameters; ///< `every K = 64*j with j >= 1 and K < 2^24`
  std::string Reason;        ///< unknown: why; found: where
  /// The steps repeat every Period iterations from iteration Threshold up to the last Tail.
  unsigned Period = 0, Threshold = 0, Tail = 0;
  /// Persistent kernels: the tiles repeat with the same period from tile TileThreshold.
  bool Tiles = false;
  unsigned TileThreshold = 0;
  std::vector<uint64_t> SmallTrips; ///< trip counts explored as single launches
  std::vector<std::string> Runs;    ///< each exploration and its verdict, in order
  /// Unknown after small and larger launches: the PTX lines of steps none of them ran
  /// (the reason names the first eight).
  std::vector<unsigned> Unreached;
  unsigned SolverQueries = 0;
  uint64_t States = 0;
  /// Clean for O.Launch alone (ForParameters names it): why no statement for every
  /// parameter was made, and the PTX lines of steps the launch does not run (empty: none).
  bool WholeLaunch = false;
  std::string NotForEvery, NotRun;
  /// A counterexample on a launch without the values fixed (ParametricOptions::Fixed),
  /// which the verdict is not about; and, where the argument then ran for the fixed K
  /// alone (a persistent kernel's tile counts), that K.
  std::string Elsewhere;
  std::optional<uint64_t> OnlyK;
  /// Unknown for every parameter, but proved where a term of the launch is 0 (H6 without
  /// its stream-K pieces): `<term> == 0`, and for which K and tile counts it holds there.
  std::string Restricted, RestrictedFor;
  Instance Launch; ///< the launch Found is a schedule of
  ExploreResult Found;
  double Milliseconds = 0;
};

/// Explores the protocol for every value of the one parameter its trip counts depend on:
/// Z3 proves that the steps repeat with the slots' period, a few launches are explored as
/// they are, and one periodic system per residue of the trip count stands for all longer
/// ones. Unknown, with the reason, where the argument does not apply.
ParametricResult exploreAllTrips(const RolePrograms &Programs,
                                 const ParametricOptions &Options = {});

/// Role programs that behave as a kernel's wherever Term, a value of the launch alone (its
/// parameters and %nctaid.x), is 0, and that have the shape the argument for every
/// parameter takes: one loop over tiles per role (ExploreRestriction.cpp). H6's count of
/// stream-K tiles is such a term: where it is 0 the loops of its pieces never run.
struct Restriction {
  const Expr *Term = nullptr;
  RolePrograms Programs;
  std::vector<unsigned> DeadLines; ///< PTX lines of the loops that then never run
};
/// Nothing where the programs have the argument's shape already, or no such term gives it.
std::optional<Restriction> findRestriction(const RolePrograms &RP);

/// A loop of NT * T iterations (tiles x k-tiles) written as a loop over NT tiles around
/// one over T k-tiles (ExploreUnflatten.cpp).
struct UnflattenedLoop {
  unsigned ProtocolLoop = NoIndex;
  const Expr *T = nullptr, *NT = nullptr;
};
struct Unflattened {
  RolePrograms Programs;
  std::vector<UnflattenedLoop> Loops;
};
/// The programs with every top-level loop of NT * T iterations made two (all with one T),
/// and the loops no k-tile count enters marked never run; nothing where no loop has that
/// shape. They run the kernel's steps wherever T < 2^14 and NT < 2^12 (the bounds the
/// argument for them states).
std::optional<Unflattened> unflatten(const RolePrograms &RP);

/// A key of everything an exploration of S reads: systems with equal keys have the same
/// schedules (ExploreLaunch.cpp explores one cluster per key).
std::string systemKey(const ConcreteSystem &S);

/// `producer@cta0 wait full[0] parity 1 (k=0)`, `complete TMA load of producer@cta0 ...`
std::string describe(const ConcreteSystem &S, const ScheduleStep &Step);

} // namespace analyzer
} // namespace wsv
