//===- Checks.cpp - the check catalog, and running it on a protocol --------------===//
#include "Catalog.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;

namespace {
// A null entry at the end keeps the array non-empty while a category has no check yet.
const CheckInfo Catalog[] = {
#define WSV_CHECK(Function, Name, Category, Summary)                                         \
  {Name, CheckCategory::Category, Summary, &checks::Function},
#include "DeadlockChecks.def"
#include "RaceChecks.def"
#include "CrashChecks.def"
#undef WSV_CHECK
    {nullptr, CheckCategory::Deadlock, nullptr, nullptr},
};
} // namespace

const char *wsv::analyzer::toString(Severity S) {
  switch (S) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

const char *wsv::analyzer::toString(CheckCategory C) {
  switch (C) {
  case CheckCategory::Deadlock:
    return "deadlock";
  case CheckCategory::Race:
    return "race";
  case CheckCategory::Crash:
    return "crash";
  }
  return "deadlock";
}

bool wsv::analyzer::operator<(const Finding &A, const Finding &B) {
  return std::tie(A.File, A.Kernel, A.Where.PtxLine, A.Where.PtxColumn, A.Check, A.Message) <
         std::tie(B.File, B.Kernel, B.Where.PtxLine, B.Where.PtxColumn, B.Check, B.Message);
}

llvm::ArrayRef<CheckInfo> wsv::analyzer::allChecks() {
  return llvm::ArrayRef<CheckInfo>(Catalog, std::size(Catalog) - 1);
}

const CheckInfo *wsv::analyzer::findCheck(llvm::StringRef Name) {
  for (const CheckInfo &C : allChecks())
    if (Name == C.Name)
      return &C;
  return nullptr;
}

Finding &CheckContext::report(Severity Level, std::string Message, const SourceRef &Where) {
  Finding &F = Out.emplace_back();
  F.Check = Info.Name;
  F.Level = Level;
  F.Message = std::move(Message);
  F.Kernel = P.Kernel;
  F.File = P.File;
  F.Where = Where;
  return F;
}

std::vector<Finding> wsv::analyzer::runChecks(const Protocol &P,
                                              const CheckSelection &Selection, Solver *S) {
  std::vector<Finding> Out;
  for (const CheckInfo &C : allChecks()) {
    if (!Selection.enabled(C.Name))
      continue;
    CheckContext Ctx(P, C, S, Out);
    C.Run(Ctx);
  }
  // A check that walks every CTA of a cluster meets the same instruction once per CTA; a
  // note says something about an instruction, so one per instruction and message is enough.
  for (Finding &F : Out) {
    std::vector<FindingNote> Unique;
    for (FindingNote &N : F.Notes)
      if (llvm::none_of(Unique, [&](const FindingNote &U) {
            return U.Message == N.Message && U.Where.PtxLine == N.Where.PtxLine &&
                   U.Where.PtxColumn == N.Where.PtxColumn;
          }))
        Unique.push_back(std::move(N));
    F.Notes = std::move(Unique);
  }
  std::stable_sort(Out.begin(), Out.end());
  return Out;
}
