// Spin waits: the wait loops nvcc, clang and Triton write around mbarrier.try_wait and
// test_wait are each one blocking wait with its barrier and parity; loops that do more are not.
#include "AnalyzerTestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

std::string kernel(const char *Body) {
  return std::string(R"(
.visible .entry k()
.maxntid 128
{
  .reg .pred %p<6>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 8 .b8 bars[32];
  mov.u32 %r1, bars;
  add.s32 %r2, %r1, 16;
  mov.u32 %r3, %tid.x;
  shr.u32 %r4, %r3, 7;
  and.b32 %r5, %r4, 1;
)") + Body + R"(
  ret;
}
)";
}

const SpinWait *spinOf(Analyzed &A, llvm::StringRef Needle) {
  LoopId L = A.loopOf(Needle);
  if (L == NoIndex) {
    ADD_FAILURE() << "not in a loop";
    return nullptr;
  }
  const LoopSummary &S = A.values().loopSummary(L);
  if (!S.Spin)
    return nullptr;
  EXPECT_EQ(S.Trip.K, TripCount::Kind::SpinWait);
  return &*S.Spin;
}

void expectBarsPlus16Parity(Analyzed &A, const SpinWait *W) {
  ASSERT_NE(W, nullptr);
  ExprContext &C = A.ctx();
  EXPECT_EQ(W->Barrier, C.add(C.symbol("bars", SymbolSpace::Shared, 32), C.constant(16, 32)));
  EXPECT_EQ(W->Parity, C.urem(C.udiv(A.tid(), C.constant(128, 32)), C.constant(2, 32)));
  EXPECT_EQ(W->State, nullptr);
  EXPECT_EQ(W->Op.Kind, models::SyncKind::MbarrierTryWait);
}

TEST(SpinLoopTest, NvccInlineAsmScope) {
  Analyzed A(kernel(R"(
  {
  .reg .pred P1;
  WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r5;     // wait
  @P1 bra DONE;
  bra.uni WAIT;
  DONE:
  }
)"));
  expectBarsPlus16Parity(A, spinOf(A, "// wait"));
  EXPECT_EQ(A.values().loopSummary(A.loopOf("// wait")).Spin->Wait, A.inst("// wait"));
}

TEST(SpinLoopTest, SelpOfTheResultTestedOutsideTheScope) {
  Analyzed A(kernel(R"(
$L__BB0_1:
  {
  .reg .pred P1;
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r5, 1000000;   // wait with hint
  selp.b32 %r6, 1, 0, P1;
  }
  setp.eq.s32 %p1, %r6, 0;
  @%p1 bra $L__BB0_1;
)"));
  expectBarsPlus16Parity(A, spinOf(A, "// wait with hint"));
}

TEST(SpinLoopTest, TritonPredicatedBranch) {
  Analyzed A(kernel(R"(
  {
  .reg .pred complete;
  waitLoop:
  mbarrier.try_wait.parity.shared::cta.b64 complete, [%r2], %r5;   // triton wait
  @!complete bra.uni waitLoop;
  }
)"));
  expectBarsPlus16Parity(A, spinOf(A, "// triton wait"));
}

TEST(SpinLoopTest, TestWaitLoopAndTokenWait) {
  Analyzed A(kernel(R"(
  mbarrier.arrive.shared::cta.b64 %rd1, [%r1];
POLL:
  mbarrier.test_wait.shared::cta.b64 %p1, [%r1], %rd1;      // token poll
  @!%p1 bra POLL;
)"));
  const SpinWait *W = spinOf(A, "// token poll");
  ASSERT_NE(W, nullptr);
  EXPECT_TRUE(W->IsTestWait);
  EXPECT_EQ(W->Parity, nullptr);
  ASSERT_NE(W->State, nullptr);
  EXPECT_TRUE(W->State->is(ExprKind::Opaque)) << "the token mbarrier.arrive returned";
  EXPECT_EQ(W->Barrier, A.ctx().symbol("bars", SymbolSpace::Shared, 32));
}

TEST(SpinLoopTest, BackOffWithNanosleepIsStillOneWait) {
  Analyzed A(kernel(R"(
RETRY:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r5;    // backoff wait
  @%p1 bra DONE;
  nanosleep.u32 20;
  bra.uni RETRY;
DONE:
)"));
  expectBarsPlus16Parity(A, spinOf(A, "// backoff wait"));
}

TEST(SpinLoopTest, ACheckedWaitWithATimeoutThatTrapsIsStillOneWait) {
  // The instrumented build reads a timer while it waits and reports a hang (then traps) when
  // the wait takes too long; the protocol is the same.
  Analyzed A(kernel(R"(
  mov.u64 %rd1, %globaltimer;
CHECK:
  {
  .reg .pred P1;
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], %r5;   // checked wait
  selp.b32 %r6, 1, 0, P1;
  }
  setp.eq.s32 %p1, %r6, 0;
  @%p1 bra SLOW;
  bra.uni DONE;
SLOW:
  mov.u64 %rd2, %globaltimer;
  sub.s64 %rd3, %rd2, %rd1;
  setp.le.u64 %p2, %rd3, 2000000000;
  @%p2 bra CHECK;
  trap;                                                         // hang report
DONE:
  mbarrier.arrive.shared::cta.b64 _, [%r1];                     // after the wait
)"));
  expectBarsPlus16Parity(A, spinOf(A, "// checked wait"));
  EXPECT_TRUE(A.cfg().block(A.blockOf("// hang report")).NeverReturns);
  EXPECT_FALSE(A.cfg().block(A.blockOf("// after the wait")).NeverReturns);
  // Every thread that waited goes on: the timeout path is not a way the wait ends.
  EXPECT_EQ(A.threads("// after the wait").count(), 128u);
}

TEST(SpinLoopTest, LoopsThatDoMoreThanWaitAreNotSpinWaits) {
  Analyzed A(kernel(R"(
  mov.u32 %r7, 0;
WORK:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r5;    // wait in a work loop
  add.s32 %r7, %r7, 1;
  st.shared.u32 [%r1], %r7;
  @!%p1 bra WORK;
TWO:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r5;    // two waits
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], %r5;
  and.pred %p4, %p2, %p3;
  @!%p4 bra TWO;
)"));
  EXPECT_EQ(spinOf(A, "// wait in a work loop"), nullptr);
  EXPECT_EQ(spinOf(A, "// two waits"), nullptr);
  // Not a spin wait, and its exit depends on the wait: no trip count either, with the reason.
  const TripCount &T = A.values().loopSummary(A.loopOf("// wait in a work loop")).Trip;
  EXPECT_EQ(T.K, TripCount::Kind::Unknown);
  EXPECT_NE(T.Reason.find("mbarrier.try_wait"), std::string::npos) << T.Reason;
}

TEST(SpinLoopTest, ALoopLeftWhateverTheWaitSaysIsNotAWait) {
  // The branch ignores the wait's result: the loop is left after one try.
  Analyzed A(kernel(R"(
  mov.u32 %r7, 3;
ONCE:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r5;    // ignored wait
  setp.eq.s32 %p2, %r7, 3;
  @!%p2 bra ONCE;
)"));
  EXPECT_EQ(spinOf(A, "// ignored wait"), nullptr);
}

TEST(SpinLoopTest, WaitsInsideACountedLoopAreInnerLoops) {
  Analyzed A(kernel(R"(
  mov.u32 %r8, 0;
  mov.u32 %r9, 0;
KLOOP:
  {
  .reg .pred P1;
  WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r9;     // inner wait
  @P1 bra DONE;
  bra.uni WAIT;
  DONE:
  }
  xor.b32 %r9, %r9, 1;
  add.s32 %r8, %r8, 1;
  setp.lt.u32 %p1, %r8, 10;
  @%p1 bra KLOOP;
)"));
  const SpinWait *W = spinOf(A, "// inner wait");
  ASSERT_NE(W, nullptr);
  LoopId Inner = A.loopOf("// inner wait");
  LoopId Outer = A.loops().loop(Inner).Parent;
  ASSERT_NE(Outer, NoIndex);
  const TripCount &T = A.values().loopSummary(Outer).Trip;
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  EXPECT_EQ(T.Iterations, A.ctx().constant(10, 32));
  // The parity the wait sees alternates with the outer iteration.
  EXPECT_EQ(A.values().closedForm(W->Parity),
            A.ctx().urem(A.ctx().iterationVar(Outer), A.ctx().constant(2, 32)));
}

} // namespace
