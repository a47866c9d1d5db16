// One parser for the options that take a value, shared by the subcommands that use LLVM, so
// that they all accept the same spellings and none mistakes `--kernelfoo` for `--kernel`.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <string>

namespace wsv {

/// Whether Argv[I] is one of Names with its value: `--name=value`, `--name value` (I then
/// moves past the value) or, for a one-letter option, `-jVALUE`. 1: it is, and Out holds the
/// value; 0: another word (`--kernels` is not `--kernel`); -1: it is, but no value follows.
inline int optionValue(int Argc, char **Argv, int &I,
                       std::initializer_list<llvm::StringRef> Names, std::string &Out) {
  llvm::StringRef Arg = Argv[I];
  for (llvm::StringRef Name : Names) {
    llvm::StringRef Rest = Arg;
    if (!Rest.consume_front(Name))
      continue;
    if (Rest.consume_front("=") || (!Rest.empty() && Name.size() == 2)) {
      Out = Rest.str();
      return 1;
    }
    if (!Rest.empty())
      continue;
    if (I + 1 >= Argc)
      return -1;
    Out = Argv[++I];
    return 1;
  }
  return 0;
}

} // namespace wsv
