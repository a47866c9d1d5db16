//===- Sarif.h - `wsv lint --format sarif` for code scanning -------------------------===//
//
// SARIF 2.1.0 as GitHub code scanning reads it: one run whose tool.driver lists a rule per
// check of the catalog (summary, help text, category tag), results with ruleId, level,
// message, the PTX location (artifactLocation relative to a source root, region), related
// locations for the notes and the CUDA source line, and partialFingerprints that match the
// way --baseline matches (check, kernel, file name, message), so moving code does not turn a
// known finding into a new alert. Inputs that could not be read or parsed become tool
// execution notifications.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "LintResult.h"

#include <nlohmann/json.hpp>

namespace wsv {
namespace report {

struct SarifOptions {
  std::string Root;        ///< absolute directory that artifact URIs are relative to
  std::string ToolVersion;
};

nlohmann::json lintToSarif(const std::vector<LintInput> &Inputs, const SarifOptions &Options);

/// `mbarrier-tx-bytes` as SARIF's rule name: MbarrierTxBytes (the check's file name).
std::string camelName(llvm::StringRef Check);

} // namespace report
} // namespace wsv
