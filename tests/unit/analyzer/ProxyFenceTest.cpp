// The explorer's proxy fences: st.shared writes into a staging buffer reach a TMA store (the
// async proxy) only through a fence.proxy.async that the writing threads run after them. A
// store of writes nobody fenced, or fenced by other threads, or fenced for global memory
// only, is a race with a schedule that replays; the writers' own fence is clean.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// 256 threads. Warpgroup 0 writes its row of `stage` (st.shared); WriterFence runs after
/// the write in warpgroup 0, OtherFence in warpgroup 1; then bar.sync 0, and thread 0
/// TMA-stores `stage`, twice (the loop also writes again while the first store may read).
std::string staging(const std::string &WriterFence, const std::string &OtherFence) {
  return ".version 8.7\n.target sm_90a\n.address_size 64\n"
         ".shared .align 1024 .b8 stage[4096];\n"
         ".visible .entry k(.param .align 64 .b8 k_param_0[128]) .maxntid 256, 1, 1 {\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
         "  mov.u64 %rd1, k_param_0;\n"
         "  mov.u32 %r1, %tid.x;\n"
         "  setp.ne.s32 %p1, %r1, 0;\n"
         "  setp.gt.u32 %p2, %r1, 127;\n"
         "  mov.u32 %r2, stage;\n"
         "  and.b32 %r3, %r1, 127;\n"
         "  shl.b32 %r4, %r3, 5;\n"
         "  add.s32 %r5, %r2, %r4;\n"
         "  mov.b32 %r6, 0;\n"
         "$L_loop:\n"
         "  @%p1 bra $L_reuse;\n"
         "  cp.async.bulk.wait_group.read 0;\n"
         "$L_reuse:\n"
         "  bar.sync 0;\n"
         "  @%p2 bra $L_other;\n"
         "  st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n" +
         WriterFence +
         "  bra.uni $L_publish;\n"
         "$L_other:\n" +
         OtherFence +
         "$L_publish:\n"
         "  bar.sync 0;\n"
         "  @%p1 bra $L_next;\n"
         "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r6, %r6}], [%r2];\n"
         "  cp.async.bulk.commit_group;\n"
         "$L_next:\n"
         "  add.s32 %r6, %r6, 1;\n"
         "  setp.lt.u32 %p3, %r6, 2;\n"
         "  @%p3 bra $L_loop;\n"
         "  @%p1 bra $L_done;\n"
         "  cp.async.bulk.wait_group 0;\n"
         "$L_done:\n"
         "  ret;\n}\n";
}

const char *const Fence = "  fence.proxy.async.shared::cta;\n";

unsigned countFences(const ConcreteSystem &S) {
  unsigned N = 0;
  for (const ConcreteAgent &A : S.Agents)
    for (const ConcreteStep &C : A.Steps)
      N += C.Kind == StepKind::ProxyFence;
  return N;
}

void expectUnfencedRace(const test::Explored &E) {
  ASSERT_EQ(E.S.Unknown, "");
  ASSERT_EQ(E.R.Verdict, ExploreVerdict::Race) << E.R.Message;
  EXPECT_NE(E.R.Message.find("is read through the async proxy (a TMA store)"),
            std::string::npos)
      << E.R.Message;
  EXPECT_NE(E.R.Message.find("fence.proxy.async is missing"), std::string::npos) << E.R.Message;
  ExploreResult Again = replay(E.S, E.R.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Race);
  EXPECT_EQ(Again.Message, E.R.Message);
}

TEST(ProxyFenceTest, TheWritersFenceBeforeTheBarrierIsClean) {
  auto E = test::exploreEntry(staging(Fence, ""));
  ASSERT_EQ(E->S.Unknown, "");
  EXPECT_GT(countFences(E->S), 0u);
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
}

TEST(ProxyFenceTest, AStoreOfUnfencedWritesRaces) { expectUnfencedRace(*test::exploreEntry(staging("", ""))); }

TEST(ProxyFenceTest, AFenceOfOtherThreadsDoesNotPublishTheWrites) {
  auto E = test::exploreEntry(staging("", Fence));
  EXPECT_GT(countFences(E->S), 0u);
  expectUnfencedRace(*E);
}

TEST(ProxyFenceTest, AFenceOverGlobalMemoryDoesNotCoverSharedMemory) {
  auto E = test::exploreEntry(staging("  fence.proxy.async.global;\n", ""));
  EXPECT_EQ(countFences(E->S), 0u);
  expectUnfencedRace(*E);
}

} // namespace
