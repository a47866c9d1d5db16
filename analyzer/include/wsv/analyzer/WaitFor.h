//===- WaitFor.h - who waits on whom in a stuck kernel, and why nobody can arrive --===//
//
// The reasoning behind `wsv explain`. A snapshot says where groups of warps are stuck (a
// hardware capture of `wsv run --check`, or the end state of a solver counterexample), in the
// trace's own names: role `producer`, barrier `empty`, slot 0, parity 0, iteration 4. The
// protocol says what each role does. Put together:
//
//   - each stuck wait is matched to the protocol's wait event(s) on that barrier in that role,
//     so it gets its PTX and CUDA lines, and its captured slot and parity are checked against
//     the event's closed forms at the captured iteration where that can be evaluated;
//   - for each stuck wait, the roles that can complete the barrier (arrive, arrive.expect_tx,
//     TMA complete_tx, commit) or reach the named barrier, and where those roles are: stuck
//     themselves (a wait-for edge), silent (finished, or blocked where nothing is
//     instrumented), or absent;
//   - the cycle among the stuck waits, if the edges close one;
//   - the bug class the shape and the protocol point to, with the fix it usually needs.
//
//   WaitForAnalysis W = analyzeWaitFor(P, Snapshot);
//   for (const WaitEdge &E : W.Edges) ...
//
// Nothing here guesses silently: a class is named only with the facts that support it
// (Diagnosis::Evidence), and "unclassified" says which facts were missing.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// Warps of one role found in one wait, in the trace's names.
struct StuckWait {
  std::string Role;
  std::vector<unsigned> Warps; ///< warp indices in the CTA (threadIdx.x / 32)
  bool Named = false;          ///< a named barrier (bar.sync) rather than an mbarrier
  std::string Barrier;         ///< mbarrier array name
  unsigned Slot = 0;
  unsigned Parity = 0;
  unsigned NamedId = 0;
  unsigned NamedThreads = 0;
  /// Neither: what a solver saw the role stop at (a loop that never ends); no barrier.
  std::string Other;
  /// A solver's part of an agent whose threads parted at a loop (its trip count differs
  /// between them): the agent and the part's threads; empty otherwise.
  std::string PartOf, PartThreads;
  uint64_t FirstIteration = 0, LastIteration = 0;
  unsigned Ctas = 1; ///< CTAs in which these warps were found in this wait
};

/// Where a kernel was found stuck.
struct Snapshot {
  std::vector<std::string> Roles;       ///< every role name of the trace
  std::vector<StuckWait> Stuck;
  std::vector<std::string> Silent;      ///< roles with no warp inside a wait
  std::map<std::string, uint64_t> Params; ///< kernel parameters by display name (K = 1088)
};

/// A protocol event with the loops around it.
struct EventSite {
  unsigned Event = 0; ///< into Protocol::Events
  std::vector<unsigned> Loops; ///< into Protocol::Loops, outermost first
  unsigned Order = 0; ///< position in its role's sequence (prologue first, epilogue last)
};

/// A stuck wait and the protocol's view of it.
struct WaitMatch {
  std::vector<unsigned> Roles;   ///< protocol roles the trace role maps to
  std::vector<EventSite> Waits;  ///< the protocol's wait events it can be
  /// `protocol: empty[k%4] parity ((k/4)&1)^1 gives empty[0] parity 1 at k=4`, or why the
  /// captured values could not be checked; empty when there is nothing to say.
  std::string Check;
  bool Contradicts = false; ///< the closed forms give another slot or parity at that iteration
};

/// How a role that could end a wait stands in the snapshot.
enum class PeerState : uint8_t {
  Stuck,  ///< inside a wait of the snapshot
  Silent, ///< no warp in a wait: finished, or blocked where nothing is instrumented
  Absent, ///< the protocol has the role, the trace names none for it
  Self,   ///< the waiting role itself
};
const char *toString(PeerState S);

/// `From` waits on a barrier that `Role`'s events complete.
struct WaitEdge {
  unsigned From = 0;          ///< into Snapshot::Stuck
  unsigned Role = 0;          ///< the protocol role that can complete it
  std::string TraceRole;      ///< its name in the trace, empty when absent
  PeerState State = PeerState::Absent;
  std::vector<unsigned> To;   ///< stuck waits of that role (State == Stuck)
  std::vector<EventSite> Completions; ///< its events on the barrier
  /// Stuck: whether every completion comes after the role's own stuck wait in its sequence
  /// (it cannot arrive before it gets past the wait); nullopt when that cannot be told.
  std::optional<bool> CompletesAfterItsWait;
};

enum class BugClass : uint8_t {
  InitialPhase,
  ArrivalCount,
  TxBytes,
  NoArriver,
  TripCount,
  PhaseSkip,
  BarrierDivergent,
  NamedBarrierCount,
  NamedBarrierIdCollision,
  SetmaxnregNonuniform,
  // What a solver's race or barrier misuse is the symptom of (its trace names the check).
  SmemRawWait,
  SmemWarRelease,
  BulkStoreReuse,
  ProxyFenceMissing,
  AccumulatorEarlyRead,
  TmemDeallocEarly,
  MbarrierInitVisibility,
  ClusterExitEarly,
  MbarrierReuse,
  Tcgen05AllocExhaustion,
  Tcgen05AllocLaneGuard,
  AlignedDivergent,
  ClusterMulticastMask,
  Tcgen05CommitMultiThread,
  Unclassified,
};

struct Diagnosis {
  BugClass Class = BugClass::Unclassified;
  std::vector<std::string> Evidence; ///< the facts, one sentence each
};

/// The check that catches a class statically (`mbarrier-initial-phase`), or "" for none.
const char *checkName(BugClass C);
/// The fix this class usually needs, in a sentence or two.
const char *fixAdvice(BugClass C);
/// The class whose check is named Check (checkName's inverse); Unclassified for "" or a
/// name of none.
BugClass bugClassOf(const std::string &Check);

struct WaitForAnalysis {
  std::vector<WaitMatch> Matches; ///< per Snapshot::Stuck
  std::vector<WaitEdge> Edges;
  /// Stuck waits that wait on each other in a ring, in order (each waits on the next);
  /// empty when the edges close no cycle.
  std::vector<unsigned> Cycle;
  Diagnosis Why;
};

WaitForAnalysis analyzeWaitFor(const Protocol &P, const Snapshot &S);

/// Evaluates a closed form of P where loop Loop's iteration number is Iteration and the
/// parameters have the values of Params (by display name); nullopt if anything else appears.
std::optional<uint64_t> evaluateAt(const Protocol &P, const Expr *E,
                                   const std::map<unsigned, uint64_t> &Iterations,
                                   const std::map<std::string, uint64_t> &Params);

} // namespace analyzer
} // namespace wsv
