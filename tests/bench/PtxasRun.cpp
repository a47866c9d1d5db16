//===- PtxasRun.cpp - timing ptxas with a limit -----------------------------------===//
#include "PtxasRun.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <chrono>
#include <optional>

using namespace wsv;
using llvm::StringRef;

namespace {

/// ptxas's heap is capped (RLIMIT_DATA), so a huge input fails instead of pushing a shared
/// machine into swap; the outcome then says so.
constexpr unsigned PtxasMemoryLimitMB = 8192;

/// One ptxas run. UnresolvedExtern is set when ptxas failed for want of an extern symbol.
bench::PtxasRun assemble(StringRef Ptxas, StringRef Path, StringRef Arch, bool Relocatable,
                         unsigned TimeoutSeconds, StringRef Cubin, StringRef Log,
                         bool &UnresolvedExtern) {
  UnresolvedExtern = false;
  std::string ArchFlag = ("-arch=" + Arch).str();
  llvm::SmallVector<StringRef, 8> Args = {Ptxas, ArchFlag};
  if (Relocatable)
    Args.push_back("--compile-only");
  Args.append({Path, "-o", Cubin});
  bench::PtxasRun Run;
  Run.Relocatable = Relocatable;
  std::string Error;
  std::optional<llvm::sys::ProcessStatistics> Stats;
  auto Start = std::chrono::steady_clock::now();
  int Exit = llvm::sys::ExecuteAndWait(Ptxas, Args, std::nullopt, {std::nullopt, Log, Log},
                                       TimeoutSeconds, PtxasMemoryLimitMB, &Error, nullptr,
                                       &Stats);
  Run.WallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  Run.CpuSeconds = Run.WallSeconds;
  if (Stats) {
    Run.CpuSeconds = std::chrono::duration<double>(Stats->TotalTime).count();
    Run.PeakBytes = Stats->PeakMemory * 1024; // reported in kilobytes
  }
  if (Exit == 0) {
    Run.Result = bench::PtxasRun::Assembled;
    return Run;
  }
  // ExecuteAndWait says -2 both for a crash and for the time limit; the clock tells which.
  if (Exit == -2 && TimeoutSeconds && Run.WallSeconds >= TimeoutSeconds) {
    Run.Result = bench::PtxasRun::TimedOut;
    Run.Message = ("killed after " + llvm::Twine(TimeoutSeconds) + " s").str();
    return Run;
  }
  Run.Result = bench::PtxasRun::Failed;
  Run.Message = Error.empty() ? "exit code " + std::to_string(Exit) : Error;
  if (auto Text = llvm::MemoryBuffer::getFile(Log)) {
    StringRef Output = (*Text)->getBuffer();
    UnresolvedExtern = Output.contains("Unresolved extern");
    StringRef First = Output.split('\n').first;
    if (!First.empty())
      Run.Message = First.str();
  }
  return Run;
}

} // namespace

bench::PtxasRun bench::runPtxas(StringRef Ptxas, StringRef Path, StringRef Arch,
                                unsigned TimeoutSeconds, StringRef ScratchDir) {
  llvm::SmallString<256> Cubin, Log;
  if (llvm::sys::fs::createUniqueFile(ScratchDir + "/ptxas-%%%%%%.cubin", Cubin) ||
      llvm::sys::fs::createUniqueFile(ScratchDir + "/ptxas-%%%%%%.log", Log)) {
    PtxasRun Run;
    Run.Message = ("cannot create scratch files in '" + ScratchDir + "'").str();
    return Run;
  }
  bool UnresolvedExtern = false;
  PtxasRun Run = assemble(Ptxas, Path, Arch, false, TimeoutSeconds, Cubin, Log,
                          UnresolvedExtern);
  if (Run.Result == PtxasRun::Failed && UnresolvedExtern)
    Run = assemble(Ptxas, Path, Arch, true, TimeoutSeconds, Cubin, Log, UnresolvedExtern);
  llvm::sys::fs::remove(Cubin);
  llvm::sys::fs::remove(Log);
  return Run;
}
