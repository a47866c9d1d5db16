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

#include "wsv/analyzer/Verify.h"

#include <nlohmann/json.hpp>

namespace wsv {
namespace report {

struct SarifOptions {
  std::string Root;        ///< absolute directory that artifact URIs are relative to
  std::string ToolVersion;
};

nlohmann::json lintToSarif(const std::vector<LintInput> &Inputs, const SarifOptions &Options);

/// A physicalLocation: File relative to Root (uriBaseId SRCROOT) where it lies under it, a
/// file:// URI otherwise; with a region where Line is known (Column 0: column 1).
nlohmann::json sarifPhysicalLocation(llvm::StringRef File, unsigned Line, unsigned Column,
                                     llvm::StringRef Root);

/// The fingerprint code scanning matches alerts by: a hash of the parts that name a result
/// independently of where its lines moved.
std::string sarifFingerprint(llvm::ArrayRef<std::string> Parts);

/// A kernel's verdicts for `wsv verify --format sarif`.
struct SarifVerdicts {
  std::string File, Kernel;
  const std::vector<analyzer::Verdict> *Verdicts = nullptr;
  /// Where a verdict with no line of its own points (an unknown): the kernel's first
  /// synchronization event.
  unsigned FirstLine = 1;
};

/// `wsv verify --format sarif` (SarifVerify.cpp): the lint log of Inputs' findings, with a
/// rule per property and a result per verdict that is not a proof, a counterexample's
/// schedule as its code flow.
nlohmann::json verifyToSarif(const std::vector<LintInput> &Inputs,
                             const std::vector<SarifVerdicts> &Verdicts,
                             const SarifOptions &Options);

/// `mbarrier-tx-bytes` as SARIF's rule name: MbarrierTxBytes (the check's file name).
std::string camelName(llvm::StringRef Check);

} // namespace report
} // namespace wsv
