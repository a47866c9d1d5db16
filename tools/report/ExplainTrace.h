//===- ExplainTrace.h - a wsv-trace/1 document as plain data ----------------------===//
//
// The reader behind `wsv explain`: one JSON format for hangs captured on hardware by
// `wsv run --check` (a snapshot of where every warp is stuck) and for counterexamples of the
// solver or the explorer (the same snapshot plus the schedule that led there, `steps`).
// tools/runner/TRACE_FORMAT.md is the format; this reader checks every field it uses and
// names the one that is wrong, so a bad file is a clear error rather than a half explanation.
// Solver traces may leave out what only hardware knows (warps, clocks, the grid, the summary)
// and may add what only a solver knows (`launch.parameters`, `final_barriers`, counters as
// text); hardware captures must have every field of the format.
//
//   llvm::Expected<report::Trace> T = report::readTrace(Text);
//   if (!T) ... llvm::toString(T.takeError()) ...   // "stuck[3].wait.parity: expected 0 or 1"
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace report {

constexpr const char *TraceSchema = "wsv-trace/1";

/// What a warp waits for.
struct TraceWait {
  enum class Kind : uint8_t {
    Mbarrier, ///< mbarrier.try_wait.parity: Barrier, Index, Parity
    Named,    ///< bar.sync / barrier.sync: Id, Threads
    Other,    ///< anything else a solver saw an agent stop at: Op says what (a loop that
              ///< never ends, a role that waits for others to finish)
  };
  Kind K = Kind::Mbarrier;
  std::string Op;      ///< the PTX opcode as the trace writes it
  std::string Barrier; ///< the mbarrier array
  unsigned Index = 0;  ///< its slot (the pipeline stage)
  unsigned Parity = 0; ///< the phase parity waited for
  unsigned Id = 0;     ///< named barrier id, 0..15
  unsigned Threads = 0; ///< the thread count the warp passed to the named barrier
  bool isMbarrier() const { return K == Kind::Mbarrier; }
  /// `full[0] parity 1` or `bar.sync 2, 256`.
  std::string str() const;
  bool sameWait(const TraceWait &O) const;
};

using Dim3 = std::array<unsigned, 3>;

/// One warp inside a wait when the trace was taken.
struct TraceStuck {
  std::string Role;
  Dim3 Cta = {0, 0, 0};
  unsigned ClusterRank = 0;
  unsigned Warp = 0;
  bool WarpKnown = true; ///< false where a solver names no warp
  std::optional<unsigned> Sm; ///< %smid (hardware only)
  TraceWait Wait;
  uint64_t Iteration = 0; ///< the role's loop counter when the wait began
  std::string IterationText; ///< a solver's counters as it wrote them (`t=1 k=3`), or ""
  unsigned PtxLine = 0;      ///< where a solver says the wait is; 0 when not given
  /// A solver's part of an agent whose threads parted at a loop: the agent and its threads
  /// (`writeback.0`, `1-127`); empty otherwise.
  std::string PartOf, PartThreads;
  uint64_t SinceNs = 0;   ///< %globaltimer when the wait began (0 for solver traces)
  uint64_t CapturedNs = 0;
  bool Reporter = false;
};

/// `stuck` grouped by role, wait and slot.
struct TraceGroup {
  std::string Role;
  TraceWait Wait;
  unsigned Ctas = 0;
  std::vector<unsigned> Warps;
  uint64_t FirstIteration = 0, LastIteration = 0;
};

/// One instruction of the schedule of a solver counterexample.
struct TraceStep {
  std::string Role;
  Dim3 Cta = {0, 0, 0};
  std::optional<unsigned> Warp;
  std::string Op;
  std::optional<std::string> Barrier;
  std::optional<unsigned> Index;
  std::optional<unsigned> Parity;
  std::optional<uint64_t> TxBytes;
  std::optional<unsigned> Count; ///< arrivals, where the writer states them
  /// A try_wait tried once (a peek): it only looks at the phase; a wait that its success
  /// lets the role skip comes later.
  bool Probe = false;
  unsigned PtxLine = 0;
  std::string Source; ///< `file:line` of the CUDA source, empty when unknown
  std::string Iterations; ///< a solver's loop counters at the step (`t=0 k=1`), or empty
  /// `wsv verify`'s traces: the atomic step (from 0) the transition belongs to, where a
  /// role's private transitions are folded into its next one (VerifyStep::Step).
  std::optional<unsigned> Step;
};

struct TraceLaunch {
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1}, Cluster = {1, 1, 1};
  uint64_t SmemBytes = 0;
  uint64_t M = 0, N = 0, K = 0;
  std::string Dtype;
  /// Kernel parameters by display name, as a solver trace states them (`K` = 128).
  std::map<std::string, uint64_t> Parameters;
  /// A solver trace of one cluster of a larger grid: that cluster's first %ctaid.x.
  std::optional<uint64_t> FirstCta;
};

/// A barrier slot's state at the end, as a solver trace states it.
struct TraceBarrierState {
  std::string Name; ///< `full[1]`
  int64_t Pending = 0;
  uint64_t Phase = 0; ///< completed phases
  int64_t TxCount = 0;
  uint64_t InFlight = 0; ///< async operations that will still complete on it
};

struct Trace {
  enum class Origin : uint8_t { Hardware, Solver };
  Origin Source = Origin::Hardware;
  std::string Kernel;  ///< registry name (`h2`)
  std::string Entry;   ///< the PTX entry (`h2_bf16`)
  std::string Variant; ///< the seeded bug's check name; empty for the kernel itself
  std::string Ptx;     ///< the PTX file that ran or was analyzed, as the writer saw it
  TraceLaunch Launch;
  std::vector<std::string> Roles;    ///< role names by role id
  std::vector<std::string> Barriers; ///< mbarrier array names by barrier id
  uint64_t TimeoutNs = 0;
  uint64_t TimeOriginNs = 0;
  std::vector<TraceStuck> Stuck;
  std::vector<TraceGroup> Summary;
  std::vector<std::string> SilentRoles;
  uint64_t Dropped = 0;
  std::vector<TraceStep> Steps;
  std::vector<TraceBarrierState> FinalBarriers; ///< solver traces that state them
  /// Solver traces: `deadlock` or `race` (a race or a barrier misuse), the property, what
  /// goes wrong in the last state, and the catalog check it is the symptom of (may be empty).
  std::string Verdict, Property, Reason, Check;
  /// Solver deadlocks: the step after which no schedule lets every agent finish (0: none
  /// does from the start), where the solver found it.
  std::optional<uint64_t> CertainAfter;

  bool fromSolver() const { return Source == Origin::Solver; }
  /// A solver's race or barrier misuse: nobody needs to be stuck at its end.
  bool isRace() const { return fromSolver() && Verdict == "race"; }
};

/// Parses and checks a wsv-trace/1 document. The error names the field (`stuck[2].warp`)
/// and what was expected there.
llvm::Expected<Trace> readTrace(llvm::StringRef Text);

} // namespace report
} // namespace wsv
