// Named barriers count threads, and warps arrive one by one: two warpgroups that each sync
// their own 128 threads on one id may complete an instance with two warps of each, and some
// of each go on while their other warps still wait. The explorer reports agents that reach
// one named barrier together with more threads than it counts (a violation that replays);
// each warpgroup on an id of its own is clean. An id that one agent alone uses, completed
// at once by all the threads it counts, orders nothing between agents: its steps are left
// out of the system (shorter schedules); a count the agent does not meet keeps them.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Warpgroups 0 and 1 each wait on their own slot of `bars` (thread 256 arrives on both),
/// then run Sync twice.
std::string twoWarpgroups(const std::string &Sync) {
  return ".version 8.7\n.target sm_90a\n.address_size 64\n"
         ".shared .align 8 .b8 bars[16];\n"
         ".visible .entry k(.param .u32 k_param_0) .maxntid 288, 1, 1 {\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
         "  mov.u32 %r1, %tid.x;\n"
         "  shr.u32 %r2, %r1, 7;\n"
         "  mov.u32 %r3, bars;\n"
         "  setp.ne.s32 %p1, %r1, 0;\n"
         "  @%p1 bra $L_sync;\n"
         "  mbarrier.init.shared::cta.b64 [%r3], 1;\n"
         "  mbarrier.init.shared::cta.b64 [%r3+8], 1;\n"
         "  fence.mbarrier_init.release.cluster;\n"
         "$L_sync:\n"
         "  bar.sync 0;\n"
         "  setp.lt.u32 %p2, %r1, 256;\n"
         "  @%p2 bra $L_writeback;\n"
         "  setp.ne.s32 %p3, %r1, 256;\n"
         "  @%p3 bra $L_done;\n"
         "  mbarrier.arrive.shared::cta.b64 %rd1, [%r3];\n"
         "  mbarrier.arrive.shared::cta.b64 %rd1, [%r3+8];\n"
         "  bra.uni $L_done;\n"
         "$L_writeback:\n"
         "  shl.b32 %r4, %r2, 3;\n"
         "  add.u32 %r7, %r3, %r4;\n"
         "  mov.u32 %r5, 0;\n"
         "$L_wait:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r7], %r5;\n"
         "  @!%p5 bra $L_wait;\n" +
         Sync + Sync +
         "$L_done:\n"
         "  ret;\n}\n";
}

TEST(NamedBarrierMixTest, TwoWarpgroupsOnOneIdMayMixTheirWarps) {
  auto E = test::exploreEntry(twoWarpgroups("  bar.sync 1, 128;\n"));
  ASSERT_EQ(E->S.Unknown, "");
  ASSERT_EQ(E->R.Verdict, ExploreVerdict::Violation) << E->R.Message;
  EXPECT_NE(E->R.Message.find("named barrier 1 (128 threads): role0.0@cta0 and role0.1@cta0 "
                              "reach it together with 256 threads"),
            std::string::npos)
      << E->R.Message;
  EXPECT_EQ(replay(E->S, E->R.Schedule).Message, E->R.Message);
}

TEST(NamedBarrierMixTest, AnIdPerWarpgroupIsClean) {
  auto E = test::exploreEntry(twoWarpgroups("  add.u32 %r6, %r2, 1;\n  bar.sync %r6, 128;\n"));
  ASSERT_EQ(E->S.Unknown, "");
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
}

unsigned namedSteps(const ConcreteSystem &S) {
  unsigned N = 0;
  for (const ConcreteAgent &A : S.Agents)
    for (const ConcreteStep &C : A.Steps)
      N += C.Kind == StepKind::NamedSync || C.Kind == StepKind::NamedArrive;
  return N;
}

TEST(NamedBarrierMixTest, AnIdOneAgentCompletesAloneLeavesNoSteps) {
  // The bar.sync 0 of every thread stays (the prologue and both warpgroups reach it); the
  // two bar.sync of each warpgroup on its own id go.
  auto Own = test::exploreEntry(twoWarpgroups("  add.u32 %r6, %r2, 1;\n  bar.sync %r6, 128;\n"));
  ASSERT_EQ(Own->S.Unknown, "");
  auto Shared = test::exploreEntry(twoWarpgroups("  bar.sync 1, 128;\n"));
  ASSERT_EQ(Shared->S.Unknown, "");
  EXPECT_EQ(namedSteps(Shared->S), namedSteps(Own->S) + 4);
  for (const ConcreteAgent &A : Own->S.Agents)
    for (const ConcreteStep &C : A.Steps)
      if (C.Kind == StepKind::NamedSync) {
        EXPECT_EQ(C.NamedId, 0u) << A.Name;
      }
}

TEST(NamedBarrierMixTest, AnIdItsOneAgentCannotCompleteStillDeadlocks) {
  // Each warpgroup on its own id, but counting 256 threads: nobody else comes.
  auto E = test::exploreEntry(twoWarpgroups("  add.u32 %r6, %r2, 1;\n  bar.sync %r6, 256;\n"));
  ASSERT_EQ(E->S.Unknown, "");
  ASSERT_EQ(E->R.Verdict, ExploreVerdict::Deadlock) << E->R.Message;
  EXPECT_NE(E->R.Message.find("(128 of 256 threads arrived)"), std::string::npos)
      << E->R.Message;
  EXPECT_EQ(replay(E->S, E->R.Schedule).Verdict, ExploreVerdict::Deadlock);
}

} // namespace
