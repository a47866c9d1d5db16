//===- LintResult.h - what `wsv lint` found in one input ----------------------------===//
//
// The records the lint driver fills and the renderers (text, JSON, SARIF) read. One input is
// one PTX text: a file, standard input, or one PTX section of a CUDA object. The parsed
// Module is kept so that renderers can show source lines under their carets.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Finding.h"
#include "wsv/ptx_parser/Diagnostics.h"
#include "wsv/ptx_parser/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace wsv {
namespace report {

enum class InputStatus : uint8_t {
  Checked,    ///< parsed, and every selected entry's protocol went through the checks
  NoKernel,   ///< parsed, but holds no kernel entry (or none named by --kernel)
  ParseError, ///< syntax errors: nothing was checked
  Unreadable, ///< could not be read (or its PTX could not be extracted)
};
const char *toString(InputStatus S);

struct LintInput {
  std::string Name; ///< as diagnostics name it: the path, `<stdin>`, or `app.o(1.sm_90a.ptx)`
  InputStatus Status = InputStatus::Unreadable;
  std::string Error; ///< Unreadable: why
  std::unique_ptr<ptx::Module> Module;             ///< null when Unreadable
  std::vector<ptx::Diagnostic> ParseDiagnostics;   ///< in the order the parser reported them
  std::vector<std::string> Kernels;                ///< the entries that were checked
  std::vector<analyzer::Finding> Findings;         ///< sorted (Finding.h)
};

/// Counts over what is reported (after a baseline removed known findings).
struct LintTotals {
  unsigned Errors = 0;
  unsigned Warnings = 0;
  unsigned Remarks = 0;
  unsigned Files = 0;      ///< inputs, PTX sections of objects counted one each
  unsigned BadInputs = 0;  ///< unreadable or not parsing
  unsigned Suppressed = 0; ///< findings the baseline already had
};

LintTotals countFindings(const std::vector<LintInput> &Inputs);

} // namespace report
} // namespace wsv
