// `wsv explain`: turn a wsv-trace/1 document (a hang captured by `wsv run --check`, or a
// solver counterexample) into a per-role story: where each role is stuck, with PTX and CUDA
// lines, the barrier states, who waits on whom and why nobody can arrive, the bug class and
// its usual fix (tools/report/Explain.h).
#include "Command.h"

#include "../report/Explain.h"
#include "../report/ExplainTrace.h"

#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv explain [--ptx FILE] [--kernel NAME] [--format text|json|perfetto] TRACE.json\n"
    "\n"
    "Explains a stuck kernel from a wsv-trace/1 document (tools/runner/TRACE_FORMAT.md): a\n"
    "hang captured on hardware by `wsv run --check`, or a solver counterexample (\"-\" reads\n"
    "standard input). Prints the schedule (solver traces) and where every role is stuck, each\n"
    "wait with its PTX and CUDA source line; the barrier states at the end; the wait-for\n"
    "cycle (who waits on whom, and why nobody can arrive); the bug class and its usual fix.\n"
    "\n"
    "options:\n"
    "  --ptx FILE        the PTX that ran (default: the trace's \"ptx\" path); its protocol\n"
    "                    gives the lines and the wait-for edges\n"
    "  --kernel NAME     the entry in that PTX (default: the trace's \"entry\")\n"
    "  --format text     the explanation as text (default)\n"
    "  --format json     a JSON document, schema wsv-explain/1 (tools/report/EXPLAIN_JSON.md)\n"
    "  --format perfetto Chrome trace-event JSON for ui.perfetto.dev: a track per warp,\n"
    "                    slices for waits and steps, arrows for the wait-for edges\n"
    "\n"
    "exit codes: 0 explained, 2 the trace or the PTX cannot be read, or bad usage\n";

int fail(const std::string &Message, bool ShowUsage = false) {
  llvm::errs() << "wsv explain: error: " << Message << '\n';
  if (ShowUsage)
    llvm::errs() << Usage;
  return ExitBadInput;
}

/// The trace's own PTX path, as written or next to the trace.
std::string findTracePtx(const std::string &Written, StringRef TraceFile) {
  if (llvm::sys::fs::exists(Written))
    return Written;
  if (TraceFile != "-" && !llvm::sys::path::is_absolute(Written)) {
    llvm::SmallString<256> Near(llvm::sys::path::parent_path(TraceFile));
    llvm::sys::path::append(Near, Written);
    if (llvm::sys::fs::exists(Near))
      return Near.str().str();
  }
  return "";
}

int runExplain(int Argc, char **Argv) {
  std::string Ptx, Kernel, Format = "text";
  bool PtxGiven = false, KernelGiven = false;
  std::optional<std::string> TraceFile;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    auto Value = [&](StringRef Name, std::string &Out, bool &Given) {
      if (!Arg.consume_front(Name))
        return false;
      if (Arg.consume_front("="))
        Out = Arg.str();
      else if (Arg.empty() && I + 1 < Argc)
        Out = Argv[++I];
      else if (!Arg.empty())
        return false; // --ptxfoo is another word
      else
        Out.clear();
      Given = true;
      return true;
    };
    bool Dummy = false;
    if (Arg == "--help" || Arg == "-h") {
      llvm::outs() << Usage;
      return ExitClean;
    }
    if (Value("--ptx", Ptx, PtxGiven)) {
      if (Ptx.empty())
        return fail("--ptx needs a file", true);
    } else if (Value("--kernel", Kernel, KernelGiven)) {
      if (Kernel.empty())
        return fail("--kernel needs a name", true);
    } else if (Value("--format", Format, Dummy)) {
      if (Format != "text" && Format != "json" && Format != "perfetto")
        return fail("--format takes 'text', 'json' or 'perfetto'", true);
    } else if (Arg.starts_with("-") && Arg != "-") {
      return fail("unknown option '" + Arg.str() + "'", true);
    } else if (TraceFile) {
      return fail("one trace at a time", true);
    } else {
      TraceFile = Arg.str();
    }
  }
  if (!TraceFile)
    return fail("no trace file", true);

  auto Buffer = llvm::MemoryBuffer::getFileOrSTDIN(*TraceFile);
  if (!Buffer)
    return fail("cannot read '" + *TraceFile + "': " + Buffer.getError().message());
  llvm::Expected<report::Trace> T = report::readTrace((*Buffer)->getBuffer());
  if (!T)
    return fail(*TraceFile + ": " + llvm::toString(T.takeError()));

  // The protocol of the PTX that ran. Without --ptx, a trace whose PTX is gone (a capture
  // copied from another machine) is still explained from its own facts.
  std::string NoProtocol, PtxPath = PtxGiven ? Ptx : findTracePtx(T->Ptx, *TraceFile);
  if (PtxGiven && !llvm::sys::fs::exists(Ptx))
    return fail("cannot read the PTX '" + Ptx + "'");
  if (PtxPath.empty())
    NoProtocol = "the trace's PTX '" + T->Ptx + "' cannot be found; pass --ptx FILE";
  std::optional<ptx::ParseResult> Parsed;
  analyzer::KernelNotes Notes;
  const ptx::Function *Entry = nullptr;
  if (!PtxPath.empty()) {
    llvm::Expected<ptx::ParseResult> R = ptx::parseFile(PtxPath);
    if (!R)
      return fail(llvm::toString(R.takeError()));
    if (!R->ok())
      return fail(PtxPath + ": " + std::to_string(R->Errors) +
                  " syntax error(s); no protocol for a file that does not parse");
    Parsed.emplace(std::move(*R));
    analyzer::applyWarpDispatch(*Parsed, Notes);
    std::string Name = KernelGiven ? Kernel : T->Entry;
    for (const ptx::Function *F : Parsed->M->functions())
      if (F->isDefinition() && F->isEntry() && F->name() == Name)
        Entry = F;
    if (!Entry)
      return fail("no kernel entry '" + Name + "' in " + PtxPath +
                  (KernelGiven ? "" : " (the trace's entry; pass --kernel NAME)"));
  }

  std::unique_ptr<analyzer::Solver> Solver;
  std::unique_ptr<analyzer::Protocol> P;
  if (Entry) {
    analyzer::ProtocolOptions Options;
    Solver = analyzer::Solver::createZ3();
    Options.SharedSolver = Solver.get();
    Options.Notes = &Notes;
    // The trace's launch states the cluster a kernel's PTX may not (clang's builds).
    if (T->Launch.Cluster[0] >= 1 && T->Launch.Cluster[0] <= 16 && T->Launch.Cluster[1] == 1 &&
        T->Launch.Cluster[2] == 1) {
      Options.ClusterSize = static_cast<unsigned>(T->Launch.Cluster[0]);
      Options.ClusterFrom = "the trace's launch";
    }
    P = analyzer::buildProtocol(*Parsed->M, *Entry, Options);
  }

  report::Explanation E = report::explain(*T, P.get(), PtxPath, NoProtocol);
  if (Format == "json")
    llvm::outs() << report::explanationToJson(E).dump(1) << '\n';
  else if (Format == "perfetto")
    llvm::outs() << report::explanationToPerfetto(E).dump() << '\n';
  else
    report::printExplanation(E, llvm::outs());
  llvm::outs().flush();
  return ExitClean;
}

} // namespace

namespace wsv {
extern const Command ExplainCommand = {
    "explain", "explain a hang capture or a solver counterexample (wsv-trace/1)", Usage,
    runExplain};
} // namespace wsv
