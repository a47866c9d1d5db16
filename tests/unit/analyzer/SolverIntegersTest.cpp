// Linear predicates asked over integers (analyzer/lib/SolverZ3Integers.h): the answers are
// those of the bit-vector encoding, on predicates built to wrap, mask, compare signed and
// change width; and a lemma of the parametric argument that bit-vectors do not prove within
// a budget is proved over integers within it.
#include "wsv/analyzer/Solver.h"

#include "gtest/gtest.h"

#include <random>
#include <vector>

using namespace wsv::analyzer;

namespace {

const char *name(SolverAnswer A) {
  return A == SolverAnswer::Yes ? "yes" : A == SolverAnswer::No ? "no" : "unknown";
}

/// Random expressions over a few leaves of different ranges, with the operations the
/// integer encoding reads (and a few it does not, which go to bit-vectors).
class Generator {
public:
  Generator(ExprContext &C, unsigned Seed) : C(C), Rng(Seed) {
    Leaves = {C.param("x", 0, 32), C.param("y", 4, 32),
              C.specialRegister(SpecialRegister::LaneId),
              C.specialRegister(SpecialRegister::TidX),
              C.specialRegister(SpecialRegister::NctaidX)};
  }

  const Expr *value(unsigned Depth) {
    if (Depth == 0 || pick(4) == 0)
      return pick(3) == 0 ? constant() : Leaves[pick(Leaves.size())];
    const Expr *A = value(Depth - 1);
    switch (pick(16)) {
    case 0: return C.add(A, value(Depth - 1));
    case 1: return C.sub(A, value(Depth - 1));
    case 2: return C.neg(A);
    case 3: return C.mul(A, constant());
    case 4: return C.udiv(A, C.constant(1 + pick(70), 32));
    case 5: return C.urem(A, C.constant(1 + pick(70), 32));
    case 6: return C.bitAnd(A, C.constant(masks()[pick(masks().size())], 32));
    case 7: return C.bitNot(A);
    case 8: return C.umin(A, value(Depth - 1));
    case 9: return C.smax(A, value(Depth - 1));
    case 10: return C.zext(C.trunc(A, 8 + 8 * pick(2)), 32);
    case 11: return C.sext(C.trunc(A, 16), 32);
    case 12: return C.select(predicate(Depth - 1), A, value(Depth - 1));
    case 13: return C.sdiv(A, C.constant(1 + pick(9), 32));
    case 14: return C.srem(A, C.constant(2 + pick(7), 32));
    default: return C.mul(A, value(Depth - 1)); // no linear reading unless a side is constant
    }
  }

  const Expr *predicate(unsigned Depth) {
    const Expr *A = value(Depth), *B = value(Depth);
    switch (pick(10)) {
    // Shapes that hold for every A, B: a proof each, unless the builders fold them.
    case 7: return C.ule(C.bitAnd(A, C.constant(0xfffffff0, 32)), A);
    case 8: return C.logicalOr(C.slt(A, C.add(A, C.constant(1, 32))),
                               C.eq(A, C.constant(0x7fffffff, 32)));
    case 9: return C.eq(C.sub(C.add(A, B), B), C.add(A, C.mul(B, C.constant(0, 32))));
    case 0: return C.eq(A, B);
    case 1: return C.ult(A, B);
    case 2: return C.ule(A, B);
    case 3: return C.slt(A, B);
    case 4: return C.sle(A, B);
    case 5: return C.logicalOr(C.ult(A, B), C.eq(A, value(Depth)));
    default: return C.logicalAnd(C.ule(A, B), C.logicalNot(C.slt(B, value(Depth))));
    }
  }

private:
  unsigned pick(size_t N) { return std::uniform_int_distribution<unsigned>(0, N - 1)(Rng); }
  const Expr *constant() {
    static const uint64_t Values[] = {0,          1,          2,          6,         64,
                                      0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 4096,
                                      0xffffffc0, 1u << 20};
    return C.constant(Values[pick(std::size(Values))], 32);
  }
  static const std::vector<uint64_t> &masks() {
    static const std::vector<uint64_t> M = {0xff, 24, 0xfffffff0, 0x7fffffff, 0x80000000, 0x5};
    return M;
  }

  ExprContext &C;
  std::mt19937 Rng;
  std::vector<const Expr *> Leaves;
};

TEST(SolverIntegersTest, IntegersAnswerAsBitVectorsDo) {
  ExprContext C;
  Generator G(C, 20261130);
  std::unique_ptr<Solver> Ints = Solver::createZ3(5000, 300000, /*Sample=*/false);
  std::unique_ptr<Solver> Bits =
      Solver::createZ3(5000, 300000, /*Sample=*/false, /*Integers=*/false);
  unsigned Linear = 0, Compared = 0, Valid = 0, Satisfiable = 0;
  for (unsigned I = 0; I < 160; ++I) {
    const Expr *P = G.predicate(1 + I % 3);
    if (P->isConstant())
      continue;
    Linear += hasLinearReading(P);
    SolverResult IV = Ints->isValid(P), BV = Bits->isValid(P);
    SolverResult IS = Ints->isSatisfiable(P), BS = Bits->isSatisfiable(P);
    if (IV.Answer != SolverAnswer::Unknown && BV.Answer != SolverAnswer::Unknown) {
      ++Compared;
      Valid += IV.Answer == SolverAnswer::Yes;
      EXPECT_EQ(IV.Answer, BV.Answer) << "valid? " << P->str() << ": integers "
                                      << name(IV.Answer) << ", bit-vectors " << name(BV.Answer);
    }
    if (IS.Answer != SolverAnswer::Unknown && BS.Answer != SolverAnswer::Unknown) {
      ++Compared;
      Satisfiable += IS.Answer == SolverAnswer::Yes;
      EXPECT_EQ(IS.Answer, BS.Answer) << "satisfiable? " << P->str() << ": integers "
                                      << name(IS.Answer) << ", bit-vectors "
                                      << name(BS.Answer);
    }
  }
  // The sample must exercise the integer encoding, with answers of both kinds.
  EXPECT_GT(Linear, 70u);
  EXPECT_GT(Compared, 200u);
  EXPECT_GT(Valid, 20u);
  EXPECT_GT(Satisfiable, 80u);
  EXPECT_LT(Satisfiable + Valid, Compared - 20);
}

TEST(SolverIntegersTest, WrapsAndMasksAreExact) {
  ExprContext C;
  std::unique_ptr<Solver> S = Solver::createZ3(5000, 0, /*Sample=*/false);
  auto c = [&](uint64_t V) { return C.constant(V, 32); };
  const Expr *X = C.param("x", 0, 32), *Lane = C.specialRegister(SpecialRegister::LaneId);
  const Expr *Low4 = C.bitAnd(C.add(X, C.param("y", 4, 32)), c(0xf));
  // Each is linear, and each holds only because of the wrap (or the mask) it spells out.
  const Expr *Claims[] = {
      C.eq(C.add(C.add(X, c(1)), c(0xffffffff)), X),               // x + 1 - 1 == x
      C.ult(C.sub(Lane, c(1)), c(31)),                               // false for lane 0
      C.eq(C.bitAnd(C.mul(Lane, c(8)), c(24)), C.mul(C.urem(Lane, c(4)), c(8))),
      C.slt(C.add(X, c(0x80000000)), X),                             // false for x = 0
      C.eq(C.sext(C.trunc(C.add(Lane, c(0xfffffff0)), 16), 32), C.add(Lane, c(0xfffffff0))),
      C.ule(C.bitAnd(X, c(24)), c(24)),
      C.eq(C.bitAnd(C.add(Lane, c(100)), c(0xf0)),
           C.mul(C.urem(C.udiv(C.add(Lane, c(100)), c(16)), c(16)), c(16))),
      C.eq(C.bitAnd(C.add(Lane, c(100)), c(0xf0)), C.add(Lane, c(100))), // lane 4 has bit 3
      // A mask of a mask of a sum that may wrap: the low byte of ((x + y) & 15) - 1 is 255
      // where (x + y) & 15 is 0 (the low byte of x + y - 1 is not).
      C.eq(C.bitAnd(C.add(Low4, c(0xffffffff)), c(0xff)),
           C.select(C.eq(Low4, c(0)), c(0xff), C.add(Low4, c(0xffffffff)))),
  };
  const SolverAnswer Expected[] = {SolverAnswer::Yes, SolverAnswer::No, SolverAnswer::Yes,
                                   SolverAnswer::No,  SolverAnswer::Yes, SolverAnswer::Yes,
                                   SolverAnswer::Yes, SolverAnswer::No,  SolverAnswer::Yes};
  for (size_t I = 0; I < std::size(Claims); ++I) {
    EXPECT_TRUE(hasLinearReading(Claims[I])) << Claims[I]->str();
    EXPECT_EQ(S->isValid(Claims[I]).Answer, Expected[I]) << Claims[I]->str();
  }
  // A product of two unknowns has no linear reading, and bit-vectors answer it.
  const Expr *Product = C.ult(C.mul(X, C.param("y", 4, 32)), c(5));
  EXPECT_FALSE(hasLinearReading(Product));
  EXPECT_EQ(S->isValid(Product).Answer, SolverAnswer::No);
}

TEST(SolverIntegersTest, APeriodLemmaIsProvedWithinABudgetThatBitVectorsExceed) {
  // From Triton's persistent matmul: k is the second last (or the last) k-tile of T exactly
  // when k + 6p is the second last (or the last) of T' = T + 6n, for the k-tiles the period
  // argument relates (p = n from k-tile 6 on). Bit-vectors reason about the carries of the
  // sums and products and give up within the budget; integers prove it at once.
  ExprContext C;
  auto c = [&](uint64_t V) { return C.constant(V, 32); };
  const Expr *K = C.param("k", 0, 32), *T = C.param("T", 4, 32), *T2 = C.param("T'", 8, 32);
  const Expr *N = C.param("n", 12, 32), *P = C.param("p", 16, 32);
  const Expr *Hyp = C.logicalAnd(
      C.logicalAnd(C.ult(K, T), C.ult(T, c(4096))),
      C.logicalAnd(
          C.logicalAnd(C.eq(T2, C.add(T, C.mul(N, c(6)))), C.ult(T2, c(4096))),
          C.logicalAnd(C.logicalAnd(C.ule(P, N), C.ult(N, c(1 << 20))),
                       C.logicalAnd(C.logicalOr(C.eq(N, c(0)), C.ule(c(8), T)),
                                    C.logicalOr(C.ult(K, c(6)), C.eq(N, P))))));
  const Expr *Shifted = C.add(K, C.mul(P, c(6)));
  auto LastBut = [&](unsigned D) {
    return C.eq(C.eq(K, C.sub(T, c(D))), C.eq(Shifted, C.sub(T2, c(D))));
  };
  const Expr *Claim = C.implies(Hyp, C.logicalAnd(LastBut(1), LastBut(2)));
  ASSERT_TRUE(hasLinearReading(Claim));
  const uint64_t Budget = 400000;
  std::unique_ptr<Solver> Ints = Solver::createZ3(60000, Budget, /*Sample=*/false);
  std::unique_ptr<Solver> Bits =
      Solver::createZ3(60000, Budget, /*Sample=*/false, /*Integers=*/false);
  EXPECT_EQ(Ints->isValid(Claim).Answer, SolverAnswer::Yes);
  EXPECT_EQ(Bits->isValid(Claim).Answer, SolverAnswer::Unknown);
  // Without the hypothesis that ties p to n from k-tile 6 on, the claim fails, over
  // integers too.
  const Expr *Untied = C.implies(C.logicalAnd(C.ult(K, T), C.ult(P, N)),
                                 C.logicalAnd(LastBut(1), LastBut(2)));
  EXPECT_EQ(Ints->isValid(Untied).Answer, SolverAnswer::No);
}

} // namespace
