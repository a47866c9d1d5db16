// The solver door: validity, satisfiability and model counting of expressions, answered by
// sampling where a witness is easy and by Z3 where it is not.
#include "wsv/analyzer/Solver.h"

#include "gtest/gtest.h"

#include <chrono>
#include <thread>
#include <vector>

using namespace wsv::analyzer;

namespace {

class SolverTest : public ::testing::Test {
protected:
  ExprContext C;
  std::unique_ptr<Solver> S = Solver::createZ3(5000);
  const Expr *c(uint64_t V, unsigned W = 32) { return C.constant(V, W); }
  const Expr *x() { return C.param("x", 0, 32); }
};

TEST_F(SolverTest, ValidityNeedsAProofNotSamples) {
  // x & 0xf0 <= x for every x: no sample can show it, Z3 proves it.
  EXPECT_EQ(S->isValid(C.ule(C.bitAnd(x(), c(0xf0)), x())).Answer, SolverAnswer::Yes);
  // x < 1000 fails for x = 1000.
  EXPECT_EQ(S->isValid(C.ult(x(), c(1000))).Answer, SolverAnswer::No);
  // Leaves keep their ranges: %laneid < 32 always (the builders already fold this one, so ask
  // through an opaque sum).
  const Expr *Lane = C.specialRegister(SpecialRegister::LaneId);
  EXPECT_EQ(S->isValid(C.ult(C.add(Lane, x()), C.add(x(), c(32)))).Answer, SolverAnswer::No)
      << "wraps around for large x";
  EXPECT_EQ(S->isValid(C.implies(C.ult(x(), c(100)), C.ult(C.add(Lane, x()), c(131)))).Answer,
            SolverAnswer::Yes);
}

TEST_F(SolverTest, WithoutSamplingZ3AnswersAlone) {
  // exploreAllTrips's solvers skip the samples: the answers are the same, from Z3 (a model
  // of the negation for a claim that fails, a proof for one that holds).
  std::unique_ptr<Solver> NoSamples = Solver::createZ3(5000, 1500000, /*Sample=*/false);
  EXPECT_EQ(NoSamples->isValid(C.ult(x(), c(1000))).Answer, SolverAnswer::No);
  EXPECT_EQ(NoSamples->isValid(C.ule(C.bitAnd(x(), c(0xf0)), x())).Answer, SolverAnswer::Yes);
  EXPECT_EQ(NoSamples->isSatisfiable(C.eq(C.mul(x(), c(3)), c(7))).Answer, SolverAnswer::Yes);
  const Expr *NoSmall = C.bitAnd(C.eq(C.mul(x(), c(3)), c(7)), C.ult(x(), c(100)));
  EXPECT_EQ(NoSamples->isSatisfiable(NoSmall).Answer, SolverAnswer::No);
}

TEST_F(SolverTest, SatisfiabilityFindsOrRefutesWitnesses) {
  EXPECT_EQ(S->isSatisfiable(C.eq(C.mul(x(), c(3)), c(21))).Answer, SolverAnswer::Yes);
  // 3x == 7 has a solution modulo 2^32, but none below 100.
  const Expr *NoSmall = C.bitAnd(C.eq(C.mul(x(), c(3)), c(7)), C.ult(x(), c(100)));
  EXPECT_EQ(S->isSatisfiable(NoSmall).Answer, SolverAnswer::No);
  EXPECT_EQ(S->isSatisfiable(C.eq(C.mul(x(), c(3)), c(7))).Answer, SolverAnswer::Yes);
}

TEST_F(SolverTest, CountingModelsOverBoundedLeaves) {
  const Expr *Rank = C.specialRegister(SpecialRegister::ClusterCtaRank);
  // Ranks 0..7 with rank % 4 == 1: ranks 1 and 5.
  const Expr *P = C.bitAnd(C.eq(C.urem(Rank, c(4)), c(1)), C.ult(Rank, c(8)));
  ModelCount N = S->countModels(P, {Rank}, 16);
  ASSERT_TRUE(N.Count.has_value()) << N.Reason;
  EXPECT_EQ(*N.Count, 2u);
  // %cluster_ctarank is below 16 by its range: rank >= 4 holds for 12 ranks.
  ModelCount M = S->countModels(C.ule(c(4), Rank), {Rank}, 16);
  ASSERT_TRUE(M.Count.has_value()) << M.Reason;
  EXPECT_EQ(*M.Count, 12u);
  // More models than the limit: no count, and why.
  ModelCount Many = S->countModels(C.ult(x(), c(1000)), {x()}, 10);
  EXPECT_FALSE(Many.Count.has_value());
  EXPECT_EQ(Many.Reason, "more than 10 models");
}

TEST_F(SolverTest, MapaIsAFunctionOfAddressAndRank) {
  const Expr *Bar = C.symbol("bar", SymbolSpace::Shared, 32);
  const Expr *R = C.param("r", 0, 32);
  // Same address and rank: same peer address; nothing more is known.
  EXPECT_EQ(S->isValid(C.eq(C.mapa(Bar, R), C.mapa(Bar, C.add(R, c(0))))).Answer,
            SolverAnswer::Yes);
  EXPECT_EQ(S->isValid(C.eq(C.mapa(Bar, R), C.mapa(Bar, c(0)))).Answer, SolverAnswer::No);
}

// Factoring a 60-bit product of two primes: far beyond any limit used here. Both factors are
// below 2^31, so the 64-bit product cannot wrap (modulo 2^64 the equation has easy solutions,
// which Z3 found in a fraction of a second).
const Expr *hardFactoring(ExprContext &C) {
  const Expr *X = C.param("p", 0, 64), *Y = C.param("q", 8, 64);
  uint64_t N = 1000000007ull * 998244353ull;
  const Expr *Low = C.constant(1u << 20, 64), *High = C.constant(1ull << 31, 64);
  auto Between = [&](const Expr *V) { return C.bitAnd(C.ult(Low, V), C.ult(V, High)); };
  return C.bitAnd(C.eq(C.mul(X, Y), C.constant(N, 64)),
                  C.bitAnd(Between(X), C.bitAnd(Between(Y), C.ult(X, Y))));
}

TEST_F(SolverTest, ATimeLimitEndsTheCheckAndTheSolverGoesOn) {
  // The limit is ours (a watch thread interrupts the check), not Z3's timer: the check ends
  // unknown on time, says so, and the next question on the same context gets its answer.
  std::unique_ptr<Solver> Quick = Solver::createZ3(200, 0, /*Sample=*/false);
  auto Start = std::chrono::steady_clock::now();
  SolverResult R = Quick->isSatisfiable(hardFactoring(C));
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  EXPECT_EQ(R.Answer, SolverAnswer::Unknown);
  EXPECT_EQ(R.Reason, "the solver gave up: timeout");
  EXPECT_LT(Seconds, 30) << "the limit did not end the check";
  EXPECT_EQ(Quick->isSatisfiable(C.eq(C.mul(x(), c(3)), c(21))).Answer, SolverAnswer::Yes);
  EXPECT_EQ(Quick->isValid(C.ult(x(), c(1000))).Answer, SolverAnswer::No);
}

TEST_F(SolverTest, TimeLimitsOnManyThreadsAtOnce) {
  // Z3 4.8's timer pool raced when threads armed and expired timers together; ours must let
  // every thread finish, each with checks that run out and checks that answer in between.
  // The checks that must answer get a limit of their own that a loaded machine under the
  // sanitizers cannot exhaust (a 20 ms limit once ran out on an easy one there), so the test
  // says only what it means: no thread hangs, crashes or loses an answer to another's timer.
  std::vector<std::thread> Threads;
  std::vector<int> Answered(4, 0), TimedOut(4, 0);
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      ExprContext Own;
      std::unique_ptr<Solver> Quick = Solver::createZ3(20 + 10 * T, 0, /*Sample=*/false);
      std::unique_ptr<Solver> Patient = Solver::createZ3(60000, 0, /*Sample=*/false);
      const Expr *V = Own.param("v", 0, 32);
      for (int I = 0; I < 5; ++I) {
        TimedOut[T] += Quick->isSatisfiable(hardFactoring(Own)).Answer == SolverAnswer::Unknown;
        Answered[T] += Patient->isSatisfiable(Own.eq(Own.mul(V, Own.constant(3, 32)),
                                                     Own.constant(21 + I, 32)))
                           .Answer == SolverAnswer::Yes;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  for (int T = 0; T < 4; ++T) {
    EXPECT_EQ(TimedOut[T], 5) << "thread " << T;
    EXPECT_EQ(Answered[T], 5) << "thread " << T;
  }
}

} // namespace
