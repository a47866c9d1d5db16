// One parser for the options that take a value, shared by the subcommands that use LLVM, so
// that they all accept the same spellings and none mistakes `--kernelfoo` for `--kernel`.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <optional>
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

/// `--cluster-size`'s value: the CTAs per cluster (along x) of the launch, 1 to 16 (16 with
/// the non-portable cluster size attribute); std::nullopt when V is not one.
inline std::optional<unsigned> clusterSizeValue(llvm::StringRef V) {
  unsigned N = 0;
  if (V.getAsInteger(10, N) || N == 0 || N > 16)
    return std::nullopt;
  return N;
}

/// The usage text of `--cluster-size`, the same in every subcommand that takes it (a macro:
/// it joins the subcommands' usage literals).
#define WSV_CLUSTER_SIZE_USAGE                                                                  \
  "  --cluster-size N      CTAs per cluster (along x) the launch uses, for a kernel whose\n" \
  "                        PTX states none (clang emits no .reqnctapercluster for\n"      \
  "                        __cluster_dims__; a launch attribute sets it); without it\n"   \
  "                        such a kernel is analyzed in clusters of 1 CTA, and says so\n"

} // namespace wsv
