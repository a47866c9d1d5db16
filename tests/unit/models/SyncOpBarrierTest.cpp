// Decoding named barriers, cluster barriers, elect.sync, fences, setmaxnreg, mapa,
// clusterlaunchcontrol and the instructions that end a thread. Lines from tests/corpus and
// the reference kernels' PTX unless a comment names the PTX ISA syntax block as the source.
#include "SyncOpTestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

TEST(SyncOpBarrier, BarSyncZeroFromTriton) {
  Line L("bar.sync \t0;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::BarrierSync);
  EXPECT_EQ(Op.family(), SyncFamily::Barrier);
  EXPECT_TRUE(Op.Aligned) << "bar.sync is the aligned form";
  EXPECT_EQ(roleList(Op), "barrierId");
  EXPECT_EQ(Op.barrierId().integerValue(), 0);
  EXPECT_FALSE(Op.threadCount()) << "no thread count: all threads of the CTA";
}

TEST(SyncOpBarrier, BarSyncWithIdAndCountInRegisters) {
  Line L("bar.sync \t%r39, %r40;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(roleList(L.op()), "barrierId,threadCount");
  EXPECT_EQ(text(L.op().barrierId()), "%r39");
  EXPECT_EQ(text(L.op().threadCount()), "%r40");
  Line Immediate("bar.sync \t3, 64;");
  ASSERT_TRUE(Immediate.result().isDecoded()) << Immediate.describe();
  EXPECT_EQ(Immediate.op().threadCount().integerValue(), 64);
}

TEST(SyncOpBarrier, BarrierSyncIsAlignedOnlyWhenWritten) {
  Line Plain("barrier.sync \t1;");
  ASSERT_TRUE(Plain.result().isDecoded()) << Plain.describe();
  EXPECT_EQ(Plain.op().Kind, SyncKind::BarrierSync);
  EXPECT_FALSE(Plain.op().Aligned);
  // PTX ISA syntax: barrier{.cta}.sync{.aligned} a{, b}.
  Line Aligned("barrier.cta.sync.aligned 0, 64;");
  ASSERT_TRUE(Aligned.result().isDecoded()) << Aligned.describe();
  EXPECT_TRUE(Aligned.op().Aligned);
}

TEST(SyncOpBarrier, ArriveAndReductionForms) {
  // PTX ISA syntax blocks of bar.arrive, barrier.arrive and bar{rier}.red.
  Line Arrive("bar.arrive 1, 64;");
  ASSERT_TRUE(Arrive.result().isDecoded()) << Arrive.describe();
  EXPECT_EQ(Arrive.op().Kind, SyncKind::BarrierArrive);
  EXPECT_EQ(roleList(Arrive.op()), "barrierId,threadCount");
  Line Unaligned("barrier.arrive 1, 64;");
  ASSERT_TRUE(Unaligned.result().isDecoded()) << Unaligned.describe();
  EXPECT_FALSE(Unaligned.op().Aligned);
  Line Popc("bar.red.popc.u32 %r4, 1, %p1;");
  ASSERT_TRUE(Popc.result().isDecoded()) << Popc.describe();
  EXPECT_EQ(Popc.op().Kind, SyncKind::BarrierRed);
  EXPECT_EQ(Popc.op().Reduction, ReductionOp::Popc);
  EXPECT_EQ(roleList(Popc.op()), "redResult,barrierId,redPredicate");
  Line And("barrier.red.and.aligned.pred %p2, 1, 64, !%p1;");
  ASSERT_TRUE(And.result().isDecoded()) << And.describe();
  EXPECT_EQ(roleList(And.op()), "redResult,barrierId,threadCount,redPredicate");
  EXPECT_TRUE(And.op().operand(OperandRole::RedPredicate).isNegated());
}

TEST(SyncOpBarrier, WarpSyncFromB1) {
  Line L("bar.warp.sync \t-1;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Kind, SyncKind::BarWarpSync);
  EXPECT_EQ(L.op().operand(OperandRole::MemberMask).integerValue(), -1);
}

TEST(SyncOpBarrier, ClusterBarrierFromTheReferenceKernels) {
  Line Arrive("barrier.cluster.arrive.release.aligned;");
  ASSERT_TRUE(Arrive.result().isDecoded()) << Arrive.describe();
  EXPECT_EQ(Arrive.op().Kind, SyncKind::ClusterArrive);
  EXPECT_EQ(Arrive.op().Sem, MemorySemantics::Release);
  EXPECT_EQ(Arrive.op().Scope, SyncScope::Cluster);
  EXPECT_TRUE(Arrive.op().Aligned);
  Line Wait("barrier.cluster.wait.acquire.aligned;");
  ASSERT_TRUE(Wait.result().isDecoded()) << Wait.describe();
  EXPECT_EQ(Wait.op().Kind, SyncKind::ClusterWait);
  EXPECT_EQ(Wait.op().Sem, MemorySemantics::Acquire);
  // PTX ISA syntax: .relaxed arrives order nothing; defaults are release and acquire.
  Line Relaxed("barrier.cluster.arrive.relaxed;");
  ASSERT_TRUE(Relaxed.result().isDecoded()) << Relaxed.describe();
  EXPECT_EQ(Relaxed.op().Sem, MemorySemantics::Relaxed);
  EXPECT_FALSE(Relaxed.op().Aligned);
  Line Default("barrier.cluster.wait;");
  ASSERT_TRUE(Default.result().isDecoded()) << Default.describe();
  EXPECT_EQ(Default.op().Sem, MemorySemantics::Acquire);
}

TEST(SyncOpBarrier, ElectSyncNamesBothHalvesOfThePair) {
  Line L("elect.sync %rx|%px, %r194;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::ElectSync);
  EXPECT_EQ(roleList(Op), "electedLane,isElected,memberMask");
  EXPECT_EQ(text(Op.operand(OperandRole::ElectedLane)), "%rx");
  EXPECT_EQ(text(Op.operand(OperandRole::IsElected)), "%px");
  EXPECT_EQ(text(Op.operand(OperandRole::MemberMask)), "%r194");
  Line Sink("elect.sync _|%px, 0xffffffff;");
  ASSERT_TRUE(Sink.result().isDecoded()) << Sink.describe();
  EXPECT_TRUE(Sink.op().operand(OperandRole::ElectedLane).is(wsv::ptx::OperandKind::Sink));
  EXPECT_EQ(Sink.op().operand(OperandRole::MemberMask).integerValue(), 0xffffffff);
}

TEST(SyncOpBarrier, FencesFromTheReferenceKernels) {
  Line Init("fence.mbarrier_init.release.cluster;");
  ASSERT_TRUE(Init.result().isDecoded()) << Init.describe();
  EXPECT_EQ(Init.op().Kind, SyncKind::FenceMbarrierInit);
  EXPECT_EQ(Init.op().Scope, SyncScope::Cluster);
  Line Proxy("fence.proxy.async.shared::cta;");
  ASSERT_TRUE(Proxy.result().isDecoded()) << Proxy.describe();
  EXPECT_EQ(Proxy.op().Kind, SyncKind::FenceProxyAsync);
  EXPECT_EQ(Proxy.op().Space, StateSpace::SharedCta);
  Line AllSpaces("fence.proxy.async;");
  ASSERT_TRUE(AllSpaces.result().isDecoded()) << AllSpaces.describe();
  EXPECT_EQ(AllSpaces.op().Space, StateSpace::Generic);
  Line Membar("membar.cta;");
  ASSERT_TRUE(Membar.result().isDecoded()) << Membar.describe();
  EXPECT_EQ(Membar.op().Kind, SyncKind::Fence);
  EXPECT_EQ(Membar.op().Sem, MemorySemantics::Sc) << "membar is fence.sc";
  Line Gl("membar.gl;");
  ASSERT_TRUE(Gl.result().isDecoded()) << Gl.describe();
  EXPECT_EQ(Gl.op().Scope, SyncScope::Gpu);
}

TEST(SyncOpBarrier, FenceFormsFromTheIsa) {
  Line Default("fence.cta;");
  ASSERT_TRUE(Default.result().isDecoded()) << Default.describe();
  EXPECT_EQ(Default.op().Sem, MemorySemantics::AcqRel) << "fence defaults to .acq_rel";
  Line Restricted("fence.acquire.sync_restrict::shared::cluster.cluster;");
  ASSERT_TRUE(Restricted.result().isDecoded()) << Restricted.describe();
  EXPECT_EQ(Restricted.op().Space, StateSpace::SharedCluster);
  Line Alias("fence.proxy.alias;");
  ASSERT_TRUE(Alias.result().isDecoded()) << Alias.describe();
  EXPECT_EQ(Alias.op().Kind, SyncKind::FenceProxyAlias);
  Line Release("fence.proxy.tensormap::generic.release.gpu;");
  ASSERT_TRUE(Release.result().isDecoded()) << Release.describe();
  EXPECT_EQ(Release.op().Kind, SyncKind::FenceProxyTensormap);
  Line Acquire("fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;");
  ASSERT_TRUE(Acquire.result().isDecoded()) << Acquire.describe();
  EXPECT_EQ(roleList(Acquire.op()), "address,size");
  Line AsyncGeneric("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;");
  ASSERT_TRUE(AsyncGeneric.result().isDecoded()) << AsyncGeneric.describe();
  EXPECT_EQ(AsyncGeneric.op().Kind, SyncKind::FenceProxyAsync);
  EXPECT_EQ(AsyncGeneric.op().Sem, MemorySemantics::Release);
}

TEST(SyncOpBarrier, SetmaxnregFromH3) {
  Line Dec("setmaxnreg.dec.sync.aligned.u32 \t40;");
  ASSERT_TRUE(Dec.result().isDecoded()) << Dec.describe();
  EXPECT_EQ(Dec.op().Kind, SyncKind::SetmaxnregDec);
  EXPECT_EQ(Dec.op().regCount().integerValue(), 40);
  Line Inc("setmaxnreg.inc.sync.aligned.u32 \t232;");
  ASSERT_TRUE(Inc.result().isDecoded()) << Inc.describe();
  EXPECT_EQ(Inc.op().Kind, SyncKind::SetmaxnregInc);
  // The range of the count is the setmaxnreg check's to judge: the form is fine.
  Line Odd("setmaxnreg.inc.sync.aligned.u32 23;");
  EXPECT_TRUE(Odd.result().isDecoded()) << Odd.describe();
}

TEST(SyncOpBarrier, MapaFromNvccAndTheEdgeCorpus) {
  Line L("mapa.shared::cluster.u32 \t%r30, %r28, %r29;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(L.op().Kind, SyncKind::Mapa);
  EXPECT_EQ(L.op().Space, StateSpace::SharedCluster);
  EXPECT_EQ(roleList(L.op()), "mappedAddress,address,targetRank");
  EXPECT_EQ(text(L.op().targetRank()), "%r29");
  Line Named("mapa.shared::cluster.u32 remAddr32, %r67, %r11;");
  ASSERT_TRUE(Named.result().isDecoded()) << Named.describe();
  EXPECT_EQ(text(Named.op().operand(OperandRole::MappedAddress)), "remAddr32");
  Line Generic("mapa.u64 %rd3, %rd2, 1;");
  ASSERT_TRUE(Generic.result().isDecoded()) << Generic.describe();
  EXPECT_EQ(Generic.op().Space, StateSpace::Generic);
}

TEST(SyncOpBarrier, TryCancelCompletesSixteenBytes) {
  Line L("@%leader clusterlaunchcontrol.try_cancel.async.shared::cta."
         "mbarrier::complete_tx::bytes.b128 [%r1+32], [%r1];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::ClusterLaunchTryCancel);
  EXPECT_EQ(roleList(Op), "response,barrier");
  EXPECT_EQ(text(Op.barrier()), "[%r1]");
  EXPECT_EQ(Op.fixedCompleteTxBytes(), 16u);
  Line Query("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %rd1;");
  ASSERT_TRUE(Query.parsed());
  EXPECT_TRUE(Query.result().isNotSync()) << "query_cancel only reads registers";
}

TEST(SyncOpBarrier, ThreadExits) {
  struct Case {
    const char *Text;
    SyncKind Kind;
  } Cases[] = {{"exit;", SyncKind::Exit}, {"trap;", SyncKind::Trap},
               {"ret;", SyncKind::Ret},   {"ret.uni;", SyncKind::Ret}};
  for (const Case &C : Cases) {
    Line L(C.Text);
    ASSERT_TRUE(L.result().isDecoded()) << C.Text << ": " << L.describe();
    EXPECT_EQ(L.op().Kind, C.Kind);
    EXPECT_EQ(L.op().family(), SyncFamily::ThreadExit);
  }
}

struct Malformed {
  const char *Text;
  SyncFamily Family;
  const char *ReasonPart;
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Malformed &C, std::ostream *OS) { *OS << C.Text; }

class SyncOpBarrierMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyncOpBarrierMalformed, IsUnrecognizedWithAReason) {
  Line L(GetParam().Text);
  ASSERT_TRUE(L.parsed()) << GetParam().Text;
  ASSERT_TRUE(L.result().isUnrecognized()) << L.describe();
  EXPECT_EQ(L.result().family(), GetParam().Family);
  std::string Reason;
  llvm::raw_string_ostream OS(Reason);
  L.result().printReason(OS);
  EXPECT_NE(OS.str().find(GetParam().ReasonPart), std::string::npos) << OS.str();
}

INSTANTIATE_TEST_SUITE_P(
    SyncOp, SyncOpBarrierMalformed,
    ::testing::Values(
        Malformed{"bar.arrive 1;", SyncFamily::Barrier, "a, b"},
        Malformed{"bar.sync.aligned 0;", SyncFamily::Barrier, "unknown modifier"},
        Malformed{"bar.sync 0, 128, 3;", SyncFamily::Barrier, "a{, b}"},
        Malformed{"bar.gpu.sync 0;", SyncFamily::Barrier, "unknown modifier"},
        Malformed{"bar.sync.cta 0;", SyncFamily::Barrier, "'.cta' comes before"},
        Malformed{"bar.red.popc.and.u32 %r4, 1, %p1;", SyncFamily::Barrier, "repeated"},
        Malformed{"bar.red.popc.pred %p2, 1, %p1;", SyncFamily::Barrier, "'.u32'"},
        Malformed{"barrier.sync;", SyncFamily::Barrier, "a{, b}"},
        Malformed{"bar.warp.sync.aligned -1;", SyncFamily::Barrier, "unknown modifier"},
        Malformed{"barrier.cluster.arrive.acquire;", SyncFamily::ClusterBarrier, "'.release'"},
        Malformed{"barrier.cluster.wait.release;", SyncFamily::ClusterBarrier, "'.acquire'"},
        Malformed{"elect.sync %r3, -1;", SyncFamily::Elect, "d|p"},
        Malformed{"elect.sync.aligned %r3|%p1, -1;", SyncFamily::Elect, "unknown modifier"},
        Malformed{"fence.sc;", SyncFamily::Fence, "scope"},
        Malformed{"fence.relaxed.cta;", SyncFamily::Fence, "fence semantics"},
        Malformed{"fence.proxy.async.shared;", SyncFamily::Fence, "'.shared::cta'"},
        Malformed{"fence.proxy.async.cta;", SyncFamily::Fence, "no semantics or scope"},
        Malformed{"fence.mbarrier_init.release.cta;", SyncFamily::Fence,
                  "fence.mbarrier_init.release.cluster"},
        Malformed{"fence.proxy.tensormap::generic.acquire.gpu;", SyncFamily::Fence,
                  "[addr], size"},
        Malformed{"fence.release.sync_restrict::shared::cluster.cluster;", SyncFamily::Fence,
                  "'shared::cta'"},
        Malformed{"membar.gpu;", SyncFamily::Fence, "'.gl'"},
        Malformed{"membar;", SyncFamily::Fence, "'.gl'"},
        Malformed{"setmaxnreg.dec.sync.aligned.u32 %r3;", SyncFamily::Setmaxnreg, "immediate"},
        Malformed{"setmaxnreg.inc.sync.u32 232;", SyncFamily::Setmaxnreg, "'.sync.aligned'"},
        Malformed{"setmaxnreg.inc.sync.aligned.b32 232;", SyncFamily::Setmaxnreg, "'.u32'"},
        Malformed{"mapa.shared::cta.u32 %r4, %r1, 1;", SyncFamily::Mapa, "'.shared::cluster'"},
        Malformed{"mapa.shared::cluster.b32 %r4, %r1, 1;", SyncFamily::Mapa, "'.u32'"},
        Malformed{"clusterlaunchcontrol.try_cancel.async.shared::cta.b128 [%r2], [%r1];",
                  SyncFamily::ClusterLaunchControl, "complete_tx"},
        Malformed{"exit.uni;", SyncFamily::ThreadExit, "unknown modifier"}));

} // namespace
