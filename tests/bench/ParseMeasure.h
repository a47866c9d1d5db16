//===- ParseMeasure.h - how fast the PTX front end parses, and with how much memory ---===//
//
// Speed is measured in this process: the file is read once, then parsed again and again from
// memory (no copy of the text per run) and the median run is reported, in thread CPU time
// and in wall-clock time. Peak memory is
// measured in a child process that does what `wsv parse` does, reading the file and parsing
// it, and reports its peak resident set minus its resident set before reading: so the number
// includes the file buffer, the AST and every allocation on the way, and nothing the bench
// itself holds. The child does it twice: the first (cold) pass also pages in the parser's
// code; the second (warm) pass, after the first one's memory went back to the system,
// measures what parsing this file takes.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace wsv {
namespace bench {

struct ParseTiming {
  uint64_t Bytes = 0;
  /// One parse, median over Runs: CPU time of the parsing thread (what "on one core" means
  /// on a machine shared with other work) and wall clock (equal to it on a quiet machine).
  double MedianCpuSeconds = 0;
  double MedianWallSeconds = 0;
  unsigned Runs = 0;
  unsigned Errors = 0;      ///< parse errors (the benchmark inputs should have none)
  std::string Arch;         ///< the `.target` architecture, e.g. sm_90a; empty if none
};

/// Parses Path at least MinRuns times and for at least MinSeconds in all (at most MaxRuns
/// times). A run is parseBuffer and freeing the module: what a user of the parser pays.
llvm::Expected<ParseTiming> timeParse(llvm::StringRef Path, unsigned MinRuns,
                                      double MinSeconds, unsigned MaxRuns = 1000);

struct MemoryUse {
  uint64_t PeakBytes = 0;     ///< warm pass: peak resident set reading and parsing, minus before
  uint64_t ColdPeakBytes = 0; ///< the same for the first pass, code pages included
  uint64_t AstBytes = 0;      ///< what the AST's allocator handed out
};

/// The child side: reads and parses Path twice, then writes
/// "cold <bytes> warm <bytes> ast <bytes>" to stdout.
/// Returns the process exit code.
int runMemoryChild(llvm::StringRef Path);

/// Runs Self (this benchmark's executable) as a child with --memory-child Path and reads
/// back what it measured.
llvm::Expected<MemoryUse> measureMemory(llvm::StringRef Self, llvm::StringRef Path,
                                        llvm::StringRef ScratchDir);

} // namespace bench
} // namespace wsv
