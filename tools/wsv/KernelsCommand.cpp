// `wsv kernels`: the reference kernels this build generated, their seeded variants and PTX files
// (from build/ptx/kernels.json), and which of them `wsv run` can launch.
#include "Command.h"

#include "wsv/runner/Manifest.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace wsv {

static const char KernelsUsage[] =
    "usage: wsv kernels [--format text|json] [--ptx-dir DIR]\n"
    "\n"
    "Lists the reference kernels, their seeded-bug variants and the PTX files of each (plain,\n"
    "checked, clang), and whether `wsv run` has a launch spec for it.\n"
    "\n"
    "options:\n"
    "  --format text|json  output format (default text; json is schema wsv-kernels/1)\n"
    "  --ptx-dir DIR       where kernels.json is (default: <bin>/../ptx)\n";

static int runKernels(int Argc, char **Argv) {
  bool Json = false;
  std::string PtxDir;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    if ((A == "--format" || A == "--ptx-dir") && I + 1 < Argc) {
      const std::string V = Argv[++I];
      if (A == "--ptx-dir") {
        PtxDir = V;
      } else if (V == "json" || V == "text") {
        Json = V == "json";
      } else {
        std::fprintf(stderr, "wsv kernels: error: invalid value '%s' for --format: expected "
                             "text or json\n",
                     V.c_str());
        return ExitBadInput;
      }
    } else {
      std::fprintf(stderr, "wsv kernels: error: unexpected argument '%s'\n%s", A.c_str(),
                   KernelsUsage);
      return ExitBadInput;
    }
  }
  runner::Expected<runner::Manifest> M =
      runner::readManifest(PtxDir.empty() ? runner::defaultPtxDir() : PtxDir);
  if (!M) {
    std::fprintf(stderr, "wsv kernels: error: %s\n", M.status().message().c_str());
    return ExitBadInput;
  }
  const std::string Out = Json ? runner::catalogJson(*M) : runner::catalogText(*M);
  std::fwrite(Out.data(), 1, Out.size(), stdout);
  return ExitClean;
}

extern const Command KernelsCommand;
const Command KernelsCommand = {"kernels", "list reference kernels, variants and their PTX files",
                                KernelsUsage, runKernels};

} // namespace wsv
