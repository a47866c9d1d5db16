// Values of registers: instruction semantics, parameters and symbols, predicated writes, joins
// (selects on the branch condition, phis), mapa, elect.sync, shuffles.
#include "AnalyzerTestSupport.h"

#include "gtest/gtest.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

TEST(ValuesTest, ArithmeticOnThreadIdsAndParameters) {
  Analyzed A(R"(
.visible .entry k(.param .u32 k_param_0, .param .u64 k_param_1)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<6>;
  ld.param.u32 %r1, [k_param_0];
  ld.param.u64 %rd1, [k_param_1];
  mov.u32 %r2, %tid.x;
  shr.u32 %r3, %r2, 5;
  and.b32 %r4, %r2, 31;
  shl.b32 %r5, %r3, 5;
  add.s32 %r6, %r5, %r4;
  mad.lo.s32 %r7, %r3, 4, %r1;
  mul.wide.u32 %rd2, %r1, 64;
  cvt.u32.u64 %r8, %rd2;
  sub.s32 %r9, %r1, %r7;
  bfe.u32 %r10, %r2, 5, 2;
  add.s32 %r11, %r1, 63;
  shr.u32 %r12, %r11, 6;
  min.u32 %r13, %r12, 8;
  neg.s32 %r14, %r1;
  div.u32 %r15, %r1, %r12;
  mul.hi.u32 %r16, %r1, %r2;
  ret;                                  // end
}
)");
  ExprContext &C = A.ctx();
  const Expr *K = A.param("k_param_0"), *T = A.tid();
  auto V = [&](const char *R) { return A.before("// end", R); };
  EXPECT_EQ(V("%r1"), K);
  EXPECT_EQ(V("%rd1"), A.ctx().param("k_param_1", 0, 64));
  EXPECT_EQ(V("%r3"), C.udiv(T, C.constant(32, 32)));
  EXPECT_EQ(V("%r6"), T);
  EXPECT_EQ(V("%r7"), C.add(C.mul(C.udiv(T, C.constant(32, 32)), C.constant(4, 32)), K));
  EXPECT_EQ(V("%rd2"), C.mul(C.zext(K, 64), C.constant(64, 64)));
  EXPECT_EQ(V("%r8"), C.mul(K, C.constant(64, 32)));
  EXPECT_EQ(V("%r9"), C.neg(C.mul(C.udiv(T, C.constant(32, 32)), C.constant(4, 32))));
  // bfe.u32 x, 5, 2 is (x >> 5) & 3.
  EXPECT_EQ(V("%r10"), C.urem(C.udiv(T, C.constant(32, 32)), C.constant(4, 32)));
  EXPECT_EQ(V("%r12")->str(), "(k_param_0 + 63) / 64");
  EXPECT_EQ(V("%r13")->str(), "min((k_param_0 + 63) / 64, 8)");
  EXPECT_EQ(V("%r14"), C.neg(K));
  EXPECT_EQ(V("%r15"), C.udiv(K, V("%r12")));
  // The high half of a product of unknowns is kept as what it is.
  EXPECT_EQ(V("%r16")->kind(), ExprKind::MulHiU);
}

TEST(ValuesTest, SignedHighHalfOfAProductEvaluatesLikeTheHardware) {
  // Triton divides its i32 sizes by a constant with mul.hi.s32 (tiles / 132 as `mul.hi.s32
  // %r, %x, 1041204193`, then shifts): its value must evaluate on every launch, negative
  // operands included (tiles - %ctaid.x past the grid), as the hardware computes it.
  Analyzed A(R"(
.visible .entry k(.param .u32 x, .param .u32 y)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u32 %r1, [x];
  ld.param.u32 %r2, [y];
  mul.hi.s32 %r3, %r1, 1041204193;
  mul.hi.s32 %r4, %r1, %r2;
  mul.hi.s64 %rd3, %rd1, %rd2;
  ret;                                  // end
}
)");
  const Expr *X = A.param("x"), *Y = A.param("y");
  auto Eval = [&](const char *R, int32_t XV, int32_t YV) {
    return ExprContext::evaluate(A.before("// end", R), [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == X)
        return uint32_t(XV);
      if (L == Y)
        return uint32_t(YV);
      return std::nullopt;
    });
  };
  for (int32_t XV : {0, 1, 131, 132, 4095, 65536, -1, -132, -4096, INT32_MAX, INT32_MIN})
    for (int32_t YV : {0, 1, -1, 7, -7, 1041204193, INT32_MAX, INT32_MIN}) {
      uint32_t Want = uint32_t(uint64_t(int64_t(XV) * int64_t(YV)) >> 32);
      EXPECT_EQ(Eval("%r4", XV, YV), Want) << XV << " * " << YV;
    }
  for (int32_t XV : {0, 131, 132, 263, 264, 100000, -1, -131, -132, -133})
    EXPECT_EQ(Eval("%r3", XV, 0), uint32_t(uint64_t(int64_t(XV) * 1041204193) >> 32)) << XV;
  // (An operand with no value stays unknown: %rd1, %rd2 are never written.)
  EXPECT_FALSE(Eval("%rd3", 1, 1).has_value());
}

TEST(ValuesTest, SharedSymbolsAndAddresses) {
  Analyzed A(R"(
.extern .shared .align 1024 .b8 smem[];
.visible .entry k()
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 8 .b8 full[32];
  mov.u32 %r1, full;
  add.s32 %r2, %r1, 8;
  mov.u32 %r3, smem+16;
  mov.u64 %rd1, full;
  cvta.shared.u64 %rd2, %rd1;
  cvt.u32.u64 %r4, %rd2;
  mbarrier.arrive.shared::cta.b64 _, [%r2+16];     // arrive
  ld.shared.u32 %r5, [full+4];                      // load
  ret;                                              // end
}
)");
  ExprContext &C = A.ctx();
  const Expr *Full = C.symbol("full", SymbolSpace::Shared, 32);
  EXPECT_EQ(A.before("// end", "%r2"), C.add(Full, C.constant(8, 32)));
  EXPECT_EQ(A.before("// end", "%r3"),
            C.add(C.symbol("smem", SymbolSpace::Shared, 32), C.constant(16, 32)));
  // cvta and the 64-to-32-bit conversion keep the symbol: one barrier identity.
  EXPECT_EQ(A.before("// end", "%r4"), Full);
  // Address operands are base + offset.
  EXPECT_EQ(A.values().operand(A.inst("// arrive"), 1), C.add(Full, C.constant(24, 32)));
  // A load from shared memory is a leaf of its own, with its address.
  const Expr *L = A.before("// end", "%r5");
  ASSERT_TRUE(L->is(ExprKind::Load));
  EXPECT_EQ(L->op(0), C.add(Full, C.constant(4, 32)));
  EXPECT_TRUE(A.values().isDestination(A.inst("// load"), 0));
  EXPECT_FALSE(A.values().isDestination(A.inst("// arrive"), 1));
}

TEST(ValuesTest, PredicatedWritesAreSelectsOnTheGuard) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<3>;
  .reg .b32 %r<6>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  mov.u32 %r2, 5;
  @%p1 mov.u32 %r2, 7;
  @!%p1 add.s32 %r2, %r2, 100;
  ret;                                  // end
}
)");
  ExprContext &C = A.ctx();
  const Expr *Low = C.ult(A.tid(), C.constant(32, 32));
  EXPECT_EQ(A.before("// end", "%r2"), C.select(Low, C.constant(7, 32), C.constant(105, 32)));
  EXPECT_EQ(A.values().guard(A.inst("@!%p1")), C.bitNot(Low));
}

TEST(ValuesTest, DiamondJoinIsASelectOnTheBranch) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<6>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.eq.s32 %p1, %r2, 0;
  @%p1 bra THEN;
  add.s32 %r3, %r1, 1;
  bra.uni JOIN;
THEN:
  mov.u32 %r3, 0;
JOIN:
  setp.eq.s32 %p2, %r1, 3;
  @%p2 mov.u32 %r4, 9;                 // triangle source
  ret;                                  // end
}
)");
  ExprContext &C = A.ctx();
  const Expr *IsZero = C.eq(A.tid(), C.constant(0, 32));
  EXPECT_EQ(A.before("// end", "%r3"),
            C.select(IsZero, C.constant(0, 32), C.add(A.param("n"), C.constant(1, 32))));
}

TEST(ValuesTest, JoinsThatAreNotOneBranchArePhisWithTheirIncomingValues) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<6>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  ts: .branchtargets C0, C1, C2;
  brx.idx %r2, ts;
C0:
  mov.u32 %r3, 10;
  bra.uni J;
C1:
  mov.u32 %r3, 20;
  bra.uni J;
C2:
  mov.u32 %r3, 30;
J:
  ret;                                  // end
}
)");
  const Expr *V = A.values().valueBefore(A.inst("// end"), *A.values().registerAt(A.inst("// end"),
                                                                                   "%r3"));
  ASSERT_TRUE(V->is(ExprKind::Phi));
  const PhiInfo *Info = A.values().phiInfo(V);
  ASSERT_NE(Info, nullptr);
  EXPECT_EQ(Info->Incoming.size(), 3u);
  EXPECT_EQ(Info->Loop, NoIndex);
}

TEST(ValuesTest, ReadBeforeWriteIsOpaqueAndSaysSo) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  add.s32 %r1, %r2, 1;
  ret;                                  // end
}
)");
  const Expr *V = A.before("// end", "%r2");
  ASSERT_TRUE(V->is(ExprKind::Opaque));
  EXPECT_EQ(V->name(), "%r2 is read before it is written");
}

TEST(ValuesTest, ElectMapaAndShuffles) {
  Analyzed A(R"(
.visible .entry k()
.maxntid 256
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .shared .align 8 .b8 bar[8];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;       // uniform shuffle
  shfl.sync.idx.b32 %r4, %r1, 0, 31, -1;       // lane-varying shuffle
  mov.u32 %r5, 0;
  {
  .reg .b32 %rx;
  .reg .pred %px;
  elect.sync %rx|%px, -1;
  @%px mov.s32 %r5, 1;
  }
  setp.eq.s32 %p1, %r5, 0;
  mov.u32 %r6, bar;
  mov.u32 %r7, %cluster_ctarank;
  xor.b32 %r8, %r7, 1;
  mapa.shared::cluster.u32 %r9, %r6, %r8;
  ret;                                          // end
}
)");
  ExprContext &C = A.ctx();
  EXPECT_EQ(A.before("// end", "%r3"), C.udiv(A.tid(), C.constant(32, 32)));
  EXPECT_TRUE(A.before("// end", "%r4")->is(ExprKind::Opaque));
  const Expr *P1 = A.before("// end", "%p1");
  ASSERT_TRUE(P1->is(ExprKind::Not));
  EXPECT_TRUE(P1->op(0)->is(ExprKind::Elect));
  const Expr *Peer = A.before("// end", "%r9");
  ASSERT_TRUE(Peer->is(ExprKind::MapA));
  EXPECT_EQ(Peer->op(0), C.symbol("bar", SymbolSpace::Shared, 32));
  EXPECT_EQ(Peer->op(1),
            C.bitXor(C.specialRegister(SpecialRegister::ClusterCtaRank), C.constant(1, 32)));
}

TEST(ValuesTest, FloatingPointAndTensorResultsAreOpaquePerInstruction) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .f32 %f<4>;
  .reg .b32 %r<4>;
  mov.f32 %f1, 0f3F800000;
  add.f32 %f2, %f1, %f1;            // first
  add.f32 %f3, %f1, %f1;            // second
  ret;                              // end
}
)");
  const Expr *F2 = A.before("// end", "%f2"), *F3 = A.before("// end", "%f3");
  ASSERT_TRUE(F2->is(ExprKind::Opaque));
  EXPECT_EQ(F2->name(), "result of add.f32");
  EXPECT_NE(F2, F3);
  EXPECT_EQ(A.before("// end", "%f1"), A.ctx().constant(0x3F800000, 32));
}

TEST(ValuesTest, EdgeConditionsOfBranches) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  mov.u32 %r1, %tid.x;
  setp.gt.u32 %p1, %r1, 31;
  @%p1 bra HIGH;
  mov.u32 %r2, 1;                // low
  ret;
HIGH:
  mov.u32 %r2, 2;                // high
  ret;
}
)");
  BlockId From = A.cfg().entry();
  ExprContext &C = A.ctx();
  EXPECT_EQ(A.values().edgeCondition(From, A.blockOf("// high")),
            C.ule(C.constant(32, 32), A.tid()));
  EXPECT_EQ(A.values().edgeCondition(From, A.blockOf("// low")),
            C.ult(A.tid(), C.constant(32, 32)));
}

} // namespace
