// The protocol layer on small kernels: the shapes of unrolled rings and of the shared-memory
// matrix descriptors compilers write, checked on the IR (closed forms, buffer slots), not on
// the text.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/ProtocolPrinter.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

std::optional<uint64_t> evalAtIteration(const Expr *E, const Expr *Iter, uint64_t It) {
  return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
    return L == Iter ? std::optional<uint64_t>(It) : std::nullopt;
  });
}

// A 3-stage ring advanced twice per iteration (a loop unrolled by two over
// `s = (s + 1) % 3`, each % a magic-number division), the phase flipped by each copy that wraps.
const char UnrolledRing[] = R"(
.visible .entry k(.param .u32 k_param_0)
.maxntid 128
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .shared .align 8 .b8 full[24];
  ld.param.u32 %r1, [k_param_0];
  shr.u32 %r2, %r1, 6;
  setp.eq.s32 %p1, %r2, 0;
  @%p1 bra DONE;
  mov.u32 %r3, 0;
  mov.u32 %r10, 0;
  mov.u32 %r11, 1;
LOOP:
  shl.b32 %r12, %r10, 3;
  mov.u32 %r13, full;
  add.s32 %r14, %r13, %r12;
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r11;   // first copy
  add.s32 %r20, %r10, 1;
  mul.hi.u32 %r21, %r20, 0xAAAAAAAB;
  shr.u32 %r22, %r21, 1;
  mul.lo.s32 %r23, %r22, 3;
  sub.s32 %r24, %r20, %r23;
  setp.eq.s32 %p3, %r10, 2;
  selp.u32 %r25, 1, 0, %p3;
  add.s32 %r26, %r24, 1;
  mul.hi.u32 %r27, %r26, 0xAAAAAAAB;
  shr.u32 %r28, %r27, 1;
  mul.lo.s32 %r29, %r28, 3;
  setp.eq.s32 %p4, %r24, 2;
  selp.u32 %r30, 1, 0, %p4;
  xor.b32 %r31, %r25, %r30;
  xor.b32 %r11, %r11, %r31;
  sub.s32 %r10, %r26, %r29;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r2;
  @%p2 bra LOOP;
DONE:
  ret;
}
)";

TEST(ProtocolInduction, RingAdvancedTwicePerIterationStepsByTwo) {
  Analyzed A(UnrolledRing);
  ASSERT_EQ(A.loops().size(), 1u);
  const LoopSummary &S = A.values().loopSummary(0);
  ExprContext &C = A.ctx();
  const InductionVar *Stage = nullptr, *Phase = nullptr;
  for (const InductionVar &IV : S.Inductions) {
    if (A.values().registerName(IV.Register) == "%r10")
      Stage = &IV;
    if (A.values().registerName(IV.Register) == "%r11")
      Phase = &IV;
  }
  ASSERT_NE(Stage, nullptr);
  EXPECT_EQ(Stage->Kind, InductionKind::Ring);
  EXPECT_EQ(Stage->Step, C.constant(2, 32));
  EXPECT_EQ(Stage->Modulus, C.constant(3, 32));
  ASSERT_NE(Phase, nullptr);
  EXPECT_EQ(Phase->Kind, InductionKind::Parity);
  // Iteration i starts at k-tile 2i: stage 2i % 3, parity 1 ^ (2i / 3 % 2).
  const Expr *I = C.iterationVar(0);
  for (uint64_t It = 0; It < 12; ++It) {
    EXPECT_EQ(evalAtIteration(Stage->ClosedForm, I, It), (2 * It) % 3) << "iteration " << It;
    EXPECT_EQ(evalAtIteration(Phase->ClosedForm, I, It), 1 ^ ((2 * It / 3) & 1))
        << "iteration " << It;
  }
}

TEST(ProtocolExpr, MulWideByMagicNumberIsDivision) {
  Analyzed A(R"(
.visible .entry k(.param .u32 k_param_0)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u32 %r1, [k_param_0];
  mul.wide.u32 %rd1, %r1, 0xAAAAAAAB;
  shr.u64 %rd2, %rd1, 33;
  cvt.u32.u64 %r2, %rd2;
  mov.u32 %r3, %r2;   // use
  ret;
}
)");
  const Expr *K = A.param("k_param_0");
  EXPECT_EQ(A.before("// use", "%r2"), A.ctx().udiv(K, A.ctx().constant(3, 32)))
      << str(A.before("// use", "%r2"));
}

// A 2-stage ring of A tiles (16 KiB each, from a 1024-aligned dynamic base) that TMA fills and
// two consumer warpgroups read through wgmma descriptors. As nvcc writes them, the start
// address is masked with 261120 (the 0x3FFFF of the encoding without the ten bits the
// alignment makes zero), and each warpgroup reads its own 8 KiB half: tid / 128 * 8192 - 8192.
std::string descriptorKernel(const char *Mask) {
  std::string Accumulators;
  for (unsigned I = 0; I < 32; ++I)
    Accumulators += (I ? ", %f" : "%f") + std::to_string(I);
  return std::string(R"(
.extern .shared .align 16 .b8 smem[];
.visible .entry k(.param .u32 k_param_0, .param .align 64 .b8 k_param_1[128])
.maxntid 384
{
  .reg .pred %p<8>;
  .reg .b32 %r<60>;
  .reg .b64 %rd<20>;
  .reg .f32 %f<40>;
  mov.u64 %rd1, k_param_1;
  ld.param.u32 %r1, [k_param_0];
  shr.u32 %r2, %r1, 6;
  mov.u32 %r4, %tid.x;
  mov.u32 %r5, smem;
  add.s32 %r6, %r5, 1023;
  and.b32 %r7, %r6, -1024;
  add.s32 %r8, %r7, 32768;
  setp.ne.s32 %p1, %r4, 0;
  @%p1 bra SKIPINIT;
  mbarrier.init.shared::cta.b64 [%r8], 1;
  add.s32 %r9, %r8, 8;
  mbarrier.init.shared::cta.b64 [%r9], 1;
SKIPINIT:
  bar.sync 0;
  setp.eq.s32 %p2, %r2, 0;
  @%p2 bra DONE;
  setp.gt.u32 %p3, %r4, 127;
  @%p3 bra CONSUMER;
  @%p1 bra DONE;
  mov.u32 %r10, 0;
PRODUCE:
  and.b32 %r11, %r10, 1;
  shl.b32 %r12, %r11, 14;
  add.s32 %r13, %r7, %r12;
  shl.b32 %r14, %r11, 3;
  add.s32 %r15, %r8, %r14;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r15], 16384;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r13], [%rd1, {%r10, %r10}], [%r15];
  add.s32 %r10, %r10, 1;
  setp.lt.u32 %p4, %r10, %r2;
  @%p4 bra PRODUCE;
  bra.uni DONE;
CONSUMER:
  mov.u32 %r20, 0;
  shr.u32 %r21, %r4, 7;
  shl.b32 %r22, %r21, 13;
CONSUME:
  and.b32 %r23, %r20, 1;
  shl.b32 %r24, %r23, 14;
  add.s32 %r25, %r7, %r24;
  add.s32 %r26, %r25, %r22;
  add.s32 %r27, %r26, -8192;
  and.b32 %r28, %r27, )") + Mask + R"(;
  shr.u32 %r29, %r28, 4;
  cvt.u64.u32 %rd5, %r29;
  or.b64 %rd6, %rd5, 4611686293305360384;
  setp.ne.s32 %p6, %r20, 0;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {)" + Accumulators + R"(}, %rd6, %rd6, %p6, 1, 1, 0, 0;   // mma
  add.s32 %r20, %r20, 1;
  setp.lt.u32 %p5, %r20, %r2;
  @%p5 bra CONSUME;
DONE:
  ret;
}
)";
}

struct DescriptorRead {
  const Event *Mma = nullptr;
  std::unique_ptr<Protocol> P;
};

DescriptorRead buildAndFindMma(Analyzed &A) {
  DescriptorRead Out;
  Out.P = buildProtocol(A.module(), *A.module().function("k"));
  for (const Event &E : Out.P->Events)
    if (E.Kind == EventKind::Mma)
      Out.Mma = &E;
  return Out;
}

TEST(ProtocolBuffers, DescriptorStartAddressReadsTheStageBuffer) {
  Analyzed A(descriptorKernel("261120"));
  DescriptorRead R = buildAndFindMma(A);
  ASSERT_NE(R.Mma, nullptr);
  ASSERT_EQ(R.P->Buffers.size(), 1u);
  EXPECT_EQ(R.P->Buffers[0].Slots, 2u);
  EXPECT_EQ(R.P->Buffers[0].Stride, 16384u);
  ASSERT_EQ(R.Mma->Reads.size(), 2u);
  const BufferRef &Read = R.Mma->Reads[0];
  ASSERT_TRUE(Read.resolved()) << Read.Unresolved;
  EXPECT_EQ(Read.Buffer, 0u);
  // The warpgroups' halves start at the slot (warpgroup 1) and 8 KiB into it (warpgroup 2).
  EXPECT_EQ(Read.ByteOffset, 0);
  ASSERT_TRUE(Read.InSlot.known());
  ASSERT_TRUE(Read.Slot.known());
  // The slot is the consumer loop's k-tile modulo 2 (the protocol's expressions live in its
  // own analysis, and loops keep their numbers).
  const Expr *Iter = R.P->Analysis->context().iterationVar(A.loopOf("// mma"));
  for (uint64_t It = 0; It < 6; ++It)
    EXPECT_EQ(evalAtIteration(Read.Slot.E, Iter, It), It % 2)
        << "k-tile " << It << " of " << R.P->exprString(Read.Slot.E);
}

TEST(ProtocolBuffers, MaskThatDropsAddressBitsIsNotAStageRead) {
  // 0x3F000 clears bits 10 and 11, which a 1024-aligned tile address can have set: the masked
  // value is not the tile's address, so the read stays unresolved (with its reason).
  Analyzed A(descriptorKernel("258048"));
  DescriptorRead R = buildAndFindMma(A);
  ASSERT_NE(R.Mma, nullptr);
  ASSERT_FALSE(R.Mma->Reads.empty());
  EXPECT_FALSE(R.Mma->Reads[0].resolved());
  EXPECT_FALSE(R.Mma->Reads[0].Unresolved.empty());
}

// nvcc's start of a remainder loop, `K/64-1 < 3 ? 0 : (K/256*4-4)/4*4+4`, is K/256*4 for every
// K (below 256 both are 0, the subtraction wrapping back); a form that only holds under the
// loop's entry condition is taken with that condition and refused without it. The second
// question of each kind is answered from the protocol's memo.
TEST(ProtocolForms, ParameterExpressionsTakeTheirShortFormOnlyWhereTheyAgree) {
  Analyzed A(UnrolledRing);
  std::unique_ptr<Protocol> P = buildProtocol(A.module(), *A.module().function("k"));
  ExprContext &C = P->Analysis->context();
  const Expr *K = C.param("k_param_0", 0, 32);
  auto Num = [&](uint64_t V) { return C.constant(V, 32); };
  const Expr *Quarter = C.mul(C.udiv(K, Num(256)), Num(4));
  const Expr *Start =
      C.select(C.ult(C.sub(C.udiv(K, Num(64)), Num(1)), Num(3)), Num(0),
               C.add(C.mul(C.udiv(C.sub(Quarter, Num(4)), Num(4)), Num(4)), Num(4)));
  EXPECT_EQ(simplifyInvariants(*P, Start), Quarter) << P->exprString(simplifyInvariants(*P, Start));
  // Asked again (the listing asks once per operation): the same answer.
  EXPECT_EQ(simplifyInvariants(*P, Start), Quarter);

  // K < 128 ? 7 : K/64*2 is K/64*2 only where 128 <= K (sizes are sampled from 64 up, so
  // 64 and 96 tell the two apart).
  const Expr *Tiles = C.mul(C.udiv(K, Num(64)), Num(2));
  const Expr *Guarded = C.select(C.ult(K, Num(128)), Num(7), Tiles);
  const Expr *Entered = C.ule(Num(128), K);
  EXPECT_EQ(simplifyInvariants(*P, Guarded, Entered), Tiles)
      << P->exprString(simplifyInvariants(*P, Guarded, Entered));
  EXPECT_EQ(simplifyInvariants(*P, Guarded), Guarded)
      << P->exprString(simplifyInvariants(*P, Guarded));
  EXPECT_EQ(simplifyInvariants(*P, Guarded, C.boolean(true)), Guarded);
}

} // namespace
