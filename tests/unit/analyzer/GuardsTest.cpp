// Guards as thread sets: which threads of a CTA reach an instruction, counted exactly.
#include "AnalyzerTestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

std::string kernel(const char *Header, const char *Body) {
  return std::string(".visible .entry k(.param .u32 n)\n") + Header + R"(
{
  .reg .pred %p<10>;
  .reg .b32 %r<20>;
  .shared .align 8 .b8 bars[64];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bars;
)" + Body + R"(
  ret;
}
)";
}

TEST(GuardsTest, WarpZeroLaneZeroIsOneThread) {
  Analyzed A(kernel(".maxntid 256", R"(
  shr.u32 %r3, %r1, 5;
  setp.ne.s32 %p1, %r3, 0;
  @%p1 bra SKIP;
  mov.u32 %r4, %laneid;
  setp.ne.s32 %p2, %r4, 0;
  @%p2 bra SKIP;
  mbarrier.init.shared::cta.b64 [%r2], 1;          // init
SKIP:
  bar.sync 0;                                        // all
)"));
  ThreadSet Init = A.threads("// init");
  EXPECT_EQ(Init.count(), 1u);
  EXPECT_TRUE(Init.members().test(0));
  EXPECT_EQ(Init.str(), "tid 0 (1 thread)");
  // Both arms meet again: everyone reaches the barrier.
  EXPECT_EQ(A.threads("// all").count(), 256u);
  EXPECT_TRUE(A.guards().blockCondition(A.blockOf("// all"))->isTrue());
}

TEST(GuardsTest, SecondWarpgroupIs128Threads) {
  Analyzed A(kernel(".reqntid 384, 1, 1", R"(
  shr.u32 %r3, %r1, 7;
  setp.eq.s32 %p1, %r3, 1;
  @!%p1 bra SKIP;
  mbarrier.arrive.shared::cta.b64 _, [%r2];         // consumer 1
SKIP:
)"));
  ThreadSet S = A.threads("// consumer 1");
  EXPECT_EQ(S.count(), 128u);
  ASSERT_EQ(S.runs().size(), 1u);
  EXPECT_EQ(S.runs()[0].First, 128u);
  EXPECT_EQ(S.runs()[0].Length, 128u);
  EXPECT_EQ(S.str(), "tid 128..255 (128 threads)");
  EXPECT_EQ(A.guards().instructionCondition(A.inst("// consumer 1")),
            A.ctx().eq(A.ctx().udiv(A.tid(), A.ctx().constant(128, 32)), A.ctx().constant(1, 32)));
}

TEST(GuardsTest, ElectSyncWithinWarpThreeIsOneThread) {
  Analyzed A(kernel(".maxntid 128", R"(
  shr.u32 %r3, %r1, 5;
  setp.ne.s32 %p1, %r3, 3;
  @%p1 bra SKIP;
  mov.u32 %r5, 0;
  {
  .reg .b32 %rx;
  .reg .pred %px;
  elect.sync %rx|%px, -1;
  @%px mov.s32 %r5, 1;
  }
  setp.eq.s32 %p2, %r5, 0;
  @%p2 bra SKIP;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 32768;   // producer
SKIP:
)"));
  ThreadSet S = A.threads("// producer");
  EXPECT_EQ(S.count(), 1u);
  ASSERT_EQ(S.elected().size(), 1u);
  EXPECT_EQ(S.elected()[0].Warps, (llvm::SmallVector<unsigned, 4>{3}));
  EXPECT_EQ(S.elected()[0].Candidates.count(), 32u);
  EXPECT_EQ(S.str(), "one elected lane of warp 3 (1 thread)");
}

TEST(GuardsTest, ElectInEveryWarpThenAWarpTest) {
  // Triton: elect in every warp, then `and` with a warp test: one thread of warp 0.
  Analyzed A(kernel(".reqntid 384", R"(
  shr.u32 %r3, %r1, 5;
  setp.eq.b32 %p3, %r3, 0;
  elect.sync %r4|%p4, -1;
  and.pred %p5, %p3, %p4;
  @%p5 mbarrier.init.shared::cta.b64 [%r2], 1;      // leader init
  @!%p4 mbarrier.arrive.shared::cta.b64 _, [%r2];    // non-leaders
)"));
  EXPECT_EQ(A.threads("// leader init").count(), 1u);
  ThreadSet Others = A.threads("// non-leaders");
  EXPECT_EQ(Others.count(), 384u - 12u);
  ASSERT_EQ(Others.elected().size(), 1u);
  EXPECT_TRUE(Others.elected()[0].Excluded);
}

TEST(GuardsTest, ElectUnderAPartialLaneGuardIsUnknown) {
  // Which lane elect.sync picks is not specified: lane < 16 of the elected one is unknowable.
  Analyzed A(kernel(".maxntid 32", R"(
  elect.sync %r4|%p4, -1;
  setp.lt.u32 %p5, %r1, 16;
  and.pred %p6, %p4, %p5;
  @%p6 mbarrier.arrive.shared::cta.b64 _, [%r2];    // half lanes
)"));
  ThreadSet S = A.threads("// half lanes");
  EXPECT_TRUE(S.isUnknown());
  EXPECT_NE(S.reason().find("which lane elect.sync picks"), std::string::npos) << S.reason();
}

TEST(GuardsTest, SetmaxnregWarpgroupBranches) {
  // A producer warpgroup gives registers away, two consumer warpgroups take them.
  Analyzed A(kernel(".reqntid 384", R"(
  shr.u32 %r3, %r1, 7;
  setp.eq.s32 %p1, %r3, 0;
  @%p1 bra PRODUCER;
  setp.eq.s32 %p2, %r3, 1;
  @%p2 bra CONSUMER0;
  setmaxnreg.inc.sync.aligned.u32 240;             // consumer 2
  bra.uni END;
CONSUMER0:
  setmaxnreg.inc.sync.aligned.u32 240;             // consumer 1
  bra.uni END;
PRODUCER:
  setmaxnreg.dec.sync.aligned.u32 40;              // producer
  and.b32 %r4, %r1, 127;
  setp.ne.s32 %p3, %r4, 0;
  @%p3 bra END;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 16384;   // producer leader
END:
  bar.sync 0;                                        // everyone
)"));
  EXPECT_EQ(A.threads("// producer").str(), "tid 0..127 (128 threads)");
  EXPECT_EQ(A.threads("// consumer 1").str(), "tid 128..255 (128 threads)");
  EXPECT_EQ(A.threads("// consumer 2").str(), "tid 256..383 (128 threads)");
  EXPECT_EQ(A.threads("// producer leader").str(), "tid 0 (1 thread)");
  EXPECT_EQ(A.threads("// everyone").count(), 384u);
}

TEST(GuardsTest, LanesAcrossWarpsAreRunsWithAStride) {
  Analyzed A(kernel(".maxntid 128", R"(
  and.b32 %r3, %r1, 31;
  setp.eq.s32 %p1, %r3, 0;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // lane 0s
)"));
  ThreadSet S = A.threads("// lane 0s");
  EXPECT_EQ(S.count(), 4u);
  ASSERT_EQ(S.runs().size(), 1u);
  EXPECT_EQ(S.runs()[0].First, 0u);
  EXPECT_EQ(S.runs()[0].Length, 1u);
  EXPECT_EQ(S.runs()[0].Stride, 32u);
  EXPECT_EQ(S.runs()[0].Count, 4u);
  EXPECT_EQ(S.str(), "tid 0 every 32 (x4) (4 threads)");
}

TEST(GuardsTest, ClusterRankConditionsCountCtas) {
  Analyzed A(kernel(".reqntid 128\n.reqnctapercluster 2, 1, 1", R"(
  mov.u32 %r3, %cluster_ctarank;
  setp.ne.s32 %p1, %r3, 0;
  @%p1 bra SKIP;
  setp.ne.s32 %p2, %r1, 0;
  @%p2 bra SKIP;
  mbarrier.init.shared::cta.b64 [%r2], 2;           // leader CTA thread 0
SKIP:
)"));
  ThreadSet S = A.threads("// leader CTA thread 0");
  EXPECT_FALSE(S.isExact());
  ASSERT_EQ(S.conditional().size(), 1u);
  EXPECT_EQ(S.conditional()[0].Threads.count(), 1u);
  EXPECT_EQ(S.conditional()[0].CtasWhereTrue, std::optional<uint64_t>(1));
  EXPECT_EQ(S.str(), "tid 0 when %cluster_ctarank == 0 (1 of 2 CTAs per cluster)");
}

TEST(GuardsTest, WithoutAClusterTheRankIsZero) {
  Analyzed A(kernel(".reqntid 64", R"(
  mov.u32 %r3, %cluster_ctarank;
  setp.eq.s32 %p1, %r3, 0;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // rank 0
)"));
  EXPECT_EQ(A.threads("// rank 0").count(), 64u);
}

TEST(GuardsTest, ParameterConditionsAreKeptAndDecidedWhenTheyCanBe) {
  Analyzed A(kernel(".reqntid 64", R"(
  ld.param.u32 %r3, [n];
  setp.lt.u32 %p1, %r1, %r3;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // tid below n
  or.b32 %r4, %r3, 1;
  setp.ne.s32 %p2, %r4, 0;
  @%p2 mbarrier.arrive.shared::cta.b64 _, [%r2];   // always
)"));
  ThreadSet Below = A.threads("// tid below n");
  EXPECT_FALSE(Below.isExact());
  EXPECT_EQ(Below.conditional().size(), 64u) << "one condition per thread: tid < n";
  // n | 1 is never 0: the solver says the condition always holds.
  EXPECT_EQ(A.threads("// always").count(), 64u);
}

TEST(GuardsTest, AClusterLaunchHasAWholeClusterOfCtas) {
  // %nctaid.x / 2 != 0 holds in every launch of two-CTA clusters (CUDA launches whole
  // clusters only), and may fail without them.
  const char *Body = R"(
  mov.u32 %r3, %nctaid.x;
  shr.u32 %r4, %r3, 1;
  setp.ne.s32 %p1, %r4, 0;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // a cluster's worth of CTAs
)";
  Analyzed Cluster(kernel(".reqntid 64\n.reqnctapercluster 2, 1, 1", Body));
  EXPECT_EQ(Cluster.threads("// a cluster's worth of CTAs").count(), 64u);
  Analyzed Plain(kernel(".reqntid 64", Body));
  ThreadSet S = Plain.threads("// a cluster's worth of CTAs");
  EXPECT_FALSE(S.isExact()) << S.str();
}

TEST(GuardsTest, RolesReadFromMemoryKeepEachWarpsOwnLoad) {
  // Triton's partition dispatch: each warp reads its role from a byte indexed by its warp id.
  Analyzed A(kernel(".reqntid 128", R"(
  .reg .b16 %rs<2>;
  shr.u32 %r3, %r1, 5;
  add.s32 %r4, %r2, %r3;
  ld.shared.b8 %rs1, [%r4+32];
  setp.eq.b16 %p1, %rs1, 1;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // role 1
)"));
  ThreadSet S = A.threads("// role 1");
  ASSERT_EQ(S.conditional().size(), 4u);
  for (unsigned W = 0; W < 4; ++W) {
    const ThreadSet::ConditionalGroup &G = S.conditional()[W];
    EXPECT_EQ(G.Threads.count(), 32u);
    EXPECT_TRUE(G.Threads.test(32 * W));
    EXPECT_EQ(G.Condition->str(),
              "ld.shared.b8[bars + " + std::to_string(32 + W) + "] == 1");
  }
}

TEST(GuardsTest, WarpIdIsNotARole) {
  Analyzed A(kernel(".reqntid 64", R"(
  mov.u32 %r3, %warpid;
  setp.eq.s32 %p1, %r3, 0;
  @%p1 mbarrier.arrive.shared::cta.b64 _, [%r2];   // warpid
)"));
  ThreadSet S = A.threads("// warpid");
  EXPECT_TRUE(S.isUnknown());
  EXPECT_NE(S.reason().find("%warpid"), std::string::npos);
}

TEST(GuardsTest, AfterALoopEveryThreadThatEnteredContinues) {
  Analyzed A(kernel(".reqntid 128", R"(
  shr.u32 %r3, %r1, 5;
  setp.ne.s32 %p1, %r3, 2;
  @%p1 bra SKIP;
  mov.u32 %r4, 0;
  {
  .reg .pred P1;
  WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r4;
  @P1 bra DONE;
  bra.uni WAIT;
  DONE:
  }
  mbarrier.arrive.shared::cta.b64 _, [%r2];        // after the wait
SKIP:
)"));
  EXPECT_EQ(A.threads("// after the wait").str(), "tid 64..95 (32 threads)");
}

TEST(GuardsTest, ConditionsInsideLoopsArePerIteration) {
  // A consumer that releases the previous stage from the second iteration on.
  Analyzed A(kernel(".reqntid 128", R"(
  ld.param.u32 %r3, [n];
  mov.u32 %r4, 0;
LOOP:
  setp.eq.s32 %p1, %r4, 0;
  @%p1 bra NOREL;
  mbarrier.arrive.shared::cta.b64 _, [%r2];        // release previous
NOREL:
  add.s32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r3;
  @%p2 bra LOOP;
)"));
  const Expr *Cond = A.guards().instructionCondition(A.inst("// release previous"));
  LoopId L = A.loopOf("// release previous");
  EXPECT_EQ(A.values().closedForm(Cond),
            A.ctx().ne(A.ctx().iterationVar(L), A.ctx().constant(0, 32)));
}

TEST(GuardsTest, AWhileLoopsOwnTestIsNoConditionOfItsBody) {
  // nvcc -G's tile loop: `for (t = %ctaid.x; t < n; t += %nctaid.x)` stays a while loop,
  // and a line label splits its header from its test. Every iteration its count runs passes
  // the test, so the body runs wherever the loop is entered: the test is no condition of it.
  // A second exit keeps the conditions: which way out a thread takes depends on them.
  const char *Loop = R"(
  ld.param.u32 %r3, [n];
  mov.u32 %r5, %ctaid.x;
  mov.u32 %r6, %nctaid.x;
TOP:
  add.s32 %r7, %r7, 0;
$L__tmp1:
  setp.ge.s32 %p1, %r5, %r3;
  @%p1 bra DONE;
%s
  mbarrier.arrive.shared::cta.b64 _, [%r2];          // body
  add.s32 %r5, %r5, %r6;
  bra.uni TOP;
DONE:
)";
  auto With = [&](const char *Extra) {
    std::string Text = Loop;
    Text.replace(Text.find("%s"), 2, Extra);
    return Text;
  };
  Analyzed One(kernel(".reqntid 64", With("").c_str()));
  EXPECT_TRUE(One.guards().blockCondition(One.blockOf("// body"))->isTrue())
      << str(One.guards().blockCondition(One.blockOf("// body")));
  Analyzed Two(kernel(".reqntid 64", With("  setp.eq.s32 %p2, %r5, 7;\n  @%p2 bra DONE;").c_str()));
  EXPECT_FALSE(Two.guards().blockCondition(Two.blockOf("// body"))->isTrue());
}

} // namespace
