//===- Finding.h - what a check reports ---------------------------------------------===//
//
// A finding states a fact about the protocol and its consequence, at the instruction it is
// about, with notes at the related instructions (where the barrier was initialized, who else
// arrives). Renderers (text with a caret, JSON, SARIF) live in tools/; the checks only fill
// these records. Messages follow the diagnostics style of DESIGN.md: lowercase, no final
// period, "<fact>, <consequence>".
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// Errors: what must happen on some execution. Warnings: what may happen. Remarks: what the
/// analysis could not decide (an unknown count, an unresolved barrier) and so did not check.
enum class Severity : uint8_t { Error, Warning, Remark };
const char *toString(Severity S);

struct FindingNote {
  std::string Message;
  SourceRef Where; ///< PtxLine 0 when the note is about no particular line
};

struct Finding {
  std::string Check;   ///< the check's kebab-case name, `mbarrier-tx-bytes`
  Severity Level = Severity::Error;
  std::string Message; ///< `<fact>, <consequence>`
  std::string Kernel;  ///< the entry the protocol belongs to
  std::string File;    ///< the PTX file
  SourceRef Where;     ///< the instruction the finding is about
  std::vector<FindingNote> Notes;
};

/// Orders findings by file, PTX line, column, check name and message, so output is stable
/// whatever order checks ran in.
bool operator<(const Finding &A, const Finding &B);

} // namespace analyzer
} // namespace wsv
