// How long extracting the protocol takes, per entry of each reference kernel's PTX: the whole
// of buildProtocol() (CFG, values, loops and trip counts, guards and thread sets, barrier and
// buffer identity, roles, the sequences), and the same followed by the text printout and by
// parsing the file first. Every kernel must stay under 50 ms.
//
//   wsv-bench-protocol [--ptx-dir=DIR] [Google Benchmark flags]
//
// DIR defaults to the build's PTX folder. Bug variants and instrumented (.checked) builds are
// left out: they are the same kernels.
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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
  std::string Name, Path;
  ptx::ParseResult Parsed;
  std::vector<const ptx::Function *> Entries;
};

std::vector<std::unique_ptr<Input>> &inputs() {
  static std::vector<std::unique_ptr<Input>> All;
  return All;
}

Solver &sharedSolver() {
  static std::unique_ptr<Solver> S = Solver::createZ3();
  return *S;
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
      std::fprintf(stderr, "wsv-bench-protocol: cannot parse %s\n", File.c_str());
      return false;
    }
    auto In = std::make_unique<Input>();
    In->Name = llvm::sys::path::stem(File).str();
    In->Path = File;
    In->Parsed = std::move(*Parsed);
    for (const ptx::Function *F : In->Parsed.M->functions())
      if (F->isDefinition() && F->isEntry())
        In->Entries.push_back(F);
    inputs().push_back(std::move(In));
  }
  return !inputs().empty();
}

ProtocolOptions options() {
  ProtocolOptions O;
  O.SharedSolver = &sharedSolver();
  return O;
}

// The protocol of one entry, from its parsed module.
void extract(benchmark::State &State, const Input *In, const ptx::Function *F) {
  size_t Events = 0, Roles = 0;
  for (auto _ : State) {
    std::unique_ptr<Protocol> P = buildProtocol(*In->Parsed.M, *F, options());
    Events = P->Events.size();
    Roles = P->Roles.size();
    benchmark::DoNotOptimize(P.get());
  }
  State.counters["events"] = Events;
  State.counters["roles"] = Roles;
}

// The protocol and its text, as `wsv protocol` makes them.
void extractAndPrint(benchmark::State &State, const Input *In, const ptx::Function *F) {
  size_t Bytes = 0;
  for (auto _ : State) {
    std::unique_ptr<Protocol> P = buildProtocol(*In->Parsed.M, *F, options());
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    printProtocol(*P, OS);
    Bytes = OS.str().size();
    benchmark::DoNotOptimize(Text.data());
  }
  State.counters["text_bytes"] = Bytes;
}

// Parsing the whole file (every entry) and extracting one entry's protocol.
void parseAndExtract(benchmark::State &State, const Input *In, const ptx::Function *F) {
  for (auto _ : State) {
    auto Parsed = ptx::parseFile(In->Path, [](const ptx::Diagnostic &) {});
    if (!Parsed) {
      llvm::consumeError(Parsed.takeError());
      State.SkipWithError("cannot read the file");
      return;
    }
    const ptx::Function *Same = Parsed->M->function(F->name());
    std::unique_ptr<Protocol> P = buildProtocol(*Parsed->M, *Same, options());
    benchmark::DoNotOptimize(P.get());
  }
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Dir = WSV_PTX_DIR;
  std::vector<char *> Rest;
  for (int I = 0; I < Argc; ++I) {
    llvm::StringRef Arg = Argv[I];
    if (Arg.consume_front("--ptx-dir="))
      Dir = Arg.str();
    else
      Rest.push_back(Argv[I]);
  }
  if (!loadInputs(Dir)) {
    std::fprintf(stderr, "wsv-bench-protocol: no PTX in %s (build the reference kernels)\n",
                 Dir.c_str());
    return 1;
  }
  for (const auto &In : inputs())
    for (const ptx::Function *F : In->Entries) {
      std::string Id = In->Name + "/" + F->name().str();
      benchmark::RegisterBenchmark(("protocol/" + Id).c_str(), extract, In.get(), F)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("protocol+text/" + Id).c_str(), extractAndPrint, In.get(), F)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("parse+protocol/" + Id).c_str(), parseAndExtract, In.get(), F)
          ->Unit(benchmark::kMillisecond);
    }
  int N = static_cast<int>(Rest.size());
  benchmark::Initialize(&N, Rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
