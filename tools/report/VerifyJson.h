//===- VerifyJson.h - verdicts as JSON, SARIF and wsv-trace/1 ----------------------===//
//
// `wsv verify --format json` writes one document per file:
//   {"schema": "wsv-verify/1", "file": ..., "kernels": [{"kernel": ..., "verdicts": [...],
//    "findings": [...]}]}
// Each verdict: {"property", "result" (proved | counterexample | unknown), "for", "engine",
// "assumptions", "reason", "bound", "parameters", "schedule", "agents", "barriers", "ms"}.
// `--format sarif` is SarifVerify.cpp's. A counterexample is also a wsv-trace/1 document
// with "source": "solver" (tools/runner/TRACE_FORMAT.md).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "Explain.h"

#include "wsv/analyzer/Finding.h"
#include "wsv/analyzer/Verify.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace wsv {
namespace report {

constexpr const char *VerifyJsonSchema = "wsv-verify/1";

nlohmann::json verdictToJson(const analyzer::Verdict &V);
nlohmann::json findingToJson(const analyzer::Finding &F);

/// One kernel's results.
struct KernelResults {
  const analyzer::Protocol *P = nullptr;
  std::vector<analyzer::Verdict> Verdicts;
  std::vector<analyzer::Finding> Findings;
};

/// Transitions [First, Last) of V's counterexample as runs of one agent's consecutive
/// transitions (ExplainRuns.cpp).
std::vector<StepRun> verdictRuns(const analyzer::Verdict &V, size_t First, size_t Last);

/// The atomic step of V's counterexample that starts at transition First, in a line: the
/// agent and what it does, with the PTX line and CUDA source; a step of several transitions
/// (a role's private ones folded into its next) as their run. End: one past its last.
std::string verdictStepLine(const analyzer::Verdict &V, size_t First, size_t &End);

/// A counterexample as a wsv-trace/1 solver trace.
nlohmann::json verdictTrace(const analyzer::Protocol &P, const analyzer::Verdict &V);

} // namespace report
} // namespace wsv
