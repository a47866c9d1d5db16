//===- ParseMeasure.cpp - parse speed in process, peak memory in a child ----------===//
#include "ParseMeasure.h"

#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

using namespace wsv;
using llvm::StringRef;

namespace {

void ignoreDiagnostic(const ptx::Diagnostic &) {}

/// CPU time of the calling thread, user and system (page faults are part of parsing).
double threadCpuSeconds() {
  timespec T;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}


/// A `Vm...:` field of /proc/self/status, in bytes; 0 if it cannot be read. Read into a stack
/// buffer: a heap buffer would be counted in the very peak being measured.
uint64_t procStatusBytes(StringRef Field) {
  char Buffer[8192];
  int Fd = ::open("/proc/self/status", O_RDONLY);
  if (Fd < 0)
    return 0;
  size_t Size = 0;
  for (ssize_t N; Size < sizeof(Buffer) &&
                  (N = ::read(Fd, Buffer + Size, sizeof(Buffer) - Size)) > 0;)
    Size += N;
  ::close(Fd);
  StringRef Text(Buffer, Size);
  size_t At = Text.find(Field);
  if (At == StringRef::npos)
    return 0;
  StringRef Value = Text.drop_front(At + Field.size()).ltrim(" \t:");
  uint64_t Kb = 0;
  Value.take_while(llvm::isDigit).getAsInteger(10, Kb);
  return Kb * 1024;
}

/// Makes VmHWM start again from the current resident set (Linux 4.0 and later), so that
/// what the process touched while starting up is not counted as parsing.
bool resetPeakResidentSet() {
  int Fd = ::open("/proc/self/clear_refs", O_WRONLY);
  if (Fd < 0)
    return false;
  bool Done = ::write(Fd, "5", 1) == 1;
  ::close(Fd);
  return Done;
}

} // namespace

llvm::Expected<bench::ParseTiming> bench::timeParse(StringRef Path, unsigned MinRuns,
                                                    double MinSeconds, unsigned MaxRuns) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> File = ptx::readSourceFile(Path);
  if (!File)
    return File.takeError();
  StringRef Text = (*File)->getBuffer();
  ParseTiming T;
  T.Bytes = Text.size();
  std::vector<double> Cpu, Wall;
  double Total = 0;
  while (Wall.size() < MaxRuns && (Wall.size() < MinRuns || Total < MinSeconds)) {
    // getMemBuffer refers to Text without copying it, so a run costs only the parse.
    auto Start = std::chrono::steady_clock::now();
    double CpuStart = threadCpuSeconds();
    {
      ptx::ParseResult R = ptx::parseBuffer(
          llvm::MemoryBuffer::getMemBuffer(Text, Path, /*RequiresNullTerminator=*/false),
          ignoreDiagnostic);
      if (Wall.empty()) {
        T.Errors = R.Errors;
        if (const ptx::TargetDirective *Target = R.M->target())
          T.Arch = Target->architecture().str();
      }
    }
    Cpu.push_back(threadCpuSeconds() - CpuStart);
    Wall.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count());
    Total += Wall.back();
  }
  std::sort(Cpu.begin(), Cpu.end());
  std::sort(Wall.begin(), Wall.end());
  T.Runs = Wall.size();
  T.MedianCpuSeconds = Cpu[Cpu.size() / 2];
  T.MedianWallSeconds = Wall[Wall.size() / 2];
  return T;
}

namespace {

struct Pass {
  uint64_t PeakBytes = 0;
  uint64_t AstBytes = 0;
};

/// Reads and parses Path as `wsv parse` does; the peak resident set while doing it, minus the
/// resident set before.
llvm::Expected<Pass> readAndParse(StringRef Path) {
  if (!resetPeakResidentSet())
    return llvm::createStringError(std::errc::operation_not_supported,
                                   "cannot reset the peak resident set");
  uint64_t Before = procStatusBytes("VmRSS");
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> File = ptx::readSourceFile(Path);
  if (!File)
    return File.takeError();
  ptx::ParseResult R = ptx::parseBuffer(std::move(*File), ignoreDiagnostic);
  uint64_t Peak = procStatusBytes("VmHWM");
  if (Before == 0 || Peak == 0)
    return llvm::createStringError(std::errc::io_error, "cannot read /proc/self/status");
  return Pass{Peak > Before ? Peak - Before : 0, R.M->astBytes()};
}

} // namespace

int bench::runMemoryChild(StringRef Path) {
  // The first pass also pages in the parser's code (about 100 KB, whatever the file); the
  // second measures the data alone. malloc_trim hands the first pass's memory back to the
  // system, so the second pass must fault in every page it uses again and none is hidden.
  llvm::Expected<Pass> Cold = readAndParse(Path);
  if (!Cold) {
    llvm::errs() << "wsv-parse-bench: " << llvm::toString(Cold.takeError()) << '\n';
    return 2;
  }
  ::malloc_trim(0);
  llvm::Expected<Pass> Warm = readAndParse(Path);
  if (!Warm) {
    llvm::errs() << "wsv-parse-bench: " << llvm::toString(Warm.takeError()) << '\n';
    return 2;
  }
  llvm::outs() << "cold " << Cold->PeakBytes << " warm " << Warm->PeakBytes << " ast "
               << Warm->AstBytes << '\n';
  return 0;
}

llvm::Expected<bench::MemoryUse> bench::measureMemory(StringRef Self, StringRef Path,
                                                      StringRef ScratchDir) {
  llvm::SmallString<256> Out;
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(
          ScratchDir + "/memory-%%%%%%.txt", Out))
    return llvm::createStringError(EC, "cannot create a file in '%s'", ScratchDir.str().c_str());
  std::string Error;
  int Exit = llvm::sys::ExecuteAndWait(Self, {Self, "--memory-child", Path}, std::nullopt,
                                       {std::nullopt, StringRef(Out), std::nullopt}, 0, 0,
                                       &Error);
  auto Result = llvm::MemoryBuffer::getFile(Out);
  llvm::sys::fs::remove(Out);
  if (Exit != 0 || !Result)
    return llvm::createStringError(std::errc::io_error, "memory child failed on '%s': %s",
                                   Path.str().c_str(), Error.c_str());
  // "cold <bytes> warm <bytes> ast <bytes>"
  llvm::SmallVector<StringRef, 6> Words;
  StringRef((*Result)->getBuffer()).trim().split(Words, ' ');
  MemoryUse Use;
  if (Words.size() != 6 || Words[1].getAsInteger(10, Use.ColdPeakBytes) ||
      Words[3].getAsInteger(10, Use.PeakBytes) || Words[5].getAsInteger(10, Use.AstBytes))
    return llvm::createStringError(std::errc::io_error, "memory child wrote '%s'",
                                   (*Result)->getBuffer().str().c_str());
  return Use;
}
