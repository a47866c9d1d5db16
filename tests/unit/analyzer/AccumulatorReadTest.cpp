// wgmma accumulators in the protocol and the explorer: a generic instruction that reads
// registers a wgmma writes is an accumulator read, and reading one whose wgmma group no
// wgmma.wait_group retired yet is a race with a schedule that replays. Each accumulator (a
// destination vector) counts apart: a wait that leaves the other group in flight makes the
// read of the retired one clean. A register copy carries the accumulator and is no read.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// One warpgroup issues two wgmma groups, accumulator 0 ({%f1..%f4}) then accumulator 1
/// ({%f5..%f8}), copies %f1 to %f9, runs Wait, then Epilogue, then a wait_group 0.
std::string twoGroups(const std::string &Wait, const std::string &Epilogue) {
  std::string Wgmma = "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 ";
  return ".version 8.7\n.target sm_90a\n.address_size 64\n"
         ".visible .entry k(.param .u64 k_param_0) .maxntid 128, 1, 1 {\n"
         "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<16>;\n"
         "  .reg .b64 %rd<8>;\n"
         "  ld.param.u64 %rd1, [k_param_0];\n"
         "  mov.b64 %rd2, 4611686293305360384;\n"
         "  mov.f32 %f1, 0f00000000;\n  mov.f32 %f2, %f1;\n  mov.f32 %f3, %f1;\n"
         "  mov.f32 %f4, %f1;\n  mov.f32 %f5, %f1;\n  mov.f32 %f6, %f1;\n"
         "  mov.f32 %f7, %f1;\n  mov.f32 %f8, %f1;\n"
         "  wgmma.fence.sync.aligned;\n  " +
         Wgmma + "{%f1, %f2, %f3, %f4}, %rd2, %rd2, 1, 1, 1, 0, 0;\n"
                 "  wgmma.commit_group.sync.aligned;\n  " +
         Wgmma + "{%f5, %f6, %f7, %f8}, %rd2, %rd2, 1, 1, 1, 0, 0;\n"
                 "  wgmma.commit_group.sync.aligned;\n"
                 "  mov.f32 %f9, %f1;\n" +
         Wait + Epilogue +
         "  wgmma.wait_group.sync.aligned 0;\n"
         "  ret;\n}\n";
}

const char *const WaitAll = "  wgmma.wait_group.sync.aligned 0;\n";
const char *const WaitOlder = "  wgmma.wait_group.sync.aligned 1;\n";
const char *const ReadFirst = "  cvt.rn.bf16x2.f32 %r1, %f2, %f1;\n  st.global.b32 [%rd1], %r1;\n";
const char *const ReadSecond =
    "  cvt.rn.bf16x2.f32 %r2, %f6, %f5;\n  st.global.b32 [%rd1+4], %r2;\n";
const char *const ReadCopy = "  st.global.f32 [%rd1+8], %f9;\n";

/// The accumulator bits of the protocol's AccumulatorRead events, in order.
std::vector<uint32_t> reads(const Protocol &P) {
  std::vector<uint32_t> Out;
  for (const Event &E : P.Events)
    if (E.Kind == EventKind::AccumulatorRead)
      Out.push_back(E.Accumulators);
  return Out;
}

void expectEarlyRead(const test::Explored &E) {
  ASSERT_EQ(E.S.Unknown, "");
  ASSERT_EQ(E.R.Verdict, ExploreVerdict::Race) << E.R.Message;
  EXPECT_NE(E.R.Message.find("wgmma accumulators"), std::string::npos) << E.R.Message;
  EXPECT_NE(E.R.Message.find("no wgmma.wait_group retired its group first"), std::string::npos)
      << E.R.Message;
  ExploreResult Again = replay(E.S, E.R.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Race);
  EXPECT_EQ(Again.Message, E.R.Message);
}

TEST(AccumulatorReadTest, ReadsAfterTheLastWaitAreClean) {
  auto E = test::exploreEntry(twoGroups(WaitAll, std::string(ReadFirst) + ReadSecond + ReadCopy));
  ASSERT_EQ(E->S.Unknown, "");
  // One event for the reads that follow each other: the first after the wait.
  EXPECT_EQ(reads(*E->P), std::vector<uint32_t>{1u});
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
}

TEST(AccumulatorReadTest, ReadingWithoutAWaitRaces) {
  auto E = test::exploreEntry(twoGroups("", ReadFirst));
  EXPECT_EQ(reads(*E->P), std::vector<uint32_t>{1u});
  expectEarlyRead(*E);
}

TEST(AccumulatorReadTest, AWaitForTheOlderGroupRetiresOnlyItsAccumulator) {
  auto Older = test::exploreEntry(twoGroups(WaitOlder, ReadFirst));
  EXPECT_EQ(reads(*Older->P), std::vector<uint32_t>{1u});
  EXPECT_EQ(Older->R.Verdict, ExploreVerdict::Clean) << Older->R.Message;
  auto Newer = test::exploreEntry(twoGroups(WaitOlder, ReadSecond));
  EXPECT_EQ(reads(*Newer->P), std::vector<uint32_t>{2u});
  expectEarlyRead(*Newer);
}

TEST(AccumulatorReadTest, ACopyCarriesTheAccumulatorToItsReader) {
  auto E = test::exploreEntry(twoGroups(WaitOlder, "  st.global.f32 [%rd1+8], %f9;\n"));
  // %f9 holds accumulator 0 (mov.f32 %f9, %f1 is no read), which the wait retired.
  EXPECT_EQ(reads(*E->P), std::vector<uint32_t>{1u});
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
  expectEarlyRead(*test::exploreEntry(twoGroups("", ReadCopy)));
}

} // namespace
