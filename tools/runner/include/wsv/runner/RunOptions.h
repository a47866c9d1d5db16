// The command line of `wsv run`, parsed into one value. Parsing is pure (no CUDA), so usage
// errors are unit-tested and reported before any device is touched.
#pragma once

#include "wsv/runner/Gemm.h"
#include "wsv/runner/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wsv {
namespace runner {

enum class OutputFormat { Text, Json };

/// Which PTX of a kernel runs: the plain build, the instrumented one (--check), or clang's.
enum class PtxFlavor { Plain, Checked, Clang };

struct RunOptions {
  std::vector<std::string> Kernels; ///< names, or "all"
  std::string Bug;                  ///< --bug <check>: the variant built with -DWSV_BUG=<check>
  std::vector<Problem> Problems;    ///< --m/--n/--k or --shape; empty: the kernel's defaults
  std::vector<Dtype> Dtypes;        ///< --dtype; empty: both for checks, bf16 for --bench
  bool Check = false;               ///< --check: instrumented waits, hang capture
  bool Clang = false;               ///< --clang: run <kernel>.clang.ptx
  bool Bench = false;               ///< --bench: time against cuBLAS
  bool Verify = true;               ///< --no-verify skips the comparison (bench only)
  std::vector<uint32_t> BenchSizes; ///< --sizes / --sweep; default 4096 and 8192 (cubes)
  uint32_t BenchIters = 0;          ///< timed launches per measurement; 0: chosen by size
  OutputFormat Format = OutputFormat::Text;
  std::string PtxDir;               ///< --ptx-dir; default: the build's ptx/ next to bin/
  std::string PtxFile;              ///< --ptx FILE: this PTX instead of the manifest's
  std::string TraceDir = ".";       ///< --trace-dir: where hang traces are written
  uint32_t TimeoutMs = 2000;        ///< --timeout-ms: a checked wait gives up after this long
  uint32_t WatchdogMs = 0;          ///< --watchdog-ms: host watchdog; 0: derived from the work
  uint64_t Seed = 0;                ///< --seed; 0: a fresh seed from the clock
  uint32_t Repeats = 1;             ///< --repeat: checks per problem, each with a fresh draw
  bool Isolate = true;              ///< --no-isolate: run in this process (debugging)

  PtxFlavor flavor() const {
    return Check ? PtxFlavor::Checked : (Clang ? PtxFlavor::Clang : PtxFlavor::Plain);
  }
};

/// Parses the arguments after `run` (Argv[0] is "run"). Usage mistakes come back as a Status
/// whose message says what is wrong.
Expected<RunOptions> parseRunOptions(int Argc, char **Argv);

/// "4096x2048x1024" -> M, N, K.
Expected<Problem> parseShape(const std::string &S);

extern const char RunUsage[];

} // namespace runner
} // namespace wsv
