//===- Explain.h - a stuck kernel explained: what `wsv explain` prints -------------===//
//
// One Explanation gathers what every output format of `wsv explain` shows: the trace (a
// hardware capture or a solver counterexample, ExplainTrace.h), the protocol of the PTX it
// ran when that PTX could be loaded, the wait-for analysis (analyzer/WaitFor.h), and the
// barrier states at the end, replayed on the models/ reference mbarrier for solver traces.
// The renderers (text, JSON `wsv-explain/1`, Perfetto) only format it. EXPLAIN_JSON.md next
// to this file documents the JSON and the Perfetto layout.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "ExplainTrace.h"

#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/WaitFor.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace report {

constexpr const char *ExplainJsonSchema = "wsv-explain/1";

/// One mbarrier slot at the end of the schedule.
struct BarrierEndState {
  std::string Barrier;
  unsigned Slot = 0;
  unsigned ClusterRank = 0;
  bool Initialized = false;
  uint32_t Expected = 0;      ///< arrivals each phase needs
  uint32_t Pending = 0;       ///< arrivals the current phase still needs
  int64_t TxCount = 0;        ///< bytes the current phase still needs
  uint64_t CompletedPhases = 0;
  std::vector<std::string> Violations; ///< operations the PTX ISA leaves undefined, by step
  bool FromTrace = false;     ///< stated by the trace (Expected is then not known: 0)
  bool InCta = false;         ///< the trace named its CTA (`full[1]@cta0`): ClusterRank
  uint64_t InFlight = 0;      ///< async operations that will still complete on it (trace)
};

/// What a step did to the barriers, for the timeline.
struct StepEffect {
  std::string Note; ///< `completes full[0] phase 1`, `passes`, `blocks`, empty when none
  bool Arrival = false; ///< an arrival or delivered bytes (an instant event in Perfetto)
};

/// A stuck wait with what the capture says about it.
struct StuckGroupView {
  uint64_t WaitedNs = 0; ///< longest time one of its warps had been waiting (hardware)
  std::vector<Dim3> Ctas; ///< CTAs whose records are in the trace (stuck[])
};

/// A run of one role's consecutive steps of a solver's schedule (ExplainRuns.cpp).
struct StepRun {
  size_t First = 0, Last = 0;       ///< indices into the trace's steps, both included
  std::string Role;                 ///< `producer (warp 4)`, `consumer.0@cta1`
  std::string What;                 ///< `wait empty[0] parity 1, async-load full[0] x3`
  std::string FirstIterations, LastIterations; ///< `t=0 k=1` of its first and last step
  unsigned LowLine = 0, HighLine = 0; ///< the PTX lines it spans (0: none known)
  std::string Effects;              ///< `completes full[0] phase 0 (parity 0)`, `blocks`
};

struct Explanation {
  const Trace *T = nullptr;
  std::string PtxPath;              ///< the PTX that was analyzed; empty when none
  const analyzer::Protocol *P = nullptr;
  std::string NoProtocol;           ///< why there is no protocol (P == nullptr)
  analyzer::Snapshot Snap;
  std::vector<StuckGroupView> Groups; ///< per Snap.Stuck
  analyzer::WaitForAnalysis WaitFor;  ///< empty without a protocol
  bool HaveStates = false;            ///< barrier states replayed from the steps
  std::string NoStates;               ///< why there are none
  std::vector<BarrierEndState> States;
  std::vector<StepEffect> Effects;    ///< per T->Steps
  std::vector<StepRun> Runs;          ///< solver traces: the steps in runs of one role
};

/// The runs of one role's consecutive steps of a schedule; Effects (per step, may be
/// shorter or empty) adds what the replay says each run completed or where it blocked.
std::vector<StepRun> stepRuns(const std::vector<TraceStep> &Steps,
                              const std::vector<StepEffect> &Effects);
/// `consumer.0@cta0 [t=0 .. t=1]: wait full[0] parity 0 x2, ...  # ptx 1221-2475`: a run
/// in one line, without its step numbers and effects.
std::string runLine(const StepRun &R);

/// Where a solver's deadlock became certain (analyzer::Verdict::CertainAfter): `every
/// schedule of this launch deadlocks: ...` for 0, else `certain after step N: ...`.
std::string certainText(uint64_t Step);

/// Builds the explanation; P may be null (NoProtocol says why), then only the trace's own
/// facts are shown.
Explanation explain(const Trace &T, const analyzer::Protocol *P, std::string PtxPath,
                    std::string NoProtocol);

/// The fix the diagnosis's class usually needs; for a race no class names, where to look.
std::string fixText(const Explanation &E);

void printExplanation(const Explanation &E, llvm::raw_ostream &OS);
nlohmann::json explanationToJson(const Explanation &E);
/// Chrome trace-event JSON (ui.perfetto.dev opens it).
nlohmann::json explanationToPerfetto(const Explanation &E);

/// Small shared pieces of the renderers.
std::string warpsText(const std::vector<unsigned> &Warps);
std::string waitText(const analyzer::StuckWait &W);
/// `ptx 183, h2_producer_consumer.cu:66` of an event, or "".
std::string eventWhere(const analyzer::Protocol &P, unsigned Event);
/// The CUDA `file:line` of an event, or "".
std::string eventSource(const analyzer::Protocol &P, unsigned Event);

} // namespace report
} // namespace wsv
