#include "wsv/runner/Results.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace wsv::runner;

namespace {

CaseResult passing() {
  CaseResult C;
  C.Kernel = "h5";
  C.Flavor = "checked";
  C.PtxFile = "/ptx/h5.checked.ptx";
  C.P.M = 768;
  C.P.N = 1280;
  C.P.K = 576;
  C.P.Type = Dtype::F16;
  C.Result = Outcome::Pass;
  C.Cmp.Elements = 768 * 1280;
  C.Cmp.RelFrobenius = 2.5e-4;
  C.Cmp.Pass = true;
  C.KernelMs = 0.125;
  return C;
}

} // namespace

TEST(Results, JsonRoundTrip) {
  JobResult R;
  R.Device.Name = "NVIDIA H100 80GB HBM3";
  R.Device.Major = 9;
  R.Device.Sms = 132;
  R.Notes.push_back("ptxas: something");
  R.Cases.push_back(passing());
  CaseResult H = passing();
  H.Variant = "mbarrier-initial-phase";
  H.Result = Outcome::Hang;
  H.Message = "hang captured";
  H.Hang = "  producer (warp 4) waits on empty[0] parity 0\n";
  H.TraceFile = "/t/h5.trace.json";
  R.Cases.push_back(H);
  BenchRow B;
  B.Kernel = "h5";
  B.Size = 4096;
  B.KernelMs = 0.17;
  B.CublasMs = 0.19;
  B.CheckedMs = 0.172;
  B.Verified = B.VerifiedPass = true;
  R.Bench.push_back(B);

  JobResult Back;
  ASSERT_TRUE(fromJson(toJson(R), Back));
  EXPECT_EQ(Back.Device.Name, R.Device.Name);
  EXPECT_EQ(Back.Device.Major, 9);
  EXPECT_EQ(Back.Notes, R.Notes);
  ASSERT_EQ(Back.Cases.size(), 2u);
  EXPECT_EQ(Back.Cases[0].P.Type, Dtype::F16);
  EXPECT_EQ(Back.Cases[0].Result, Outcome::Pass);
  EXPECT_DOUBLE_EQ(Back.Cases[0].Cmp.RelFrobenius, 2.5e-4);
  EXPECT_EQ(Back.Cases[1].Result, Outcome::Hang);
  EXPECT_EQ(Back.Cases[1].Hang, H.Hang);
  EXPECT_EQ(Back.Cases[1].TraceFile, H.TraceFile);
  ASSERT_EQ(Back.Bench.size(), 1u);
  EXPECT_DOUBLE_EQ(Back.Bench[0].CheckedMs, 0.172);
  EXPECT_FALSE(fromJson("{truncated", Back));
}

TEST(Results, ExitCodes) {
  JobResult R;
  R.Cases.push_back(passing());
  EXPECT_EQ(R.exitCode(), 0);
  R.Cases.push_back(passing());
  R.Cases.back().Result = Outcome::Refused;
  EXPECT_EQ(R.exitCode(), 2);
  R.Cases.push_back(passing());
  R.Cases.back().Result = Outcome::Wrong;
  EXPECT_EQ(R.exitCode(), 1); // a failure outranks a refusal
  JobResult NoGpu;
  NoGpu.Error = "no CUDA GPU";
  NoGpu.Refused = true;
  EXPECT_EQ(NoGpu.exitCode(), 2);
  NoGpu.Skipped = true; // named only through `all`
  EXPECT_EQ(NoGpu.exitCode(), 0);
  JobResult Bench;
  BenchRow B;
  B.Verified = true;
  B.VerifiedPass = false;
  Bench.Bench.push_back(B);
  EXPECT_EQ(Bench.exitCode(), 1);
}

TEST(Results, TablesAndReport) {
  JobResult R;
  R.Cases.push_back(passing());
  CaseResult W = passing();
  W.Result = Outcome::Wrong;
  W.Cmp.Pass = false;
  W.Cmp.OutOfTolerance = 12;
  W.Message = "12 out of tolerance";
  R.Cases.push_back(W);
  BenchRow B;
  B.Kernel = "h5";
  B.Size = 4096;
  B.KernelMs = 0.16;
  B.CublasMs = 0.2;
  R.Bench.push_back(B);
  const std::string T = formatCases({R});
  EXPECT_NE(T.find("768x1280x576"), std::string::npos) << T;
  EXPECT_NE(T.find("wrong"), std::string::npos);
  EXPECT_NE(T.find("  12 out of tolerance"), std::string::npos);
  const std::string Bt = formatBench({R});
  EXPECT_NE(Bt.find("1.250"), std::string::npos) << Bt; // cuBLAS time / kernel time
  const nlohmann::json J = nlohmann::json::parse(runReportJson({R}));
  EXPECT_EQ(J["schema"], "wsv-run/1");
  EXPECT_EQ(J["exit_code"], 1);
  EXPECT_NEAR(J["jobs"][0]["bench"][0]["kernel_tflops"].get<double>(),
              2.0 * 4096.0 * 4096.0 * 4096.0 / 0.16e-3 / 1e12, 1e-6);
}
