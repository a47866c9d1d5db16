#include "wsv/runner/RunOptions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace wsv::runner;

namespace {

Expected<RunOptions> parse(std::vector<std::string> Args) {
  Args.insert(Args.begin(), "run");
  std::vector<char *> Argv;
  for (std::string &A : Args)
    Argv.push_back(A.data());
  return parseRunOptions(static_cast<int>(Argv.size()), Argv.data());
}

} // namespace

TEST(RunOptions, KernelAndDefaults) {
  Expected<RunOptions> O = parse({"h2"});
  ASSERT_TRUE(O) << O.status().message();
  EXPECT_EQ(O->Kernels, std::vector<std::string>{"h2"});
  EXPECT_FALSE(O->Check);
  EXPECT_FALSE(O->Bench);
  EXPECT_EQ(O->flavor(), PtxFlavor::Plain);
  // Checks cover both element types unless one is named.
  ASSERT_EQ(O->Dtypes.size(), 2u);
  EXPECT_EQ(O->Dtypes[0], Dtype::Bf16);
  EXPECT_EQ(O->Dtypes[1], Dtype::F16);
  EXPECT_TRUE(O->Problems.empty());
}

TEST(RunOptions, BenchDefaultsToBf16AtTwoSizes) {
  Expected<RunOptions> O = parse({"h5", "--bench", "--check"});
  ASSERT_TRUE(O) << O.status().message();
  EXPECT_TRUE(O->Bench);
  EXPECT_EQ(O->flavor(), PtxFlavor::Checked);
  ASSERT_EQ(O->Dtypes.size(), 1u);
  EXPECT_EQ(O->Dtypes[0], Dtype::Bf16);
  EXPECT_EQ(O->BenchSizes, (std::vector<uint32_t>{4096, 8192}));
}

TEST(RunOptions, ShapesFromFlagsAndList) {
  Expected<RunOptions> O =
      parse({"h3", "--m", "256", "--n", "512", "--k", "128", "--shape", "128x256x64"});
  ASSERT_TRUE(O) << O.status().message();
  ASSERT_EQ(O->Problems.size(), 2u);
  EXPECT_EQ(O->Problems[0].M, 128u); // --shape comes first, in argument order
  EXPECT_EQ(O->Problems[1].M, 256u);
  EXPECT_EQ(O->Problems[1].N, 512u);
  EXPECT_EQ(O->Problems[1].K, 128u);
}

TEST(RunOptions, Sweep) {
  Expected<RunOptions> O = parse({"h5", "--sweep"});
  ASSERT_TRUE(O);
  EXPECT_TRUE(O->Bench);
  EXPECT_EQ(O->BenchSizes.size(), 6u);
  Expected<RunOptions> S = parse({"h5", "--bench", "--sizes", "1024,3072"});
  ASSERT_TRUE(S);
  EXPECT_EQ(S->BenchSizes, (std::vector<uint32_t>{1024, 3072}));
}

TEST(RunOptions, UsageErrorsSayWhat) {
  struct Case {
    std::vector<std::string> Args;
    const char *Expect;
  } Cases[] = {
      {{}, "no kernel named"},
      {{"h2", "--m", "128"}, "--m, --n and --k go together"},
      {{"h2", "--m", "-4", "--n", "1", "--k", "1"}, "invalid value '-4' for --m"},
      {{"h2", "--dtype", "fp8"}, "expected bf16, fp16 or both"},
      {{"h2", "--shape", "12x3"}, "invalid shape '12x3'"},
      {{"h2", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"h2", "--bug"}, "option --bug needs a value"},
      {{"h2", "--check", "--clang"}, "cannot be combined"},
      {{"all", "h2"}, "'all' cannot be combined"},
      {{"h2", "h3", "--ptx", "x.ptx"}, "--ptx needs exactly one kernel"},
      {{"h2", "--format", "xml"}, "expected text or json"},
      {{"h2", "--sizes", "1024,,2"}, "invalid value '1024,,2' for --sizes"},
  };
  for (const Case &C : Cases) {
    Expected<RunOptions> O = parse(C.Args);
    ASSERT_FALSE(O) << C.Expect;
    EXPECT_NE(O.status().message().find(C.Expect), std::string::npos)
        << "got: " << O.status().message();
  }
}

TEST(RunOptions, ParseShape) {
  Expected<Problem> P = parseShape("4096x2048x64");
  ASSERT_TRUE(P);
  EXPECT_EQ(P->M, 4096u);
  EXPECT_EQ(P->N, 2048u);
  EXPECT_EQ(P->K, 64u);
  EXPECT_FALSE(parseShape("0x1x1"));
  EXPECT_FALSE(parseShape("1x1x"));
  EXPECT_FALSE(parseShape("axbxc"));
  EXPECT_FALSE(parseShape("1x2x3x4"));
}
