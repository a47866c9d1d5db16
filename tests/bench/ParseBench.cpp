//===- ParseBench.cpp - the PTX front end's speed and memory against its goals ------===//
//
//   wsv-parse-bench [--ptxas PATH] [--synthetic-from FILE --synthetic-out FILE] PATH...
//
// Prints one row per PTX file: its size, parse speed (MB/s, median of several runs on one
// thread, in thread CPU time; "wall" is the same in wall-clock time, lower when other work
// takes the core), peak memory while reading and parsing it over its size, how long ptxas
// takes to assemble it (CPU time), and how many times faster parsing is. cold/size is the
// peak of the first parse in a fresh process, the parser's code pages included; ast/size the
// part of the peak that the AST's allocator handed out (ParseMeasure.h). The goals of the
// front end are at least 200 MB/s, peak memory under 3x the file size, and parsing at least
// 50x faster than ptxas; a row names the goals it misses. The synthetic file (SyntheticPtx.h)
// is written first and measured last. See README.md in this folder.
//
//===----------------------------------------------------------------------------------===//
#include "ParseMeasure.h"
#include "PtxasRun.h"
#include "SyntheticPtx.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace wsv;
using llvm::StringRef;

namespace {

constexpr double SpeedGoalMBs = 200;      // MB/s on one core
constexpr double MemoryGoalRatio = 3;     // peak memory / file size
constexpr double PtxasGoalRatio = 50;     // ptxas time / parse time

const char Usage[] =
    "usage: wsv-parse-bench [options] PATH...\n"
    "\n"
    "PATH is a PTX file or a folder whose *.ptx files (at any depth) are measured.\n"
    "\n"
    "options:\n"
    "  --ptxas PATH                 compare with this ptxas (no ptxas columns without it)\n"
    "  --ptxas-timeout S            seconds ptxas may take per file (default 300)\n"
    "  --synthetic-from FILE        write a synthetic file of renamed copies of FILE's entries\n"
    "  --synthetic-out FILE         ... here (required with --synthetic-from)\n"
    "  --synthetic-mb N             ... of at least N MB (default 100)\n"
    "  --synthetic-ptxas-timeout S  seconds ptxas may take on it (default 1200)\n"
    "  --min-runs N                 parse each file at least N times (default 3)\n"
    "  --min-seconds S              ... and for at least S seconds (default 0.5)\n"
    "  --scratch DIR                folder for scratch files (default: the temp folder)\n"
    "  --require-ptxas              fail unless ptxas assembles every file (for tests)\n";

struct Options {
  std::string Ptxas;
  unsigned PtxasTimeout = 300;
  std::string SyntheticFrom, SyntheticOut;
  uint64_t SyntheticMB = 100;
  unsigned SyntheticPtxasTimeout = 1200;
  unsigned MinRuns = 3;
  double MinSeconds = 0.5;
  std::string Scratch;
  bool RequirePtxas = false;
  std::vector<std::string> Paths;
};

struct Row {
  std::string Path;
  std::string Name; ///< what the table shows: the file and its folder
  std::optional<bench::ParseTiming> Timing;
  std::optional<bench::MemoryUse> Memory;
  std::optional<bench::PtxasRun> Ptxas;
  std::string Problem; ///< why a measurement is missing
  unsigned PtxasTimeout = 0;
};

std::string fixed(double Value, int Digits) {
  std::string S;
  llvm::raw_string_ostream(S) << llvm::format("%.*f", Digits, Value);
  return S;
}

std::string megabytes(uint64_t Bytes) { return fixed(Bytes / 1e6, Bytes < 10000000 ? 3 : 1); }

bool parseArgs(int Argc, char **Argv, Options &O) {
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    auto Value = [&]() -> StringRef { return I + 1 < Argc ? StringRef(Argv[++I]) : ""; };
    bool Bad = false;
    if (Arg == "--ptxas")
      O.Ptxas = Value().str();
    else if (Arg == "--ptxas-timeout")
      Bad = Value().getAsInteger(10, O.PtxasTimeout);
    else if (Arg == "--synthetic-from")
      O.SyntheticFrom = Value().str();
    else if (Arg == "--synthetic-out")
      O.SyntheticOut = Value().str();
    else if (Arg == "--synthetic-mb")
      Bad = Value().getAsInteger(10, O.SyntheticMB);
    else if (Arg == "--synthetic-ptxas-timeout")
      Bad = Value().getAsInteger(10, O.SyntheticPtxasTimeout);
    else if (Arg == "--min-runs")
      Bad = Value().getAsInteger(10, O.MinRuns) || O.MinRuns == 0;
    else if (Arg == "--min-seconds")
      Bad = Value().getAsDouble(O.MinSeconds);
    else if (Arg == "--scratch")
      O.Scratch = Value().str();
    else if (Arg == "--require-ptxas")
      O.RequirePtxas = true;
    else if (Arg.starts_with("-")) {
      llvm::errs() << "wsv-parse-bench: error: unknown option '" << Arg << "'\n";
      return false;
    } else
      O.Paths.push_back(Arg.str());
    if (Bad) {
      llvm::errs() << "wsv-parse-bench: error: " << Arg << " needs a number\n";
      return false;
    }
  }
  if (O.SyntheticFrom.empty() != O.SyntheticOut.empty()) {
    llvm::errs() << "wsv-parse-bench: error: --synthetic-from and --synthetic-out go together\n";
    return false;
  }
  if (O.RequirePtxas && O.Ptxas.empty()) {
    llvm::errs() << "wsv-parse-bench: error: --require-ptxas needs --ptxas\n";
    return false;
  }
  if (O.Paths.empty() && O.SyntheticFrom.empty()) {
    llvm::errs() << "wsv-parse-bench: error: nothing to measure\n";
    return false;
  }
  if (O.Scratch.empty()) {
    llvm::SmallString<128> Temp;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Temp);
    O.Scratch = std::string(Temp);
  }
  return true;
}

/// The files under the given paths, each folder's sorted by name.
bool collectFiles(llvm::ArrayRef<std::string> Paths, std::vector<std::string> &Files) {
  for (const std::string &Path : Paths) {
    if (!llvm::sys::fs::is_directory(Path)) {
      if (!llvm::sys::fs::exists(Path)) {
        llvm::errs() << "wsv-parse-bench: error: '" << Path << "' does not exist\n";
        return false;
      }
      Files.push_back(Path);
      continue;
    }
    std::vector<std::string> Found;
    std::error_code EC;
    for (llvm::sys::fs::recursive_directory_iterator It(Path, EC), End; It != End && !EC;
         It.increment(EC))
      if (llvm::sys::path::extension(It->path()) == ".ptx")
        Found.push_back(It->path());
    llvm::sort(Found);
    llvm::append_range(Files, Found);
  }
  return true;
}

std::string displayName(StringRef Path) {
  StringRef Parent = llvm::sys::path::filename(llvm::sys::path::parent_path(Path));
  StringRef File = llvm::sys::path::filename(Path);
  return Parent.empty() ? File.str() : (Parent + "/" + File).str();
}

void measure(Row &R, const Options &O, StringRef Self) {
  llvm::Expected<bench::ParseTiming> Timing = bench::timeParse(R.Path, O.MinRuns, O.MinSeconds);
  if (!Timing) {
    R.Problem = llvm::toString(Timing.takeError());
    return;
  }
  R.Timing = *Timing;
  if (llvm::Expected<bench::MemoryUse> Memory = bench::measureMemory(Self, R.Path, O.Scratch))
    R.Memory = *Memory;
  else
    R.Problem = llvm::toString(Memory.takeError());
  if (!O.Ptxas.empty() && !R.Timing->Arch.empty())
    R.Ptxas = bench::runPtxas(O.Ptxas, R.Path, R.Timing->Arch, R.PtxasTimeout, O.Scratch);
}

/// What a row shows, column by column, and which goals it misses.
struct Cells {
  std::string Speed = "-", WallSpeed = "-", PeakMB = "-", PeakRatio = "-", ColdRatio = "-";
  std::string AstRatio = "-";
  std::string PtxasSeconds = "-", Ratio = "-";
  std::string Missed;
};

Cells cellsOf(const Row &R) {
  Cells C;
  auto Miss = [&](StringRef Goal) { C.Missed += (C.Missed.empty() ? "" : ",") + Goal.str(); };
  if (!R.Timing)
    return C;
  const bench::ParseTiming &T = *R.Timing;
  double Speed = T.Bytes / 1e6 / T.MedianCpuSeconds;
  C.Speed = fixed(Speed, 1);
  C.WallSpeed = fixed(T.Bytes / 1e6 / T.MedianWallSeconds, 1);
  if (Speed < SpeedGoalMBs)
    Miss("speed");
  if (T.Errors)
    Miss("parse-errors");
  if (R.Memory) {
    double Ratio = T.Bytes ? double(R.Memory->PeakBytes) / T.Bytes : 0;
    C.PeakMB = megabytes(R.Memory->PeakBytes);
    C.PeakRatio = fixed(Ratio, 2);
    C.ColdRatio = fixed(T.Bytes ? double(R.Memory->ColdPeakBytes) / T.Bytes : 0, 2);
    C.AstRatio = fixed(T.Bytes ? double(R.Memory->AstBytes) / T.Bytes : 0, 2);
    if (Ratio >= MemoryGoalRatio)
      Miss("memory");
  }
  if (R.Ptxas) {
    const bench::PtxasRun &P = *R.Ptxas;
    if (P.Result == bench::PtxasRun::Assembled) {
      double Ratio = P.CpuSeconds / T.MedianCpuSeconds;
      C.PtxasSeconds = fixed(P.CpuSeconds, 2);
      C.Ratio = fixed(Ratio, 0);
      if (Ratio < PtxasGoalRatio)
        Miss("ptxas-ratio");
    } else if (P.Result == bench::PtxasRun::TimedOut) {
      // ptxas was still working at the limit, so the ratio is at least this.
      C.PtxasSeconds = ">" + fixed(P.CpuSeconds, 0);
      C.Ratio = ">" + fixed(P.CpuSeconds / T.MedianCpuSeconds, 0);
    } else {
      C.PtxasSeconds = "failed";
    }
  }
  return C;
}

void printTable(llvm::ArrayRef<Row> Rows, llvm::raw_ostream &OS) {
  size_t NameWidth = 4;
  for (const Row &R : Rows)
    NameWidth = std::max(NameWidth, R.Name.size());
  auto Line = [&](StringRef File, StringRef Size, StringRef Speed, StringRef WallSpeed,
                  StringRef PeakMB,
                  StringRef PeakRatio, StringRef ColdRatio, StringRef AstRatio, StringRef Ptxas,
                  StringRef Ratio, StringRef Missed) {
    OS << llvm::left_justify(File, NameWidth) << "  " << llvm::right_justify(Size, 9) << "  "
       << llvm::right_justify(Speed, 7) << "  " << llvm::right_justify(WallSpeed, 7) << "  "
       << llvm::right_justify(PeakMB, 9) << "  "
       << llvm::right_justify(PeakRatio, 9) << "  " << llvm::right_justify(ColdRatio, 9) << "  "
       << llvm::right_justify(AstRatio, 8) << "  "
       << llvm::right_justify(Ptxas, 8) << "  " << llvm::right_justify(Ratio, 7) << "  "
       << Missed << '\n';
  };
  Line("file", "size MB", "MB/s", "wall", "peak MB", "peak/size", "cold/size", "ast/size", "ptxas s",
       "ratio", "goals missed");
  for (const Row &R : Rows) {
    if (!R.Timing) {
      Line(R.Name, "-", "-", "-", "-", "-", "-", "-", "-", "-", R.Problem);
      continue;
    }
    Cells C = cellsOf(R);
    Line(R.Name, megabytes(R.Timing->Bytes), C.Speed, C.WallSpeed, C.PeakMB, C.PeakRatio, C.ColdRatio,
         C.AstRatio, C.PtxasSeconds, C.Ratio, C.Missed);
  }
}

/// Totals over the rows, and each goal's worst row.
void printSummary(llvm::ArrayRef<Row> Rows, llvm::raw_ostream &OS) {
  uint64_t Bytes = 0;
  double ParseSeconds = 0, PtxasSeconds = 0, ParseSecondsAssembled = 0;
  const Row *Slowest = nullptr, *Fattest = nullptr, *Closest = nullptr;
  double SlowestSpeed = 0, FattestRatio = 0, ClosestRatio = 0;
  unsigned Missed = 0;
  for (const Row &R : Rows) {
    if (!R.Timing)
      continue;
    const bench::ParseTiming &T = *R.Timing;
    Bytes += T.Bytes;
    ParseSeconds += T.MedianCpuSeconds;
    double Speed = T.Bytes / 1e6 / T.MedianCpuSeconds;
    if (!Slowest || Speed < SlowestSpeed)
      Slowest = &R, SlowestSpeed = Speed;
    if (R.Memory && T.Bytes) {
      double Ratio = double(R.Memory->PeakBytes) / T.Bytes;
      if (!Fattest || Ratio > FattestRatio)
        Fattest = &R, FattestRatio = Ratio;
    }
    if (R.Ptxas && R.Ptxas->Result == bench::PtxasRun::Assembled) {
      PtxasSeconds += R.Ptxas->CpuSeconds;
      ParseSecondsAssembled += T.MedianCpuSeconds;
      double Ratio = R.Ptxas->CpuSeconds / T.MedianCpuSeconds;
      if (!Closest || Ratio < ClosestRatio)
        Closest = &R, ClosestRatio = Ratio;
    }
    Missed += !cellsOf(R).Missed.empty();
  }
  OS << '\n'
     << Rows.size() << " files, " << megabytes(Bytes) << " MB: parsed at "
     << fixed(Bytes / 1e6 / ParseSeconds, 1) << " MB/s overall";
  if (ParseSecondsAssembled > 0)
    OS << "; ptxas took " << fixed(PtxasSeconds / ParseSecondsAssembled, 0)
       << "x as long on the files it assembled";
  OS << '\n';
  if (Slowest)
    OS << "slowest parse: " << fixed(SlowestSpeed, 1) << " MB/s (" << Slowest->Name
       << "; goal " << fixed(SpeedGoalMBs, 0) << ")\n";
  if (Fattest)
    OS << "highest peak memory / size: " << fixed(FattestRatio, 2) << " (" << Fattest->Name
       << "; goal under " << fixed(MemoryGoalRatio, 0) << ")\n";
  if (Closest)
    OS << "lowest ptxas / parse time: " << fixed(ClosestRatio, 0) << "x (" << Closest->Name
       << "; goal " << fixed(PtxasGoalRatio, 0) << "x)\n";
  for (const Row &R : Rows)
    if (R.Ptxas && R.Ptxas->Result != bench::PtxasRun::Assembled)
      OS << "ptxas on " << R.Name << ": "
         << (R.Ptxas->Result == bench::PtxasRun::TimedOut ? "timed out, " : "failed, ")
         << R.Ptxas->Message << '\n';
  OS << Missed << " of " << Rows.size() << " files miss a goal\n";
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc == 3 && StringRef(Argv[1]) == "--memory-child")
    return bench::runMemoryChild(Argv[2]);
  if (Argc == 2 && (StringRef(Argv[1]) == "--help" || StringRef(Argv[1]) == "-h")) {
    llvm::outs() << Usage;
    return 0;
  }
  Options O;
  if (!parseArgs(Argc, Argv, O)) {
    llvm::errs() << Usage;
    return 2;
  }
  std::string Self = llvm::sys::fs::getMainExecutable(Argv[0], reinterpret_cast<void *>(&main));

  std::vector<std::string> Files;
  if (!collectFiles(O.Paths, Files))
    return 2;
  std::vector<Row> Rows;
  for (const std::string &File : Files)
    Rows.push_back({File, displayName(File), {}, {}, {}, {}, O.PtxasTimeout});
  if (!O.SyntheticFrom.empty()) {
    llvm::Expected<bench::SyntheticPtx> Synthetic =
        bench::writeSyntheticPtx(O.SyntheticFrom, O.SyntheticOut, O.SyntheticMB * 1000000);
    if (!Synthetic) {
      llvm::errs() << "wsv-parse-bench: error: " << llvm::toString(Synthetic.takeError())
                   << '\n';
      return 2;
    }
    llvm::errs() << "wrote " << O.SyntheticOut << ": " << megabytes(Synthetic->Bytes)
                 << " MB, " << Synthetic->Entries << " entries from " << O.SyntheticFrom
                 << '\n';
    Rows.push_back({O.SyntheticOut, displayName(O.SyntheticOut), {}, {}, {}, {},
                    O.SyntheticPtxasTimeout});
  }

  for (Row &R : Rows) {
    llvm::errs() << "measuring " << R.Name << '\n';
    measure(R, O, Self);
  }
  printTable(Rows, llvm::outs());
  printSummary(Rows, llvm::outs());
  // Measurements are reported, not judged: only inputs that could not be measured, or PTX
  // that did not parse cleanly, make the run fail.
  for (const Row &R : Rows) {
    if (!R.Timing || R.Timing->Errors || !R.Problem.empty())
      return 1;
    if (O.RequirePtxas && (!R.Ptxas || R.Ptxas->Result != bench::PtxasRun::Assembled))
      return 1;
  }
  return 0;
}
