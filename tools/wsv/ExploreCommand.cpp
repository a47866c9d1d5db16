// `wsv explore`: run every interleaving of a kernel's protocol for small parameters on the
// reference models (analyzer/Explore.h); print the verdict and the shortest schedule to a
// deadlock or race, write it as a wsv-trace/1 document, or replay such a trace.
#include "Command.h"

#include "OptionValue.h"
#include "../report/TraceJson.h"

#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>
#include <string>

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv explore [--kernel NAME] [--k-tiles N | --all-k] [--tiles N]\n"
    "                   [--param NAME=VALUE]... [--grid CTAS [--cluster C]]\n"
    "                   [--cluster-size N]\n"
    "                   [--max-states N] [--trace OUT.json]\n"
    "                   [--replay TRACE.json] FILE\n"
    "\n"
    "Explores every interleaving of the protocol of a kernel entry of FILE for one small\n"
    "instance, on the reference models of mbarriers, named and cluster barriers, async groups\n"
    "and TMEM, and prints clean, deadlock (who waits on what), race (which buffer slot) or\n"
    "violation, with the shortest schedule found. For debugging; `wsv verify` is the proof.\n"
    "\n"
    "options:\n"
    "  --kernel NAME        the entry (default: the first)\n"
    "  --k-tiles N          K = N times the kernel's k-tile (default 2)\n"
    "  --all-k              every K: Z3 proves the steps periodic in the k-loop, a few\n"
    "                       launches and one periodic system per residue are explored\n"
    "  --tiles N            tiles per CTA for persistent kernels (default 1)\n"
    "  --param NAME=VALUE   a parameter by name (K, M, N or the PTX name); overrides\n"
    "  --grid CTAS          %nctaid.x of the launch (a multiple of the cluster size);\n"
    "                       with --param M=.. N=.. K=.., one launch as it is\n"
    "  --cluster C          the cluster of that grid whose CTAs are modeled (default 0):\n"
    "                       a persistent kernel gives each cluster its own tiles\n"
    "  --cluster-size N     CTAs per cluster, for a kernel whose PTX states none\n"
    "  --max-states N       give up (verdict unknown) after N states (default 2000000)\n"
    "  --no-reduction       every interleaving, without the partial-order reduction (to\n"
    "                       cross-check it on one launch)\n"
    "  --progress           print each exploration of --all-k to stderr as it ends (the\n"
    "                       default when stderr is a terminal)\n"
    "  -j, --jobs N         explorations of --all-k run at once (default: the hardware\n"
    "                       threads, at most 4)\n"
    "  --trace OUT.json     write the schedule as a wsv-trace/1 document\n"
    "  --replay TRACE.json  re-execute the trace's steps instead of exploring\n"
    "\n"
    "exit codes: 0 clean, 1 deadlock, race or violation, 2 bad input, 3 unknown\n";

int fail(const std::string &Message, bool ShowUsage = false) {
  llvm::errs() << "wsv explore: error: " << Message << '\n';
  if (ShowUsage)
    llvm::errs() << Usage;
  return ExitBadInput;
}

int runExplore(int Argc, char **Argv) {
  std::string Kernel, TraceOut, ReplayIn, File;
  unsigned KTiles = 2, Tiles = 1, Jobs = 0;
  uint64_t Grid = 0, Cluster = 0;
  std::optional<unsigned> ClusterSize;
  bool DepthFirst = false;
  uint64_t MaxStates = 2000000;
  bool AllK = false, Reduce = true, Progress = llvm::errs().is_displayed();
  std::map<std::string, uint64_t> Params;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    auto Next = [&](std::string &Out) {
      if (I + 1 >= Argc)
        return false;
      Out = Argv[++I];
      return true;
    };
    std::string V;
    if (Arg == "--all-k") {
      AllK = true;
    } else if (Arg == "--no-reduction") {
      Reduce = false;
    } else if (Arg == "--depth-first") {
      DepthFirst = true;
    } else if (Arg == "--progress") {
      Progress = true;
    } else if (Arg == "--kernel") {
      if (!Next(Kernel))
        return fail("--kernel needs a name", true);
    } else if (Arg == "--trace" || Arg == "--replay") {
      if (!Next(Arg == "--trace" ? TraceOut : ReplayIn))
        return fail(Arg.str() + " needs a file", true);
    } else if (Arg == "--k-tiles" || Arg == "--tiles" || Arg == "--max-states" ||
               Arg == "--jobs" || Arg == "-j") {
      unsigned long long N = 0;
      if (!Next(V) || StringRef(V).getAsInteger(10, N) || N == 0)
        return fail(Arg.str() + " needs a positive number", true);
      if (Arg == "--k-tiles")
        KTiles = static_cast<unsigned>(N);
      else if (Arg == "--tiles")
        Tiles = static_cast<unsigned>(N);
      else if (Arg == "--max-states")
        MaxStates = N;
      else if (N > 256)
        return fail("--jobs takes a number from 1 to 256", true);
      else
        Jobs = static_cast<unsigned>(N);
    } else if (Arg == "--grid" || Arg == "--cluster") {
      unsigned long long N = 0;
      if (!Next(V) || StringRef(V).getAsInteger(10, N) || (Arg == "--grid" && N == 0) ||
          N >= (1u << 16))
        return fail(Arg.str() + " needs a number below 65536" +
                        (Arg == "--grid" ? ", not 0" : ""),
                    true);
      (Arg == "--grid" ? Grid : Cluster) = N;
    } else if (Arg == "--cluster-size") {
      if (!Next(V) || !(ClusterSize = clusterSizeValue(V)))
        return fail("--cluster-size takes a number of CTAs from 1 to 16", true);
    } else if (Arg == "--param") {
      // V, not a temporary: the halves point into it.
      if (!Next(V))
        V.clear();
      auto [Name, Value] = StringRef(V).split('=');
      unsigned long long N = 0;
      if (Name.empty() || Value.getAsInteger(0, N))
        return fail("--param takes NAME=VALUE", true);
      Params[Name.str()] = N;
    } else if (Arg.starts_with("-")) {
      return fail("unknown option '" + Arg.str() + "'", true);
    } else if (File.empty()) {
      File = Arg.str();
    } else {
      return fail("one input file at a time", true);
    }
  }
  if (File.empty())
    return fail("no input file", true);

  llvm::Expected<ptx::ParseResult> Parsed = ptx::parseFile(File);
  if (!Parsed)
    return fail(llvm::toString(Parsed.takeError()));
  if (!Parsed->ok())
    return fail(File + ": the file does not parse");
  analyzer::KernelNotes Notes;
  analyzer::applyWarpDispatch(*Parsed, Notes);
  const ptx::Function *Entry = nullptr;
  for (const ptx::Function *F : Parsed->M->functions())
    if (F->isDefinition() && F->isEntry() && !Entry && (Kernel.empty() || F->name() == Kernel))
      Entry = F;
  if (!Entry)
    return fail(Kernel.empty() ? File + " has no kernel entry"
                               : "no kernel entry '" + Kernel + "' in " + File);

  if (std::optional<std::string> Why =
          ClusterSize ? analyzer::clusterSizeConflict(*Entry, *ClusterSize) : std::nullopt)
    return fail(*Why + " (--cluster-size)");
  analyzer::ProtocolOptions PO;
  PO.Notes = &Notes;
  PO.ClusterSize = ClusterSize;
  PO.ClusterFrom = "--cluster-size";
  std::unique_ptr<analyzer::Protocol> P = analyzer::buildProtocol(*Parsed->M, *Entry, PO);
  analyzer::RolePrograms RP = analyzer::lowerRolePrograms(*P);
  std::optional<analyzer::LaunchSpec> Spec = analyzer::readKernelInfo(*Parsed->M, *Entry);
  // The k-tile the kernel states, or the one its trip counts show (1 for `k < k_tiles`, 64
  // for `K / 64`), as verify takes it: --k-tiles N and --all-k count k-tiles of that size.
  uint64_t TileK = Spec && Spec->TileK ? *Spec->TileK : analyzer::inferKTile(RP, 64);
  std::optional<analyzer::ParametricResult> All;
  if (AllK) {
    if (!ReplayIn.empty())
      return fail("--all-k explores; it does not replay", true);
    if (!Reduce)
      return fail("--no-reduction cross-checks one launch (--k-tiles, --tiles)", true);
    analyzer::ParametricOptions Options;
    Options.TileK = TileK;
    Options.MaxStates = MaxStates;
    Options.Threads = Jobs;
    for (const auto &[Name, Value] : Params)
      Options.Params[Name] = Value;
    if (Progress)
      Options.OnRun = [](const std::string &Run, double Ms) {
        llvm::errs() << "wsv explore: " << Run << ", " << llvm::format("%.1f", Ms / 1000)
                     << " s\n";
      };
    All = analyzer::exploreAllTrips(RP, Options);
    llvm::outs() << "kernel " << Entry->name() << ": " << analyzer::toString(All->Verdict);
    if (All->Verdict == analyzer::ExploreVerdict::Clean)
      llvm::outs() << " for " << All->ForParameters;
    llvm::outs() << " (period " << All->Period << " from iteration " << All->Threshold << "; "
                 << All->SolverQueries << " Z3 lemmas; " << All->States << " states; "
                 << static_cast<uint64_t>(All->Milliseconds) << " ms)\n";
    for (const std::string &Run : All->Runs)
      llvm::outs() << "  " << Run << "\n";
    if (All->Verdict == analyzer::ExploreVerdict::Clean)
      return ExitClean;
    if (All->Verdict == analyzer::ExploreVerdict::Unknown) {
      llvm::outs() << "  unknown: " << All->Reason << "\n";
      return ExitInconclusive;
    }
  }
  // A trace to replay states its launch: parameters, and for one cluster of a larger grid
  // the grid and that cluster (what the options do not set).
  nlohmann::json ReplayTrace;
  if (!ReplayIn.empty()) {
    auto Buf = llvm::MemoryBuffer::getFile(ReplayIn);
    if (!Buf)
      return fail("cannot read " + ReplayIn);
    ReplayTrace = nlohmann::json::parse((*Buf)->getBuffer().str(), nullptr, false);
    const nlohmann::json *L = ReplayTrace.is_object() && ReplayTrace.contains("launch")
                                  ? &ReplayTrace["launch"]
                                  : nullptr;
    // The explorer's own traces state the parameters among their assumptions (`K = 384`).
    for (const auto &[Name, Value] : report::parametersFromAssumptions(ReplayTrace))
      Params.emplace(Name, Value);
    if (L && L->is_object()) {
      if (L->contains("parameters") && (*L)["parameters"].is_object())
        for (auto It = (*L)["parameters"].begin(); It != (*L)["parameters"].end(); ++It)
          if (It.value().is_number_unsigned() && !Params.count(It.key()))
            Params[It.key()] = It.value().get<uint64_t>();
      if (!Grid && L->contains("first_cta") && (*L)["first_cta"].is_number_unsigned() &&
          L->contains("grid") && (*L)["grid"].is_array() && !(*L)["grid"].empty() &&
          (*L)["grid"][0].is_number_unsigned() && RP.ClusterSize) {
        Grid = (*L)["grid"][0].get<uint64_t>();
        Cluster = (*L)["first_cta"].get<uint64_t>() / RP.ClusterSize;
      }
    }
  }
  // A counterexample of --all-k is printed below, as for one launch: its launch.
  std::optional<analyzer::Instance> I;
  if (All) {
    I = All->Launch;
  } else if (Grid) {
    // One launch as given: no search for a shape with --tiles tiles.
    I.emplace();
    I->Params["K"] = KTiles * TileK;
    I->Params["M"] = I->Params["N"] = 256;
  } else {
    I = analyzer::chooseInstance(RP, TileK, KTiles, Tiles);
  }
  if (!I)
    return fail("no M, N and grid give " + std::to_string(Tiles) + " tile(s) per CTA");
  for (const auto &[Name, Value] : Params)
    I->Params[Name] = Value;
  if (Grid || Cluster) {
    uint64_t Size = RP.ClusterSize;
    uint64_t Ctas = Grid ? Grid : I->GridCtas;
    if (Ctas % Size)
      return fail("--grid " + std::to_string(Ctas) + " is not a multiple of the cluster size " +
                  std::to_string(Size));
    if ((Cluster + 1) * Size > Ctas)
      return fail("--cluster " + std::to_string(Cluster) + ": a grid of " +
                  std::to_string(Ctas) + " CTAs has clusters 0 to " +
                  std::to_string(Ctas / Size - 1));
    I->GridCtas = Ctas;
    I->FirstCta = Cluster * Size;
  }
  analyzer::ConcreteSystem S = analyzer::instantiate(RP, *I);

  analyzer::ExploreResult R;
  if (!ReplayIn.empty()) {
    std::string Error;
    auto Schedule = report::scheduleFromTrace(ReplayTrace, S, Error);
    if (!Schedule)
      return fail(ReplayIn + ": " + Error);
    // A counterexample found past a race takes racing steps, which must not stop the replay.
    R = analyzer::replay(S, *Schedule, !ReplayTrace.value("races_go_on", false));
  } else if (All) {
    R = std::move(All->Found);
  } else {
    analyzer::ExploreOptions Options;
    Options.PartialOrder = Reduce;
    Options.DepthFirst = DepthFirst;
    Options.MaxStates = MaxStates;
    R = analyzer::explore(S, Options);
  }

  llvm::outs() << "kernel " << Entry->name() << ": " << analyzer::toString(R.Verdict);
  if (ReplayIn.empty())
    llvm::outs() << " (" << R.States << " states)";
  llvm::outs() << "\n";
  for (const std::string &A : S.Assumptions)
    llvm::outs() << "  assuming " << A << "\n";
  if (!R.Message.empty())
    llvm::outs() << "  " << R.Message << "\n";
  for (size_t K = 0; K < R.Schedule.size(); ++K) {
    const analyzer::ScheduleStep &T = R.Schedule[K];
    const analyzer::ConcreteStep &C = S.Agents[T.Agent].Steps[T.Step];
    llvm::outs() << "  " << K << ": " << analyzer::describe(S, T) << "  # ptx "
                 << P->Events[C.Event].Where.PtxLine << "\n";
  }
  if (!TraceOut.empty()) {
    report::TraceOrigin Origin;
    Origin.Entry = Entry->name().str();
    Origin.Ptx = File;
    std::ofstream OS(TraceOut);
    OS << report::traceToJson(S, R, Origin).dump(1) << '\n';
    if (!OS)
      return fail("cannot write " + TraceOut);
  }
  llvm::outs().flush();
  switch (R.Verdict) {
  case analyzer::ExploreVerdict::Clean: return ExitClean;
  case analyzer::ExploreVerdict::Unknown: return ExitInconclusive;
  default: return ExitFindings;
  }
}

} // namespace

namespace wsv {
extern const Command ExploreCommand = {
    "explore", "explore every interleaving of a kernel's protocol for small parameters", Usage,
    runExplore};
} // namespace wsv
