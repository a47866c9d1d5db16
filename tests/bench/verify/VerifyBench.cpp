// How long `wsv verify` takes per kernel: protocol extraction, then deadlock freedom, stage
// safety and barrier hygiene (Verify.h: the proof for every K by periodic exploration, or the
// counterexample, with Z3's bounded search for what that leaves unknown). Goals: every
// correct kernel proved in under 2 s; every deadlock or race variant refuted in under 2 s.
// Counters: proved (properties proved), refuted (properties with a counterexample), steps
// (the longest counterexample).
//
//   wsv-bench-verify [--ptx-dir=DIR] [Google Benchmark flags]
//
// Benchmarks are named <kernel>/<variant> (`-` for the correct build). The variants measured
// are those of every kernel in the manifest (DIR/kernels.json). Rows <kernel>/launch-<S>
// verify the correct build for one launch given in full (M = N = K = S on a grid of 132
// CTAs, an H100's SMs): where no proof for every parameter is found (H6), every cluster of
// that launch is explored.
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/Verify.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

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
  const ptx::Function *Entry = nullptr;
};

std::vector<std::unique_ptr<Input>> &inputs() {
  static std::vector<std::unique_ptr<Input>> All;
  return All;
}

bool load(const std::string &Name, const std::string &Path) {
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed || !Parsed->ok()) {
    if (!Parsed)
      llvm::consumeError(Parsed.takeError());
    std::fprintf(stderr, "wsv-bench-verify: cannot parse %s\n", Path.c_str());
    return false;
  }
  auto In = std::make_unique<Input>();
  In->Name = Name;
  In->Parsed = std::move(*Parsed);
  for (const ptx::Function *F : In->Parsed.M->functions())
    if (F->isDefinition() && F->isEntry() && !In->Entry)
      In->Entry = F;
  if (!In->Entry)
    return false;
  inputs().push_back(std::move(In));
  return true;
}

bool loadManifest(const std::string &Dir) {
  auto Buf = llvm::MemoryBuffer::getFile(Dir + "/kernels.json");
  if (!Buf)
    return false;
  auto J = llvm::json::parse((*Buf)->getBuffer());
  if (!J) {
    llvm::consumeError(J.takeError());
    return false;
  }
  const llvm::json::Array *Kernels = J->getAsObject()->getArray("kernels");
  if (!Kernels)
    return false;
  for (const llvm::json::Value &K : *Kernels) {
    const llvm::json::Object &KO = *K.getAsObject();
    std::string Name = KO.getString("name")->str();
    if (!load(Name + "/-", Dir + "/" + KO.getString("ptx")->str()))
      return false;
    for (const llvm::json::Value &V : *KO.getArray("variants")) {
      const llvm::json::Object &VO = *V.getAsObject();
      if (!load(Name + "/" + VO.getString("bug")->str(), Dir + "/" + VO.getString("ptx")->str()))
        return false;
    }
  }
  return true;
}

void verify(benchmark::State &State, const Input *In, uint64_t LaunchSize) {
  VerifyOptions Options;
  if (LaunchSize) {
    Options.Params = {{"M", LaunchSize}, {"N", LaunchSize}, {"K", LaunchSize}};
    Options.GridCtas = 132;
  }
  if (std::optional<LaunchSpec> Spec = readKernelInfo(*In->Parsed.M, *In->Entry)) {
    if (Spec->TileK)
      Options.TileK = *Spec->TileK;
    if (Spec->MinKTiles)
      Options.MinTiles = *Spec->MinKTiles;
  }
  Options.TimeoutMs = 2000; // Z3's share when the exploration leaves a property unknown
  // `wsv verify`'s default budget of states (VerifyOptions::MaxTotalStates), which every
  // proof of the reference kernels fits in (B5's, the largest, takes about 704,000).
  unsigned Proved = 0, Refuted = 0;
  // The longest counterexample: its atomic steps (a role's private work folded into its next
  // transition, Verdict::steps) and its transitions.
  size_t Steps = 0, Transitions = 0;
  for (auto _ : State) {
    std::unique_ptr<Protocol> P = buildProtocol(*In->Parsed.M, *In->Entry);
    std::vector<Verdict> Vs = verifyProtocol(*P, Options);
    Proved = Refuted = 0;
    for (const Verdict &V : Vs) {
      Proved += V.proved();
      Refuted += V.refuted();
      Steps = std::max<size_t>(Steps, V.steps());
      Transitions = std::max(Transitions, V.Schedule.size());
    }
  }
  State.counters["proved"] = Proved;
  State.counters["refuted"] = Refuted;
  State.counters["steps"] = static_cast<double>(Steps);
  State.counters["transitions"] = static_cast<double>(Transitions);
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
  if (!loadManifest(Dir)) {
    std::fprintf(stderr, "wsv-bench-verify: no kernels.json with parsable PTX in %s (build target "
                         "wsv_ptx or pass --ptx-dir=DIR)\n",
                 Dir.c_str());
    return 2;
  }
  for (const auto &In : inputs())
    benchmark::RegisterBenchmark(In->Name.c_str(), verify, In.get(), uint64_t(0))
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (const auto &In : inputs()) {
    llvm::StringRef Kernel(In->Name);
    if (!Kernel.consume_back("/-"))
      continue;
    for (uint64_t Size : {4096, 8192})
      benchmark::RegisterBenchmark((Kernel + "/launch-" + std::to_string(Size)).str().c_str(),
                                   verify, In.get(), Size)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
