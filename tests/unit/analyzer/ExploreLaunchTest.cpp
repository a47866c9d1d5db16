// A launch given in full (ExploreLaunch.cpp): where exploreAllTrips makes no statement for
// every parameter (H6's stream-K pieces), every cluster of that launch is explored. On H6:
// the launch runs the stream-K loop, finds a bug there that the small launches miss, says
// which parameter a launch lacks, and explores one cluster of each kind of steps, which must
// give each cluster the verdict exploring it alone gives.
#include "AnalyzerTestSupport.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// H6's stream-K at its smallest: 6 tiles of 256x256 on 4 clusters leave a last wave of 2
/// tiles, cut into 4 shares of 32 k-tiles.
Instance streamKLaunch() {
  Instance I;
  I.Params = {{"M", 768}, {"N", 512}, {"K", 4096}};
  I.GridCtas = 8;
  I.CheckTripConditions = true;
  return I;
}

/// Whether the producer runs a step in the producer's last top-level loop (the
/// stream-K pieces come after the data-parallel tiles).
bool runsLastProducerLoop(const ConcreteSystem &S, const RolePrograms &RP) {
  for (const ConcreteAgent &A : S.Agents) {
    const RoleProgram &Pr = RP.Programs[A.Program];
    if (Pr.Name != "producer")
      continue;
    LoopId Last = NoIndex;
    for (const RoleItem &It : Pr.Body)
      if (It.IsLoop)
        Last = Pr.Loops[It.Index].Loop;
    for (const ConcreteStep &C : A.Steps)
      for (const auto &[Loop, V] : C.Iterations)
        if (Loop == Last)
          return true;
  }
  return false;
}

TEST(ExploreLaunchTest, TheStreamKLaunchRunsItsPiecesAndIsProvedForItself) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  Instance Small;
  Small.Params = {{"M", 256}, {"N", 256}, {"K", 64}};
  Small.GridCtas = 2;
  ConcreteSystem DataParallel = instantiate(K->RP, Small);
  ASSERT_EQ(DataParallel.Unknown, "");
  EXPECT_FALSE(runsLastProducerLoop(DataParallel, K->RP));
  for (uint64_t First : {0, 2, 4, 6}) {
    Instance I = streamKLaunch();
    I.FirstCta = First;
    ConcreteSystem S = instantiate(K->RP, I);
    ASSERT_EQ(S.Unknown, "") << "cluster of CTA " << First;
    EXPECT_TRUE(runsLastProducerLoop(S, K->RP)) << "cluster of CTA " << First;
  }

  ParametricOptions O = K->Options;
  O.Launch = streamKLaunch();
  ParametricResult R = exploreAllTrips(K->RP, O);
  ASSERT_EQ(R.Verdict, ExploreVerdict::Clean) << R.Reason;
  EXPECT_TRUE(R.WholeLaunch);
  EXPECT_NE(R.ForParameters.find("K = 4096, M = 768, N = 512, a grid of 8 CTAs"),
            std::string::npos)
      << R.ForParameters;
  EXPECT_NE(R.ForParameters.find("4 cluster(s)"), std::string::npos) << R.ForParameters;
  // Why no statement for every K: the argument's own reason, kept.
  EXPECT_NE(R.NotForEvery.find("not the one loop around the role's work"), std::string::npos)
      << R.NotForEvery;
}

TEST(ExploreLaunchTest, ABugInTheStreamKPiecesIsFoundOnTheLaunch) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  // Seeded in the model: the releases at the end of the stream-K pieces never happen.
  std::vector<std::pair<unsigned, unsigned>> Seeded = test::streamKArrivals(*K);
  ASSERT_FALSE(Seeded.empty());
  for (auto [PI, SI] : Seeded)
    K->RP.Programs[PI].Steps[SI].When = K->P->Analysis->context().boolean(false);
  // Without the launches that cover what the small ones miss, only the launch finds it.
  ParametricOptions O = K->Options;
  O.CoverSteps = false;
  ParametricResult Missed = exploreAllTrips(K->RP, O);
  ASSERT_EQ(Missed.Verdict, ExploreVerdict::Unknown) << Missed.Reason;
  O.Launch = streamKLaunch();
  ParametricResult Found = exploreAllTrips(K->RP, O);
  ASSERT_EQ(Found.Verdict, ExploreVerdict::Deadlock) << Found.Reason;
  EXPECT_EQ(Found.Launch.GridCtas, 8u);
  EXPECT_EQ(Found.Launch.Params.at("K"), 4096u);
  // A schedule of that cluster of the launch: replayed, it reaches the same deadlock.
  ExploreResult Again = replay(instantiate(K->RP, Found.Launch), Found.Found.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Deadlock);
  EXPECT_EQ(Again.Message, Found.Found.Message);
}

TEST(ExploreLaunchTest, ALaunchWithoutAParameterTheProtocolReadsIsNotExplored) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  ParametricOptions O = K->Options;
  O.Launch = streamKLaunch();
  O.Launch->Params.erase("N");
  ParametricResult R = exploreAllTrips(K->RP, O);
  EXPECT_EQ(R.Verdict, ExploreVerdict::Unknown);
  EXPECT_FALSE(R.WholeLaunch);
  EXPECT_NE(R.Reason.find("gives no value for N, which the protocol reads"), std::string::npos)
      << R.Reason;
}

TEST(ExploreLaunchTest, ClustersOfOneKindHaveTheVerdictOfExploringEachAlone) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  // 16 tiles on 6 clusters (3 tiles for some, 2 for others, no stream-K at K = 256) and 4
  // shares of stream-K: kinds of both sorts.
  for (Instance Launch : {streamKLaunch(), Instance{{{"M", 1024}, {"N", 1024}, {"K", 256}}, 12}}) {
    Launch.CheckTripConditions = true;
    ParametricOptions O = K->Options;
    O.Launch = Launch;
    ParametricResult R = exploreAllTrips(K->RP, O);
    ASSERT_EQ(R.Verdict, ExploreVerdict::Clean) << R.Reason;
    // The kinds it counted, and each cluster explored alone.
    uint64_t Clusters = Launch.GridCtas / K->RP.ClusterSize;
    std::set<uint64_t> States;
    for (uint64_t C = 0; C < Clusters; ++C) {
      Instance I = Launch;
      I.FirstCta = C * K->RP.ClusterSize;
      ExploreOptions EO;
      EO.MaxStates = O.MaxStates;
      ExploreResult E = explore(instantiate(K->RP, I), EO);
      EXPECT_EQ(E.Verdict, ExploreVerdict::Clean) << "cluster " << C;
      States.insert(E.States);
    }
    size_t Kinds = std::stoul(R.ForParameters.substr(R.ForParameters.find("cluster(s), ") + 12));
    EXPECT_LT(Kinds, Clusters) << R.ForParameters;
    // Clusters with different state counts cannot be of one kind.
    EXPECT_GE(Kinds, States.size()) << R.ForParameters;
  }
}

} // namespace
