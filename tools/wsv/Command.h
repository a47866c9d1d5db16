// The subcommands of the `wsv` command line. Each lives in its own file and is registered in
// Commands.cpp; main.cpp only dispatches. This header is plain C++ so that the GPU-only build
// (WSV_ANALYZER=OFF, no LLVM) shares the same front door.
#pragma once

namespace wsv {

/// Exit codes shared by every subcommand (DESIGN.md, Outputs).
enum ExitCode : int {
  ExitClean = 0,        ///< nothing to report
  ExitFindings = 1,     ///< error findings, a failed run, a wrong result or a hang
  ExitBadInput = 2,     ///< bad input or usage
  ExitInconclusive = 3, ///< a property stayed unknown under --require-proof
};

struct Command {
  const char *Name;
  const char *Summary; ///< one line for `wsv help`
  const char *Usage;   ///< full usage text for `wsv help <command>` and `wsv <command> --help`
  int (*Run)(int Argc, char **Argv); ///< Argv[0] is the subcommand name
};

/// Every subcommand this build has, in the order `wsv help` lists them; ends with a null Name.
const Command *commands();

} // namespace wsv
