// Tensor memory after the roles: a tcgen05.ld reads the CTA's TMEM, which must still be
// allocated. The teardown after the roles (the epilogue) waits for every role only behind a
// barrier of all threads; what comes before one runs when its own threads are done. So a
// dealloc by warp 0 right after its role races with warp 1's read (a schedule that replays),
// and the same dealloc after a bar.sync of the whole CTA is clean.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Warp 0 allocates 32 TMEM columns; after bar.sync, thread 0 arrives on `bar` and warp 1
/// waits for it and reads TMEM; then Teardown, and warp 0 frees the columns.
std::string teardown(const std::string &Teardown) {
  return ".version 8.7\n.target sm_100a\n.address_size 64\n"
         ".shared .align 8 .b64 bar;\n"
         ".shared .align 4 .b32 slot;\n"
         ".visible .entry k(.param .u32 k_param_0) .maxntid 64, 1, 1 {\n"
         "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
         "  mov.u32 %r1, %tid.x;\n"
         "  shr.u32 %r2, %r1, 5;\n"
         "  setp.ne.s32 %p1, %r2, 0;\n"
         "  mov.u32 %r3, slot;\n"
         "  @%p1 bra $L_sync;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r3], 32;\n"
         "  setp.ne.s32 %p2, %r1, 0;\n"
         "  @%p2 bra $L_sync;\n"
         "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
         "$L_sync:\n"
         "  bar.sync 0;\n"
         "  ld.shared.b32 %r4, [slot];\n"
         "  @%p1 bra $L_reader;\n"
         "  setp.ne.s32 %p2, %r1, 0;\n"
         "  @%p2 bra $L_teardown;\n"
         "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
         "  bra.uni $L_teardown;\n"
         "$L_reader:\n"
         "  mov.u32 %r5, 0;\n"
         "$L_wait:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r5;\n"
         "  @!%p3 bra $L_wait;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r6}, [%r4];\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "$L_teardown:\n" +
         Teardown +
         "  @%p1 bra $L_done;\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, 32;\n"
         "$L_done:\n"
         "  ret;\n}\n";
}

TEST(TmemReadTest, ADeallocAfterItsOwnRoleRacesWithAnotherRolesRead) {
  auto E = test::exploreEntry(teardown(""));
  ASSERT_EQ(E->S.Unknown, "");
  ASSERT_EQ(E->R.Verdict, ExploreVerdict::Race) << E->R.Message;
  EXPECT_NE(E->R.Message.find("has no columns allocated"), std::string::npos) << E->R.Message;
  ExploreResult Again = replay(E->S, E->R.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Race);
  EXPECT_EQ(Again.Message, E->R.Message);
  // The dealloc runs in warp 0's role agent, not after every role.
  bool Moved = false;
  for (const ConcreteAgent &A : E->S.Agents)
    for (const ConcreteStep &C : A.Steps)
      Moved |= C.Kind == StepKind::Dealloc && A.Place == Placement::Role;
  EXPECT_TRUE(Moved);
}

TEST(TmemReadTest, ADeallocBehindABarrierOfAllThreadsIsClean) {
  auto E = test::exploreEntry(teardown("  bar.sync 0;\n"));
  ASSERT_EQ(E->S.Unknown, "");
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
  for (const ConcreteAgent &A : E->S.Agents)
    for (const ConcreteStep &C : A.Steps)
      if (C.Kind == StepKind::Dealloc) {
        EXPECT_EQ(A.Place, Placement::Epilogue);
      }
}

} // namespace
