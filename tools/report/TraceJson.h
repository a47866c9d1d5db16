//===- TraceJson.h - explorer schedules as wsv-trace/1 documents, and back --------===//
//
// A schedule the explorer (analyzer/Explore.h) found becomes a wsv-trace/1 document with
// `"source": "solver"` (tools/runner/TRACE_FORMAT.md): the steps in order, each with its
// agent, role, CTA, PTX line and CUDA source; the agents stuck at the end as `stuck` and
// `summary`, like a hardware capture; and what only a solver trace has: `verdict`,
// `message`, `race`, `barrier_states`, `assumptions`. scheduleFromTrace reads the steps back
// so that a trace can be replayed on the models (analyzer::replay).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Explore.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace report {

/// What the trace says about the run that the analysis does not know.
struct TraceOrigin {
  std::string Kernel;  ///< registry name (`h2`), or the entry when there is none
  std::string Entry;   ///< PTX entry
  std::string Variant; ///< the seeded bug's check name; empty for none
  std::string Ptx;     ///< the PTX file analyzed
};

nlohmann::json traceToJson(const analyzer::ConcreteSystem &S, const analyzer::ExploreResult &R,
                           const TraceOrigin &Origin);

/// The schedule of a solver trace, checked against S (agent names and step indices);
/// std::nullopt with Error when the trace does not fit S.
std::optional<std::vector<analyzer::ScheduleStep>>
scheduleFromTrace(const nlohmann::json &Trace, const analyzer::ConcreteSystem &S,
                  std::string &Error);

/// The parameters a solver trace states among its assumptions (`K = 384`: an instance's
/// parameters, analyzer/RoleProgramInstance.cpp), by display name; empty for none.
std::map<std::string, uint64_t> parametersFromAssumptions(const nlohmann::json &Trace);

} // namespace report
} // namespace wsv
