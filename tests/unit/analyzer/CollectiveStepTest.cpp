// Warp and warpgroup collectives in the explorer: tcgen05.alloc runs in every thread of a warp
// or in none, setmaxnreg in every thread of a warpgroup or in none (.sync.aligned). Run by
// part of one (a lane guard, a skipped warp) it is undefined behaviour, a violation at the
// step that replays; run whole it is clean.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// 256 threads: the threads where AllocGuard (a predicate on %r1 = %tid.x) is false allocate
/// 32 TMEM columns; warpgroup 1 waits on `bar` for thread 0; the threads where RegGuard is
/// false run setmaxnreg.dec.
std::string collectives(const std::string &AllocGuard, const std::string &RegGuard) {
  return ".version 8.7\n.target sm_100a\n.address_size 64\n"
         ".shared .align 8 .b64 bar;\n"
         ".shared .align 4 .b32 slot;\n"
         ".visible .entry k(.param .u32 k_param_0) .maxntid 256, 1, 1 {\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
         "  mov.u32 %r1, %tid.x;\n"
         "  mov.u32 %r3, slot;\n"
         "  setp.ne.s32 %p1, %r1, 0;\n"
         "  @%p1 bra $L_alloc;\n"
         "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
         "  fence.mbarrier_init.release.cluster;\n"
         "$L_alloc:\n"
         "  setp." + AllocGuard + ";\n"
         "  @%p2 bra $L_sync;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r3], 32;\n"
         "$L_sync:\n"
         "  bar.sync 0;\n"
         "  setp.gt.u32 %p3, %r1, 127;\n"
         "  @%p3 bra $L_waiter;\n"
         "  setp." + RegGuard + ";\n"
         "  @%p4 bra $L_arrive;\n"
         "  setmaxnreg.dec.sync.aligned.u32 40;\n"
         "$L_arrive:\n"
         "  @%p1 bra $L_done;\n"
         "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
         "  bra.uni $L_done;\n"
         "$L_waiter:\n"
         "  mov.u32 %r5, 0;\n"
         "$L_wait:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [bar], %r5;\n"
         "  @!%p5 bra $L_wait;\n"
         "$L_done:\n"
         "  ret;\n}\n";
}

const char *const WholeWarp0 = "gt.u32 %p2, %r1, 31";
const char *const Lane0 = "ne.u32 %p2, %r1, 0";
const char *const WholeWarpgroup0 = "gt.u32 %p4, %r1, 127";
const char *const Warps0To2 = "gt.u32 %p4, %r1, 95";

/// The exploration of Text; a violation must replay.
ExploreResult run(const std::string &Text) {
  std::unique_ptr<test::Explored> E = test::exploreEntry(Text);
  EXPECT_EQ(E->S.Unknown, "");
  if (E->R.Verdict == ExploreVerdict::Violation) {
    EXPECT_EQ(replay(E->S, E->R.Schedule).Message, E->R.Message);
  }
  return E->R;
}

TEST(CollectiveStepTest, WholeWarpsAndWarpgroupsAreClean) {
  ExploreResult R = run(collectives(WholeWarp0, WholeWarpgroup0));
  EXPECT_EQ(R.Verdict, ExploreVerdict::Clean) << R.Message;
}

TEST(CollectiveStepTest, AnAllocUnderALaneGuardIsAViolation) {
  ExploreResult R = run(collectives(Lane0, WholeWarpgroup0));
  ASSERT_EQ(R.Verdict, ExploreVerdict::Violation) << R.Message;
  EXPECT_NE(R.Message.find("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 is "
                            "warp-wide (.sync.aligned), but only 1 of the 32 threads of warp 0 "
                            "run it"),
            std::string::npos)
      << R.Message;
}

TEST(CollectiveStepTest, ASetmaxnregThatSkipsAWarpIsAViolation) {
  ExploreResult R = run(collectives(WholeWarp0, Warps0To2));
  ASSERT_EQ(R.Verdict, ExploreVerdict::Violation) << R.Message;
  EXPECT_NE(R.Message.find("setmaxnreg.dec.sync.aligned.u32 is warpgroup-wide (.sync.aligned), "
                            "but only 96 of the 128 threads of warpgroup 0 run it"),
            std::string::npos)
      << R.Message;
}

} // namespace
