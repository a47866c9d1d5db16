// `wsv verify`: per kernel entry, each property of its protocol proved (for which parameters),
// refuted by a counterexample schedule, or unknown with the reason; and the lint findings.
#include "Command.h"
#include "OptionValue.h"

#include "../report/Explain.h"
#include "../report/Sarif.h"
#include "../report/VerifyJson.h"

#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/Verify.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv verify [--kernel NAME] [--launch FILE | --param NAME=VALUE ... [--grid CTAS]]\n"
    "                  [--cluster-size N] [--require-proof] [--format text|json|sarif] [--timeout-ms N]\n"
    "                  [--rlimit N] [--trace-out DIR] [--sarif-root DIR] [--steps] [--k-tile N] FILE\n"
    "\n"
    "Proves, per kernel entry of the PTX FILE, that its synchronization protocol cannot\n"
    "deadlock (deadlock-freedom), read a stage buffer before its copy completed\n"
    "(stage-safety), or misuse an mbarrier or named barrier (barrier-hygiene), for every value\n"
    "of the kernel's parameters; or prints a counterexample schedule; or says unknown, with\n"
    "the reason and the bound the bounded search reached. Lint findings are printed too.\n"
    "\n"
    "options:\n"
    "  --kernel NAME         only this entry\n"
    "  --param NAME=VALUE    fix a kernel parameter (display name such as K, or PTX name):\n"
    "                        a counterexample is one of a launch with that value (one\n"
    "                        found on another is named in the reason); fixing every\n"
    "                        parameter of a protocol that reads no CTA index decides\n"
    "                        every launch with those values\n"
    "  --launch FILE         fix parameters from a JSON launch description:\n"
    "                        {\"params\": {\"K\": 4096}} or {\"problem\": {\"m\":..,\"n\":..,\"k\":..}}\n"
    "                        and its \"grid\" and \"cluster\" ([2, 1, 1] or 2; a trace's\n"
    "                        launch object has all of them)\n"
    "  --grid CTAS           the launch's grid (%nctaid.x). With every parameter the\n"
    "                        kernel reads, a launch in full: where no proof for every\n"
    "                        parameter value is found, each cluster of that launch is\n"
    "                        explored, and the verdict holds for that launch alone\n"
    WSV_CLUSTER_SIZE_USAGE
    "  --require-proof       exit 3 when a property stays unknown\n"
    "  --format text|json|sarif\n"
    "  --timeout-ms N        time for each property (default 10000)\n"
    "  --rlimit N            also bound Z3's work for each property by N units of its\n"
    "                        resource count: unlike time, the same verdict on any machine\n"
    "                        and under any load (for CI); Z3 counts a few million a second\n"
    "  --bound N             steps of the bounded search (48)\n"
    "  --unbounded           then try Z3's fixed-point engine (Spacer) for all parameters\n"
    "  --trace-out DIR       write each counterexample as a wsv-trace/1 file into DIR\n"
    "  --sarif-root DIR      SARIF artifact URIs are relative to DIR (default: the working\n"
    "                        directory), as `wsv lint` writes them\n"
    "  --steps               print a counterexample step by step, not as runs of one\n"
    "                        agent's consecutive steps (a line each). A step is one\n"
    "                        transition, or a role's private transitions (touching\n"
    "                        nothing another agent does) folded into its next one\n"
    "  --k-tile N            the step of the k-loop's parameter the proof for every value\n"
    "                        counts in (K = N*j); default: the kernel's wsv_kernel_info,\n"
    "                        else the step that adds one iteration to its loops (a loop\n"
    "                        `for k < k_tiles` steps by 1, `K / 64` by 64)\n"
    "  --max-states N        states one exploration may visit (default 150000)\n"
    "  --max-total-states N  states all explorations of a kernel may visit (default\n"
    "                        4000000); beyond, the exploration's verdict is unknown\n"
    "  --progress            print each exploration to stderr as it ends (the default when\n"
    "                        stderr is a terminal)\n"
    "  -j, --jobs N          kernels of the file verified at once, and explorations of one\n"
    "                        kernel run at once (default: the hardware threads, at most 4)\n"
    "\n"
    "exit codes: 0 no counterexample and no error finding, 1 a counterexample or an error\n"
    "finding, 2 bad input or usage, 3 a property stayed unknown under --require-proof\n";

int fail(const std::string &Message, bool ShowUsage = false) {
  llvm::errs() << "wsv verify: error: " << Message << '\n';
  if (ShowUsage)
    llvm::errs() << Usage;
  return ExitBadInput;
}

/// Reads --launch: explicit "params", or the problem shape of a trace's launch object; and
/// its grid and cluster where it has them (`"grid": [132, 1, 1]` or `132`, likewise
/// `"cluster"`).
bool readLaunch(StringRef Path, std::map<std::string, uint64_t> &Params, uint64_t &Grid,
                std::optional<unsigned> &Cluster, std::string &Error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer) {
    Error = "cannot read '" + Path.str() + "': " + Buffer.getError().message();
    return false;
  }
  nlohmann::json J = nlohmann::json::parse((*Buffer)->getBuffer().str(), nullptr, false);
  if (J.is_discarded() || !J.is_object()) {
    Error = "'" + Path.str() + "' is not a JSON object";
    return false;
  }
  const nlohmann::json &Launch = J.contains("launch") ? J["launch"] : J;
  if (Launch.contains("params") && Launch["params"].is_object())
    for (auto &[Name, Value] : Launch["params"].items())
      if (Value.is_number_unsigned())
        Params[Name] = Value.get<uint64_t>();
  if (Launch.contains("problem") && Launch["problem"].is_object())
    for (auto &[Name, Value] : Launch["problem"].items())
      if (Value.is_number_unsigned() && Name.size() == 1)
        Params[std::string(1, static_cast<char>(std::toupper(Name[0])))] = Value.get<uint64_t>();
  if (Params.empty()) {
    Error = "'" + Path.str() + "' names no parameter values (\"params\" or \"problem\")";
    return false;
  }
  if (Launch.contains("grid")) {
    // The model has one dimension of CTAs: y and z must be 1.
    const nlohmann::json &G = Launch["grid"];
    bool Ok = G.is_number_unsigned() && G.get<uint64_t>() > 0;
    if (G.is_array() && !G.empty() && G.size() <= 3) {
      Ok = true;
      for (size_t D = 0; D < G.size(); ++D)
        Ok &= G[D].is_number_unsigned() && (D ? G[D].get<uint64_t>() == 1 : G[D].get<uint64_t>() > 0);
    }
    if (!Ok) {
      Error = "'" + Path.str() + "': \"grid\" must be a CTA count or [x, 1, 1] with x > 0";
      return false;
    }
    Grid = G.is_array() ? G[0].get<uint64_t>() : G.get<uint64_t>();
  }
  if (Launch.contains("cluster")) {
    // Likewise one dimension of CTAs per cluster; a trace of a kernel without clusters
    // says [1, 1, 1].
    const nlohmann::json &C = Launch["cluster"];
    bool Ok = C.is_number_unsigned();
    if (C.is_array() && !C.empty() && C.size() <= 3) {
      Ok = C[0].is_number_unsigned();
      for (size_t D = 1; D < C.size(); ++D)
        Ok &= C[D].is_number_unsigned() && C[D].get<uint64_t>() == 1;
    }
    std::optional<unsigned> Size;
    if (Ok) {
      uint64_t X = C.is_array() ? C[0].get<uint64_t>() : C.get<uint64_t>();
      Size = clusterSizeValue(std::to_string(X));
    }
    if (!Size) {
      Error = "'" + Path.str() + "': \"cluster\" must be a CTA count from 1 to 16 or [x, 1, 1]";
      return false;
    }
    Cluster = *Size;
  }
  return true;
}

void printVerdict(const analyzer::Verdict &V, bool EachStep, llvm::raw_ostream &OS) {
  OS << "  " << analyzer::toString(V.Prop) << ": " << analyzer::toString(V.K);
  if (V.proved())
    OS << " for " << V.ForParameters;
  OS << " (" << (V.Engine.empty() ? "no engine" : V.Engine);
  std::vector<report::StepRun> Runs =
      V.refuted() ? report::verdictRuns(V, 0, V.Schedule.size()) : std::vector<report::StepRun>();
  if (V.refuted()) {
    OS << ", " << V.steps() << (V.steps() == 1 ? " step" : " steps");
    if (V.steps() != V.Schedule.size())
      OS << " of " << V.Schedule.size() << " transitions";
    OS << " in " << Runs.size() << (Runs.size() == 1 ? " run" : " runs");
  }
  if (V.unknown())
    OS << ", bound " << V.BoundReached;
  OS << ", " << static_cast<unsigned>(V.Milliseconds) << " ms)";
  if (!V.Reason.empty())
    OS << ": " << V.Reason;
  OS << '\n';
  if (V.refuted()) {
    if (!V.Parameters.empty() || V.GridCtas) {
      OS << "    with";
      for (const auto &[Name, Value] : V.Parameters)
        OS << ' ' << Name << " = " << Value;
      if (V.GridCtas)
        OS << (V.Parameters.empty() ? " " : ", ") << "a grid of " << V.GridCtas
           << " CTAs, the cluster of CTA " << V.FirstCta << " modeled";
      OS << '\n';
    }
    // A line per run, numbered by the steps it spans as --steps numbers them.
    for (const report::StepRun &R : EachStep ? std::vector<report::StepRun>() : Runs) {
      OS << "    " << V.Schedule[R.First].Step + 1;
      if (V.Schedule[R.Last].Step > V.Schedule[R.First].Step)
        OS << '-' << V.Schedule[R.Last].Step + 1;
      OS << ". " << report::runLine(R) << '\n';
    }
    for (size_t I = 0, End = 0; EachStep && I < V.Schedule.size(); I = End) {
      std::string Line = report::verdictStepLine(V, I, End);
      OS << "    " << V.Schedule[I].Step + 1 << ". " << Line << '\n';
    }
    if (V.CertainAfter) {
      OS << "    " << report::certainText(*V.CertainAfter) << " (" << V.CertainStates
         << " states searched)";
      // The step that sealed it, as --steps prints it.
      for (size_t I = 0, End = 0; *V.CertainAfter && I < V.Schedule.size(); I = End) {
        std::string Line = report::verdictStepLine(V, I, End);
        if (V.Schedule[I].Step + 1 == *V.CertainAfter)
          OS << "; step " << *V.CertainAfter << ": " << Line;
      }
      OS << '\n';
    }
    for (const analyzer::AgentState &A : V.FinalAgents)
      if (A.State != "finished")
        OS << "    end: " << A.Agent << ' ' << A.State << (A.PtxLine ? "  # ptx " : "")
           << (A.PtxLine ? std::to_string(A.PtxLine) : "") << '\n';
    for (const analyzer::BarrierState &B : V.FinalBarriers)
      OS << "    end: " << B.Name << " pending " << B.Pending << ", phase " << B.Phase
         << " (parity " << B.Phase % 2 << "), tx " << B.TxCount << ", in flight " << B.InFlight
         << '\n';
  }
  for (const std::string &A : V.Assumptions)
    OS << "    assumes " << A << '\n';
}

void printFinding(const analyzer::Finding &F, llvm::raw_ostream &OS) {
  OS << F.File << ':' << F.Where.PtxLine << ':' << F.Where.PtxColumn << ": "
     << analyzer::toString(F.Level) << ": " << F.Message << " [" << F.Check << "]\n";
  for (const analyzer::FindingNote &N : F.Notes)
    OS << F.File << ':' << N.Where.PtxLine << ':' << N.Where.PtxColumn << ": note: "
       << N.Message << '\n';
}

int runVerify(int Argc, char **Argv) {
  std::string Kernel, Format = "text", Launch, TraceOut, Timeout, Rlimit, Bound, MaxStates,
      MaxTotalStates, Jobs, Grid, SarifRoot, TileK, ClusterSize;
  std::vector<std::string> ParamArgs;
  bool RequireProof = false, Unbounded = false, Progress = llvm::errs().is_displayed(),
       EachStep = false;
  llvm::SmallVector<StringRef, 2> Files;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    StringRef NoValue;
    auto Value = [&](StringRef Name, std::string &Out) {
      int Got = optionValue(Argc, Argv, I, {Name}, Out);
      if (Got < 0)
        NoValue = Name;
      return Got != 0;
    };
    std::string P;
    if (Value("--kernel", Kernel) || Value("--launch", Launch) ||
        Value("--trace-out", TraceOut) || Value("--timeout-ms", Timeout) ||
        Value("--rlimit", Rlimit) || Value("--bound", Bound) || Value("--max-states", MaxStates) ||
        Value("--max-total-states", MaxTotalStates) || Value("--jobs", Jobs) ||
        Value("--grid", Grid) || Value("--sarif-root", SarifRoot) || Value("--k-tile", TileK) ||
        Value("--cluster-size", ClusterSize) ||
        Value("-j", Jobs)) {
      if (!NoValue.empty())
        return fail(NoValue.str() + " needs a value", true);
      continue;
    } else if (Value("--format", Format)) {
      if (!NoValue.empty())
        return fail("--format needs a value", true);
      if (Format != "text" && Format != "json" && Format != "sarif")
        return fail("--format takes 'text', 'json' or 'sarif'", true);
    } else if (Value("--param", P)) {
      if (!NoValue.empty())
        return fail("--param needs NAME=VALUE", true);
      ParamArgs.push_back(P);
    } else if (Arg == "--require-proof") {
      RequireProof = true;
    } else if (Arg == "--unbounded") {
      Unbounded = true;
    } else if (Arg == "--progress") {
      Progress = true;
    } else if (Arg == "--steps") {
      EachStep = true;
    } else if (Arg.starts_with("-") && Arg != "-") {
      return fail("unknown option or missing value '" + Arg.str() + "'", true);
    } else {
      Files.push_back(Arg);
    }
  }
  if (Files.size() != 1)
    return fail(Files.empty() ? "no input file" : "one input file at a time", true);

  analyzer::VerifyOptions Options;
  Options.Unbounded = Unbounded;
  auto Number = [](const std::string &S, uint64_t &Out) {
    return !S.empty() && !StringRef(S).getAsInteger(0, Out);
  };
  uint64_t N = 0;
  if (!Timeout.empty()) {
    if (!Number(Timeout, N) || N == 0 || N > 3600000)
      return fail("--timeout-ms takes a number of milliseconds from 1 to 3600000", true);
    Options.TimeoutMs = static_cast<unsigned>(N);
  }
  if (!Rlimit.empty()) {
    if (!Number(Rlimit, N) || N == 0 || N > 0xffffffffull)
      return fail("--rlimit takes a number of units from 1 to 4294967295", true);
    Options.ResourceLimit = N;
  }
  if (!Bound.empty()) {
    if (!Number(Bound, N) || N > 10000)
      return fail("--bound takes a number of steps up to 10000", true);
    Options.MaxBmcSteps = static_cast<unsigned>(N);
  }
  for (auto [Text, Out, Name] :
       {std::tuple{&MaxStates, &Options.MaxStates, "--max-states"},
        std::tuple{&MaxTotalStates, &Options.MaxTotalStates, "--max-total-states"}})
    if (!Text->empty()) {
      if (!Number(*Text, N) || N == 0)
        return fail(std::string(Name) + " takes a positive number of states", true);
      *Out = N;
    }
  if (!TileK.empty()) {
    if (!Number(TileK, N) || N == 0 || N > 4096)
      return fail("--k-tile takes a number from 1 to 4096", true);
    Options.TileK = N;
    Options.TileKGiven = true;
  }
  if (!Jobs.empty()) {
    if (!Number(Jobs, N) || N == 0 || N > 256)
      return fail("--jobs takes a number from 1 to 256", true);
    Options.Threads = static_cast<unsigned>(N);
  }
  if (!Launch.empty() && (!ParamArgs.empty() || !Grid.empty()))
    return fail("--launch and --param or --grid are exclusive", true);
  // Where the CTAs per cluster come from, for kernels whose PTX states none.
  std::optional<unsigned> Cluster;
  std::string ClusterFrom;
  if (!Launch.empty()) {
    std::string Error;
    if (!readLaunch(Launch, Options.Params, Options.GridCtas, Cluster, Error))
      return fail(Error);
    ClusterFrom = "launch description";
  }
  if (!ClusterSize.empty()) {
    if (Cluster)
      return fail("--cluster-size and the launch description's \"cluster\" are exclusive", true);
    Cluster = clusterSizeValue(ClusterSize);
    if (!Cluster)
      return fail("--cluster-size takes a number of CTAs from 1 to 16", true);
    ClusterFrom = "--cluster-size";
  }
  if (!Grid.empty()) {
    if (!Number(Grid, N) || N == 0 || N > 0x7fffffffull)
      return fail("--grid takes a number of CTAs from 1 to 2147483647", true);
    Options.GridCtas = N;
  }
  for (const std::string &P : ParamArgs) {
    auto [Name, Text] = StringRef(P).split('=');
    if (Name.empty() || !Number(Text.str(), N))
      return fail("--param takes NAME=VALUE, not '" + P + "'", true);
    Options.Params[Name.str()] = N;
  }

  llvm::Expected<ptx::ParseResult> Parsed = ptx::parseFile(Files.front());
  if (!Parsed)
    return fail(llvm::toString(Parsed.takeError()));
  if (!Parsed->ok())
    return fail(Files.front().str() + ": " + std::to_string(Parsed->Errors) +
                " syntax error(s); nothing to verify in a file that does not parse");
  analyzer::KernelNotes Notes;
  analyzer::applyWarpDispatch(*Parsed, Notes);
  const ptx::Module &M = *Parsed->M;
  std::vector<const ptx::Function *> Entries;
  for (const ptx::Function *F : M.functions())
    if (F->isDefinition() && F->isEntry() && (Kernel.empty() || F->name() == Kernel))
      Entries.push_back(F);
  if (Entries.empty())
    return fail(Kernel.empty() ? Files.front().str() + " has no kernel entry (.entry)"
                               : "no kernel entry '" + Kernel + "' in " + Files.front().str());

  // Each kernel's analysis gets a solver of its own (its verification runs on a thread of
  // its own and may still ask it); the lint checks afterwards share this one.
  for (const ptx::Function *F : Entries)
    if (std::optional<std::string> Why =
            Cluster ? analyzer::clusterSizeConflict(*F, *Cluster) : std::nullopt)
      return fail(*Why + " (" + ClusterFrom + ")");

  analyzer::ProtocolOptions PO;
  PO.Notes = &Notes;
  PO.ClusterSize = Cluster;
  PO.ClusterFrom = ClusterFrom;
  std::unique_ptr<analyzer::Solver> Solver = analyzer::Solver::createZ3();
  std::vector<std::unique_ptr<analyzer::Protocol>> Protocols;
  std::vector<report::KernelResults> Results;
  std::vector<analyzer::VerifyOptions> PerKernel;
  std::mutex ProgressLock;
  for (const ptx::Function *F : Entries) {
    Protocols.push_back(analyzer::buildProtocol(M, *F, PO));
    const analyzer::Protocol &P = *Protocols.back();
    for (const auto &[Name, Value] : Options.Params) {
      bool Known = false;
      for (unsigned I = 0; I < P.ParamSymbols.size(); ++I)
        Known |= P.ParamSymbols[I] == Name || (I < P.ParamNames.size() && P.ParamNames[I] == Name);
      if (!Known)
        return fail("kernel " + P.Kernel + " has no parameter '" + Name + "'");
    }
    if (Options.GridCtas && Options.GridCtas % std::max(1u, P.Launch.ClusterSize))
      return fail("kernel " + P.Kernel + " runs in clusters of " +
                  std::to_string(P.Launch.ClusterSize) + " CTAs: a grid of " +
                  std::to_string(Options.GridCtas) + " is not a multiple of it");
    report::KernelResults R;
    R.P = &P;
    analyzer::VerifyOptions KernelOptions = Options;
    if (std::optional<analyzer::LaunchSpec> Spec = analyzer::readKernelInfo(M, *F)) {
      if (Spec->TileK && !Options.TileKGiven) {
        KernelOptions.TileK = *Spec->TileK;
        KernelOptions.TileKGiven = true;
      }
      if (Spec->MinKTiles)
        KernelOptions.MinTiles = *Spec->MinKTiles;
    }
    if (Progress)
      KernelOptions.OnExploreRun = [&P, &ProgressLock](const std::string &Run, double Ms) {
        std::lock_guard<std::mutex> Lock(ProgressLock);
        llvm::errs() << "wsv verify: " << P.Kernel << ": explored " << Run << ", "
                     << llvm::format("%.1f", Ms / 1000) << " s\n";
      };
    PerKernel.push_back(std::move(KernelOptions));
    Results.push_back(std::move(R));
  }
  // The kernels of a file (bf16 and fp16 twins) are verified at once: each protocol has its
  // own expressions and every Z3 query its own context. The lint checks share one solver,
  // so they run after, in turn.
  {
    unsigned Kernels = static_cast<unsigned>(
        std::min<size_t>(Results.size(), Options.Threads ? Options.Threads : 4));
    llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(Kernels));
    for (size_t I = 0; I < Results.size(); ++I)
      Pool.async([&, I] { Results[I].Verdicts = analyzer::verifyProtocol(*Results[I].P, PerKernel[I]); });
    Pool.wait();
  }
  for (report::KernelResults &R : Results) {
    R.Findings = analyzer::runChecks(*R.P, analyzer::CheckSelection::all(), Solver.get());
    analyzer::yieldToRaceFindings(R.Verdicts, R.Findings);
  }

  bool Refuted = false, Unknown = false;
  for (const report::KernelResults &R : Results) {
    for (const analyzer::Verdict &V : R.Verdicts) {
      Refuted |= V.refuted();
      Unknown |= V.unknown();
    }
    for (const analyzer::Finding &F : R.Findings)
      Refuted |= F.Level == analyzer::Severity::Error;
  }

  if (!TraceOut.empty()) {
    if (std::error_code EC = llvm::sys::fs::create_directories(TraceOut))
      return fail("cannot create '" + TraceOut + "': " + EC.message());
    for (const report::KernelResults &R : Results)
      for (const analyzer::Verdict &V : R.Verdicts) {
        if (!V.refuted() || V.Schedule.empty())
          continue;
        llvm::SmallString<128> Path(TraceOut);
        llvm::sys::path::append(Path, R.P->Kernel + "." + analyzer::toString(V.Prop) +
                                          ".trace.json");
        std::error_code EC;
        llvm::raw_fd_ostream OS(Path, EC);
        if (EC)
          return fail("cannot write '" + Path.str().str() + "': " + EC.message());
        OS << report::verdictTrace(*R.P, V).dump(1) << '\n';
      }
  }

  if (Format == "json") {
    nlohmann::json Kernels = nlohmann::json::array();
    for (const report::KernelResults &R : Results) {
      nlohmann::json Vs = nlohmann::json::array(), Fs = nlohmann::json::array();
      for (const analyzer::Verdict &V : R.Verdicts)
        Vs.push_back(report::verdictToJson(V));
      for (const analyzer::Finding &F : R.Findings)
        Fs.push_back(report::findingToJson(F));
      Kernels.push_back({{"kernel", R.P->Kernel}, {"verdicts", Vs}, {"findings", Fs}});
    }
    nlohmann::json Doc = {{"schema", report::VerifyJsonSchema},
                          {"file", Files.front().str()},
                          {"kernels", std::move(Kernels)}};
    llvm::outs() << Doc.dump(1) << '\n';
  } else if (Format == "sarif") {
    // The lint log of the file's findings, with the verdicts (SarifVerify.cpp).
    llvm::SmallString<256> Root(SarifRoot);
    if (std::error_code EC = llvm::sys::fs::make_absolute(Root))
      return fail("cannot resolve the SARIF root: " + EC.message());
    std::vector<report::LintInput> Inputs(1);
    Inputs[0].Name = Files.front().str();
    Inputs[0].Status = report::InputStatus::Checked;
    std::vector<report::SarifVerdicts> Verdicts;
    for (const report::KernelResults &R : Results) {
      Inputs[0].Kernels.push_back(R.P->Kernel);
      Inputs[0].Findings.insert(Inputs[0].Findings.end(), R.Findings.begin(), R.Findings.end());
      unsigned First = 0;
      for (const analyzer::Event &E : R.P->Events)
        if (E.Where.PtxLine && (!First || E.Where.PtxLine < First))
          First = E.Where.PtxLine;
      Verdicts.push_back({Files.front().str(), R.P->Kernel, &R.Verdicts, First});
    }
    llvm::outs() << report::verifyToSarif(Inputs, Verdicts, {std::string(Root), WSV_VERSION})
                        .dump(1)
                 << '\n';
  } else {
    for (const report::KernelResults &R : Results) {
      for (const analyzer::Finding &F : R.Findings)
        printFinding(F, llvm::outs());
      llvm::outs() << "kernel " << R.P->Kernel << '\n';
      for (const analyzer::Verdict &V : R.Verdicts)
        printVerdict(V, EachStep, llvm::outs());
    }
  }
  llvm::outs().flush();
  if (Refuted)
    return ExitFindings;
  if (RequireProof && Unknown)
    return ExitInconclusive;
  return ExitClean;
}

} // namespace

namespace wsv {
extern const Command VerifyCommand = {
    "verify", "prove deadlock freedom and stage safety, or print a counterexample", Usage,
    runVerify};
} // namespace wsv
