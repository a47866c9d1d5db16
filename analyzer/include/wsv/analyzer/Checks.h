//===- Checks.h - the check catalog of DESIGN.md over the protocol IR --------------===//
//
//   std::unique_ptr<Protocol> P = buildProtocol(M, F);
//   llvm::Expected<CheckSelection> Sel = CheckSelection::parse("-*,mbarrier-*");
//   std::vector<Finding> Fs = runChecks(*P, *Sel);
//
// Each check is one file under analyzer/lib/checks/ named after it (`MbarrierTxBytes.cpp` is
// `mbarrier-tx-bytes`) and one line in the catalog of its category
// (analyzer/lib/checks/{Deadlock,Race,Crash}Checks.def). A check reads the Protocol and
// reports through its CheckContext; it never prints.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Finding.h"
#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/Solver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

/// DESIGN.md's three groups of checks.
enum class CheckCategory : uint8_t { Deadlock, Race, Crash };
const char *toString(CheckCategory C);

class CheckContext;

struct CheckInfo {
  const char *Name;    ///< kebab-case, as in DESIGN.md
  CheckCategory Category;
  const char *Summary; ///< one line for `wsv lint --list-checks`
  void (*Run)(CheckContext &Ctx);
};

/// Every check this build has, in catalog order.
llvm::ArrayRef<CheckInfo> allChecks();
/// The check of that name, or null.
const CheckInfo *findCheck(llvm::StringRef Name);

/// What a check sees: the protocol, a solver for questions intervals cannot answer (may be
/// null: then checks answer what they can without it and leave the rest as remarks), and
/// where findings go.
class CheckContext {
public:
  CheckContext(const Protocol &P, const CheckInfo &Info, Solver *S,
               std::vector<Finding> &Out)
      : P(P), Info(Info), S(S), Out(Out) {}

  const Protocol &protocol() const { return P; }
  Solver *solver() const { return S; }
  const CheckInfo &check() const { return Info; }

  /// Reports a finding of this check at Where; Kernel, File and Check are filled in.
  Finding &report(Severity Level, std::string Message, const SourceRef &Where);
  /// The same at an event's instruction.
  Finding &report(Severity Level, std::string Message, const Event &At) {
    return report(Level, std::move(Message), At.Where);
  }

private:
  const Protocol &P;
  const CheckInfo &Info;
  Solver *S;
  std::vector<Finding> &Out;
};

/// Which checks run, in clang-tidy's syntax: comma-separated globs, `-` in front disables,
/// later globs win (`-*,mbarrier-*,-mbarrier-phase-skip`). The default is every check.
class CheckSelection {
public:
  static llvm::Expected<CheckSelection> parse(llvm::StringRef Globs);
  static CheckSelection all();
  bool enabled(llvm::StringRef Name) const;

private:
  std::vector<std::pair<std::string, bool>> Globs; ///< pattern, enable
};

/// Runs the selected checks on one protocol; findings sorted (Finding.h).
std::vector<Finding> runChecks(const Protocol &P, const CheckSelection &Selection,
                               Solver *S = nullptr);

} // namespace analyzer
} // namespace wsv
