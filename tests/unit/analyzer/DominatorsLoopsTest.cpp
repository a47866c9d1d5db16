// Dominators, post-dominators and natural loops on nested, multi-exit and irreducible graphs.
#include "AnalyzerTestSupport.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

// A diamond inside a do-while loop inside another, with an early exit from the inner loop.
const char Nested[] = R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<5>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];           // entry
  mov.u32 %r2, 0;
OUTER:
  mov.u32 %r3, 0;                  // outer header
INNER:
  setp.eq.s32 %p1, %r3, 5;         // inner header
  @%p1 bra THEN;
  add.s32 %r4, %r3, 1;             // else arm
  bra.uni JOIN;
THEN:
  add.s32 %r4, %r3, 2;             // then arm
JOIN:
  setp.eq.s32 %p2, %r4, 100;       // join
  @%p2 bra DONE;
  add.s32 %r3, %r3, 1;             // inner latch
  setp.lt.u32 %p3, %r3, %r1;
  @%p3 bra INNER;
  add.s32 %r2, %r2, 1;             // outer latch
  setp.lt.u32 %p4, %r2, %r1;
  @%p4 bra OUTER;
DONE:
  ret;                             // exit
}
)";

TEST(DominatorsTest, ImmediateDominatorsOfADiamondInLoops) {
  Analyzed A(Nested);
  const DominatorTree &Dom = A.fa().dominators();
  BlockId Entry = A.blockOf("// entry"), Outer = A.blockOf("// outer header"),
          Inner = A.blockOf("// inner header"), Else = A.blockOf("// else arm"),
          Then = A.blockOf("// then arm"), Join = A.blockOf("// join"),
          Latch = A.blockOf("// inner latch"), Exit = A.blockOf("// exit");
  EXPECT_EQ(Dom.idom(Entry), NoIndex);
  EXPECT_EQ(Dom.idom(Outer), Entry);
  EXPECT_EQ(Dom.idom(Inner), Outer);
  EXPECT_EQ(Dom.idom(Else), Inner);
  EXPECT_EQ(Dom.idom(Then), Inner);
  EXPECT_EQ(Dom.idom(Join), Inner);
  EXPECT_EQ(Dom.idom(Latch), Join);
  EXPECT_EQ(Dom.idom(Exit), Join);
  EXPECT_TRUE(Dom.dominates(Inner, Latch));
  EXPECT_FALSE(Dom.dominates(Then, Join));
  EXPECT_TRUE(Dom.properlyDominates(Entry, Exit));
  EXPECT_EQ(Dom.nearestCommonDominator(Then, Else), Inner);
}

TEST(DominatorsTest, PostDominatorsRunToTheVirtualExit) {
  Analyzed A(Nested);
  const DominatorTree &Post = A.fa().postDominators();
  EXPECT_TRUE(Post.isPostDominatorTree());
  BlockId Inner = A.blockOf("// inner header"), Then = A.blockOf("// then arm"),
          Join = A.blockOf("// join"), Exit = A.blockOf("// exit");
  // Both arms meet at the join; everything ends at the exit block.
  EXPECT_EQ(Post.idom(Then), Join);
  EXPECT_EQ(Post.idom(Inner), Join);
  EXPECT_TRUE(Post.dominates(Exit, Inner));
  EXPECT_EQ(Post.idom(Exit), NoIndex);
  EXPECT_EQ(Post.roots().size(), 1u);
}

TEST(LoopsTest, NestedLoopsWithAnEarlyExit) {
  Analyzed A(Nested);
  const LoopInfo &L = A.loops();
  ASSERT_EQ(L.size(), 2u);
  const Loop &Outer = L.loop(0), &Inner = L.loop(1);
  EXPECT_EQ(Outer.Header, A.blockOf("// outer header"));
  EXPECT_EQ(Inner.Header, A.blockOf("// inner header"));
  EXPECT_EQ(Inner.Parent, Outer.Index);
  EXPECT_EQ(Inner.Depth, 2u);
  EXPECT_EQ(Outer.Children, (llvm::SmallVector<LoopId, 2>{Inner.Index}));
  EXPECT_EQ(Inner.Latches, (llvm::SmallVector<BlockId, 2>{A.blockOf("// inner latch")}));
  EXPECT_EQ(Outer.Latches, (llvm::SmallVector<BlockId, 2>{A.blockOf("// outer latch")}));
  EXPECT_TRUE(Inner.contains(A.blockOf("// then arm")));
  EXPECT_FALSE(Inner.contains(A.blockOf("// outer latch")));
  EXPECT_TRUE(Outer.contains(A.blockOf("// outer latch")));
  // The inner loop leaves to the outer latch and, from the join, to the exit.
  EXPECT_EQ(Inner.exitingBlocks().size(), 2u);
  EXPECT_TRUE(llvm::is_contained(Inner.exitBlocks(), A.blockOf("// exit")));
  EXPECT_TRUE(llvm::is_contained(Inner.exitBlocks(), A.blockOf("// outer latch")));
  // The outer header falls into the inner header: it is the inner loop's preheader.
  EXPECT_EQ(Inner.Preheader, Outer.Header);
  EXPECT_EQ(L.loopFor(A.blockOf("// join")), Inner.Index);
  EXPECT_EQ(L.depth(A.blockOf("// outer latch")), 1u);
  EXPECT_EQ(L.depth(A.blockOf("// exit")), 0u);
  EXPECT_TRUE(L.isBackEdge(A.blockOf("// inner latch"), Inner.Header));
  EXPECT_FALSE(L.isIrreducible());
}

TEST(LoopsTest, IrreducibleCycleIsReportedNotALoop) {
  // Two entries into the cycle A <-> B: from the entry straight to each.
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra B;
CA:
  add.s32 %r2, %r1, 1;     // block a
  setp.eq.s32 %p2, %r2, 9;
  @%p2 bra OUT;
B:
  add.s32 %r1, %r1, 2;     // block b
  bra.uni CA;
OUT:
  ret;
}
)");
  EXPECT_EQ(A.loops().size(), 0u);
  ASSERT_TRUE(A.loops().isIrreducible());
  // Which of the two edges is the retreating one depends on the walk; it joins a and b.
  auto Edge = A.loops().irreducibleEdges()[0];
  BlockId BA = A.blockOf("// block a"), BB = A.blockOf("// block b");
  EXPECT_TRUE((Edge == std::pair<BlockId, BlockId>{BA, BB}) ||
              (Edge == std::pair<BlockId, BlockId>{BB, BA}));
  // Values through the cycle are not trusted.
  const Expr *R2 = A.values().valueAtEnd(A.blockOf("// block a"), *A.values().registerAt(
                                                                    A.inst("// block a"), "%r2"));
  ASSERT_NE(R2, nullptr);
  EXPECT_TRUE(R2->mentions([](const Expr *L) { return L->is(ExprKind::Opaque); }));
}

TEST(LoopsTest, InfiniteLoopHasNoPostDominatorButIsALoop) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 0;
SPIN:
  add.s32 %r1, %r1, 1;     // forever
  bra.uni SPIN;
}
)");
  ASSERT_EQ(A.loops().size(), 1u);
  EXPECT_TRUE(A.loops().loop(0).ExitEdges.empty());
  EXPECT_FALSE(A.fa().postDominators().inTree(A.blockOf("// forever")));
  const LoopSummary &S = A.values().loopSummary(0);
  EXPECT_EQ(S.Trip.K, TripCount::Kind::Unknown);
  EXPECT_EQ(S.Trip.Reason, "the loop has no exit");
}

TEST(LoopsTest, BackEdgesToOneHeaderMakeOneLoop) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
TOP:
  add.s32 %r2, %r2, 1;          // header
  setp.eq.s32 %p1, %r2, 3;
  @%p1 bra TOP;                 // continue
  setp.lt.u32 %p2, %r2, %r1;
  @%p2 bra TOP;                 // second latch
  ret;
}
)");
  ASSERT_EQ(A.loops().size(), 1u);
  EXPECT_EQ(A.loops().loop(0).Latches.size(), 2u);
}

} // namespace
