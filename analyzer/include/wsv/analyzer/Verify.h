//===- Verify.h - proofs and counterexamples for a kernel's protocol --------------===//
//
// `verifyProtocol` turns a Protocol into a transition system (lib/TransitionSystem.cpp) and
// asks Z3 (lib/TransitionSystemZ3.cpp, the one file of this layer besides SolverZ3.cpp that
// sees z3++.h) about three properties:
//
//   deadlock-freedom  no reachable state where an agent has not finished and no agent and no
//                     async operation in flight can move;
//   stage-safety      no read of a buffer slot (an MMA's operand, ld.shared) while an async
//                     copy into it is in flight or before any copy filled it;
//   barrier-hygiene   no arrive, expect_tx or wait on an mbarrier before its init, no phase
//                     with more arrivals than its expected count, no named barrier with more
//                     threads than its count.
//
// First the protocol is explored for every value of the k-loop's parameter (Explore.h,
// exploreAllTrips: Z3 proves the steps periodic in the k-loop, and finitely many explorations,
// some of them periodic systems, cover every K); a proof or counterexample from there is the
// answer (engine `explore`). Where that argument does not apply, the transition system below
// goes to Z3.
//
// Each answer is a value: Proved (for which parameters, under which assumptions),
// Counterexample (a schedule: agents' steps and async completions, oldest first), or Unknown
// (the reason and the bound the bounded search reached). Nothing here throws.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/Finding.h"
#include "wsv/analyzer/Protocol.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

enum class Property : uint8_t { DeadlockFreedom, StageSafety, BarrierHygiene };
const char *toString(Property P);
/// Which property a bad verdict of the explorer breaks (deadlock: deadlock freedom, race:
/// stage safety, violation: barrier hygiene).
Property brokenBy(ExploreVerdict V);

/// One step of a counterexample (named apart from Explore.h's ScheduleStep: both live in
/// wsv::analyzer, and two layouts under one name break the vectors of both): an agent
/// executing one protocol event, or an async operation completing.
struct VerifyStep {
  std::string Agent;     ///< the role (`producer`), `prologue`, `epilogue`, or `async`
  std::string What;      ///< `wait full[1] parity 0`, `TMA load completes full[1] 32768 B`
  unsigned Event = NoIndex; ///< into Protocol::Events; NoIndex for loop steps
  unsigned PtxLine = 0;
  std::string Source;    ///< `h2.cu:66`, empty without .loc
  std::optional<std::string> Barrier;
  std::optional<uint64_t> Slot;
  std::optional<uint64_t> Parity;
  std::optional<uint64_t> TxBytes;
  /// The agent's loop counters when it took the step (`k=3`).
  std::string Iterations;
  /// The explorer's transition, for a replay (`wsv explore --replay`): the agent that took
  /// the step or issued what completes (its full name, `producer@cta0`), its step, the copy
  /// of a multicast, and whether it is a completion.
  std::string Issuer;
  unsigned AgentStep = 0, Copy = 0;
  bool Completion = false;
  /// The atomic step (from 0) the transition belongs to: a role's private transitions are
  /// folded into its next one (foldPrivateSteps); the solver's traces, a step each.
  unsigned Step = 0;
};

/// What one agent was doing in the last state of a counterexample.
struct AgentState {
  std::string Agent;
  std::string State; ///< `finished`, `blocked at Wait empty[k%4] parity 0`, ...
  std::string Reason; ///< blocked: what it waits for (State without `blocked: `)
  /// A part of an agent (ConcreteAgent::After): the agent it parted from and its threads
  /// (`writeback.0`, `1-127`); empty otherwise.
  std::string PartOf, PartThreads;
  unsigned PtxLine = 0;
  bool Blocked = false;
  /// Blocked on an mbarrier wait: which slot, for which parity; on a named barrier: its id
  /// and the thread count it waits for.
  std::optional<std::string> Barrier;
  std::optional<uint64_t> Slot, Parity, NamedId, NamedThreads;
  std::string Iterations; ///< its loop counters (`k=3`)
};

/// An mbarrier slot in the last state of a counterexample.
struct BarrierState {
  std::string Name; ///< `full[1]`
  int64_t Pending = 0;
  uint64_t Phase = 0; ///< completed phases; the current parity is Phase % 2
  int64_t TxCount = 0;
  uint64_t InFlight = 0; ///< async operations that will still complete on it
};

struct Verdict {
  enum class Kind : uint8_t { Proved, Counterexample, Unknown } K = Kind::Unknown;
  Property Prop = Property::DeadlockFreedom;
  /// Proved: the parameters it holds for (`every K >= 0`, `K = 4096`).
  std::string ForParameters;
  /// Proved for the launch given (VerifyOptions::GridCtas and Params) alone, every cluster
  /// of it explored: no statement for other launches.
  bool LaunchOnly = false;
  /// Unknown, but proved on part of the launches: those where `<term> == 0`, for the
  /// parameters ProvedWhereFor says (H6 without its stream-K pieces). Empty: no such part.
  std::string ProvedWhere, ProvedWhereFor;
  /// Unknown after the explorations of small and larger launches: the PTX lines of steps
  /// none of them ran (the reason names the first eight).
  std::vector<unsigned> Unreached;
  /// What the model took for granted (box sizes, parameter ranges, cluster shape, ...).
  std::vector<std::string> Assumptions;
  /// Unknown: why. Counterexample: what goes wrong in the last state. Proved for a launch
  /// alone (LaunchOnly): the PTX lines of steps that launch does not run, if any.
  std::string Reason;
  /// Counterexample to stage safety or barrier hygiene: the catalog check whose bug the
  /// race or violation is the symptom of (`accumulator-early-read`), or "" where none fits.
  std::string Check;
  /// Unknown: the number of steps the bounded search covered without a counterexample.
  unsigned BoundReached = 0;
  /// Which engine answered (`spacer`, `bmc`).
  std::string Engine;
  /// Counterexample: the parameter values it needs (display names).
  std::map<std::string, uint64_t> Parameters;
  /// Counterexample of a launch of several clusters (a persistent kernel): %nctaid.x, and
  /// the first CTA of the cluster that was modeled; 0 when one cluster is the whole grid.
  uint64_t GridCtas = 0, FirstCta = 0;
  /// Counterexample found by the search past a race: its schedule takes racing steps, which
  /// a replay must let go on (replay's StopAtRace false).
  bool PastRaces = false;
  /// Counterexample to deadlock freedom: the step (VerifyStep::Step + 1) after which no
  /// schedule of the launch lets every agent finish, 0 when none does from the start; unset
  /// where the searches for it ran out of states (whereInevitable). The steps after it only
  /// bring the other agents to their waits.
  std::optional<unsigned> CertainAfter;
  uint64_t CertainStates = 0; ///< states those searches visited
  std::vector<VerifyStep> Schedule;
  std::vector<AgentState> FinalAgents;
  std::vector<BarrierState> FinalBarriers;
  double Milliseconds = 0;

  /// Counterexample: its atomic steps (VerifyStep::Step), at most Schedule.size().
  unsigned steps() const { return Schedule.empty() ? 0 : Schedule.back().Step + 1; }
  bool proved() const { return K == Kind::Proved; }
  bool refuted() const { return K == Kind::Counterexample; }
  bool unknown() const { return K == Kind::Unknown; }
};
const char *toString(Verdict::Kind K);

struct VerifyOptions {
  /// Fixed parameter values by display name (`K`) or PTX name; the rest stay free.
  std::map<std::string, uint64_t> Params;
  /// The launch's grid (%nctaid.x; 0: not given). With Params it states a launch in full:
  /// where the exploration makes no statement for every parameter, every cluster of that
  /// launch is explored, for a verdict on it alone.
  uint64_t GridCtas = 0;
  /// Time Z3 may spend on one property, in milliseconds (the bounded search and the proof
  /// share it).
  unsigned TimeoutMs = 10000;
  /// Work Z3's bounded search may do on one property, in units of Z3's resource count
  /// (`rlimit`); 0 for no limit but the time. Unlike time it gives the same answer on any
  /// machine and under any load: where a verdict must be reproducible (CI), set this and
  /// leave TimeoutMs as a backstop.
  uint64_t ResourceLimit = 0;
  /// Steps the bounded search unrolls before the unbounded engine takes over.
  unsigned MaxBmcSteps = 48;
  /// Try the unbounded engine (Spacer) after the bounded search. Off by default: on the
  /// kernels tried so far it ran out of time without a proof, and Z3 4.8's cancellation of a
  /// timed-out fixed-point query has corrupted the heap in our runs. Off, a proof for all
  /// parameters comes only from exhaustion (every execution ends within the bound).
  bool Unbounded = false;
  std::vector<Property> Properties = {Property::DeadlockFreedom, Property::StageSafety,
                                      Property::BarrierHygiene};
  /// First explore every value of the k-loop's parameter (Explore.h, exploreAllTrips): a
  /// proof for all of them, or a counterexample on a small launch; Z3's bounded search
  /// answers only what that leaves unknown.
  bool ExploreAllTrips = true;
  uint64_t TileK = 64;   ///< the k-tile, from the kernel's wsv_kernel_info when it has one
  /// TileK was stated (wsv_kernel_info); otherwise it is inferred from the trip counts
  /// (inferKTile, Explore.h), with TileK the largest it may be.
  bool TileKGiven = false;
  uint64_t MinTiles = 1; ///< the fewest k-tiles the kernel accepts
  /// States one exploration may visit before it says unknown (and Z3 takes over). The
  /// largest a proof of the reference kernels needs is about 49,000 (H5's periodic tile
  /// counts of K = 64, explored as one system); a larger bound only makes a search that
  /// will not end take longer and more memory to say so.
  uint64_t MaxStates = 150000;
  /// States all explorations of one kernel may visit together: B4's proof (55
  /// explorations of classes of K and tile count) takes about 93,000, H5's (61) about
  /// 420,000 and B5's (55) about 704,000, 1 to 7 s on one kernel; a larger search says
  /// unknown rather than run for minutes.
  uint64_t MaxTotalStates = 4000000;
  /// Explorations run at once (ParametricOptions::Threads; 0: the cores, at most 4).
  unsigned Threads = 0;
  /// After a deadlock, the states all explorations of the search past deadlocks (for stage
  /// safety and barrier hygiene) may visit. The seeded deadlock variants that it settles
  /// take at most about 15,000 (H5's named-barrier-count, 47 explorations); one whose search
  /// does not end (B4's arrival-count: past 330,000) says unknown after this many rather
  /// than seconds later.
  uint64_t SafetyStates = 25000;
  /// After a copy or commit landed after its CTA left, the states all explorations of the
  /// search past it may visit. H5's phase-skip deadlock and B6's whole-warp commit deadlock
  /// take up to 155,000; past B1's tx-bytes race and late copy, a search for a deadlock that
  /// is not there went on for 8 s without a bound.
  uint64_t PastLateLandingStates = 200000;
  /// After a race, the states all explorations of the search past races (for deadlock
  /// freedom and barrier hygiene) may visit. A race rarely stops the protocol early, so that
  /// search is about the correct kernel's proof: past B5's tmem-dealloc-early race it takes
  /// about 800,000 states (3 s), past H5's 150,000.
  uint64_t PastRaceStates = 1000000;
  /// Z3's time for a property the exploration did not get to (it stopped at another
  /// property's counterexample), at most TimeoutMs.
  unsigned NotExaminedTimeoutMs = 300;
  /// Z3's model lands one thread's tcgen05.commit arrivals in the order of its commits, as
  /// the explorer does, and the verdicts state it. False: in any order (and no such
  /// assumption), which shows what the assumption rules out (CommitOrderTest).
  bool CommitsInOrder = true;
  /// Progress of the exploration (ParametricOptions::OnRun).
  std::function<void(const std::string &Run, double Milliseconds)> OnExploreRun;
};

/// The verdict of each requested property, in the order of Options.Properties.
std::vector<Verdict> verifyProtocol(const Protocol &P, const VerifyOptions &Options = {});

/// A proof of stage safety does not stand next to a race that a lint check of the same
/// kernel found or says may happen (an error or a warning of the Race category): the model
/// runs the threads of a role in step, so an order between an elected thread and the rest of
/// its role (h5's bar.sync between thread 0's cp.async.bulk.wait_group.read and every
/// thread's stmatrix, and the one between their fence and thread 0's TMA store) is the lint
/// checks' alone to judge; and it orders tcgen05 operations around a synchronization by
/// program order, which the PTX ISA grants only with the tcgen05 fences
/// (tcgen05-fence-missing warns where they are missing). Each proved stage-safety verdict
/// becomes unknown, naming the first such finding.
void yieldToRaceFindings(std::vector<Verdict> &Verdicts, const std::vector<Finding> &Findings);

} // namespace analyzer
} // namespace wsv
