//===- VerifyJson.h - verdicts as JSON, SARIF and wsv-trace/1 ----------------------===//
//
// `wsv verify --format json` writes one document per file:
//   {"schema": "wsv-verify/1", "file": ..., "kernels": [{"kernel": ..., "verdicts": [...],
//    "findings": [...]}]}
// Each verdict: {"property", "result" (proved | counterexample | unknown), "for", "engine",
// "assumptions", "reason", "bound", "parameters", "schedule", "agents", "barriers", "ms"}.
// `--format sarif` writes SARIF 2.1.0 with one result per lint finding and per verdict that
// is not a proof. A counterexample is also a wsv-trace/1 document with "source": "solver"
// (tools/runner/TRACE_FORMAT.md).
//
//===----------------------------------------------------------------------------------===//
#pragma once

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

/// One kernel's results for a SARIF run.
struct KernelResults {
  const analyzer::Protocol *P = nullptr;
  std::vector<analyzer::Verdict> Verdicts;
  std::vector<analyzer::Finding> Findings;
};

/// A SARIF 2.1.0 log of a file's kernels.
nlohmann::json verifySarif(const std::string &File, const std::vector<KernelResults> &Kernels);

/// A counterexample as a wsv-trace/1 solver trace.
nlohmann::json verdictTrace(const analyzer::Protocol &P, const analyzer::Verdict &V);

} // namespace report
} // namespace wsv
