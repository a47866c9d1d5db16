// Induction variables: linear counters, ring counters in each shape compilers write, phase
// bits, first-iteration flags, unrolled loops, and rings carried across a persistent loop.
#include "AnalyzerTestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

/// The last induction the loop summary has for register Reg (a register can have several,
/// the later ones refined), or nullptr.
const InductionVar *inductionOf(const ValueAnalysis &V, const LoopSummary &S,
                                llvm::StringRef Reg) {
  const InductionVar *Found = nullptr;
  for (const InductionVar &IV : S.Inductions)
    if (V.registerName(IV.Register) == Reg)
      Found = &IV;
  return Found;
}

/// What the tests of gated rings read at the wait marked Mark: its loop's iteration number,
/// the ring %r12 (gated) and its phase %r13 (a parity), and the wait's address and parity.
struct GatedWait {
  const Expr *I = nullptr, *Addr = nullptr, *Parity = nullptr;
  const InductionVar *Ring = nullptr, *Phase = nullptr;
};
void readGatedWait(Analyzed &A, const char *Mark, GatedWait &G) {
  const ValueAnalysis &V = A.values();
  InstId Wait = A.inst(Mark);
  LoopId L = A.loopOf(Mark);
  G.I = A.ctx().iterationVar(L);
  G.Ring = inductionOf(V, V.loopSummary(L), "%r12");
  G.Phase = inductionOf(V, V.loopSummary(L), "%r13");
  ASSERT_NE(G.Ring, nullptr);
  ASSERT_NE(G.Phase, nullptr);
  EXPECT_EQ(G.Ring->Kind, InductionKind::Gated);
  EXPECT_EQ(G.Phase->Kind, InductionKind::Parity);
  G.Addr = V.closedForm(V.operand(Wait, 1));
  G.Parity = V.closedForm(V.operand(Wait, 2));
  ASSERT_NE(G.Addr, nullptr);
  ASSERT_NE(G.Parity, nullptr);
}

/// A do-while loop over K/64 k-tiles whose body is Update (in terms of %r10 = stage,
/// %r11 = phase) and that waits on full[stage] with the phase.
std::string ringKernel(const char *Update) {
  return std::string(R"(
.visible .entry k(.param .u32 k_param_0)
.maxntid 128
{
  .reg .pred %p<8>;
  .reg .b32 %r<30>;
  .shared .align 8 .b8 full[32];
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
  mbarrier.arrive.shared::cta.b64 _, [%r14];   // body
)") + Update + R"(
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r2;
  @%p2 bra LOOP;
DONE:
  ret;
}
)";
}

/// E in iteration It of the loop whose iteration number is I, with every shared symbol at
/// 0x1000.
std::optional<uint64_t> atIteration(const Expr *E, const Expr *I, uint64_t It) {
  return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L == I)
      return It;
    if (L->is(ExprKind::Symbol))
      return 0x1000;
    return std::nullopt;
  });
}

struct RingCase {
  const char *Name;
  const char *Update;
};

class RingShapes : public ::testing::TestWithParam<RingCase> {};

TEST_P(RingShapes, StageIsStartPlusIterationModuloStagesAndPhaseFlipsOnWrap) {
  Analyzed A(ringKernel(GetParam().Update));
  ASSERT_EQ(A.loops().size(), 1u);
  const LoopSummary &S = A.values().loopSummary(0);
  ExprContext &C = A.ctx();
  const Expr *I = C.iterationVar(0);
  const InductionVar *Stage = inductionOf(A.values(), S, "%r10");
  const InductionVar *Phase = inductionOf(A.values(), S, "%r11");
  ASSERT_NE(Stage, nullptr) << GetParam().Name;
  EXPECT_EQ(Stage->Kind, InductionKind::Ring);
  EXPECT_EQ(Stage->Modulus, C.constant(4, 32));
  EXPECT_EQ(Stage->ClosedForm, C.urem(I, C.constant(4, 32)));
  EXPECT_TRUE(Stage->Conditions.empty()) << "the start 0 is below 4";
  ASSERT_NE(Phase, nullptr) << GetParam().Name;
  EXPECT_EQ(Phase->Kind, InductionKind::Parity);
  EXPECT_EQ(Phase->Ring, static_cast<unsigned>(Stage - S.Inductions.data()));
  // parity = 1 ^ ((i / 4) & 1)
  EXPECT_EQ(Phase->ClosedForm,
            C.bitXor(C.constant(1, 32), C.urem(C.udiv(I, C.constant(4, 32)), C.constant(2, 32))));
  // Check the closed forms against the loop by evaluation: iteration i waits on stage i % 4
  // with phase 1 ^ (i / 4 % 2).
  for (uint64_t It = 0; It < 12; ++It) {
    auto At = [&](const Expr *E) {
      return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
        return L == I ? std::optional<uint64_t>(It) : std::nullopt;
      });
    };
    EXPECT_EQ(At(Stage->ClosedForm), It % 4);
    EXPECT_EQ(At(Phase->ClosedForm), 1 ^ ((It / 4) & 1));
  }
  // The barrier address in the body is full + stage * 8.
  const Expr *Addr = A.values().closedForm(A.values().operand(A.inst("// body"), 1));
  EXPECT_EQ(Addr, C.add(C.symbol("full", SymbolSpace::Shared, 32),
                        C.mul(C.urem(I, C.constant(4, 32)), C.constant(8, 32))));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RingShapes,
    ::testing::Values(
        // nvcc: s = (s + 1) & 3; p ^= (s_old == 3)
        RingCase{"and-mask", R"(
  add.s32 %r20, %r10, 1;
  and.b32 %r21, %r20, 3;
  setp.eq.s32 %p3, %r10, 3;
  selp.u32 %r22, 1, 0, %p3;
  xor.b32 %r11, %r11, %r22;
  mov.u32 %r10, %r21;)"},
        // s = (s + 1 == 4) ? 0 : s + 1 with selp; p ^= (s + 1 == 4)
        RingCase{"selp", R"(
  add.s32 %r20, %r10, 1;
  setp.eq.s32 %p3, %r20, 4;
  selp.b32 %r10, 0, %r20, %p3;
  selp.u32 %r22, 1, 0, %p3;
  xor.b32 %r11, %r11, %r22;)"},
        // s = (s + 1) % 4; p ^= (s_new == 0)
        RingCase{"rem", R"(
  add.s32 %r20, %r10, 1;
  rem.u32 %r10, %r20, 4;
  setp.eq.s32 %p3, %r10, 0;
  selp.u32 %r22, 1, 0, %p3;
  xor.b32 %r11, %r11, %r22;)"},
        // s + 1 >= 4 ? 0 : s + 1 written as an unsigned compare; p = p ^ 1 under it
        RingCase{"compare", R"(
  add.s32 %r20, %r10, 1;
  setp.gt.u32 %p3, %r20, 3;
  selp.b32 %r10, 0, %r20, %p3;
  xor.b32 %r23, %r11, 1;
  selp.b32 %r11, %r23, %r11, %p3;)"},
        // The CUTLASS pipeline state as a branch: if (++s == 4) { s = 0; p ^= 1; }
        RingCase{"diamond", R"(
  add.s32 %r10, %r10, 1;
  setp.ne.s32 %p3, %r10, 4;
  @%p3 bra NOWRAP;
  mov.u32 %r10, 0;
  xor.b32 %r11, %r11, 1;
NOWRAP:)"}),
    [](const ::testing::TestParamInfo<RingCase> &Info) {
      std::string Name = Info.param.Name;
      for (char &Ch : Name)
        if (Ch == '-')
          Ch = '_';
      return Name;
    });

TEST(InductionTest, LinearCountersAndFirstIterationFlags) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 100;
  mov.pred %p1, -1;
LOOP:
  add.s32 %r2, %r2, 64;              // body
  add.s32 %r3, %r3, -3;
  @%p1 mov.u32 %r4, 1;
  mov.pred %p1, 0;
  setp.lt.u32 %p2, %r2, %r1;
  @%p2 bra LOOP;
  ret;
}
)");
  ExprContext &C = A.ctx();
  const Expr *I = C.iterationVar(0);
  EXPECT_EQ(A.before("// body", "%r2"), C.mul(I, C.constant(64, 32)));
  EXPECT_EQ(A.before("// body", "%r3"), C.sub(C.constant(100, 32), C.mul(I, C.constant(3, 32))));
  EXPECT_EQ(A.before("// body", "%p1"), C.eq(I, C.constant(0, 32)));
  const LoopSummary &S = A.values().loopSummary(0);
  const InductionVar *Flag = nullptr;
  for (const InductionVar &IV : S.Inductions)
    if (A.values().registerName(IV.Register) == "%p1")
      Flag = &IV;
  ASSERT_NE(Flag, nullptr);
  EXPECT_EQ(Flag->Kind, InductionKind::FirstIteration);
  EXPECT_EQ(Flag->Next, C.boolean(false));
}

TEST(InductionTest, APhaseFlippedByTheLowBitsOfTheCounterFollowsItsPeriods) {
  // `if (k % S == S - 1) phase ^= 1` with no register for k % S: nvcc writes it as
  // `phase ^= k & 1` for S = 2 (tests/corpus/nvcc/ws_cluster.cu); the phase before
  // iteration i is then (i / 2) & 1. With S = 4 and the flip `(k & 3) == 3`: (i / 4) & 1.
  // And a flip pattern that is no ring's wrap: flipped where k % 4 is 0 or 1.
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<6>;
  .reg .b32 %r<20>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 1;
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  and.b32 %r6, %r2, 1;                 // body
  xor.b32 %r3, %r3, %r6;
  and.b32 %r7, %r2, 3;
  setp.eq.u32 %p1, %r7, 3;
  selp.u32 %r8, 1, 0, %p1;
  xor.b32 %r4, %r4, %r8;
  setp.lt.u32 %p2, %r7, 2;
  selp.u32 %r9, 1, 0, %p2;
  xor.b32 %r5, %r5, %r9;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p3, %r2, %r1;
  @%p3 bra LOOP;
  ret;
}
)");
  const Expr *I = A.ctx().iterationVar(0);
  const Expr *Two = A.before("// body", "%r3"), *Four = A.before("// body", "%r4");
  const Expr *Pattern = A.before("// body", "%r5");
  uint64_t P2 = 1, P4 = 0, PP = 0;
  for (uint64_t It = 0; It < 40; ++It) {
    EXPECT_EQ(atIteration(Two, I, It), std::optional<uint64_t>(P2)) << It << ": " << str(Two);
    EXPECT_EQ(atIteration(Four, I, It), std::optional<uint64_t>(P4)) << It << ": " << str(Four);
    EXPECT_EQ(atIteration(Pattern, I, It), std::optional<uint64_t>(PP)) << It << ": " << str(Pattern);
    P2 ^= It & 1;
    P4 ^= (It & 3) == 3;
    PP ^= (It & 3) < 2;
  }
}

TEST(InductionTest, APhaseFlippedByASignedRemainderOfACounterFromZeroFollowsItsPeriods) {
  // nvcc -G keeps the stage as `rem.s32 %s, k, 2` and flips the phase in a block of its own
  // where s == 1 (tests/corpus/nvcc/ws_cluster.cu): from k = 0 the remainder is k's low bit,
  // and the phase before iteration i is (i / 2) & 1. A counter that starts below 0 gives a
  // negative remainder first (-1 % 2 is -1): no closed form there.
  auto Kernel = [](const char *Start) {
    return std::string(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<6>;
  .reg .b32 %r<20>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, )") + Start + R"(;
  mov.u32 %r3, 0;
LOOP:
  rem.s32 %r6, %r2, 2;                 // body
  setp.eq.s32 %p1, %r6, 1;
  @!%p1 bra NEXT;
  xor.b32 %r3, %r3, 1;
NEXT:
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p3, %r2, %r1;
  @%p3 bra LOOP;
  ret;
}
)";
  };
  Analyzed A(Kernel("0"));
  const Expr *I = A.ctx().iterationVar(0);
  const Expr *Phase = A.before("// body", "%r3");
  uint64_t P = 0;
  for (uint64_t It = 0; It < 20; ++It) {
    EXPECT_EQ(atIteration(Phase, I, It), std::optional<uint64_t>(P)) << It << ": " << str(Phase);
    P ^= It & 1;
  }
  Analyzed Negative(Kernel("-1"));
  const Expr *NoForm = Negative.before("// body", "%r3");
  EXPECT_FALSE(atIteration(NoForm, Negative.ctx().iterationVar(0), 3)) << str(NoForm);
}

TEST(InductionTest, AValueCarriedFromTheIterationBeforeTrailsItsCounter) {
  // `prev = w; ++w`, as nvcc keeps w - 1 for H6's hand-over loop: %r4 enters as the
  // parameter, then holds what %r3 was one iteration before; %r5 trails %r4 in turn. A
  // value carried from elsewhere (%r6 takes a load) is not an induction variable.
  Analyzed A(R"(
.visible .entry k(.param .u32 n, .param .u64 p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<2>;
  ld.param.u32 %r1, [n];
  ld.param.u64 %rd1, [p];
  add.s32 %r3, %r1, 1;
  mov.u32 %r4, %r1;
  mov.u32 %r5, 7;
  mov.u32 %r6, 0;
LOOP:
  mov.u32 %r7, %r3;                  // body
  ld.global.u32 %r8, [%rd1];
  add.s32 %r9, %r5, %r6;
  st.global.u32 [%rd1], %r9;
  add.s32 %r3, %r7, 1;
  mov.u32 %r5, %r4;
  mov.u32 %r4, %r7;
  mov.u32 %r6, %r8;
  setp.lt.u32 %p2, %r3, 100;
  @%p2 bra LOOP;
  ret;
}
)");
  ExprContext &C = A.ctx();
  const Expr *I = C.iterationVar(0);
  const Expr *N = A.before("// body", "%r1");
  const Expr *Zero = C.constant(0, 32), *One = C.constant(1, 32);
  // %r3 = n + 1 + i; %r4 = i == 0 ? n : n + 1 + (i - 1); %r5 = i == 0 ? 7 : %r4 at i - 1.
  EXPECT_EQ(A.before("// body", "%r3"), C.add(C.add(N, One), I));
  const Expr *R4 = C.select(C.eq(I, Zero), N, C.add(C.add(N, One), C.sub(I, One)));
  EXPECT_EQ(A.before("// body", "%r4"), R4);
  EXPECT_EQ(A.before("// body", "%r5"),
            C.select(C.eq(I, Zero), C.constant(7, 32), C.substitute(R4, I, C.sub(I, One))));
  const LoopSummary &S = A.values().loopSummary(0);
  unsigned Lagged = 0;
  for (const InductionVar &IV : S.Inductions) {
    Lagged += IV.Kind == InductionKind::Lagged;
    EXPECT_NE(A.values().registerName(IV.Register), "%r6");
  }
  EXPECT_EQ(Lagged, 2u);
  // Evaluated: %r4 in iteration i is n + i (n in the first), whatever the compiler's shape.
  for (uint64_t It = 0; It < 6; ++It) {
    auto At = [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == I)
        return It;
      if (L == N)
        return 40;
      return std::nullopt;
    };
    EXPECT_EQ(ExprContext::evaluate(R4, At), 40 + It);
  }
}

TEST(InductionTest, UnrolledLoopKeepsConstantStagesAndAnAlternatingPhase) {
  // Two stages unrolled: stage indices are constants, the phase flips once per iteration.
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  .shared .align 8 .b8 full[16];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
  mov.u32 %r4, full;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r4], %r3;     // stage 0
  add.s32 %r5, %r4, 8;
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], %r3;     // stage 1
  xor.b32 %r3, %r3, 1;
  add.s32 %r2, %r2, 2;
  setp.lt.u32 %p3, %r2, %r1;
  @%p3 bra LOOP;
  ret;
}
)");
  ExprContext &C = A.ctx();
  const Expr *I = C.iterationVar(0);
  const ValueAnalysis &V = A.values();
  const Expr *Full = C.symbol("full", SymbolSpace::Shared, 32);
  EXPECT_EQ(V.closedForm(V.operand(A.inst("// stage 0"), 1)), Full);
  EXPECT_EQ(V.closedForm(V.operand(A.inst("// stage 1"), 1)), C.add(Full, C.constant(8, 32)));
  EXPECT_EQ(V.closedForm(V.operand(A.inst("// stage 1"), 2)), C.urem(I, C.constant(2, 32)));
  const LoopSummary &S = V.loopSummary(0);
  bool Alternating = false;
  for (const InductionVar &IV : S.Inductions)
    Alternating |= IV.Kind == InductionKind::Alternating;
  EXPECT_TRUE(Alternating);
}

TEST(InductionTest, PeeledProducerStartsTheRingAtStageOne) {
  // The first k-tile is issued before the loop; the loop continues at stage 1, phase 0, and
  // the phase flips when the stage wraps from 3 to 0.
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .shared .align 8 .b8 empty[32];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, empty;
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 1;    // peeled k-tile 0
  mov.u32 %r3, 1;
  mov.u32 %r4, 1;
  mov.u32 %r5, 1;
LOOP:
  shl.b32 %r6, %r3, 3;
  add.s32 %r7, %r2, %r6;
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r7], %r4;  // k-tile 1 + i
  add.s32 %r8, %r3, 1;
  rem.u32 %r3, %r8, 4;
  setp.eq.s32 %p3, %r3, 0;
  selp.u32 %r9, 1, 0, %p3;
  xor.b32 %r4, %r4, %r9;
  add.s32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r1;
  @%p1 bra LOOP;
  ret;
}
)");
  ExprContext &C = A.ctx();
  const ValueAnalysis &V = A.values();
  InstId Wait = A.inst("// k-tile 1 + i");
  const Expr *I = C.iterationVar(A.loopOf("// k-tile 1 + i"));
  const Expr *Parity = V.closedForm(V.operand(Wait, 2));
  const Expr *Addr = V.closedForm(V.operand(Wait, 1));
  for (uint64_t It = 0; It < 10; ++It) {
    uint64_t K = It + 1; // the k-tile this iteration handles
    // A producer's phase on empty starts at 1 and flips each round of 4 stages.
    EXPECT_EQ(atIteration(Parity, I, It), 1 ^ ((K / 4) & 1)) << "k-tile " << K;
    EXPECT_EQ(atIteration(Addr, I, It), 0x1000 + (K % 4) * 8) << "k-tile " << K;
  }
  // The ring starts at 1: its closed form needs 1 < 4, which holds, so no condition is left.
  const LoopSummary &S = V.loopSummary(A.loopOf("// k-tile 1 + i"));
  for (const InductionVar &IV : S.Inductions) {
    if (IV.Kind == InductionKind::Ring) {
      EXPECT_TRUE(IV.Conditions.empty());
    }
  }
}

/// A loop over n iterations that starts the stage %r3 at Start, advances it with Advance at
/// the top of each iteration (the phase %r4 flipped by %r9 where it wraps) and waits on
/// full[stage] with the phase. Carried: the address %r7 of full[stage] is computed at the
/// end of each iteration instead, after Advance, for the next iteration's wait at its top
/// (Triton's Blackwell causal attention carries `empty + 8 * stage` so); it enters as
/// full + Start.
std::string ringFromKernel(const char *Start, const char *Advance, bool Carried = false) {
  const std::string Address = R"(
  shl.b32 %r6, %r3, 3;
  add.s32 %r7, %r2, %r6;)";
  const std::string Wait = R"(
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r7], %r4;  // k-tile i)";
  return std::string(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<6>;
  .reg .b32 %r<20>;
  .shared .align 8 .b8 full[24];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, full;
  mov.u32 %r3, )") + (Carried ? "0" : Start) + R"(;
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;)" + (Carried ? std::string("\n  add.s32 %r7, %r2, ") + Start + ";" : "") +
         "\nLOOP:" + (Carried ? Wait + Advance + Address : Advance + Address + Wait) + R"(
  add.s32 %r5, %r5, 1;
  setp.lt.u32 %p1, %r5, %r1;
  @%p1 bra LOOP;
  ret;
}
)";
}

/// Triton's stage advance: `s = s + 1 > 2 ? 0 : s + 1`, the phase flipped where it wraps.
constexpr const char *TritonAdvance = R"(
  add.s32 %r8, %r3, 1;
  setp.gt.s32 %p3, %r8, 2;
  selp.u32 %r9, 1, 0, %p3;
  selp.b32 %r3, 0, %r8, %p3;
  xor.b32 %r4, %r4, %r9;)";

TEST(InductionTest, ARingThatStartsAtMinusOneBeginsAtStageZero) {
  // Triton: the stage starts at -1 and is advanced at the top of each iteration
  // (`s = s + 1 > 2 ? 0 : s + 1`), the phase flips when it wraps. Iteration i waits on
  // full[i % 3] with parity (i / 3) & 1. Read as a ring from -1, (-1 + i) % 3 would put
  // iteration 0 on stage 1 (2^32 - 1 is a multiple of 3).
  Analyzed A(ringFromKernel("-1", TritonAdvance));
  ExprContext &C = A.ctx();
  const ValueAnalysis &V = A.values();
  InstId Wait = A.inst("// k-tile i");
  const Expr *I = C.iterationVar(A.loopOf("// k-tile i"));
  const Expr *Parity = V.closedForm(V.operand(Wait, 2));
  const Expr *Addr = V.closedForm(V.operand(Wait, 1));
  for (uint64_t It = 0; It < 14; ++It) {
    EXPECT_EQ(atIteration(Parity, I, It), (It / 3) & 1) << "iteration " << It;
    EXPECT_EQ(atIteration(Addr, I, It), 0x1000 + (It % 3) * 8) << "iteration " << It;
  }
  // The ring is one from its second iteration: no condition on its start is left open.
  const LoopSummary &S = V.loopSummary(A.loopOf("// k-tile i"));
  bool Ring = false;
  for (const InductionVar &IV : S.Inductions)
    if (IV.Kind == InductionKind::Ring) {
      Ring = true;
      EXPECT_TRUE(IV.Conditions.empty());
      EXPECT_NE(IV.Peeled, nullptr);
    }
  EXPECT_TRUE(Ring);
}

TEST(InductionTest, ARingWhoseStartNeverEntersItIsNoRing) {
  // s = 7; s = s == 2 ? 0 : s + 1 with 3 stages: from 7 the counter counts up past the ring
  // (8, 9, ...), so no closed form of a ring may be given for it.
  Analyzed A(ringFromKernel("7", R"(
  setp.eq.s32 %p3, %r3, 2;
  add.s32 %r8, %r3, 1;
  selp.b32 %r3, 0, %r8, %p3;)"));
  const LoopSummary &S = A.values().loopSummary(A.loopOf("// k-tile i"));
  for (const InductionVar &IV : S.Inductions)
    EXPECT_NE(IV.Kind, InductionKind::Ring);
}

TEST(InductionTest, AnAddressComputedForTheNextIterationIsItsStage) {
  // %r7 is full + 8 * stage as of the end of the iteration before: full[i % 3] in
  // iteration i, the start being full[0], what the update gives for iteration -1.
  Analyzed A(ringFromKernel("0", TritonAdvance, /*Carried=*/true));
  ExprContext &C = A.ctx();
  const ValueAnalysis &V = A.values();
  InstId Wait = A.inst("// k-tile i");
  const Expr *I = C.iterationVar(A.loopOf("// k-tile i"));
  const Expr *Addr = V.closedForm(V.operand(Wait, 1));
  ASSERT_NE(Addr, nullptr);
  for (uint64_t It = 0; It < 10; ++It)
    EXPECT_EQ(atIteration(Addr, I, It), 0x1000 + (It % 3) * 8) << "iteration " << It;
  const LoopSummary &S = V.loopSummary(A.loopOf("// k-tile i"));
  EXPECT_TRUE(llvm::any_of(S.Inductions, [](const InductionVar &IV) {
    return IV.Kind == InductionKind::Carried;
  }));
}

TEST(InductionTest, ACarriedAddressThatStartsElsewhereHasNoClosedForm) {
  // Entering as full[2] while the update gives full[0] for iteration 0's predecessor: right
  // only as `i == 0 ? full + 16 : full + 8 * (i % 3)`, which names no barrier array. wsv
  // leaves it unresolved (a remark) rather than take it for a barrier of its own.
  Analyzed A(ringFromKernel("16", TritonAdvance, /*Carried=*/true));
  const LoopSummary &S = A.values().loopSummary(A.loopOf("// k-tile i"));
  for (const InductionVar &IV : S.Inductions)
    EXPECT_NE(IV.Kind, InductionKind::Carried);
}

TEST(InductionTest, ConsumerPreArrivesOnEveryEmptySlot) {
  Analyzed A(R"(
.visible .entry k()
.reqntid 256
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .shared .align 8 .b8 empty[32];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 128;
  @%p1 bra DONE;
  mov.u32 %r2, empty;
  mov.u32 %r3, 0;
PRE:
  mbarrier.arrive.shared::cta.b64 _, [%r2];          // pre-arrive
  add.s32 %r2, %r2, 8;
  add.s32 %r3, %r3, 1;
  setp.ne.s32 %p2, %r3, 4;
  @%p2 bra PRE;
DONE:
  ret;
}
)");
  LoopId L = A.loopOf("// pre-arrive");
  const TripCount &T = A.values().loopSummary(L).Trip;
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  EXPECT_EQ(T.Iterations, A.ctx().constant(4, 32));
  const Expr *Addr = A.values().closedForm(A.values().operand(A.inst("// pre-arrive"), 1));
  EXPECT_EQ(Addr, A.ctx().add(A.ctx().symbol("empty", SymbolSpace::Shared, 32),
                              A.ctx().mul(A.ctx().iterationVar(L), A.ctx().constant(8, 32))));
  EXPECT_EQ(A.threads("// pre-arrive").str(), "tid 128..255 (128 threads)");
}

// The B3 shape: a persistent tile loop around a k-loop that carries stage and phase; the
// k-loop is skipped when K < 64.
const char Persistent[] = R"(
.visible .entry k(.param .u32 tiles, .param .u32 kdim)
.maxntid 128
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .shared .align 8 .b8 full[16];
  ld.param.u32 %r1, [tiles];
  ld.param.u32 %r2, [kdim];
  shr.u32 %r3, %r2, 6;
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %nctaid.x;
  setp.ge.u32 %p1, %r4, %r1;
  @%p1 bra END;
  neg.s32 %r6, %r3;
  mov.u32 %r10, 0;
  mov.u32 %r11, 1;
TILE:
  setp.lt.u32 %p2, %r2, 64;                     // tile header
  @%p2 bra NEXT;
  mov.u32 %r7, %r6;
KLOOP:
  shl.b32 %r12, %r10, 3;
  mov.u32 %r13, full;
  add.s32 %r14, %r13, %r12;
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r14], %r11;   // k body
  add.s32 %r15, %r10, 1;
  setp.eq.s32 %p4, %r15, 2;
  selp.b32 %r10, 0, %r15, %p4;
  selp.u32 %r16, 1, 0, %p4;
  xor.b32 %r11, %r11, %r16;
  add.s32 %r7, %r7, 1;
  setp.ne.s32 %p5, %r7, 0;
  @%p5 bra KLOOP;
NEXT:
  add.s32 %r4, %r4, %r5;                        // next tile
  setp.lt.u32 %p6, %r4, %r1;
  @%p6 bra TILE;
END:
  ret;
}
)";

TEST(InductionTest, RingsCarriedAcrossAPersistentLoop) {
  Analyzed A(Persistent);
  ASSERT_EQ(A.loops().size(), 2u);
  ExprContext &C = A.ctx();
  const ValueAnalysis &V = A.values();
  LoopId Tile = A.loopOf("// tile header"), K = A.loopOf("// k body");
  const Expr *J = C.iterationVar(Tile), *I = C.iterationVar(K);
  const Expr *KTiles = C.udiv(A.param("kdim"), C.constant(64, 32));
  // In the tile loop, the stage advances by the k-loop's trip count per tile.
  const LoopSummary &Outer = V.loopSummary(Tile);
  const InductionVar *Stage = inductionOf(V, Outer, "%r10");
  const InductionVar *Phase = inductionOf(V, Outer, "%r11");
  ASSERT_NE(Stage, nullptr);
  EXPECT_EQ(Stage->Kind, InductionKind::Ring);
  EXPECT_EQ(Stage->Step, KTiles);
  EXPECT_EQ(Stage->ClosedForm, C.urem(C.mul(KTiles, J), C.constant(2, 32)));
  ASSERT_NE(Phase, nullptr);
  EXPECT_EQ(Phase->Kind, InductionKind::Parity);
  // In the k-loop, in terms of both iteration numbers: the global k-tile count is
  // j * K/64 + i.
  const Expr *Count = C.add(C.mul(KTiles, J), I);
  const Expr *Parity = V.closedForm(V.operand(A.inst("// k body"), 2));
  const Expr *Addr = V.closedForm(V.operand(A.inst("// k body"), 1));
  EXPECT_EQ(Addr, C.add(C.symbol("full", SymbolSpace::Shared, 32),
                        C.mul(C.urem(Count, C.constant(2, 32)), C.constant(8, 32))));
  // Evaluate: with K/64 = 3, tile j = 1, k-tile i = 2 is global k-tile 5: stage 1, and two
  // wraps (at 2 and 4) have flipped the starting phase 1 twice: phase 1.
  auto At = [&](const Expr *E, uint64_t KDim, uint64_t Jv, uint64_t Iv) {
    return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == J)
        return Jv;
      if (L == I)
        return Iv;
      if (L == A.param("kdim"))
        return KDim;
      return std::nullopt;
    });
  };
  for (uint64_t Jv = 0; Jv < 4; ++Jv)
    for (uint64_t Iv = 0; Iv < 3; ++Iv) {
      uint64_t Global = Jv * 3 + Iv;
      EXPECT_EQ(At(Parity, 192, Jv, Iv), 1 ^ ((Global / 2) & 1)) << Jv << " " << Iv;
    }
}

} // namespace

namespace {

/// Triton's persistent warp-specialized loop runs tiles and k-tiles as one loop: the k-tile
/// ring %r10 (K / 64 stages, %r5 its last) advances every iteration, and the accumulator
/// ring %r12 (2 stages, from 1) with its phase %r13 (from 1) only in the iterations where
/// the k-tile ring is at Gate (%r5: the one that ends a tile; 0: the one that starts it),
/// where the accumulator is waited on at its new stage (`// acc`).
std::string flatLoop(const char *Gate) {
  return std::string(R"(
.visible .entry k(.param .u32 k_param_0, .param .u32 k_param_1)
.maxntid 128
{
  .reg .pred %p<8>;
  .reg .b32 %r<30>;
  .shared .align 8 .b8 acc_full[16];
  ld.param.u32 %r1, [k_param_0];
  ld.param.u32 %r2, [k_param_1];
  shr.u32 %r6, %r1, 6;
  setp.eq.s32 %p1, %r6, 0;
  @%p1 bra DONE;
  add.s32 %r5, %r6, -1;
  mul.lo.s32 %r4, %r6, %r2;
  setp.eq.s32 %p1, %r4, 0;
  @%p1 bra DONE;
  mov.u32 %r3, 0;
  mov.u32 %r10, 0;
  mov.u32 %r13, 1;
  mov.u32 %r12, %r13;
LOOP:
  setp.ne.s32 %p4, %r10, )") + Gate + R"(;
  @%p4 bra NEXT;
  add.s32 %r20, %r12, 1;
  setp.eq.s32 %p5, %r20, 2;
  selp.b32 %r12, 0, %r20, %p5;
  selp.u32 %r21, 1, 0, %p5;
  xor.b32 %r13, %r13, %r21;
  shl.b32 %r22, %r12, 3;
  mov.u32 %r23, acc_full;
  add.s32 %r24, %r23, %r22;
  mbarrier.try_wait.parity.shared::cta.b64 %p7, [%r24], %r13;   // acc
NEXT:
  setp.eq.s32 %p6, %r10, %r5;
  add.s32 %r25, %r10, 1;
  selp.b32 %r10, 0, %r25, %p6;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r4;
  @%p2 bra LOOP;
DONE:
  ret;
}
)";
}

class GatedRings : public ::testing::TestWithParam<bool> {};

TEST_P(GatedRings, ARingAdvancedAtOneKTileCountsTheTilesBefore) {
  // At the last k-tile, %r12 is (1 + i / KT) % 2 in iteration i (it advanced at the end of
  // each earlier tile); at the first, (1 + (i + KT - 1) / KT) % 2. %r13 flips as it wraps;
  // the wait reads the ring one step on. Checked against running the loop, for several K.
  const bool Last = GetParam();
  Analyzed A(flatLoop(Last ? "%r5" : "0"));
  GatedWait G;
  ASSERT_NO_FATAL_FAILURE(readGatedWait(A, "// acc", G));
  const Expr *I = G.I, *Addr = G.Addr, *Parity = G.Parity;
  const InductionVar *Acc = G.Ring, *Phase = G.Phase;
  for (uint64_t KT : {1u, 2u, 3u, 5u}) {
    auto At = [&](const Expr *E, uint64_t It) {
      return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
        if (Leaf == I)
          return It;
        if (Leaf->is(ExprKind::Param))
          return Leaf->payload() == 0 ? KT * 64 : 4; // K, then the tile count
        if (Leaf->is(ExprKind::Symbol))
          return 0x1000;
        return std::nullopt;
      });
    };
    uint64_t K = 0, AccStage = 1, AccPhase = 1;
    for (uint64_t It = 0; It < 4 * KT; ++It) {
      EXPECT_EQ(At(Acc->ClosedForm, It), AccStage) << "KT " << KT << " iteration " << It;
      EXPECT_EQ(At(Phase->ClosedForm, It), AccPhase) << "KT " << KT << " iteration " << It;
      if (K == (Last ? KT - 1 : 0)) {
        bool Wrap = AccStage + 1 == 2;
        AccStage = Wrap ? 0 : AccStage + 1;
        AccPhase ^= Wrap ? 1 : 0;
        EXPECT_EQ(At(Addr, It), 0x1000 + 8 * AccStage) << "KT " << KT << " iteration " << It;
        EXPECT_EQ(At(Parity, It), AccPhase) << "KT " << KT << " iteration " << It;
      }
      K = K == KT - 1 ? 0 : K + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gates, GatedRings, ::testing::Values(true, false),
                         [](const auto &Info) { return Info.param ? "LastKTile" : "FirstKTile"; });

} // namespace

namespace {

/// Triton's warp-specialized attention: the ring %r12 (2 stages, from 1) of the next key
/// block advances only while one is left, in the iterations where `c < K - 128` (c = 64 i),
/// and its phase %r13 flips in every iteration where the ring's update would wrap it, taken
/// or not (`p ^= s + 1 == 2`): past the first run the ring stands still and the phase keeps
/// flipping if it stands at 1.
const char *PrefixGatedLoop = R"(
.visible .entry k(.param .u32 k_param_0)
.maxntid 128
{
  .reg .pred %p<8>;
  .reg .b32 %r<30>;
  .shared .align 8 .b8 ring[16];
  ld.param.u32 %r1, [k_param_0];
  add.s32 %r7, %r1, -128;
  setp.lt.s32 %p1, %r1, 1;
  @%p1 bra DONE;
  mov.u32 %r3, 0;
  mov.u32 %r12, 1;
  mov.u32 %r13, 0;
LOOP:
  add.s32 %r20, %r12, 1;
  setp.eq.s32 %p5, %r20, 2;
  selp.b32 %r21, 0, %r20, %p5;
  selp.u32 %r22, 1, 0, %p5;
  xor.b32 %r13, %r13, %r22;
  setp.lt.s32 %p3, %r3, %r7;
  shl.b32 %r23, %r21, 3;
  mov.u32 %r24, ring;
  add.s32 %r25, %r24, %r23;
  mbarrier.try_wait.parity.shared::cta.b64 %p7, [%r25], %r13;   // next
  selp.b32 %r12, %r21, %r12, %p3;
  add.s32 %r3, %r3, 64;
  setp.lt.s32 %p2, %r3, %r1;
  @%p2 bra LOOP;
DONE:
  ret;
}
)";

TEST(PrefixGatedRings, ARingAdvancedWhileABlockIsLeftCountsTheIterationsBefore) {
  Analyzed A(PrefixGatedLoop);
  GatedWait G;
  ASSERT_NO_FATAL_FAILURE(readGatedWait(A, "// next", G));
  const Expr *I = G.I, *Addr = G.Addr, *Parity = G.Parity;
  const InductionVar *Ring = G.Ring, *Phase = G.Phase;
  // K of 1 to 9 blocks of 64, and sizes that are not multiples of 64: the gate holds for
  // none of the iterations, some, or all but the last two.
  for (uint64_t K : {64u, 100u, 128u, 129u, 192u, 320u, 448u, 576u, 600u}) {
    auto At = [&](const Expr *E, uint64_t It) {
      return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
        if (Leaf == I)
          return It;
        if (Leaf->is(ExprKind::Param))
          return K;
        if (Leaf->is(ExprKind::Symbol))
          return 0x1000;
        return std::nullopt;
      });
    };
    uint64_t S = 1, P = 0;
    for (uint64_t It = 0, C = 0; C < K; ++It, C += 64) {
      EXPECT_EQ(At(Ring->ClosedForm, It), S) << "K " << K << " iteration " << It;
      EXPECT_EQ(At(Phase->ClosedForm, It), P) << "K " << K << " iteration " << It;
      const uint64_t Next = S + 1 == 2 ? 0 : S + 1;
      P ^= S + 1 == 2 ? 1 : 0;
      EXPECT_EQ(At(Addr, It), 0x1000 + 8 * Next) << "K " << K << " iteration " << It;
      EXPECT_EQ(At(Parity, It), P) << "K " << K << " iteration " << It;
      if (int64_t(C) < int64_t(K) - 128)
        S = Next;
    }
  }
}

} // namespace
