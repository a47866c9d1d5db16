// How long `wsv lint` takes on the reference kernels, against the time ptxas takes to
// assemble the same PTX: each kernel file alone (DESIGN: under 200 ms each) and all of them
// together (DESIGN: less than ptxas on them). Lint runs in-process as `wsv lint -j 1` does:
// read, parse, build every entry's protocol, run every check. Both sides are CPU time.
//
//   wsv-bench-lint [--ptx-dir=DIR] [--ptxas=PTXAS] [Google Benchmark flags]
//
// DIR defaults to the build's PTX folder; its correct kernels are measured (nvcc, clang and
// instrumented builds; the bug variants are the same kernels). After the benchmarks, a table
// per file: lint (median CPU ms), ptxas (CPU ms), their ratio, and the totals.
#include "wsv/LintDriver.h"

#include "../PtxasRun.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <vector>

using namespace wsv;

namespace {

std::vector<std::string> kernelFiles(const std::string &Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    // The reference kernels are h1..h5 and b1..b6; other files in the folder are not.
    if (Name.ends_with(".ptx") && !Name.contains(".bug-") && Name.size() > 2 &&
        (Name[0] == 'h' || Name[0] == 'b') && Name[1] >= '1' && Name[1] <= '9' && Name[2] == '.')
      Files.push_back(It->path());
  }
  std::sort(Files.begin(), Files.end());
  return Files;
}

double cpuSeconds() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

/// Median CPU milliseconds of linting Paths with one worker, per file name.
std::map<std::string, std::vector<double>> &samples() {
  static std::map<std::string, std::vector<double>> S;
  return S;
}

unsigned lintOnce(const std::vector<std::string> &Paths) {
  lint::LintOptions O;
  O.Jobs = 1;
  unsigned Findings = 0;
  for (const auto &Produced : lint::lintPaths(Paths, O))
    for (const auto &In : Produced)
      Findings += In.Findings.size() + (In.Status != report::InputStatus::Checked ? 1000 : 0);
  return Findings;
}

void lintFiles(benchmark::State &State, std::string Name, std::vector<std::string> Paths) {
  unsigned Findings = 0;
  for (auto _ : State) {
    double T0 = cpuSeconds();
    Findings = lintOnce(Paths);
    samples()[Name].push_back((cpuSeconds() - T0) * 1e3);
  }
  State.counters["findings"] = Findings;
  if (Findings >= 1000)
    State.SkipWithError("a file did not parse");
}

double median(std::vector<double> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

std::string targetOf(const std::string &Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return "sm_90a";
  llvm::StringRef Text = (*Buffer)->getBuffer();
  size_t At = Text.find("\n.target ");
  if (At == llvm::StringRef::npos)
    return "sm_90a";
  return Text.substr(At + 9).split('\n').first.split(',').first.trim().str();
}

} // namespace

int main(int argc, char **argv) {
  std::string Dir = WSV_PTX_DIR, Ptxas = WSV_PTXAS;
  std::vector<char *> Args;
  for (int I = 0; I < argc; ++I) {
    llvm::StringRef Arg(argv[I]);
    if (Arg.consume_front("--ptx-dir="))
      Dir = Arg.str();
    else if (Arg.consume_front("--ptxas="))
      Ptxas = Arg.str();
    else
      Args.push_back(argv[I]);
  }
  int N = static_cast<int>(Args.size());
  benchmark::Initialize(&N, Args.data());
  std::vector<std::string> Files = kernelFiles(Dir);
  if (Files.empty()) {
    std::fprintf(stderr, "wsv-bench-lint: no reference-kernel PTX in %s (build target wsv_ptx "
                         "or pass --ptx-dir=DIR)\n",
                 Dir.c_str());
    return 2;
  }
  for (const std::string &F : Files) {
    std::string Name = llvm::sys::path::filename(F).str();
    benchmark::RegisterBenchmark(("lint/" + Name).c_str(), lintFiles, Name,
                                 std::vector<std::string>{F})
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("lint/all-together", lintFiles, std::string("all"), Files)
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  if (Ptxas.empty()) {
    std::printf("\nno ptxas (pass --ptxas=PATH): lint times only\n");
    return 0;
  }
  llvm::SmallString<128> Scratch;
  if (llvm::sys::fs::createUniqueDirectory("wsv-bench-lint", Scratch)) {
    std::fprintf(stderr, "wsv-bench-lint: cannot create a scratch folder\n");
    return 2;
  }
  std::printf("\n%-28s %12s %12s %10s\n", "file", "lint CPU ms", "ptxas CPU ms", "lint/ptxas");
  double LintSum = 0, PtxasSum = 0, Slowest = 0;
  for (const std::string &F : Files) {
    std::string Name = llvm::sys::path::filename(F).str();
    double Lint = median(samples()[Name]);
    bench::PtxasRun R = bench::runPtxas(Ptxas, F, targetOf(F), 600, Scratch);
    double P = R.CpuSeconds * 1e3;
    LintSum += Lint;
    PtxasSum += P;
    Slowest = std::max(Slowest, Lint);
    std::printf("%-28s %12.1f %12.1f %10.3f%s%s\n", Name.c_str(), Lint, P,
                P > 0 ? Lint / P : 0.0, Lint >= 200 ? "  over 200 ms" : "",
                R.Result == bench::PtxasRun::Assembled ? "" : ("  ptxas: " + R.Message).c_str());
  }
  double All = median(samples()["all"]);
  std::printf("%-28s %12.1f %12.1f %10.3f\n", "all together (one run)", All, PtxasSum,
              PtxasSum > 0 ? All / PtxasSum : 0.0);
  std::printf("\n%zu files; slowest single file %.1f ms (limit 200 ms); all together %.1f ms "
              "vs ptxas %.1f ms\n",
              Files.size(), Slowest, All, PtxasSum);
  llvm::sys::fs::remove_directories(Scratch);
  return 0;
}
