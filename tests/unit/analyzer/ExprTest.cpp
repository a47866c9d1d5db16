// Symbolic expressions: hash-consing, constant folding, the canonical linear form, masks and
// shifts, comparisons, predicates, selects, magic-number division, evaluation and printing.
#include "wsv/analyzer/Expr.h"

#include "gtest/gtest.h"

#include <climits>
#include <cstdint>

using namespace wsv::analyzer;

namespace {

class ExprTest : public ::testing::Test {
protected:
  ExprContext C;
  const Expr *c(uint64_t V, unsigned W = 32) { return C.constant(V, W); }
  const Expr *tid() { return C.specialRegister(SpecialRegister::TidX); }
  const Expr *lane() { return C.specialRegister(SpecialRegister::LaneId); }
  const Expr *k() { return C.param("K", 0, 32); }
  const Expr *n() { return C.param("N", 0, 32); }
};

TEST_F(ExprTest, EqualExpressionsAreOnePointer) {
  EXPECT_EQ(C.add(tid(), c(1)), C.add(c(1), tid()));
  EXPECT_EQ(C.mul(k(), n()), C.mul(n(), k()));
  EXPECT_NE(C.param("K", 0, 32), C.param("K", 4, 32));
  EXPECT_NE(C.param("K", 0, 32), C.param("K", 0, 64));
  // Opaque leaves with the same reason from different sites stay apart.
  int SiteA, SiteB;
  EXPECT_NE(C.opaque("result of ld", &SiteA, 0, 32), C.opaque("result of ld", &SiteB, 0, 32));
  EXPECT_EQ(C.opaque("result of ld", &SiteA, 0, 32), C.opaque("result of ld", &SiteA, 0, 32));
}

TEST_F(ExprTest, ConstantsFoldWithWrapAround) {
  EXPECT_EQ(C.add(c(0xffffffff), c(2)), c(1));
  EXPECT_EQ(C.mul(c(0x10000), c(0x10000)), c(0));
  EXPECT_EQ(C.sub(c(3), c(5)), c(0xfffffffe));
  EXPECT_EQ(C.udiv(c(100), c(7)), c(14));
  EXPECT_EQ(C.urem(c(100), c(7)), c(2));
  EXPECT_EQ(C.sdiv(c(static_cast<uint64_t>(-7)), c(2)), c(static_cast<uint64_t>(-3)));
  EXPECT_EQ(C.srem(c(static_cast<uint64_t>(-7)), c(2)), c(static_cast<uint64_t>(-1)));
  EXPECT_EQ(C.ashr(c(0x80000000), c(4)), c(0xf8000000));
  EXPECT_EQ(C.shl(c(1), c(40)), c(0)); // PTX clamps the shift amount
  EXPECT_EQ(C.mulhiu(c(0x80000000), c(4)), c(2));
  EXPECT_EQ(C.sext(c(0xff, 8), 32), c(0xffffffff));
  EXPECT_EQ(C.zext(c(0xff, 8), 32), c(0xff));
  EXPECT_EQ(C.trunc(c(0x12345678), 8), c(0x78, 8));
}

TEST_F(ExprTest, SumsAreCanonicalLinearForms) {
  const Expr *X = C.add(C.add(k(), c(1)), c(2));
  EXPECT_EQ(X, C.add(k(), c(3)));
  EXPECT_EQ(C.sub(X, k()), c(3));
  EXPECT_EQ(C.add(C.mul(k(), c(2)), C.mul(c(3), k())), C.mul(k(), c(5)));
  EXPECT_EQ(C.sub(C.add(k(), n()), k()), n());
  EXPECT_EQ(C.add(k(), c(0)), k());
  EXPECT_EQ(C.mul(k(), c(1)), k());
  EXPECT_EQ(C.mul(k(), c(0)), c(0));
  // Constant factors distribute: (s + 1) * 8 is s*8 + 8, a stage offset.
  EXPECT_EQ(C.mul(C.add(k(), c(1)), c(8)), C.add(C.mul(k(), c(8)), c(8)));
  // So do symbolic ones: n * (i + 1) is n*i + n, which keeps counters linear in i.
  const Expr *I = C.iterationVar(0);
  EXPECT_EQ(C.mul(n(), C.add(I, c(1))), C.add(C.mul(n(), I), n()));
  // ~x is -x - 1.
  EXPECT_EQ(C.add(C.bitNot(k()), k()), c(0xffffffff));
}

TEST_F(ExprTest, WarpAndLaneArithmetic) {
  // shr by 5 is / 32, shl by 5 is * 32, and-31 is % 32.
  const Expr *Warp = C.lshr(tid(), c(5));
  EXPECT_EQ(Warp, C.udiv(tid(), c(32)));
  const Expr *Lane = C.bitAnd(tid(), c(31));
  EXPECT_EQ(Lane, C.urem(tid(), c(32)));
  // (tid / 32) * 32 + tid % 32 is tid.
  EXPECT_EQ(C.add(C.shl(Warp, c(5)), Lane), tid());
  // tid - tid % 32 is (tid / 32) * 32, and tid & -32 is the same.
  EXPECT_EQ(C.sub(tid(), Lane), C.mul(Warp, c(32)));
  EXPECT_EQ(C.bitAnd(tid(), c(0xffffffe0)), C.mul(Warp, c(32)));
  // tid - 32 * (tid / 32) is tid % 32.
  EXPECT_EQ(C.sub(tid(), C.mul(c(32), Warp)), Lane);
  // (tid / 32) / 4 is tid / 128; (tid % 128) % 32 is tid % 32.
  EXPECT_EQ(C.udiv(Warp, c(4)), C.udiv(tid(), c(128)));
  EXPECT_EQ(C.urem(C.urem(tid(), c(128)), c(32)), Lane);
  // %laneid is below 32, so % 32 and / 32 of it fold.
  EXPECT_EQ(C.urem(lane(), c(32)), lane());
  EXPECT_EQ(C.udiv(lane(), c(32)), c(0));
  // (x * 8) & 24 is (x % 4) * 8: a masked stage scaled to the barrier stride.
  EXPECT_EQ(C.bitAnd(C.mul(k(), c(8)), c(24)), C.mul(C.urem(k(), c(4)), c(8)));
}

TEST_F(ExprTest, RemaindersReduceSums) {
  const Expr *S = C.urem(C.add(k(), c(5)), c(4));
  EXPECT_EQ(S, C.urem(C.add(k(), c(1)), c(4)));
  // ((k % 4) + 1) % 4 is (k + 1) % 4: ring arithmetic.
  EXPECT_EQ(C.urem(C.add(C.urem(k(), c(4)), c(1)), c(4)), C.urem(C.add(k(), c(1)), c(4)));
  // Widening a truncation is a remainder.
  EXPECT_EQ(C.zext(C.trunc(k(), 1), 32), C.urem(k(), c(2)));
}

TEST_F(ExprTest, OrOfDisjointBitsIsAnAddition) {
  const Expr *Base = C.mul(C.udiv(k(), c(1024)), c(1024)); // 1024-aligned
  const Expr *Off = C.mul(C.urem(n(), c(4)), c(8));          // below 32
  EXPECT_EQ(C.bitOr(Base, Off), C.add(Base, Off));
  EXPECT_EQ(C.bitOr(C.mul(k(), c(16)), c(8)), C.add(C.mul(k(), c(16)), c(8)));
  // Overlapping bits stay an or.
  EXPECT_TRUE(C.bitOr(k(), c(8))->is(ExprKind::Or));
}

TEST_F(ExprTest, MagicNumberDivisionIsRecognized) {
  // Triton's k / 3: mul.hi.u64 k, 0xAAAAAAAAAAAAAAAB then shr 1.
  const Expr *K64 = C.param("K", 0, 64);
  const Expr *Hi = C.mulhiu(K64, C.constant(0xAAAAAAAAAAAAAAABull, 64));
  EXPECT_EQ(C.lshr(Hi, C.constant(1, 64)), C.udiv(K64, C.constant(3, 64)));
  // The 32-bit magic for / 7 (0x24924925 with no shift) is not exact alone: no rewrite.
  const Expr *Hi7 = C.mulhiu(k(), c(0x24924925));
  EXPECT_EQ(C.lshr(Hi7, c(0)), Hi7);
  // / 5 in 32 bits: 0xCCCCCCCD, shift 2.
  EXPECT_EQ(C.lshr(C.mulhiu(k(), c(0xCCCCCCCD)), c(2)), C.udiv(k(), c(5)));
  // A multiplier that is no magic number stays what it is.
  EXPECT_TRUE(C.lshr(C.mulhiu(k(), c(12345)), c(2))->is(ExprKind::UDiv));
  EXPECT_EQ(C.lshr(C.mulhiu(k(), c(12345)), c(2))->op(0)->kind(), ExprKind::MulHiU);
}

TEST_F(ExprTest, SignedMagicNumberDivisionIsRecognized) {
  // nvcc and LLVM divide a signed y by a constant d as q = (hi >> s) + (hi >>u 31), hi the
  // high half of the signed product y * M, which the analysis builds from the unsigned one:
  // mulhi(y, M) - (y < 0 ? M : 0). Triton's persistent matmul counts a CTA's tiles so,
  // dividing by 132.
  auto Quotient = [&](const Expr *Y, uint64_t M, uint64_t S) {
    const Expr *Hi =
        C.sub(C.mulhiu(Y, c(M)), C.select(C.slt(Y, c(0)), c(M), c(0)));
    return C.add(C.udiv(Hi, c(0x80000000)), C.ashr(Hi, c(S)));
  };
  // What the PTX computes, instruction by instruction.
  auto Ptx = [](int32_t Y, int64_t M, unsigned S) {
    int32_t Hi = static_cast<int32_t>((int64_t(Y) * M) >> 32);
    return static_cast<uint32_t>((Hi >> S) + int32_t(uint32_t(Hi) >> 31));
  };
  const Expr *Y = C.sub(C.mul(k(), n()), tid());
  struct Case {
    uint64_t M, S, D;
  };
  for (Case Cs : {Case{1041204193, 5, 132}, Case{0x55555556, 0, 3}, Case{0x66666667, 1, 5},
                  Case{0x2AAAAAAB, 0, 6}}) {
    const Expr *Q = Quotient(Y, Cs.M, Cs.S);
    EXPECT_EQ(Q, C.sdiv(Y, c(Cs.D))) << Cs.D;
    for (int64_t V : {int64_t(INT32_MIN), int64_t(INT32_MIN) + 1, -int64_t(Cs.D) - 1,
                      -int64_t(Cs.D), -int64_t(Cs.D) + 1, int64_t(-1), int64_t(0), int64_t(1),
                      int64_t(Cs.D) - 1, int64_t(Cs.D), int64_t(INT32_MAX), int64_t(-123456789),
                      int64_t(987654321)}) {
      auto Value = ExprContext::evaluate(Q, [&](const Expr *L) -> std::optional<uint64_t> {
        if (L == k())
          return uint64_t(uint32_t(V));
        if (L == n())
          return 1;
        if (L == tid())
          return 0;
        return std::nullopt;
      });
      ASSERT_TRUE(Value) << Cs.D;
      EXPECT_EQ(*Value, Ptx(int32_t(V), int64_t(Cs.M), unsigned(Cs.S))) << Cs.D << " at " << V;
    }
  }
  // M * d == 2^(32+s) (d a power of two): a negative multiple of d would come out one too
  // high, so it is no signed magic number and stays as it is.
  const Expr *Pow2 = Quotient(Y, 0x40000000, 0);
  EXPECT_NE(Pow2, C.sdiv(Y, c(4)));
  EXPECT_EQ(Ptx(-4, 0x40000000, 0), 0u); // not -1
  // A multiplier that is no magic number, or unequal weights on the two halves, stay too.
  EXPECT_FALSE(Quotient(Y, 12345, 3)->is(ExprKind::SDiv));
  const Expr *Hi = C.sub(C.mulhiu(Y, c(1041204193)), C.select(C.slt(Y, c(0)), c(1041204193), c(0)));
  EXPECT_FALSE(C.add(C.mul(C.udiv(Hi, c(0x80000000)), c(2)), C.ashr(Hi, c(5)))->is(ExprKind::SDiv));
}

TEST_F(ExprTest, ComparisonsTakeACanonicalShape) {
  // x > c is c < x, which is c + 1 <= x; x <= c is x < c + 1.
  EXPECT_EQ(C.ugt(k(), c(63)), C.ule(c(64), k()));
  EXPECT_EQ(C.ule(k(), c(63)), C.ult(k(), c(64)));
  // Negation flips the comparison.
  EXPECT_EQ(C.bitNot(C.ult(k(), c(64))), C.ule(c(64), k()));
  EXPECT_EQ(C.bitNot(C.bitNot(C.eq(k(), c(1)))), C.eq(k(), c(1)));
  // Equalities move constants right: k + 1 == 5 is k == 4.
  EXPECT_EQ(C.eq(C.add(k(), c(1)), c(5)), C.eq(k(), c(4)));
  EXPECT_EQ(C.eq(c(5), C.add(k(), c(1))), C.eq(k(), c(4)));
  // x / 32 == 0 is x < 32; x / 32 < 4 is x < 128.
  EXPECT_EQ(C.eq(C.udiv(tid(), c(32)), c(0)), C.ult(tid(), c(32)));
  EXPECT_EQ(C.ult(C.udiv(tid(), c(32)), c(4)), C.ult(tid(), c(128)));
  EXPECT_EQ(C.ule(c(2), C.udiv(k(), c(64))), C.ule(c(128), k()));
  // Ranges decide: %tid.x < 2048 always, %laneid == 40 never.
  EXPECT_TRUE(C.ult(tid(), c(2048))->isTrue());
  EXPECT_TRUE(C.eq(lane(), c(40))->isFalse());
  // Signed comparisons of values known non-negative are unsigned.
  EXPECT_EQ(C.slt(tid(), c(64)), C.ult(tid(), c(64)));
  EXPECT_EQ(C.slt(k(), c(64))->kind(), ExprKind::SLt);
}

TEST_F(ExprTest, PredicatesSimplifyWhereBranchesMeet) {
  const Expr *P = C.eq(k(), c(0)), *Q = C.ult(n(), c(8));
  EXPECT_TRUE(C.bitOr(P, C.bitNot(P))->isTrue());
  EXPECT_TRUE(C.bitAnd(P, C.bitNot(P))->isFalse());
  // (q && p) || (q && !p) is q: the two arms of a branch under q meet again.
  EXPECT_EQ(C.bitOr(C.bitAnd(Q, P), C.bitAnd(Q, C.bitNot(P))), Q);
  // Absorption.
  EXPECT_EQ(C.bitOr(Q, C.bitAnd(Q, P)), Q);
  // De Morgan: !(p || q) is !p && !q.
  EXPECT_EQ(C.bitNot(C.bitOr(P, Q)), C.bitAnd(C.bitNot(P), C.bitNot(Q)));
  // xor with true is not; adding predicates is xor.
  EXPECT_EQ(C.bitXor(P, C.boolean(true)), C.bitNot(P));
  EXPECT_EQ(C.bitXor(P, P), C.boolean(false));
}

TEST_F(ExprTest, SelectsFold) {
  const Expr *P = C.eq(k(), c(0));
  EXPECT_EQ(C.select(P, c(1, 1), c(0, 1)), P);
  EXPECT_EQ(C.select(P, c(0, 1), c(1, 1)), C.bitNot(P));
  EXPECT_EQ(C.select(C.bitNot(P), k(), n()), C.select(P, n(), k()));
  EXPECT_EQ(C.select(P, k(), k()), k());
  EXPECT_EQ(C.select(C.boolean(true), k(), n()), k());
  // selp 1, 0 then setp.eq 0 is the negation: the elect.sync idiom.
  const Expr *Flag = C.select(P, c(1), c(0));
  EXPECT_EQ(C.eq(Flag, c(0)), C.bitNot(P));
  EXPECT_EQ(C.ne(Flag, c(0)), P);
}

TEST_F(ExprTest, AComparisonWithAConstantGoesIntoASelectWithAConstantArm) {
  // A warp's dispatch state chosen first by a launch condition: (K > 0 ? s(warp) : 3) == 1
  // is the condition and the warp's own test, which thread sets can take apart.
  const Expr *OnLaunch = C.ult(c(0), k());
  const Expr *Warp = C.udiv(tid(), c(32));
  const Expr *ByWarp = C.select(C.ult(Warp, c(6)), c(1), c(0));
  const Expr *Is1 = C.eq(C.select(OnLaunch, ByWarp, c(3)), c(1));
  EXPECT_EQ(Is1, C.logicalAnd(OnLaunch, C.ult(Warp, c(6))));
  EXPECT_EQ(C.eq(C.select(OnLaunch, ByWarp, c(3)), c(3)), C.bitNot(OnLaunch));
  // Without a constant arm, or with a value of the launch alone, the comparison stays outside.
  const Expr *Both = C.select(OnLaunch, k(), n());
  EXPECT_EQ(C.eq(Both, c(1))->kind(), ExprKind::Eq);
  EXPECT_EQ(C.eq(C.select(OnLaunch, n(), c(3)), c(1))->kind(), ExprKind::Eq);
  for (uint64_t T : {0u, 100u, 200u, 255u})
    for (uint64_t K : {0u, 64u}) {
      auto Leaf = [&](const Expr *L) -> std::optional<uint64_t> {
        return L == tid() ? T : L == k() ? std::optional<uint64_t>(K) : std::nullopt;
      };
      EXPECT_EQ(ExprContext::evaluate(Is1, Leaf),
                std::optional<uint64_t>(K > 0 && T / 32 < 6 ? 1 : 0));
    }
}

TEST_F(ExprTest, EvaluationAndRewriting) {
  const Expr *E = C.add(C.mul(C.udiv(tid(), c(32)), c(8)), k());
  auto At = [&](uint64_t T, uint64_t K) {
    return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == tid())
        return T;
      if (L == k())
        return K;
      return std::nullopt;
    });
  };
  EXPECT_EQ(At(65, 3), std::optional<uint64_t>(2 * 8 + 3));
  EXPECT_EQ(ExprContext::evaluate(E, [](const Expr *) { return std::nullopt; }), std::nullopt);
  // A select needs only the chosen arm.
  const Expr *S = C.select(C.eq(tid(), c(0)), c(7), k());
  EXPECT_EQ(ExprContext::evaluate(S, [&](const Expr *L) -> std::optional<uint64_t> {
              return L == tid() ? std::optional<uint64_t>(0) : std::nullopt;
            }),
            std::optional<uint64_t>(7));
  // Division by zero has no value.
  EXPECT_EQ(ExprContext::evaluate(C.udiv(k(), n()),
                                  [&](const Expr *L) -> std::optional<uint64_t> {
                                    return L == k() ? 5 : 0;
                                  }),
            std::nullopt);
  // Substitution rebuilds through the simplifying builders.
  EXPECT_EQ(C.substitute(E, tid(), c(64)), C.add(k(), c(16)));
}

TEST_F(ExprTest, FlattenedExpressionsEvaluateAsTheTreeDoes) {
  // A grouped tile schedule's shape: divisions, remainders, a select and a shared part.
  const Expr *Tile = C.udiv(C.add(tid(), k()), c(2));
  const Expr *Tiles = C.mul(C.udiv(n(), c(256)), C.udiv(k(), c(128)));
  const Expr *E = C.select(C.ult(Tile, Tiles), C.add(C.urem(Tile, c(8)), C.mul(Tile, c(3))),
                           C.sdiv(n(), C.sub(k(), c(7))));
  FlatExpr Flat(E);
  unsigned Variables = 0; // the leaves besides constants: tid, K and N, once each
  for (const Expr *L : Flat.leaves())
    Variables += !L->isConstant();
  EXPECT_EQ(Variables, 3u);
  unsigned Unknown = 0;
  for (uint64_t T : {0u, 1u, 31u, 255u})
    for (uint64_t K : {0u, 7u, 128u, 4096u, 0xffffffffu})
      for (uint64_t N : {0u, 256u, 0x80000000u, 0xffffffffu}) {
        auto Leaf = [&](const Expr *L) -> std::optional<uint64_t> {
          if (L == tid())
            return T;
          if (L == k())
            return K;
          if (L == n())
            return N;
          return std::nullopt;
        };
        std::vector<std::optional<uint64_t>> Values;
        for (const Expr *L : Flat.leaves())
          Values.push_back(L->isConstant() ? std::nullopt : Leaf(L));
        std::optional<uint64_t> Want = ExprContext::evaluate(E, Leaf);
        EXPECT_EQ(Flat.evaluate(Values), Want) << T << " " << K << " " << N;
        Unknown += !Want;
      }
  // Division by zero (K = 7 in the arm that is taken) has no value in either form.
  EXPECT_GT(Unknown, 0u);
  // An unknown leaf in the arm not taken does not matter; in the condition it does.
  const Expr *S = C.select(C.eq(tid(), c(0)), c(7), k());
  FlatExpr FlatS(S);
  std::vector<std::optional<uint64_t>> Values;
  for (const Expr *L : FlatS.leaves())
    Values.push_back(L == tid() ? std::optional<uint64_t>(0) : std::nullopt);
  EXPECT_EQ(FlatS.evaluate(Values), std::optional<uint64_t>(7));
  for (auto &V : Values)
    V = std::nullopt;
  EXPECT_EQ(FlatS.evaluate(Values), std::nullopt);
  // The most negative number divided by -1 wraps instead of trapping.
  const Expr *M = C.param("M", 0, 64);
  EXPECT_EQ(ExprContext::evaluate(C.sdiv(M, C.constant(~uint64_t(0), 64)),
                                  [](const Expr *) -> std::optional<uint64_t> {
                                    return uint64_t(1) << 63;
                                  }),
            std::optional<uint64_t>(uint64_t(1) << 63));
}

TEST_F(ExprTest, PrintingReadsLikeTheSource) {
  // A sum lists its terms in the order their leaves were made. K first, as the expectations
  // read: left to the call, the order would be the compiler's (C.sub(n(), k()) made K first
  // with g++, which evaluates arguments right to left, and N first with clang).
  k();
  n();
  EXPECT_EQ(C.eq(C.udiv(tid(), c(128)), c(1))->str(), "%tid.x / 128 == 1");
  EXPECT_EQ(C.sub(n(), k())->str(), "-K + N");
  EXPECT_EQ(C.add(k(), c(static_cast<uint64_t>(-1)))->str(), "K - 1");
  EXPECT_EQ(C.ne(k(), c(0))->str(), "K != 0");
  EXPECT_EQ(C.urem(C.add(C.iterationVar(2), c(1)), c(4))->str(), "(i2 + 1) % 4");
  const Expr *Small = C.ult(k(), c(8));
  const Expr *Zero = C.eq(n(), c(0));
  EXPECT_EQ(C.bitAnd(Small, Zero)->str(), "K < 8 && N == 0");
  EXPECT_EQ(C.udiv(k(), C.udiv(n(), c(2)))->str(), "K / (N / 2)");
  // A product chains over products only: K * N / 2 would read (K * N) / 2.
  EXPECT_EQ(C.mul(k(), C.udiv(n(), c(2)))->str(), "K * (N / 2)");
  const Expr *KN = C.mul(k(), n());
  EXPECT_EQ(C.mul(KN, C.param("M", 0, 32))->str(), "K * N * M");
  EXPECT_EQ(C.mul(C.add(k(), n()), C.param("M", 0, 32))->str(), "K * M + N * M");
  EXPECT_EQ(C.select(C.eq(k(), c(0)), c(1), n())->str(), "K == 0 ? 1 : N");
  EXPECT_EQ(C.symbol("smem", SymbolSpace::Shared, 32)->str(), "smem");
  // A truncation that drops bits shows them going.
  EXPECT_EQ(C.trunc(C.param("P", 0, 64), 32)->str(), "P % 4294967296");
  EXPECT_EQ(C.zext(C.urem(k(), c(4)), 64)->str(), "K % 4");
}

TEST_F(ExprTest, ThreadDependence) {
  EXPECT_TRUE(isThreadDependent(C.add(tid(), k())));
  EXPECT_FALSE(isThreadDependent(C.add(C.specialRegister(SpecialRegister::CtaidX), k())));
  int Site;
  EXPECT_TRUE(isThreadDependent(C.elect(&Site, c(0xffffffff), "elected")));
}

} // namespace

namespace {

// shiftInvariant: whether an expression of an iteration number comes back to itself when
// the number moves by a multiple of Q. Each case is also evaluated at the first values, so
// a rule that said yes wrongly would show here.
class ShiftTest : public ExprTest {
protected:
  const Expr *i(unsigned W = 32) { return C.resize(C.iterationVar(0), W); }
  /// Checks E(x) == E(x + Q*s) by evaluation for x < 200, s < 8.
  bool holdsOnSamples(const Expr *E, const Expr *X, uint64_t Q) {
    for (uint64_t V = 0; V < 200; ++V)
      for (uint64_t S = 0; S < 8; ++S) {
        auto At = [&](uint64_t XV) {
          return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
            if (L == X)
              return XV;
            return L->kind() == ExprKind::Param ? std::optional<uint64_t>(12345) : std::nullopt;
          });
        };
        if (At(V) != At(V + Q * S))
          return false;
      }
    return true;
  }
};

TEST_F(ShiftTest, TritonsPhaseOfAThreeStageRingRepeatsEverySixIterations) {
  // (~(i / 3)) & 1 from a 64-bit counter, as the analysis simplifies it.
  const Expr *X = C.iterationVar(0);
  const Expr *I64 = C.resize(X, 64);
  const Expr *Phase = C.urem(C.add(C.neg(C.udiv(I64, c(3, 64))), c(1, 64)), c(2, 64));
  EXPECT_TRUE(shiftInvariant(Phase, X, 6));
  EXPECT_TRUE(holdsOnSamples(Phase, X, 6));
  // Three iterations move the quotient by one: the parity flips.
  EXPECT_FALSE(shiftInvariant(Phase, X, 3));
  EXPECT_FALSE(holdsOnSamples(Phase, X, 3));
  // The quotient itself moves.
  EXPECT_FALSE(shiftInvariant(C.udiv(I64, c(3, 64)), X, 6));
}

TEST_F(ShiftTest, ResiduesAndMasksOfLinearFormsComeBack) {
  const Expr *X = C.iterationVar(0);
  struct Case {
    const Expr *E;
    uint64_t Q;
    bool Invariant;
  } Cases[] = {
      {C.urem(i(), c(6)), 6, true},
      {C.urem(i(), c(6)), 4, false},
      {C.bitAnd(i(), c(3)), 4, true},
      {C.bitAnd(i(), c(3)), 2, false},
      {C.urem(C.add(C.mul(i(), c(5)), c(7)), c(4)), 4, true},
      {C.urem(C.add(C.mul(i(), c(5)), c(7)), c(6)), 4, false},
      // A parameter that does not move: (i + K) % 2 comes back after 2.
      {C.urem(C.add(i(), k()), c(2)), 2, true},
      // Its quotient would need K's value to rule out wrapping: not shown.
      {C.urem(C.udiv(C.add(i(), k()), c(3)), c(2)), 6, false},
      // A select of things that do not move does not move.
      {C.select(C.ult(C.urem(i(), c(4)), c(2)), k(), c(9)), 8, true},
  };
  for (const Case &K : Cases) {
    SCOPED_TRACE(K.E->str() + " by " + std::to_string(K.Q));
    EXPECT_EQ(shiftInvariant(K.E, X, K.Q), K.Invariant);
    if (K.Invariant) {
      EXPECT_TRUE(holdsOnSamples(K.E, X, K.Q));
    }
  }
}

/// Checks E(x) == E(x + Q*s) by evaluation for MinX <= x < MinX + 200, s < 8.
bool holdsFrom(const Expr *E, const Expr *X, uint64_t Q, uint64_t MinX) {
  for (uint64_t V = MinX; V < MinX + 200; ++V)
    for (uint64_t S = 0; S < 8; ++S) {
      auto At = [&](uint64_t XV) {
        return ExprContext::evaluate(
            E, [&](const Expr *L) -> std::optional<uint64_t> {
              return L == X ? std::optional<uint64_t>(XV) : std::nullopt;
            });
      };
      if (At(V) != At(V + Q * S))
        return false;
    }
  return true;
}

TEST_F(ShiftTest, ARingThatStartsAtMinusOneComesBackFromItsSecondIteration) {
  // Triton's `s = -1; s = s + 1 > 2 ? 0 : s + 1` and the phase flipped on its wrap, as the
  // induction analysis gives them: iteration 0 keeps the start.
  const Expr *X = C.iterationVar(0);
  const Expr *First = C.eq(i(), c(0));
  const Expr *Before = C.sub(i(), c(1));
  const Expr *Ring = C.select(First, c(0xffffffff), C.urem(Before, c(3)));
  const Expr *Stage = C.add(Ring, c(1));
  const Expr *Wrap = C.select(C.slt(Stage, c(3)), c(0), c(1));
  const Expr *Phase =
      C.bitXor(C.select(First, c(0), C.urem(C.udiv(Before, c(3)), c(2))), Wrap);
  // From iteration 1 on the choice is decided and i - 1 does not wrap.
  EXPECT_TRUE(shiftInvariant(Phase, X, 6, 1));
  EXPECT_TRUE(holdsFrom(Phase, X, 6, 1));
  EXPECT_TRUE(shiftInvariant(Stage, X, 3, 1));
  EXPECT_TRUE(holdsFrom(Stage, X, 3, 1));
  // From iteration 0 it is not shown (the rule cannot tell that iteration 0 happens to agree).
  EXPECT_FALSE(shiftInvariant(Phase, X, 6));
  // Three iterations flip the phase.
  EXPECT_FALSE(shiftInvariant(Phase, X, 3, 1));
  EXPECT_FALSE(holdsFrom(Phase, X, 3, 1));
  // i - 2 below 2 would wrap: a minimum of 1 does not make (i - 2) % 3 exact.
  const Expr *Two = C.urem(C.sub(i(), c(2)), c(3));
  EXPECT_FALSE(shiftInvariant(Two, X, 3, 1));
  EXPECT_TRUE(shiftInvariant(Two, X, 3, 2));
  EXPECT_TRUE(holdsFrom(Two, X, 3, 2));
  // A choice on i == 5 is not decided from 1 on.
  EXPECT_FALSE(shiftInvariant(C.select(C.eq(i(), c(5)), c(1), c(0)), X, 6, 1));
}

TEST_F(ShiftTest, AQuotientOfSomethingThatDoesNotMoveDoesNotMove) {
  // (stage * 8) / 8 of a stage that comes back: the dividend is no linear form of i.
  const Expr *X = C.iterationVar(0);
  const Expr *Stage = C.select(C.ult(C.urem(i(), c(3)), c(2)), C.urem(i(), c(3)), c(0));
  const Expr *E = C.udiv(C.mul(Stage, c(8)), c(8));
  EXPECT_TRUE(shiftInvariant(E, X, 3));
  EXPECT_TRUE(holdsFrom(E, X, 3, 0));
}

TEST_F(ShiftTest, NarrowDivisionsAreNotTakenForExact) {
  // At 16 bits i / 3 wraps long before 2^26: the rule does not apply.
  const Expr *X = C.iterationVar(0);
  const Expr *Narrow = C.urem(C.udiv(C.resize(X, 16), c(3, 16)), c(2, 16));
  EXPECT_FALSE(shiftInvariant(Narrow, X, 6));
}

} // namespace
