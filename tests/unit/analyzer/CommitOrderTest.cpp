// One thread's tcgen05.commit arrivals land in the order of its commits, in Z3's model as in
// the explorer's (the PTX ISA states no order between two commits' arrivals, so it is an
// assumption, which every verdict states). tests/lit/verify/Inputs/commit-order.ptx releases
// its last stage and commits the accumulator's barrier from one lane: without the order, the
// second commit lands first, the CTA reads the accumulator and exits, and the release lands
// after it (Z3's search found exactly that on B2 once it had a minute per property). Where
// another thread commits the accumulator's barrier the schedule is a real one, which both
// engines report (tests/lit/verify/commit-order.test).
#include "VerifyTestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

const Property Hygiene = Property::BarrierHygiene;

/// Z3's bounded search alone on Inputs/commit-order.ptx for barrier hygiene at one k-tile,
/// within 40 million units of Z3's resource count and MaxSteps steps; InOrder:
/// VerifyOptions::CommitsInOrder.
std::unique_ptr<Verified> z3Hygiene(bool InOrder, unsigned MaxSteps) {
  VerifyOptions Z3Only;
  Z3Only.ExploreAllTrips = false;
  Z3Only.Properties = {Hygiene};
  Z3Only.ResourceLimit = 40000000;
  Z3Only.TimeoutMs = 600000; // only stops a search gone wrong: the budget decides
  Z3Only.Params["commit_order_param_3"] = 64;
  Z3Only.MaxBmcSteps = MaxSteps;
  Z3Only.CommitsInOrder = InOrder;
  return verifyText(verifyInput("commit-order.ptx"), Z3Only);
}

bool statesTheOrder(const Verdict &V) {
  for (const std::string &A : V.Assumptions)
    if (A.find("tcgen05.commit arrivals happen in the order of its commits") !=
        std::string::npos)
      return true;
  return false;
}

TEST(CommitOrderTest, OneThreadsCommitsLandInOrder) {
  // In any order, the accumulator's commit lands first and the CTA leaves before the last
  // release arrives.
  auto Any = z3Hygiene(false, VerifyOptions().MaxBmcSteps);
  ASSERT_TRUE(Any->P);
  const Verdict &B = Any->of(Hygiene);
  ASSERT_TRUE(B.refuted()) << describe(B);
  EXPECT_NE(B.Reason.find("a commit arrives on empty[0] after CTA 0 exited"), std::string::npos)
      << describe(B);
  EXPECT_FALSE(statesTheOrder(B)) << describe(B);
  // In order, nothing to the depth of that schedule.
  ASSERT_GT(B.BoundReached, 0u);
  auto Ordered = z3Hygiene(true, B.BoundReached);
  ASSERT_TRUE(Ordered->P);
  const Verdict &V = Ordered->of(Hygiene);
  ASSERT_TRUE(V.unknown()) << describe(V);
  EXPECT_NE(V.Reason.find("no counterexample within the bound"), std::string::npos)
      << describe(V);
  EXPECT_EQ(V.BoundReached, B.BoundReached);
  EXPECT_TRUE(statesTheOrder(V)) << describe(V);
}

} // namespace
