// The launches that run what the small ones did not (ExploreCoverage.cpp), on H6: its
// stream-K pieces run only at K >= 4096 on two clusters or more, so a bug there is invisible
// to the small launches that exploreAllTrips explores where it makes no statement for every
// K. The bug is seeded in the model: each consumer release that the small launches never
// run (the end of a stream-K piece) is given a condition that never holds, so that stage is
// never released.
#include "AnalyzerTestSupport.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

TEST(ExploreCoverageTest, AStreamKPieceBugIsFoundByTheLaunchesThatRunIt) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;

  // The kernel as it is: no statement for every K, no bug either, and the reason says that
  // larger launches ran.
  ParametricResult Clean = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(Clean.Verdict, ExploreVerdict::Unknown) << Clean.Reason;
  EXPECT_NE(Clean.Reason.find("larger one(s) that run steps those did not"), std::string::npos)
      << Clean.Reason;
  bool StreamK = false;
  for (const std::string &Run : Clean.Runs)
    StreamK |= Run.find("K = 4096") != std::string::npos &&
               Run.find("CTA 2 and its cluster") != std::string::npos;
  EXPECT_TRUE(StreamK) << "no launch ran the second cluster of a stream-K grid";

  // The seeded bug: the releases at the end of the stream-K pieces never happen.
  std::vector<std::pair<unsigned, unsigned>> Seeded = test::streamKArrivals(*K);
  ASSERT_FALSE(Seeded.empty());
  for (auto [PI, SI] : Seeded)
    K->RP.Programs[PI].Steps[SI].When = K->P->Analysis->context().boolean(false);

  ParametricOptions NoCover = K->Options;
  NoCover.CoverSteps = false;
  ParametricResult Missed = exploreAllTrips(K->RP, NoCover);
  EXPECT_EQ(Missed.Verdict, ExploreVerdict::Unknown) << "the small launches run the pieces";

  ParametricResult Found = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(Found.Verdict, ExploreVerdict::Deadlock) << Found.Reason;
  EXPECT_GE(Found.Launch.Params.at("K"), 4096u);
  EXPECT_GT(Found.Launch.GridCtas, K->RP.ClusterSize);
  // A schedule of that launch: replayed from the start, it reaches the same deadlock.
  ConcreteSystem S = instantiate(K->RP, Found.Launch);
  ExploreResult Again = replay(S, Found.Found.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Deadlock);
  EXPECT_EQ(Again.Message, Found.Found.Message);
}

} // namespace
