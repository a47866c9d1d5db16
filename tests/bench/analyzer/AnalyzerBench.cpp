// How long the core analyses take on each entry of each reference kernel: the CFG, dominators, loops,
// values with induction variables and trip counts (FunctionAnalysis), and the thread sets of
// every synchronization instruction (what role extraction asks of the guards). The whole
// protocol extraction must stay under 50 ms per kernel; this part should be a fraction of it.
//
//   wsv-bench-analyzer [--ptx-dir=DIR] [Google Benchmark flags]
//
// DIR defaults to the build's PTX folder. Bug variants and instrumented (.checked) builds are
// left out: they are the same kernels.
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

struct Input {
  std::string Name;
  ptx::ParseResult Parsed;
  std::vector<const ptx::Function *> Entries;
};

std::vector<std::unique_ptr<Input>> &inputs() {
  static std::vector<std::unique_ptr<Input>> All;
  return All;
}

bool loadInputs(const std::string &Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    llvm::StringRef Path = It->path();
    if (Path.ends_with(".ptx") && !Path.contains(".bug-") && !Path.contains(".checked"))
      Files.push_back(Path.str());
  }
  std::sort(Files.begin(), Files.end());
  for (const std::string &File : Files) {
    auto Parsed = ptx::parseFile(File, [](const ptx::Diagnostic &) {});
    if (!Parsed || !Parsed->ok()) {
      if (!Parsed)
        llvm::consumeError(Parsed.takeError());
      std::fprintf(stderr, "wsv-bench-analyzer: cannot parse %s\n", File.c_str());
      return false;
    }
    auto In = std::make_unique<Input>();
    In->Name = llvm::sys::path::stem(File).str();
    In->Parsed = std::move(*Parsed);
    for (const ptx::Function *F : In->Parsed.M->functions())
      if (F->isDefinition() && F->isEntry())
        In->Entries.push_back(F);
    inputs().push_back(std::move(In));
  }
  return !inputs().empty();
}

Solver &sharedSolver() {
  static std::unique_ptr<Solver> S = Solver::createZ3();
  return *S;
}

// CFG, dominators, post-dominators, loops, values, induction variables, trip counts and spin
// waits of one entry.
void analyze(benchmark::State &State, const Input *In, const ptx::Function *F) {
  AnalysisOptions Options;
  Options.SharedSolver = &sharedSolver();
  size_t Blocks = 0, Loops = 0;
  for (auto _ : State) {
    FunctionAnalysis FA(*In->Parsed.M, *F, Options);
    Blocks = FA.cfg().size();
    Loops = FA.loops().size();
    benchmark::DoNotOptimize(FA.values().numRegisters());
  }
  State.counters["blocks"] = Blocks;
  State.counters["loops"] = Loops;
}

// The same, then the thread set of every synchronization instruction, as the protocol asks
// for it (GuardAnalysis::threadCondition). The whole condition, which only unit tests ask
// about, costs H6 8 s of Z3 queries on its stream-K arithmetic, 30 times `wsv lint` on it.
void analyzeWithThreadSets(benchmark::State &State, const Input *In, const ptx::Function *F) {
  AnalysisOptions Options;
  Options.SharedSolver = &sharedSolver();
  std::optional<LaunchShape> Launch = LaunchShape::fromFunction(*F);
  size_t Sets = 0;
  for (auto _ : State) {
    Sets = 0;
    FunctionAnalysis FA(*In->Parsed.M, *F, Options);
    if (!Launch)
      continue;
    for (InstId I = 0; I < FA.cfg().instructions().size(); ++I) {
      if (!FA.cfg().block(FA.cfg().inst(I).Block).Reachable ||
          !models::decodeSyncOp(*FA.cfg().inst(I).I).isSyncRelevant())
        continue;
      ThreadSet S = FA.guards().threadSet(FA.guards().threadCondition(I), *Launch);
      benchmark::DoNotOptimize(S.members().size());
      ++Sets;
    }
  }
  State.counters["thread_sets"] = Sets;
}

} // namespace

int main(int argc, char **argv) {
  std::string Dir = WSV_PTX_DIR;
  std::vector<char *> Args;
  for (int I = 0; I < argc; ++I) {
    llvm::StringRef Arg(argv[I]);
    if (Arg.consume_front("--ptx-dir="))
      Dir = Arg.str();
    else
      Args.push_back(argv[I]);
  }
  int N = static_cast<int>(Args.size());
  benchmark::Initialize(&N, Args.data());
  if (!loadInputs(Dir)) {
    std::fprintf(stderr, "wsv-bench-analyzer: no reference-kernel PTX in %s (build target wsv_ptx "
                         "or pass --ptx-dir=DIR)\n",
                 Dir.c_str());
    return 2;
  }
  for (const auto &In : inputs())
    for (const ptx::Function *F : In->Entries) {
      std::string Name = In->Name + "/" + F->name().str();
      benchmark::RegisterBenchmark(("analyze/" + Name).c_str(), analyze, In.get(), F)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("analyze+threadsets/" + Name).c_str(), analyzeWithThreadSets,
                                   In.get(), F)
          ->Unit(benchmark::kMillisecond);
    }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
