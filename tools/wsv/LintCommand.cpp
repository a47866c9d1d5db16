//===- LintCommand.cpp - `wsv lint`: the check catalog on PTX files, for people and CI ---===//
//
// Parses each input (in parallel), builds each kernel entry's protocol, runs the selected
// checks and prints the findings as clang-style text, wsv-lint/1 JSON or SARIF 2.1.0. The
// exit code is what a CI job acts on: 0 clean (or only warnings and remarks), 1 an error
// finding, 2 bad input or usage.
//
//===----------------------------------------------------------------------------------===//
#include "Command.h"
#include "OptionValue.h"
#include "LintDriver.h"

#include "../report/Diagnostics.h"
#include "../report/LintJson.h"
#include "../report/Sarif.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

#ifndef WSV_VERSION
#define WSV_VERSION "unknown"
#endif

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv lint [options] FILE...\n"
    "\n"
    "Runs wsv's checks on the protocol of every kernel entry in each FILE: a .ptx file, \"-\"\n"
    "for standard input, or a CUDA object or executable (its embedded PTX, read through\n"
    "cuobjdump). Files are linted in parallel; the output order is the command line's.\n"
    "\n"
    "options:\n"
    "  --checks=GLOBS     checks to run, clang-tidy style: comma-separated globs, '-' in front\n"
    "                     disables, later globs win ('-*,mbarrier-*,-mbarrier-phase-skip');\n"
    "                     default: every check\n"
    "  --list-checks      list the checks GLOBS selects, with their summaries, and exit\n"
    "  --kernel NAME      only the entry NAME\n"
    "  --format FORMAT    text (default; clang-style diagnostics and a summary line),\n"
    "                     json (schema wsv-lint/1) or sarif (SARIF 2.1.0, for code scanning)\n"
    "  --sarif-root DIR   SARIF artifact URIs are relative to DIR (default: the working\n"
    "                     directory)\n"
    "  --baseline FILE    a previous --format json output: leave out the findings it has\n"
    "                     (matched by check, kernel, file name and message, not by line)\n"
    "  -o, --output FILE  write the report to FILE instead of standard output\n"
    "  --sarif-output FILE, --json-output FILE\n"
    "                     also write SARIF / JSON to FILE, whatever --format prints (a build\n"
    "                     shows the text and keeps the SARIF for code scanning)\n"
    "  --cluster-size N   CTAs per cluster (along x) the launch uses, for kernels whose PTX\n"
    "                     states none (clang emits no .reqnctapercluster for\n"
    "                     __cluster_dims__); a kernel that states another is bad input\n"
    "  -j, --jobs N       files linted at once (default: the hardware threads)\n"
    "\n"
    "exit codes: 0 no error finding (warnings and remarks do not fail), 1 error findings,\n"
    "2 bad input (unreadable, not parsing) or bad usage\n";

int fail(const std::string &Message, bool ShowUsage = false) {
  llvm::errs() << "wsv lint: error: " << Message << '\n';
  if (ShowUsage)
    llvm::errs() << "(see 'wsv lint --help')\n";
  return ExitBadInput;
}

struct Options {
  std::optional<std::string> Checks;
  bool ListChecks = false;
  std::string Kernel, Format = "text", SarifRoot, Baseline, Output, SarifOutput, JsonOutput;
  unsigned Jobs = 0;
  std::optional<unsigned> ClusterSize;
  std::vector<std::string> Files;
};

/// Parses the command line; returns an exit code when it is bad.
std::optional<int> parseArgs(int Argc, char **Argv, Options &O) {
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    auto Value = [&](std::initializer_list<StringRef> Names, std::string &Out) {
      return optionValue(Argc, Argv, I, Names, Out);
    };
    std::string V;
    int Got;
    if (Arg == "--list-checks") {
      O.ListChecks = true;
    } else if ((Got = Value({"--checks"}, V))) {
      if (Got < 0)
        return fail("--checks needs a list of globs", true);
      O.Checks = V;
    } else if ((Got = Value({"--kernel"}, O.Kernel))) {
      if (Got < 0 || O.Kernel.empty())
        return fail("--kernel needs a name", true);
    } else if ((Got = Value({"--format"}, O.Format))) {
      if (Got < 0 || (O.Format != "text" && O.Format != "json" && O.Format != "sarif"))
        return fail("--format takes 'text', 'json' or 'sarif'", true);
    } else if ((Got = Value({"--sarif-root"}, O.SarifRoot))) {
      if (Got < 0 || O.SarifRoot.empty())
        return fail("--sarif-root needs a directory", true);
    } else if ((Got = Value({"--baseline"}, O.Baseline))) {
      if (Got < 0 || O.Baseline.empty())
        return fail("--baseline needs a file", true);
    } else if ((Got = Value({"--output", "-o"}, O.Output))) {
      if (Got < 0 || O.Output.empty())
        return fail("--output needs a file", true);
    } else if ((Got = Value({"--sarif-output"}, O.SarifOutput))) {
      if (Got < 0 || O.SarifOutput.empty())
        return fail("--sarif-output needs a file", true);
    } else if ((Got = Value({"--json-output"}, O.JsonOutput))) {
      if (Got < 0 || O.JsonOutput.empty())
        return fail("--json-output needs a file", true);
    } else if ((Got = Value({"--cluster-size"}, V))) {
      if (Got < 0 || !(O.ClusterSize = clusterSizeValue(V)))
        return fail("--cluster-size takes a number of CTAs from 1 to 16", true);
    } else if ((Got = Value({"--jobs", "-j"}, V))) {
      if (Got < 0 || llvm::StringRef(V).getAsInteger(10, O.Jobs) || O.Jobs == 0)
        return fail("--jobs takes a positive number", true);
    } else if (Arg.starts_with("-") && Arg != "-") {
      return fail("unknown option '" + Arg.str() + "'", true);
    } else {
      O.Files.push_back(Arg.str());
    }
  }
  return std::nullopt;
}

int listChecks(const analyzer::CheckSelection &Sel) {
  unsigned Listed = 0;
  for (const analyzer::CheckInfo &C : analyzer::allChecks()) {
    if (!Sel.enabled(C.Name))
      continue;
    if (!Listed++)
      llvm::outs() << "enabled checks:\n";
    llvm::outs() << "  " << llvm::left_justify(C.Name, 30) << ' '
                 << llvm::left_justify(analyzer::toString(C.Category), 9) << ' ' << C.Summary
                 << '\n';
  }
  if (!Listed)
    llvm::outs() << "no check enabled (" << analyzer::allChecks().size()
                 << " in this build)\n";
  return ExitClean;
}

int runLint(int Argc, char **Argv) {
  Options O;
  if (std::optional<int> Rc = parseArgs(Argc, Argv, O))
    return *Rc;

  analyzer::CheckSelection Sel = analyzer::CheckSelection::all();
  if (O.Checks) {
    llvm::Expected<analyzer::CheckSelection> Parsed = analyzer::CheckSelection::parse(*O.Checks);
    if (!Parsed)
      return fail("--checks: " + llvm::toString(Parsed.takeError()));
    Sel = std::move(*Parsed);
  }
  if (O.ListChecks)
    return listChecks(Sel);
  if (O.Files.empty())
    return fail("no input file", true);
  if (O.Checks && !analyzer::allChecks().empty() &&
      llvm::none_of(analyzer::allChecks(),
                    [&](const analyzer::CheckInfo &C) { return Sel.enabled(C.Name); }))
    return fail("--checks='" + *O.Checks + "' enables no check (see 'wsv lint --list-checks')");

  std::optional<report::Baseline> Known;
  if (!O.Baseline.empty()) {
    llvm::Expected<report::Baseline> B = report::Baseline::load(O.Baseline);
    if (!B)
      return fail(llvm::toString(B.takeError()));
    Known = std::move(*B);
  }
  std::string SarifRoot = O.SarifRoot;
  {
    llvm::SmallString<256> Root(SarifRoot);
    if (std::error_code EC = llvm::sys::fs::make_absolute(Root))
      return fail("cannot resolve the SARIF root: " + EC.message());
    SarifRoot = std::string(Root);
  }

  lint::LintOptions LO;
  LO.Checks = Sel;
  LO.Kernel = O.Kernel;
  LO.Jobs = O.Jobs;
  LO.ClusterSize = O.ClusterSize;
  std::vector<report::LintInput> Inputs;
  for (std::vector<report::LintInput> &Produced : lint::lintPaths(O.Files, LO))
    for (report::LintInput &In : Produced)
      Inputs.push_back(std::move(In));

  if (!O.Kernel.empty() && llvm::none_of(Inputs, [](const report::LintInput &In) {
        return In.Status == report::InputStatus::Checked;
      }) && llvm::none_of(Inputs, [](const report::LintInput &In) {
        return In.Status == report::InputStatus::ParseError ||
               In.Status == report::InputStatus::Unreadable;
      }))
    return fail("no kernel entry '" + O.Kernel + "' in the input files");

  report::LintTotals Totals;
  unsigned Suppressed = Known ? Known->apply(Inputs) : 0;
  Totals = report::countFindings(Inputs);
  Totals.Suppressed = Suppressed;

  // Messages quote PTX, which may hold bytes that are not UTF-8: replaced, never thrown.
  auto Document = [&](StringRef Format) {
    return (Format == "json" ? report::lintToJson(Inputs, Totals, WSV_VERSION)
                             : report::lintToSarif(Inputs, {SarifRoot, WSV_VERSION}))
        .dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  for (auto [Path, Format] : {std::pair<StringRef, StringRef>(O.SarifOutput, "sarif"),
                              std::pair<StringRef, StringRef>(O.JsonOutput, "json")}) {
    if (Path.empty())
      continue;
    std::error_code EC;
    llvm::ToolOutputFile Extra(Path, EC, llvm::sys::fs::OF_Text);
    if (EC)
      return fail("cannot write '" + Path.str() + "': " + EC.message());
    Extra.os() << Document(Format) << '\n';
    Extra.keep();
  }

  std::error_code EC;
  std::optional<llvm::ToolOutputFile> File;
  if (!O.Output.empty()) {
    File.emplace(O.Output, EC, llvm::sys::fs::OF_Text);
    if (EC)
      return fail("cannot write '" + O.Output + "': " + EC.message());
  }
  llvm::raw_ostream &OS = File ? File->os() : llvm::outs();
  if (O.Format == "text") {
    report::CudaSources Cuda;
    bool Colors = !File && OS.has_colors();
    for (const report::LintInput &In : Inputs)
      report::printText(In, OS, Colors, Cuda);
    OS << report::summaryLine(Totals) << '\n';
  } else {
    // Humans running a machine format still see why an input was not checked.
    report::CudaSources Cuda;
    for (const report::LintInput &In : Inputs)
      if (In.Status == report::InputStatus::ParseError ||
          In.Status == report::InputStatus::Unreadable)
        report::printText(In, llvm::errs(), llvm::errs().has_colors(), Cuda);
    OS << Document(O.Format) << '\n';
  }
  OS.flush();
  if (File)
    File->keep();

  if (Totals.BadInputs)
    return ExitBadInput;
  return Totals.Errors ? ExitFindings : ExitClean;
}

} // namespace

namespace wsv {
extern const Command LintCommand = {
    "lint", "run the deadlock, race and crash checks on PTX (text, JSON, SARIF)", Usage,
    runLint};
} // namespace wsv
