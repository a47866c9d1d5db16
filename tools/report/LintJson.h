//===- LintJson.h - `wsv lint --format json` and baselines ---------------------------===//
//
// The document (schema wsv-lint/1, LINT_JSON.md next to this file documents every field):
//   {"schema": "wsv-lint/1", "tool": {...}, "inputs": [...], "findings": [...], "summary": {...}}
// A previous document is also a baseline: `--baseline old.json` leaves out the findings it
// already has, matched by check, kernel, file name and message (not by line, so that edits
// above a finding do not bring it back).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "LintResult.h"

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <tuple>

namespace wsv {
namespace report {

constexpr const char *LintJsonSchema = "wsv-lint/1";

nlohmann::json lintToJson(const std::vector<LintInput> &Inputs, const LintTotals &Totals,
                          llvm::StringRef ToolVersion);

/// The findings of a previous `--format json` output, counted by what a baseline matches on.
class Baseline {
public:
  static llvm::Expected<Baseline> load(llvm::StringRef Path);
  /// Removes from Inputs every finding the baseline has (each baseline entry matches one
  /// finding); returns how many were removed.
  unsigned apply(std::vector<LintInput> &Inputs);

private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  static Key keyOf(llvm::StringRef Check, llvm::StringRef Kernel, llvm::StringRef File,
                   llvm::StringRef Message);
  std::map<Key, unsigned> Known;
};

} // namespace report
} // namespace wsv
