// wsv: static analyzer and verifier for warp-specialized GPU kernels, working on PTX.
#include "Command.h"

#include <cstdio>
#include <cstring>

#ifndef WSV_VERSION
#define WSV_VERSION "unknown"
#endif

using namespace wsv;

static const Command *findCommand(const char *Name) {
  for (const Command *C = commands(); C->Name; ++C)
    if (std::strcmp(C->Name, Name) == 0)
      return C;
  return nullptr;
}

static void printHelp(std::FILE *Out) {
  std::fprintf(Out,
               "wsv %s - verify warp-specialized GPU kernels from their PTX\n\n"
               "usage: wsv <command> [options] [args]\n\ncommands:\n",
               WSV_VERSION);
  for (const Command *C = commands(); C->Name; ++C)
    std::fprintf(Out, "  %-10s %s\n", C->Name, C->Summary);
  std::fprintf(Out, "  %-10s %s\n", "help", "show this help, or a command's (wsv help <command>)");
  std::fprintf(Out, "\noptions:\n  --version  print the version and exit\n"
                    "\nexit codes: 0 clean, 1 findings or failed run, 2 bad input or usage, "
                    "3 inconclusive under --require-proof\n");
}

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    printHelp(stderr);
    return ExitBadInput;
  }
  const char *Name = Argv[1];
  if (!std::strcmp(Name, "--version") || !std::strcmp(Name, "version")) {
    std::printf("wsv %s\n", WSV_VERSION);
    return ExitClean;
  }
  if (!std::strcmp(Name, "help") || !std::strcmp(Name, "--help") || !std::strcmp(Name, "-h")) {
    if (Argc > 2) {
      if (const Command *C = findCommand(Argv[2])) {
        std::printf("%s", C->Usage);
        return ExitClean;
      }
      std::fprintf(stderr, "wsv: error: unknown command '%s'\n", Argv[2]);
      return ExitBadInput;
    }
    printHelp(stdout);
    return ExitClean;
  }
  const Command *C = findCommand(Name);
  if (!C) {
    std::fprintf(stderr, "wsv: error: unknown command '%s' (see 'wsv help')\n", Name);
    return ExitBadInput;
  }
  for (int I = 2; I < Argc; ++I)
    if (!std::strcmp(Argv[I], "--help") || !std::strcmp(Argv[I], "-h")) {
      std::printf("%s", C->Usage);
      return ExitClean;
    }
  return C->Run(Argc - 1, Argv + 1);
}
