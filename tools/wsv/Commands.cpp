// The table of subcommands; which ones exist depends on what this build was configured with.
#include "Command.h"

namespace wsv {

#ifdef WSV_HAVE_ANALYZER
extern const Command ParseCommand;
extern const Command ProtocolCommand;
extern const Command ExploreCommand;
extern const Command ExplainCommand;
extern const Command VerifyCommand;
extern const Command LintCommand;
#endif
#ifdef WSV_HAVE_RUNNER
extern const Command RunCommand;
extern const Command KernelsCommand;
#endif

const Command *commands() {
  static const Command Table[] = {
#ifdef WSV_HAVE_ANALYZER
      ParseCommand,
      ProtocolCommand,
      ExploreCommand,
      ExplainCommand,
      VerifyCommand,
      LintCommand,
#endif
#ifdef WSV_HAVE_RUNNER
      RunCommand,
      KernelsCommand,
#endif
      {nullptr, nullptr, nullptr, nullptr},
  };
  return Table;
}

} // namespace wsv
