// What the tests of `wsv verify`'s engines share: verify a PTX text or a file of
// tests/lit/verify/Inputs with given options, and print a verdict with its schedule.
#pragma once

#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/Verify.h"
#include "wsv/ptx_parser/Parser.h"

#include <memory>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace test {

struct Verified {
  ptx::ParseResult Parsed;
  std::unique_ptr<Protocol> P;
  std::vector<Verdict> Verdicts;
  /// The verdict on Prop (a test failure when there is none).
  const Verdict &of(Property Prop) const;
};

/// Verifies the last entry of Text; parse errors fail the current test.
std::unique_ptr<Verified> verifyText(const std::string &Text, const VerifyOptions &Options);
/// The text of tests/lit/verify/Inputs/Name (a test failure and "" when it cannot be read).
std::string verifyInput(const std::string &Name);
/// `counterexample by bmc (bound 13): ...` and the schedule, a step a line.
std::string describe(const Verdict &V);

} // namespace test
} // namespace analyzer
} // namespace wsv
