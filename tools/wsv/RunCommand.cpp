// `wsv run`: runs reference kernels on the GPU against cuBLAS, with hang capture (tools/runner).
#include "Command.h"

#include "wsv/runner/RunOptions.h"
#include "wsv/runner/Runner.h"

#include <cstdio>

namespace wsv {

static int runRun(int Argc, char **Argv) {
  runner::Expected<runner::RunOptions> Options = runner::parseRunOptions(Argc, Argv);
  if (!Options) {
    std::fprintf(stderr, "wsv run: error: %s\n(see 'wsv help run')\n",
                 Options.status().message().c_str());
    return ExitBadInput;
  }
  return runner::runMain(*Options);
}

extern const Command RunCommand;
const Command RunCommand = {"run", "run reference kernels on the GPU against cuBLAS, catch hangs",
                            runner::RunUsage, runRun};

} // namespace wsv
