#include "wsv/runner/Results.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace wsv {
namespace runner {

using nlohmann::json;

static const char *const OutcomeNames[] = {"pass",         "wrong",  "hang",
                                           "launch-error", "refused", "not-run"};

const char *outcomeName(Outcome O) { return OutcomeNames[static_cast<int>(O)]; }

bool outcomeFromName(const std::string &S, Outcome &O) {
  for (int I = 0; I < 6; ++I)
    if (S == OutcomeNames[I]) {
      O = static_cast<Outcome>(I);
      return true;
    }
  return false;
}

int JobResult::exitCode() const {
  if (Skipped)
    return 0;
  if (!Error.empty())
    return Refused ? 2 : 1;
  int Code = 0;
  for (const CaseResult &C : Cases) {
    if (C.Result == Outcome::Refused)
      Code = Code == 1 ? 1 : 2;
    else if (C.Result != Outcome::Pass)
      Code = 1;
  }
  for (const BenchRow &B : Bench)
    if (B.Verified && !B.VerifiedPass)
      Code = 1;
  return Code;
}

static json caseJson(const CaseResult &C) {
  json J = {{"kernel", C.Kernel},
            {"variant", C.Variant},
            {"flavor", C.Flavor},
            {"ptx", C.PtxFile},
            {"m", C.P.M},
            {"n", C.P.N},
            {"k", C.P.K},
            {"dtype", dtypeName(C.P.Type)},
            {"result", outcomeName(C.Result)},
            {"kernel_ms", C.KernelMs},
            {"message", C.Message},
            {"hang", C.Hang},
            {"trace", C.TraceFile}};
  if (C.Result == Outcome::Pass || C.Result == Outcome::Wrong)
    J["comparison"] = {{"elements", C.Cmp.Elements},
                       {"unwritten", C.Cmp.Unwritten},
                       {"non_finite", C.Cmp.NonFinite},
                       {"out_of_tolerance", C.Cmp.OutOfTolerance},
                       {"rel_frobenius", C.Cmp.RelFrobenius},
                       {"max_abs_error", C.Cmp.MaxAbsError},
                       {"ref_rms", C.Cmp.RefRms},
                       {"first_bad", C.Cmp.FirstBad == UINT64_MAX ? json(nullptr)
                                                                  : json(C.Cmp.FirstBad)}};
  return J;
}

static json benchJson(const BenchRow &B) {
  return {{"kernel", B.Kernel},
          {"dtype", dtypeName(B.Type)},
          {"size", B.Size},
          {"kernel_ms", B.KernelMs},
          {"cublas_ms", B.CublasMs},
          {"checked_ms", B.CheckedMs},
          {"kernel_tflops", B.tflops(B.KernelMs)},
          {"cublas_tflops", B.tflops(B.CublasMs)},
          {"ratio", B.CublasMs > 0 && B.KernelMs > 0 ? B.CublasMs / B.KernelMs : 0.0},
          {"check_overhead_pct",
           B.CheckedMs > 0 && B.KernelMs > 0 ? 100.0 * (B.CheckedMs / B.KernelMs - 1) : 0.0},
          {"spread_pct", B.SpreadPct},
          {"cublas_spread_pct", B.CublasSpreadPct},
          {"iterations", B.Iterations},
          {"input_sets", B.InputSets},
          {"grid_ctas", B.GridCtas},
          {"verified", B.Verified},
          {"verified_pass", B.VerifiedPass}};
}

static json jobJson(const JobResult &R) {
  json Cases = json::array(), Bench = json::array();
  for (const CaseResult &C : R.Cases)
    Cases.push_back(caseJson(C));
  for (const BenchRow &B : R.Bench)
    Bench.push_back(benchJson(B));
  return {{"device",
           {{"name", R.Device.Name},
            {"sm", R.Device.Major * 10 + R.Device.Minor},
            {"sms", R.Device.Sms},
            {"l2_bytes", R.Device.L2Bytes},
            {"driver", R.Device.Driver}}},
          {"cases", Cases},
          {"bench", Bench},
          {"error", R.Error},
          {"refused", R.Refused},
          {"skipped", R.Skipped},
          {"notes", R.Notes}};
}

std::string toJson(const JobResult &R) { return jobJson(R).dump(); }

bool fromJson(const std::string &Line, JobResult &R) {
  const json J = json::parse(Line, nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return false;
  R = JobResult();
  const json &D = J.value("device", json::object());
  R.Device.Name = D.value("name", "");
  const int Sm = D.value("sm", 0);
  R.Device.Major = Sm / 10;
  R.Device.Minor = Sm % 10;
  R.Device.Sms = D.value("sms", 0);
  R.Device.L2Bytes = D.value("l2_bytes", uint64_t(0));
  R.Device.Driver = D.value("driver", "");
  R.Error = J.value("error", "");
  R.Refused = J.value("refused", false);
  R.Skipped = J.value("skipped", false);
  for (const json &N : J.value("notes", json::array()))
    if (N.is_string())
      R.Notes.push_back(N.get<std::string>());
  for (const json &C : J.value("cases", json::array())) {
    CaseResult Out;
    Out.Kernel = C.value("kernel", "");
    Out.Variant = C.value("variant", "");
    Out.Flavor = C.value("flavor", "");
    Out.PtxFile = C.value("ptx", "");
    Out.P.M = C.value("m", 0u);
    Out.P.N = C.value("n", 0u);
    Out.P.K = C.value("k", 0u);
    Out.P.Type = parseDtype(C.value("dtype", "bf16")).value_or(Dtype::Bf16);
    if (!outcomeFromName(C.value("result", ""), Out.Result))
      return false;
    Out.KernelMs = C.value("kernel_ms", 0.0);
    Out.Message = C.value("message", "");
    Out.Hang = C.value("hang", "");
    Out.TraceFile = C.value("trace", "");
    if (C.contains("comparison")) {
      const json &X = C["comparison"];
      Out.Cmp.Elements = X.value("elements", uint64_t(0));
      Out.Cmp.Unwritten = X.value("unwritten", uint64_t(0));
      Out.Cmp.NonFinite = X.value("non_finite", uint64_t(0));
      Out.Cmp.OutOfTolerance = X.value("out_of_tolerance", uint64_t(0));
      Out.Cmp.RelFrobenius = X.value("rel_frobenius", 0.0);
      Out.Cmp.MaxAbsError = X.value("max_abs_error", 0.0);
      Out.Cmp.RefRms = X.value("ref_rms", 0.0);
      Out.Cmp.FirstBad = X["first_bad"].is_null() ? UINT64_MAX : X["first_bad"].get<uint64_t>();
      Out.Cmp.Pass = Out.Result == Outcome::Pass;
    }
    R.Cases.push_back(Out);
  }
  for (const json &B : J.value("bench", json::array())) {
    BenchRow Row;
    Row.Kernel = B.value("kernel", "");
    Row.Type = parseDtype(B.value("dtype", "bf16")).value_or(Dtype::Bf16);
    Row.Size = B.value("size", 0u);
    Row.KernelMs = B.value("kernel_ms", 0.0);
    Row.CublasMs = B.value("cublas_ms", 0.0);
    Row.CheckedMs = B.value("checked_ms", 0.0);
    Row.SpreadPct = B.value("spread_pct", 0.0);
    Row.CublasSpreadPct = B.value("cublas_spread_pct", 0.0);
    Row.Iterations = B.value("iterations", 0u);
    Row.InputSets = B.value("input_sets", 0u);
    Row.GridCtas = B.value("grid_ctas", 0u);
    Row.Verified = B.value("verified", false);
    Row.VerifiedPass = B.value("verified_pass", false);
    R.Bench.push_back(Row);
  }
  return true;
}

std::string runReportJson(const std::vector<JobResult> &Jobs) {
  json Doc;
  Doc["schema"] = "wsv-run/1";
  json Arr = json::array();
  int Code = 0;
  for (const JobResult &J : Jobs) {
    Arr.push_back(jobJson(J));
    const int C = J.exitCode();
    Code = (C == 1 || Code == 1) ? 1 : std::max(Code, C);
  }
  Doc["jobs"] = Arr;
  Doc["exit_code"] = Code;
  return Doc.dump(2) + "\n";
}

static std::string fmt(const char *Format, double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, Format, V);
  return Buf;
}

std::string formatCases(const std::vector<JobResult> &Jobs) {
  std::ostringstream OS;
  bool Header = false;
  for (const JobResult &J : Jobs) {
    if (!J.Error.empty()) {
      OS << (J.Skipped ? "skipped: " : J.Refused ? "refused: " : "error: ") << J.Error << "\n";
      continue;
    }
    for (const std::string &N : J.Notes)
      OS << "note: " << N << "\n";
    for (const CaseResult &C : J.Cases) {
      if (!Header) {
        char Buf[200];
        std::snprintf(Buf, sizeof Buf, "%-6s %-28s %-8s %-5s %-17s %-12s %-9s %-9s %s\n",
                      "kernel", "variant", "flavor", "dtype", "problem", "result", "rel.err",
                      "bad", "ms");
        OS << Buf;
        Header = true;
      }
      const std::string Problem = std::to_string(C.P.M) + "x" + std::to_string(C.P.N) + "x" +
                                  std::to_string(C.P.K);
      const bool Compared = C.Result == Outcome::Pass || C.Result == Outcome::Wrong;
      const uint64_t Bad = C.Cmp.Unwritten + C.Cmp.NonFinite + C.Cmp.OutOfTolerance;
      char Buf[400];
      std::snprintf(Buf, sizeof Buf, "%-6s %-28s %-8s %-5s %-17s %-12s %-9s %-9s %s\n",
                    C.Kernel.c_str(), C.Variant.empty() ? "-" : C.Variant.c_str(),
                    C.Flavor.c_str(), dtypeName(C.P.Type), Problem.c_str(),
                    outcomeName(C.Result),
                    Compared ? fmt("%.2e", C.Cmp.RelFrobenius).c_str() : "-",
                    Compared ? std::to_string(Bad).c_str() : "-",
                    C.KernelMs > 0 ? fmt("%.3f", C.KernelMs).c_str() : "-");
      OS << Buf;
      if (!C.Message.empty())
        OS << "  " << C.Message << "\n";
      if (!C.Hang.empty())
        OS << C.Hang;
      if (!C.TraceFile.empty())
        OS << "  trace: " << C.TraceFile << "\n";
    }
  }
  return OS.str();
}

std::string formatBench(const std::vector<JobResult> &Jobs) {
  std::ostringstream OS;
  bool Header = false;
  for (const JobResult &J : Jobs)
    for (const BenchRow &B : J.Bench) {
      if (!Header) {
        char Buf[200];
        std::snprintf(Buf, sizeof Buf, "%-6s %-5s %-6s %10s %10s %7s %10s %8s %7s %s\n",
                      "kernel", "dtype", "size", "TFLOP/s", "cuBLAS", "ratio", "checked",
                      "check%", "spread", "verified");
        OS << Buf;
        Header = true;
      }
      const bool HaveChecked = B.CheckedMs > 0;
      char Buf[300];
      std::snprintf(Buf, sizeof Buf, "%-6s %-5s %-6u %10.1f %10.1f %7.3f %10s %8s %6.1f%% %s\n",
                    B.Kernel.c_str(), dtypeName(B.Type), B.Size, B.tflops(B.KernelMs),
                    B.tflops(B.CublasMs), B.CublasMs / B.KernelMs,
                    HaveChecked ? fmt("%.1f", B.tflops(B.CheckedMs)).c_str() : "-",
                    HaveChecked ? fmt("%+.2f%%", 100.0 * (B.CheckedMs / B.KernelMs - 1)).c_str()
                                : "-",
                    B.SpreadPct,
                    !B.Verified ? "no" : (B.VerifiedPass ? "pass" : "FAIL"));
      OS << Buf;
    }
  return OS.str();
}

} // namespace runner
} // namespace wsv
