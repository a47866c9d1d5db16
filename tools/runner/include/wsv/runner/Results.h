// What a run produced: one CaseResult per (kernel, variant, problem) check and one BenchRow per
// timed size, their JSON form (which also carries them from the watched child process to the
// parent) and the text tables `wsv run` prints.
#pragma once

#include "wsv/runner/Gemm.h"

#include <string>
#include <vector>

namespace wsv {
namespace runner {

enum class Outcome {
  Pass,        ///< every element within tolerance
  Wrong,       ///< finished, but the result is wrong
  Hang,        ///< did not finish: captured by --check, or ended by the host watchdog
  LaunchError, ///< the launch or the kernel failed (trap, illegal address, ...)
  Refused,     ///< the kernel cannot run this problem or on this GPU
  NotRun,      ///< an earlier failure lost the CUDA context
};

const char *outcomeName(Outcome O);
bool outcomeFromName(const std::string &S, Outcome &O);

struct CaseResult {
  std::string Kernel;
  std::string Variant; ///< seeded bug, or empty
  std::string Flavor;  ///< plain, checked, clang
  std::string PtxFile;
  Problem P;
  Outcome Result = Outcome::NotRun;
  Comparison Cmp;      ///< valid when Result is Pass or Wrong
  double KernelMs = 0; ///< this launch's time (events)
  std::string Message; ///< why it failed, in one line
  std::string Hang;    ///< per-role summary of a captured hang (several lines)
  std::string TraceFile;
};

struct BenchRow {
  std::string Kernel;
  Dtype Type = Dtype::Bf16;
  uint32_t Size = 0; ///< M = N = K
  double KernelMs = 0, CublasMs = 0, CheckedMs = 0; ///< medians; CheckedMs 0 when not timed
  double SpreadPct = 0;    ///< (p90 - p10) / median of the kernel's timings, percent
  double CublasSpreadPct = 0; ///< the same for cuBLAS
  uint32_t Iterations = 0; ///< timed launches per measurement
  uint32_t InputSets = 0;  ///< rotated input sets
  uint32_t GridCtas = 0;   ///< CTAs launched (a persistent grid's size)
  bool Verified = false;   ///< the timed kernel's output was checked at this size
  bool VerifiedPass = false;

  double tflops(double Ms) const {
    return Ms > 0 ? 2.0 * Size * double(Size) * Size / (Ms * 1e-3) / 1e12 : 0;
  }
};

struct DeviceSummary {
  std::string Name;
  int Major = 0, Minor = 0, Sms = 0;
  uint64_t L2Bytes = 0;
  std::string Driver; ///< "13.0"
};

/// Everything one job (one kernel and PTX file) reports.
struct JobResult {
  DeviceSummary Device;
  std::vector<CaseResult> Cases;
  std::vector<BenchRow> Bench;
  std::string Error; ///< a failure before any case ran (no GPU, unreadable PTX, ...)
  bool Refused = false; ///< Error is a refusal (exit code 2), not a failure
  bool Skipped = false; ///< refused, but named only through `all`: a note, exit code 0
  std::vector<std::string> Notes; ///< e.g. ptxas warnings from loading the PTX

  int exitCode() const; ///< 0 all pass, 1 a failure, 2 refusal or usage
};

std::string toJson(const JobResult &R);                     ///< one line
bool fromJson(const std::string &Line, JobResult &R);       ///< false if malformed
std::string runReportJson(const std::vector<JobResult> &Jobs); ///< "wsv-run/1", pretty

/// Text: one table row per case, the hang summaries under their row, then the bench table.
std::string formatCases(const std::vector<JobResult> &Jobs);
std::string formatBench(const std::vector<JobResult> &Jobs);

} // namespace runner
} // namespace wsv
