// Decoding tcgen05.* (Blackwell) and wgmma.* (Hopper). Lines from tests/corpus and the
// reference kernels' PTX unless a comment names the PTX ISA syntax block as the source.
#include "SyncOpTestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

/// `{%f0, %f1, ..., %f<N-1>}`: the accumulator vectors of wgmma lines, which are long.
std::string registers(const char *Prefix, unsigned N) {
  std::string S = "{";
  for (unsigned I = 0; I < N; ++I)
    S += (I ? ", " : "") + std::string(Prefix) + std::to_string(I);
  return S + "}";
}

TEST(SyncOpTcgen05, MmaFromTritonWithDescriptorsAndPredicate) {
  Line L("@%p19 tcgen05.mma.cta_group::1.kind::f16 [ %r77 + 0 ], %rd10, %rd11, %r78, %p20;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::Tcgen05Mma);
  EXPECT_EQ(Op.family(), SyncFamily::Tcgen05);
  EXPECT_EQ(Op.CtaGroup, 1);
  EXPECT_EQ(Op.Mma, MmaKind::F16);
  EXPECT_EQ(roleList(Op), "dTmem,aDesc,bDesc,instrDesc,enableInputD");
  EXPECT_EQ(text(Op.operand(OperandRole::DTmem)), "[%r77+0]");
  EXPECT_EQ(text(Op.operand(OperandRole::ADesc)), "%rd10");
  EXPECT_EQ(text(Op.operand(OperandRole::InstrDesc)), "%r78");
  EXPECT_EQ(text(Op.operand(OperandRole::EnableInputD)), "%p20");
  EXPECT_FALSE(Op.WarpSpecialized);
  EXPECT_TRUE(Op.isAsync());
}

TEST(SyncOpTcgen05, TwoCtaMmaFromB4AndTouchingTokens) {
  Line Pair("tcgen05.mma.cta_group::2.kind::f16 [%r5], %rd11, %rd12, %r446, p;");
  ASSERT_TRUE(Pair.result().isDecoded()) << Pair.describe();
  EXPECT_EQ(Pair.op().CtaGroup, 2);
  Line Touching("@%leader tcgen05.mma.cta_group::1.kind::f16[%r5],%desc_a,%desc_b,%r9,%p4;");
  ASSERT_TRUE(Touching.result().isDecoded()) << Touching.describe();
  EXPECT_EQ(text(Touching.op().operand(OperandRole::BDesc)), "%desc_b");
}

TEST(SyncOpTcgen05, MmaTails) {
  // PTX ISA syntax: disable-output-lane is a vector before enable-input-d, scale-input-d an
  // immediate after it; A may come from tensor memory.
  Line Lanes("tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd1, %rd2, %r4, "
             "{%r1, %r2, %r3, %r4}, %p1;");
  ASSERT_TRUE(Lanes.result().isDecoded()) << Lanes.describe();
  EXPECT_EQ(roleList(Lanes.op()), "dTmem,aDesc,bDesc,instrDesc,disableOutputLane,enableInputD");
  Line Scale("tcgen05.mma.cta_group::1.kind::tf32 [%r3], [%r4], %rd2, %r4, %p1, 2;");
  ASSERT_TRUE(Scale.result().isDecoded()) << Scale.describe();
  EXPECT_EQ(roleList(Scale.op()), "dTmem,aTmem,bDesc,instrDesc,enableInputD,scaleInputD");
  Line Block("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X "
             "[%r3], %rd1, %rd2, %r4, [%r5], [%r6], %p1;");
  ASSERT_TRUE(Block.result().isDecoded()) << Block.describe();
  EXPECT_TRUE(Block.op().BlockScale);
  EXPECT_EQ(roleList(Block.op()),
            "dTmem,aDesc,bDesc,instrDesc,scaleATmem,scaleBTmem,enableInputD");
  Line Ws("tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill "
          "[%r3], %rd1, %rd2, %r4, %p1, %rd2;");
  ASSERT_TRUE(Ws.result().isDecoded()) << Ws.describe();
  EXPECT_TRUE(Ws.op().WarpSpecialized);
  EXPECT_EQ(roleList(Ws.op()), "dTmem,aDesc,bDesc,instrDesc,enableInputD,zeroColumnMask");
  Line Sparse("tcgen05.mma.sp.cta_group::1.kind::f16 [%r3], %rd1, %rd2, [%r5], %r4, %p1;");
  ASSERT_TRUE(Sparse.result().isDecoded()) << Sparse.describe();
  EXPECT_TRUE(Sparse.op().Sparse);
  EXPECT_EQ(roleList(Sparse.op()), "dTmem,aDesc,bDesc,sparseMeta,instrDesc,enableInputD");
}

TEST(SyncOpTcgen05, CommitToLocalBarrierFromTriton) {
  Line L("@%p19 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r79];");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::Tcgen05Commit);
  EXPECT_EQ(Op.Completion, CompletionMechanism::MbarrierArriveOne);
  EXPECT_EQ(Op.Space, StateSpace::SharedCluster);
  EXPECT_FALSE(Op.Multicast);
  EXPECT_EQ(roleList(Op), "barrier");
}

TEST(SyncOpTcgen05, MulticastCommitTakesA16BitMaskRegister) {
  Line L("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster."
         "b64 [%r448], %rs1;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_TRUE(L.op().Multicast);
  EXPECT_EQ(L.op().CtaGroup, 2);
  EXPECT_EQ(text(L.op().ctaMask()), "%rs1");
  EXPECT_EQ(text(L.op().barrier()), "[%r448]");
}

TEST(SyncOpTcgen05, AllocationFromTriton) {
  Line Alloc("@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r30], 512;");
  ASSERT_TRUE(Alloc.result().isDecoded()) << Alloc.describe();
  EXPECT_EQ(Alloc.op().Kind, SyncKind::Tcgen05Alloc);
  EXPECT_TRUE(Alloc.op().Aligned);
  EXPECT_EQ(text(Alloc.op().tmemAddrDst()), "[%r30]");
  EXPECT_EQ(Alloc.op().columns().integerValue(), 512);
  Line Dealloc("@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 512;");
  ASSERT_TRUE(Dealloc.result().isDecoded()) << Dealloc.describe();
  EXPECT_EQ(roleList(Dealloc.op()), "tmemAddr,columns");
  Line Relinquish("@%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  ASSERT_TRUE(Relinquish.result().isDecoded()) << Relinquish.describe();
  EXPECT_EQ(Relinquish.op().Kind, SyncKind::Tcgen05RelinquishAllocPermit);
}

TEST(SyncOpTcgen05, LoadsAndStoresFromTheTokenCorpus) {
  Line Ld("tcgen05.ld.sync.aligned.32x32b.x16.b32{%v0,%v1,%v2,%v3,%v4,%v5,%v6,%v7,%v8,%v9,"
          "%v10,%v11,%v12,%v13,%v14,%v15},[%r5];");
  ASSERT_TRUE(Ld.result().isDecoded()) << Ld.describe();
  EXPECT_EQ(Ld.op().Kind, SyncKind::Tcgen05Ld);
  EXPECT_EQ(Ld.op().ShapeM, 32);
  EXPECT_EQ(Ld.op().ShapeN, 32);
  EXPECT_EQ(Ld.op().Repeat, 16);
  EXPECT_EQ(roleList(Ld.op()), "data,tmemAddr");
  EXPECT_EQ(text(Ld.op().operand(OperandRole::TmemAddr)), "[%r5]");
  Line St("tcgen05.st.sync.aligned.32x32b.x4.b32[%r5+32],{%v16,%v17,%v18,%v19};");
  ASSERT_TRUE(St.result().isDecoded()) << St.describe();
  EXPECT_EQ(roleList(St.op()), "tmemAddr,data");
  // PTX ISA syntax: .16x32bx2 takes the immediate half-split offset.
  Line Split("tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r3], 2, {%r4, %r5};");
  ASSERT_TRUE(Split.result().isDecoded()) << Split.describe();
  EXPECT_EQ(roleList(Split.op()), "tmemAddr,halfSplitOffset,data");
}

TEST(SyncOpTcgen05, WaitsAndFences) {
  struct Case {
    const char *Text;
    SyncKind Kind;
  } Cases[] = {
      {"tcgen05.wait::ld.sync.aligned;", SyncKind::Tcgen05WaitLd},
      {"tcgen05.wait::st.sync.aligned;", SyncKind::Tcgen05WaitSt},
      {"tcgen05.fence::before_thread_sync;", SyncKind::Tcgen05FenceBeforeThreadSync},
      {"tcgen05.fence::after_thread_sync;", SyncKind::Tcgen05FenceAfterThreadSync},
  };
  for (const Case &C : Cases) {
    Line L(C.Text);
    ASSERT_TRUE(L.result().isDecoded()) << C.Text << ": " << L.describe();
    EXPECT_EQ(L.op().Kind, C.Kind) << C.Text;
    EXPECT_EQ(L.op().numRoles(), 0u);
  }
}

TEST(SyncOpTcgen05, CopyAndShift) {
  // PTX ISA syntax blocks of tcgen05.cp and tcgen05.shift.
  Line Cp("tcgen05.cp.cta_group::1.32x128b.warpx4 [%r3], %rd1;");
  ASSERT_TRUE(Cp.result().isDecoded()) << Cp.describe();
  EXPECT_TRUE(Cp.op().Multicast);
  EXPECT_EQ(roleList(Cp.op()), "tmemAddr,sourceDesc");
  Line Fmt("tcgen05.cp.cta_group::2.128x256b.b8x16.b6x16_p32 [%r3], %rd1;");
  ASSERT_TRUE(Fmt.result().isDecoded()) << Fmt.describe();
  Line Shift("tcgen05.shift.cta_group::1.down [%r3];");
  ASSERT_TRUE(Shift.result().isDecoded()) << Shift.describe();
  EXPECT_EQ(Shift.op().Kind, SyncKind::Tcgen05Shift);
}

TEST(SyncOpWgmma, MmaAsyncFromH2WithDescriptors) {
  Line L("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " + registers("%f", 64) +
         ", %rd6, %rd9, p, 1, 1, 0, 0;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  const SyncOp &Op = L.op();
  EXPECT_EQ(Op.Kind, SyncKind::WgmmaMmaAsync);
  EXPECT_EQ(Op.family(), SyncFamily::Wgmma);
  EXPECT_EQ(Op.ShapeM, 64);
  EXPECT_EQ(Op.ShapeN, 128);
  EXPECT_EQ(Op.ShapeK, 16);
  EXPECT_TRUE(Op.Aligned);
  EXPECT_EQ(roleList(Op),
            "accumulators,aDesc,bDesc,scaleD,immScaleA,immScaleB,immTransA,immTransB");
  EXPECT_EQ(text(Op.operand(OperandRole::ScaleD)), "p");
  EXPECT_EQ(Op.operand(OperandRole::Accumulators).elements().size(), 64u);
}

TEST(SyncOpWgmma, AFromRegistersDropsImmTransA) {
  // PTX ISA syntax: with A in registers there is no imm-trans-a.
  Line L("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " + registers("%f", 8) +
         ", {%r1, %r2, %r3, %r4}, %rd2, %p1, 1, 1, 0;");
  ASSERT_TRUE(L.result().isDecoded()) << L.describe();
  EXPECT_EQ(roleList(L.op()), "accumulators,aFragment,bDesc,scaleD,immScaleA,immScaleB,immTransB");
}

TEST(SyncOpWgmma, OtherTypeFamilies) {
  Line Fp8("wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e5m2 " + registers("%f", 8) +
           ", %rd1, %rd2, %p1, 1, 1;");
  ASSERT_TRUE(Fp8.result().isDecoded()) << Fp8.describe();
  EXPECT_EQ(roleList(Fp8.op()), "accumulators,aDesc,bDesc,scaleD,immScaleA,immScaleB");
  Line Int("wgmma.mma_async.sync.aligned.m64n16k32.satfinite.s32.s8.u8 " +
           registers("%r", 8) + ", %rd1, %rd2, %p1;");
  ASSERT_TRUE(Int.result().isDecoded()) << Int.describe();
  EXPECT_EQ(roleList(Int.op()), "accumulators,aDesc,bDesc,scaleD");
  Line Sparse("wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16 " + registers("%f", 8) +
              ", %rd1, %rd2, %r3, 0, %p1, 1, 1, 0, 0;");
  ASSERT_TRUE(Sparse.result().isDecoded()) << Sparse.describe();
  EXPECT_TRUE(Sparse.op().Sparse);
  EXPECT_EQ(roleList(Sparse.op()), "accumulators,aDesc,bDesc,sparseMeta,sparseSelector,scaleD,"
                                   "immScaleA,immScaleB,immTransA,immTransB");
}

TEST(SyncOpWgmma, FenceCommitWait) {
  Line Fence("wgmma.fence.sync.aligned;");
  ASSERT_TRUE(Fence.result().isDecoded()) << Fence.describe();
  EXPECT_EQ(Fence.op().Kind, SyncKind::WgmmaFence);
  Line Commit("wgmma.commit_group.sync.aligned;");
  ASSERT_TRUE(Commit.result().isDecoded()) << Commit.describe();
  EXPECT_EQ(Commit.op().Kind, SyncKind::WgmmaCommitGroup);
  Line Wait("wgmma.wait_group.sync.aligned 1;");
  ASSERT_TRUE(Wait.result().isDecoded()) << Wait.describe();
  EXPECT_EQ(Wait.op().Kind, SyncKind::WgmmaWaitGroup);
  EXPECT_EQ(Wait.op().waitN().integerValue(), 1);
}

struct Malformed {
  std::string Text;
  SyncFamily Family;
  const char *ReasonPart;
};

/// gtest prints the line a case is about, not the struct's bytes.
void PrintTo(const Malformed &C, std::ostream *OS) { *OS << C.Text; }

class SyncOpTensorCoreMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SyncOpTensorCoreMalformed, IsUnrecognizedWithAReason) {
  Line L(GetParam().Text);
  ASSERT_TRUE(L.parsed()) << GetParam().Text;
  ASSERT_TRUE(L.result().isUnrecognized()) << L.describe();
  EXPECT_EQ(L.result().family(), GetParam().Family);
  std::string Reason;
  llvm::raw_string_ostream OS(Reason);
  L.result().printReason(OS);
  EXPECT_NE(OS.str().find(GetParam().ReasonPart), std::string::npos) << OS.str();
}

constexpr SyncFamily T5 = SyncFamily::Tcgen05;
constexpr SyncFamily Wg = SyncFamily::Wgmma;

INSTANTIATE_TEST_SUITE_P(
    SyncOp, SyncOpTensorCoreMalformed,
    ::testing::Values(
        Malformed{"tcgen05.alloc.sync.aligned.shared::cta.b32 [%r2], 32;", T5, "'.cta_group"},
        Malformed{"tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [%r2], 32;", T5,
                  "'.sync.aligned'"},
        Malformed{"tcgen05.commit.mbarrier::arrive::one.shared::cluster.b64 [%r1];", T5,
                  "'.cta_group"},
        Malformed{"tcgen05.commit.cta_group::1.shared::cluster.b64 [%r1];", T5,
                  "'.mbarrier::arrive::one'"},
        Malformed{"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster."
                  "multicast::cluster.b64 [%r1];",
                  T5, "ctaMask"},
        Malformed{"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 "
                  "[%r1], %rs1;",
                  T5, "[mbar]"},
        Malformed{"tcgen05.wait::ld;", T5, "'.sync.aligned'"},
        Malformed{"tcgen05.fence::before_thread_sync.sync;", T5, "unknown modifier"},
        Malformed{"tcgen05.shift.cta_group::1 [%r3];", T5, "'.down'"},
        Malformed{"tcgen05.mma.ws.cta_group::2.kind::f16 [%r3], %rd1, %rd2, %r4, %p1;", T5,
                  "'.cta_group::1' only"},
        Malformed{"tcgen05.mma.kind::f16 [%r3], %rd1, %rd2, %r4, %p1;", T5, "'.cta_group"},
        Malformed{"tcgen05.mma.cta_group::1.kind::f16.foo [%r3], %rd1, %rd2, %r4, %p1;", T5,
                  "unknown modifier"},
        Malformed{"tcgen05.mma.cta_group::1.kind::mxf8f6f4 [%r3], %rd1, %rd2, %r4, [%r5], "
                  "[%r6], %p1;",
                  T5, "'.block_scale'"},
        Malformed{"tcgen05.mma.cta_group::1.kind::f16.block_scale [%r3], %rd1, %rd2, %r4, "
                  "[%r5], [%r6], %p1;",
                  T5, "mx kinds"},
        Malformed{"tcgen05.mma.cta_group::1.kind::f8f6f4 [%r3], %rd1, %rd2, %r4, %p1, 1;", T5,
                  "scale-input-d"},
        Malformed{"tcgen05.mma.cta_group::1.kind::f16.ashift [%r3], %rd1, %rd2, %r4, %p1;", T5,
                  "tensor memory"},
        Malformed{"tcgen05.mma.sp.ws.cta_group::1.kind::f16 [%r3], %rd1, %rd2, [%r5], %r4, %p1;",
                  T5, "unknown modifier"},
        Malformed{"tcgen05.ld.sync.aligned.32x32b.x3.b32 {%r4, %r5, %r6}, [%r3];", T5,
                  "repeat count"},
        Malformed{"tcgen05.ld.sync.aligned.32x32b.b32 {%r4, %r5}, [%r3];", T5, "repeat count"},
        Malformed{"tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r4, %r5}, [%r3];", T5,
                  "half-split"},
        Malformed{"tcgen05.cp.cta_group::1.64x128b [%r3], %rd1;", T5, "'.warpx2"},
        Malformed{"tcgen05.frobnicate.sync.aligned;", T5, "unknown tcgen05 operation"},
        Malformed{"wgmma.mma_async.sync.aligned.m64n17k16.f32.f16.f16 " + registers("%f", 8) +
                      ", %rd1, %rd2, %p1, 1, 1, 0, 0;",
                  Wg, "shape"},
        Malformed{"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16 " + registers("%f", 8) +
                      ", %rd1, %rd2, %p1, 1, 1, 0, 0;",
                  Wg, "type combination"},
        Malformed{"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " + registers("%f", 8) +
                      ", %rd1, %rd2, %p1, 1, 1;",
                  Wg, "number of operands"},
        Malformed{"wgmma.mma_async.sync.aligned.m64n16k32.f32.f16.f16 " + registers("%f", 8) +
                      ", %rd1, %rd2, %p1, 1, 1, 0, 0;",
                  Wg, "shape"},
        Malformed{"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " + registers("%f", 8) +
                      ", %rd1, %rd2, %p1, %r1, 1, 0, 0;",
                  Wg, "immediates"},
        Malformed{"wgmma.fence;", Wg, "'.sync.aligned'"},
        Malformed{"wgmma.wait_group.sync.aligned %r3;", Wg, "immediate"},
        Malformed{"wgmma.wait_group.sync.aligned;", Wg, "immediate"}));

} // namespace
