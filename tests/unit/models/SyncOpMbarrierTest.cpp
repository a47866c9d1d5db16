// Decoding mbarrier.* and cp.async.mbarrier.arrive. The lines come from the PTX in
// tests/corpus (Triton, nvcc, clang-19) and the reference kernels unless a comment says the
// form is taken from the PTX ISA's syntax block because no compiler output here has it.
#include "SyncOpTestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

TEST(SyncOpMbarrier, InitWithImmediateCountFromTriton) {
  Line L("@%p2 mbarrier.init.shared::cta.b64 [%r40], 1;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::MbarrierInit);
  EXPECT_EQ(Op.family(), SyncFamily::Mbarrier);
  EXPECT_EQ(Op.Space, StateSpace::SharedCta);
  EXPECT_EQ(text(Op.barrier()), "[%r40]");
  EXPECT_EQ(Op.count().integerValue(), 1);
  EXPECT_EQ(roleList(Op), "barrier,count");
  EXPECT_EQ(Op.Sem, MemorySemantics::None) << "init has no memory semantics";
}

TEST(SyncOpMbarrier, InitWithRegisterCountFromClang) {
  Line L("mbarrier.init.shared::cta.b64 [%r28], %r181;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(text(L.op().count()), "%r181");
  EXPECT_EQ(L.op().immediate(OperandRole::Count), std::nullopt) << "a register, not a value";
}

TEST(SyncOpMbarrier, InitAndInvalWithGenericAddresses) {
  // PTX ISA syntax: without a state space the address is generic.
  Line Init("mbarrier.init.b64 [%rd2], 3;");
  ASSERT_TRUE(Init.result().isDecoded()) << Init.describe();
  EXPECT_EQ(Init.op().Space, StateSpace::Generic);
  Line Inval("@%p51 mbarrier.inval.shared::cta.b64 [%r40];");
  ASSERT_TRUE(Inval.result().isDecoded()) << Inval.describe();
  EXPECT_EQ(Inval.op().Kind, SyncKind::MbarrierInval);
  EXPECT_EQ(roleList(Inval.op()), "barrier");
}

TEST(SyncOpMbarrier, ArriveWithCountFromTritonConsumer) {
  Line L("@%p13 mbarrier.arrive.shared::cta.b64 _, [%r67], 128;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::MbarrierArrive);
  EXPECT_EQ(roleList(Op), "state,barrier,count");
  EXPECT_TRUE(Op.operand(OperandRole::State).is(wsv::ptx::OperandKind::Sink));
  EXPECT_EQ(Op.count().integerValue(), 128);
  // The ISA's defaults: release semantics at CTA scope.
  EXPECT_EQ(Op.Sem, MemorySemantics::Release);
  EXPECT_EQ(Op.Scope, SyncScope::Cta);
  EXPECT_FALSE(Op.NoComplete);
}

TEST(SyncOpMbarrier, ArriveReturningStateFromInlineAsm) {
  Line L("mbarrier.arrive.shared::cta.b64 %state, [%r3+8];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(text(L.op().operand(OperandRole::State)), "%state");
  EXPECT_EQ(text(L.op().barrier()), "[%r3+8]");
  EXPECT_FALSE(L.op().has(OperandRole::Count)) << "no count written: one arrival";
  EXPECT_EQ(L.op().immediate(OperandRole::Count), std::nullopt);
}

TEST(SyncOpMbarrier, RemoteArriveOnPeerBarrierFromNvcc) {
  Line L("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remAddr32];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Space, StateSpace::SharedCluster);
  EXPECT_EQ(L.op().Scope, SyncScope::Cluster);
  EXPECT_EQ(L.op().Sem, MemorySemantics::Release);
  EXPECT_EQ(text(L.op().barrier()), "[remAddr32]");
}

TEST(SyncOpMbarrier, ExplicitReleaseCtaFromNvcc) {
  Line L("mbarrier.arrive.release.cta.shared::cta.b64 _, [%r6];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Sem, MemorySemantics::Release);
  EXPECT_EQ(L.op().Scope, SyncScope::Cta);
}

TEST(SyncOpMbarrier, RelaxedArriveFromTheIsa) {
  Line L("mbarrier.arrive.relaxed.cluster.shared::cta.b64 %rd1, [%r1], %r3;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Sem, MemorySemantics::Relaxed);
  EXPECT_EQ(L.op().Scope, SyncScope::Cluster);
  EXPECT_EQ(text(L.op().count()), "%r3");
}

TEST(SyncOpMbarrier, NoCompleteArriveFromTheIsa) {
  Line L("mbarrier.arrive.noComplete.shared::cta.b64 %rd1, [%r1], 2;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_TRUE(L.op().NoComplete);
  EXPECT_EQ(L.op().count().integerValue(), 2);
}

TEST(SyncOpMbarrier, ArriveExpectTxWithImmediateBytesFromTriton) {
  Line L("@%p23 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r61], 32768;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::MbarrierArriveExpectTx);
  EXPECT_EQ(roleList(Op), "state,barrier,txBytes");
  EXPECT_EQ(Op.txBytes().integerValue(), 32768);
  EXPECT_FALSE(Op.has(OperandRole::Count)) << "arrive.expect_tx always arrives once";
}

TEST(SyncOpMbarrier, ArriveExpectTxWithRegisterBytesAndTouchingTokens) {
  // From the edge corpus: no spaces between operands.
  Line L("@%leader mbarrier.arrive.expect_tx.shared::cta.b64 _,[%r1],%r8;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(text(L.op().txBytes()), "%r8");
  EXPECT_EQ(text(L.op().barrier()), "[%r1]");
}

TEST(SyncOpMbarrier, RemoteArriveExpectTxWithGenericAddress) {
  // PTX ISA example: a peer's barrier through a generic 64-bit address.
  Line L("mbarrier.arrive.expect_tx.release.cluster.b64 _, [%rd2], 16;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Space, StateSpace::Generic);
  EXPECT_EQ(L.op().Scope, SyncScope::Cluster);
}

TEST(SyncOpMbarrier, ArriveDropForms) {
  // PTX ISA syntax: arrive_drop also lowers the expected count of later phases; the ISA's
  // own syntax puts the state space before .sem here.
  Line Drop("mbarrier.arrive_drop.shared::cta.b64 %rd1, [%r1];");
  ASSERT_TRUE(Drop.result().isDecoded()) << Drop.describe();
  EXPECT_EQ(Drop.op().Kind, SyncKind::MbarrierArriveDrop);
  Line DropTx("mbarrier.arrive_drop.expect_tx.shared::cta.relaxed.cta.b64 _, [%r1], 16;");
  ASSERT_TRUE(DropTx.result().isDecoded()) << DropTx.describe();
  EXPECT_EQ(DropTx.op().Kind, SyncKind::MbarrierArriveDropExpectTx);
  EXPECT_EQ(DropTx.op().Sem, MemorySemantics::Relaxed);
  EXPECT_EQ(DropTx.op().txBytes().integerValue(), 16);
}

TEST(SyncOpMbarrier, ExpectTxAndCompleteTx) {
  // PTX ISA syntax (no compiler output here uses the standalone forms).
  Line Expect("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%r1], 16;");
  ASSERT_TRUE(Expect.result().isDecoded()) << Expect.describe();
  EXPECT_EQ(Expect.op().Kind, SyncKind::MbarrierExpectTx);
  EXPECT_EQ(roleList(Expect.op()), "barrier,txBytes");
  EXPECT_EQ(Expect.op().Space, StateSpace::SharedCluster);
  Line Complete("mbarrier.complete_tx.shared::cta.b64 [%r1], %r3;");
  ASSERT_TRUE(Complete.result().isDecoded()) << Complete.describe();
  EXPECT_EQ(Complete.op().Kind, SyncKind::MbarrierCompleteTx);
  EXPECT_EQ(text(Complete.op().txBytes()), "%r3");
}

TEST(SyncOpMbarrier, TryWaitParityWithSuspendHintFromNvcc) {
  Line L("mbarrier.try_wait.parity.shared::cta.b64 P1, [%r11], %r12, 10000000;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::MbarrierTryWait);
  EXPECT_TRUE(Op.WaitsOnParity);
  EXPECT_EQ(Op.name(), "mbarrier.try_wait.parity");
  EXPECT_EQ(roleList(Op), "waitComplete,barrier,parity,suspendTimeHint");
  EXPECT_EQ(text(Op.waitComplete()), "P1");
  EXPECT_EQ(text(Op.parity()), "%r12");
  EXPECT_EQ(Op.operand(OperandRole::SuspendTimeHint).integerValue(), 10000000);
  EXPECT_EQ(Op.Sem, MemorySemantics::Acquire) << "waits acquire by default";
}

TEST(SyncOpMbarrier, TryWaitParityFromTritonSpinLoop) {
  Line L("mbarrier.try_wait.parity.shared::cta.b64 complete, [%r118], %r881;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(text(L.op().waitComplete()), "complete");
  EXPECT_FALSE(L.op().has(OperandRole::SuspendTimeHint));
}

TEST(SyncOpMbarrier, TryWaitWithExplicitAcquireAndImmediateParity) {
  Line L("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%r3], 0;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().parity().integerValue(), 0);
  EXPECT_EQ(L.op().Scope, SyncScope::Cta);
}

TEST(SyncOpMbarrier, PeekingTestWaitFromTheEdgeCorpus) {
  Line L("mbarrier.test_wait.parity.shared::cta.b64 P1, [%r3+8], %r6;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Kind, SyncKind::MbarrierTestWait);
  EXPECT_TRUE(L.op().WaitsOnParity);
}

TEST(SyncOpMbarrier, TokenWaitsFromTheIsa) {
  Line Try("mbarrier.try_wait.relaxed.cluster.shared::cta.b64 %p1, [%r1], %rd1, %r3;");
  ASSERT_TRUE(Try.result().isDecoded()) << Try.describe();
  EXPECT_FALSE(Try.op().WaitsOnParity);
  EXPECT_EQ(roleList(Try.op()), "waitComplete,barrier,stateToken,suspendTimeHint");
  EXPECT_EQ(text(Try.op().stateToken()), "%rd1");
  EXPECT_EQ(Try.op().Sem, MemorySemantics::Relaxed);
  Line Test("mbarrier.test_wait.shared::cta.b64 %p1, [%r1], %rd1;");
  ASSERT_TRUE(Test.result().isDecoded()) << Test.describe();
  EXPECT_EQ(Test.op().name(), "mbarrier.test_wait");
}

TEST(SyncOpMbarrier, PendingCount) {
  Line L("mbarrier.pending_count.b64 %r3, %rd1;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(roleList(L.op()), "pendingCount,stateToken");
}

TEST(SyncOpMbarrier, CpAsyncMbarrierArrive) {
  Line Inc("cp.async.mbarrier.arrive.shared::cta.b64 [%r1];");
  ASSERT_TRUE(Inc.result().isDecoded()) << Inc.describe();
  EXPECT_EQ(Inc.op().Kind, SyncKind::CpAsyncMbarrierArrive);
  EXPECT_FALSE(Inc.op().NoInc);
  EXPECT_TRUE(Inc.op().isAsync());
  Line NoInc("cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];");
  ASSERT_TRUE(NoInc.result().isDecoded()) << NoInc.describe();
  EXPECT_TRUE(NoInc.op().NoInc);
  EXPECT_EQ(NoInc.op().Space, StateSpace::SharedCta) << "'.shared' is '.shared::cta'";
}

// Forms the ISA does not define: each is recognized as an mbarrier instruction and refused
// with a reason, never decoded as a neighbouring form.
struct Malformed {
  const char *Text;
  const char *ReasonPart; ///< a piece of the reason the decoder must give
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Malformed &C, std::ostream *OS) { *OS << C.Text; }

class SyncOpMbarrierMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyncOpMbarrierMalformed, IsUnrecognizedWithAReason) {
  Line L(GetParam().Text);
  ASSERT_TRUE(L.parsed()) << GetParam().Text;
  ASSERT_TRUE(L.result().isUnrecognized()) << L.describe();
  EXPECT_EQ(L.result().family(), SyncFamily::Mbarrier);
  std::string Reason;
  llvm::raw_string_ostream OS(Reason);
  L.result().printReason(OS);
  EXPECT_NE(OS.str().find(GetParam().ReasonPart), std::string::npos) << OS.str();
}

INSTANTIATE_TEST_SUITE_P(
    SyncOp, SyncOpMbarrierMalformed,
    ::testing::Values(
        Malformed{"mbarrier.arrive.shared::cluster.b64 %rd1, [%r1];", "write '_'"},
        Malformed{"mbarrier.arrive.acquire.cta.shared::cta.b64 %rd1, [%r1];", "'.release'"},
        Malformed{"mbarrier.arrive.release.gpu.shared::cta.b64 _, [%r1];", "'.cluster'"},
        Malformed{"mbarrier.arrive.shared::cta.shared::cta.b64 %rd1, [%r1];", "repeated"},
        Malformed{"mbarrier.arrive.shared::cta.b32 _, [%r1];", "'.b64'"},
        Malformed{"mbarrier.arrive.shared::cta _, [%r1];", "'.b64'"},
        Malformed{"mbarrier.arrive.noComplete.shared::cta.b64 %rd1, [%r1];", "count"},
        Malformed{"mbarrier.arrive.noComplete.relaxed.cta.shared::cta.b64 %rd1, [%r1], 1;",
                  "'.release'"},
        Malformed{"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1];", "txCount"},
        Malformed{"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16, 1;", "txCount"},
        Malformed{"mbarrier.arrive.shared::cta.b64 [%r1];", "state"},
        Malformed{"mbarrier.init.shared::cluster.b64 [%r1], 1;", "'.shared::cta'"},
        Malformed{"mbarrier.init.release.shared::cta.b64 [%r1], 1;", "semantics"},
        Malformed{"mbarrier.init.shared::cta.b64 %r1, 1;", "address"},
        Malformed{"mbarrier.expect_tx.release.cta.shared::cta.b64 [%r1], 16;", "'.relaxed'"},
        Malformed{"mbarrier.try_wait.shared::cluster.b64 %p1, [%r1], %rd1;", "'.shared::cta'"},
        Malformed{"mbarrier.try_wait.parity.release.cta.shared::cta.b64 %p1, [%r1], %r3;",
                  "'.acquire'"},
        Malformed{"mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], %r3, %r3;",
                  "test_wait takes"},
        Malformed{"mbarrier.try_wait.parity.shared::cta.b64 _, [%r1], %r3;", "predicate"},
        Malformed{"mbarrier.pending_count.shared::cta.b64 %r3, %rd1;", "no state space"},
        Malformed{"mbarrier.arrive.parity.shared::cta.b64 _, [%r1];", "unknown modifier"},
        Malformed{"mbarrier.wait.shared::cta.b64 %p1, [%r1], %r3;", "unknown mbarrier operation"},
        Malformed{"cp.async.mbarrier.arrive.shared::cluster.b64 [%r1];", "'.shared::cta'"},
        Malformed{"cp.async.mbarrier.arrive.noinc.noinc.b64 [%r1];", "repeated"}));

} // namespace
