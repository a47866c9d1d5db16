// `wsv protocol`: print the synchronization protocol wsv recovers from a PTX file, per kernel
// entry, as text that reads like a reference kernel's protocol comment or as JSON
// (tools/report/PROTOCOL_JSON.md).
#include "Command.h"
#include "OptionValue.h"

#include "../report/ProtocolJson.h"

#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv protocol [--kernel NAME] [--format text|json] [--cluster-size N] FILE\n"
    "\n"
    "Prints the synchronization protocol recovered from the PTX of each kernel entry in FILE\n"
    "(\"-\" reads standard input): the barriers with their init counts and users, the shared-\n"
    "memory buffers, the prologue, each role (its threads, counted) with its loops, trip\n"
    "counts, per-iteration stage and parity expressions and bytes, and the epilogue. What\n"
    "cannot be resolved is printed as unknown, with the reason. Entries whose protocols are\n"
    "identical are printed once, with a line naming the others. A trip count is shortened\n"
    "where Z3 shows the shorter form equal for every parameter below 2^30.\n"
    "\n"
    "options:\n"
    "  --kernel NAME   only this entry\n"
    "  --format text   the protocol as text (default)\n"
    "  --format json   a JSON document, schema wsv-protocol/1\n"
    "  --cluster-size N\n"
    "                  CTAs per cluster (along x) the launch uses, for a kernel whose PTX\n"
    "                  states none (clang emits no .reqnctapercluster for __cluster_dims__)\n"
    "\n"
    "exit codes: 0 printed, 2 the file does not parse, has no kernel entry, or bad usage\n";

int fail(const std::string &Message, bool ShowUsage = false) {
  llvm::errs() << "wsv protocol: error: " << Message << '\n';
  if (ShowUsage)
    llvm::errs() << Usage;
  return ExitBadInput;
}

/// The text without its first line (the kernel's name) and without the locations: what two
/// twins (the same kernel for two element types) share.
std::string body(const std::string &Text) {
  std::string Out;
  llvm::StringRef Rest(Text);
  Rest = Rest.split('\n').second;
  while (!Rest.empty()) {
    auto [Line, Next] = Rest.split('\n');
    Out += Line.split("  # ").first.str() + '\n';
    Rest = Next;
  }
  return Out;
}

int runProtocol(int Argc, char **Argv) {
  std::string Kernel, Format = "text", ClusterText;
  std::optional<unsigned> ClusterSize;
  llvm::SmallVector<StringRef, 2> Files;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    // A missing value leaves Out empty, which each option refuses.
    auto Value = [&](StringRef Name, std::string &Out) {
      int Got = optionValue(Argc, Argv, I, {Name}, Out);
      if (Got < 0)
        Out.clear();
      return Got != 0;
    };
    if (Value("--kernel", Kernel)) {
      if (Kernel.empty())
        return fail("--kernel needs a name", true);
    } else if (Value("--format", Format)) {
      if (Format != "text" && Format != "json")
        return fail("--format takes 'text' or 'json'", true);
    } else if (Value("--cluster-size", ClusterText)) {
      if (!(ClusterSize = clusterSizeValue(ClusterText)))
        return fail("--cluster-size takes a number of CTAs from 1 to 16", true);
    } else if (Arg.starts_with("-") && Arg != "-") {
      return fail("unknown option '" + Arg.str() + "'", true);
    } else {
      Files.push_back(Arg);
    }
  }
  if (Files.size() != 1)
    return fail(Files.empty() ? "no input file" : "one input file at a time", true);

  llvm::Expected<ptx::ParseResult> Parsed = ptx::parseFile(Files.front());
  if (!Parsed)
    return fail(llvm::toString(Parsed.takeError()));
  if (!Parsed->ok())
    return fail(Files.front().str() + ": " + std::to_string(Parsed->Errors) +
                " syntax error(s); no protocol for a file that does not parse");
  analyzer::KernelNotes Notes;
  analyzer::applyWarpDispatch(*Parsed, Notes);
  const ptx::Module &M = *Parsed->M;

  std::vector<const ptx::Function *> Entries;
  for (const ptx::Function *F : M.functions())
    if (F->isDefinition() && F->isEntry())
      Entries.push_back(F);
  if (Entries.empty())
    return fail(Files.front().str() + " has no kernel entry (.entry); nothing to analyze");
  if (!Kernel.empty()) {
    const ptx::Function *Found = nullptr;
    for (const ptx::Function *F : Entries)
      if (F->name() == Kernel)
        Found = F;
    if (!Found) {
      std::string Names;
      for (const ptx::Function *F : Entries)
        Names += "\n  " + F->name().str();
      return fail("no kernel entry '" + Kernel + "' in " + Files.front().str() +
                  "; its entries are:" + Names);
    }
    Entries = {Found};
  }

  for (const ptx::Function *F : Entries)
    if (std::optional<std::string> Why =
            ClusterSize ? analyzer::clusterSizeConflict(*F, *ClusterSize) : std::nullopt)
      return fail(*Why + " (--cluster-size)");

  analyzer::ProtocolOptions Options;
  std::unique_ptr<analyzer::Solver> Solver = analyzer::Solver::createZ3();
  Options.SharedSolver = Solver.get();
  Options.Notes = &Notes;
  Options.ClusterSize = ClusterSize;
  Options.ClusterFrom = "--cluster-size";

  std::vector<std::string> Texts, Names;
  nlohmann::json Kernels = nlohmann::json::array();
  for (const ptx::Function *F : Entries) {
    std::unique_ptr<analyzer::Protocol> P = analyzer::buildProtocol(M, *F, Options);
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    analyzer::printProtocol(*P, OS);
    OS.flush();
    // Twins (bf16 and fp16 builds of one kernel) usually have the same protocol.
    std::string SameAs;
    for (unsigned K = 0; K < Texts.size(); ++K)
      if (body(Texts[K]) == body(Text)) {
        SameAs = Names[K];
        break;
      }
    if (Format == "json") {
      nlohmann::json J = report::protocolToJson(*P);
      if (!SameAs.empty())
        J["same_protocol_as"] = SameAs;
      Kernels.push_back(std::move(J));
    } else if (!SameAs.empty()) {
      llvm::outs() << "kernel " << F->name() << ": same protocol as " << SameAs << "\n";
    } else {
      if (!Texts.empty())
        llvm::outs() << '\n';
      llvm::outs() << Text;
    }
    Texts.push_back(std::move(Text));
    Names.push_back(F->name().str());
  }
  if (Format == "json") {
    nlohmann::json Doc = {{"schema", report::ProtocolJsonSchema},
                          {"file", Files.front().str()},
                          {"kernels", std::move(Kernels)}};
    llvm::outs() << Doc.dump(1) << '\n';
  }
  llvm::outs().flush();
  return ExitClean;
}

} // namespace

namespace wsv {
extern const Command ProtocolCommand = {
    "protocol", "print the synchronization protocol recovered from PTX", Usage, runProtocol};
} // namespace wsv
