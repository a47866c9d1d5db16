//===- CheckSelection.cpp - clang-tidy style check globs ---------------------------===//
#include "wsv/analyzer/Checks.h"

#include "llvm/Support/GlobPattern.h"

using namespace wsv;
using namespace wsv::analyzer;

llvm::Expected<CheckSelection> CheckSelection::parse(llvm::StringRef Text) {
  CheckSelection S;
  S.Globs.emplace_back("*", true);
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Text.split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Part : Parts) {
    Part = Part.trim();
    if (Part.empty())
      continue;
    bool Enable = !Part.consume_front("-");
    Part = Part.trim();
    if (Part.empty() ||
        Part.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-*") != llvm::StringRef::npos)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "invalid check glob '%s': use names like "
                                     "'mbarrier-tx-bytes', '*' and a leading '-'",
                                     Part.str().c_str());
    // A glob that names no check is almost always a typo of one.
    if (Part.find('*') == llvm::StringRef::npos && !findCheck(Part))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown check '%s' (wsv lint --list-checks names them)",
                                     Part.str().c_str());
    S.Globs.emplace_back(Part.str(), Enable);
  }
  return S;
}

CheckSelection CheckSelection::all() {
  CheckSelection S;
  S.Globs.emplace_back("*", true);
  return S;
}

bool CheckSelection::enabled(llvm::StringRef Name) const {
  bool On = false;
  for (const auto &[Pattern, Enable] : Globs) {
    llvm::Expected<llvm::GlobPattern> G = llvm::GlobPattern::create(Pattern);
    if (!G) {
      llvm::consumeError(G.takeError());
      continue;
    }
    if (G->match(Name))
      On = Enable;
  }
  return On;
}
