// Writes hangs as "wsv-trace/1" documents, the one trace format wsv uses for hardware captures
// and solver counterexamples alike (tools/runner/TRACE_FORMAT.md describes it; `wsv explain`
// reads it).
#pragma once

#include "wsv/runner/Gemm.h"
#include "wsv/runner/HangReport.h"

#include <cstdint>
#include <string>

namespace wsv {
namespace runner {

constexpr const char *TraceSchema = "wsv-trace/1";

/// How the traced kernel was launched.
struct TraceLaunch {
  std::string Kernel;  ///< registry name ("h2")
  std::string Entry;   ///< PTX entry ("h2_bf16")
  std::string Variant; ///< the seeded bug's check name, or empty
  std::string PtxFile; ///< the PTX file that ran
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint32_t Cluster[3] = {1, 1, 1};
  uint32_t SmemBytes = 0;
  Problem P;
};

/// The capture as a wsv-trace/1 JSON document (source "hardware"), pretty-printed.
std::string hangTraceJson(const HangReport &Report, const TraceLaunch &Launch);

} // namespace runner
} // namespace wsv
