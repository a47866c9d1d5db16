// The launches drawn for the steps the search in order of size does not reach
// (ExploreDirected.cpp), on H6. Its consumers store a held tile's leftover D chunks only
// where a cluster had a whole tile and its first stream-K piece has fewer than 4 k-tiles:
// a share boundary 1 to 3 k-tiles short of a tile's end, which takes at least 22 clusters
// (below). The search in order of size stops at 6 clusters.
// The bug is seeded in the model: the waits for the bulk stores' reads
// (cp.async.bulk.wait_group.read) on the steps only drawn launches run never happen, so a
// chunk's stmatrix may write a staging buffer a TMA store still reads.
#include "AnalyzerTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// H6 and what the search in order of size alone (no drawn launches) says of it.
class ExploreDirectedTest : public ::testing::Test {
protected:
  void SetUp() override {
    K = test::loadReferenceKernel("h6.ptx");
    if (!K)
      GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
    Sizes = K->Options;
    Sizes.DrawLaunches = false;
    BySize = exploreAllTrips(K->RP, Sizes);
    ASSERT_EQ(BySize.Verdict, ExploreVerdict::Unknown) << BySize.Reason;
  }

  /// Makes each GroupWait step of Steps in program Pr never happen; how many.
  unsigned dropBulkWaits(RoleProgram &Pr, const std::vector<unsigned> &Steps) {
    unsigned N = 0;
    for (unsigned SI : Steps)
      if (Pr.Steps[SI].Kind == StepKind::GroupWait) {
        Pr.Steps[SI].When = K->P->Analysis->context().boolean(false);
        ++N;
      }
    return N;
  }

  /// Found is a race on a launch whose schedule replays to it.
  void expectReplayedRace(const ParametricResult &Found) {
    ASSERT_EQ(Found.Verdict, ExploreVerdict::Race) << Found.Reason;
    EXPECT_NE(Found.Found.Message.find("while a bulk store of consumer"), std::string::npos)
        << Found.Found.Message;
    ConcreteSystem S = instantiate(K->RP, Found.Launch);
    ExploreResult Again = replay(S, Found.Found.Schedule);
    EXPECT_EQ(Again.Verdict, ExploreVerdict::Race);
    EXPECT_EQ(Again.Message, Found.Found.Message);
  }

  std::optional<test::ReferenceKernel> K;
  ParametricOptions Sizes;
  ParametricResult BySize;
};

TEST_F(ExploreDirectedTest, ABulkStoreRaceOnlyDrawnLaunchesRunIsFound) {
  ParametricResult Drawn = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(Drawn.Verdict, ExploreVerdict::Unknown) << Drawn.Reason;
  // The drawn launches run steps at PTX lines the search in order of size left, and leave
  // none it ran.
  ASSERT_FALSE(BySize.Unreached.empty());
  EXPECT_LT(Drawn.Unreached.size(), BySize.Unreached.size());
  // What is left is one of the four unrolled copies of the leftover store, chunk 0's,
  // which no launch runs: a leftover chunk follows one the unit's k-loop stored.
  EXPECT_LE(4 * Drawn.Unreached.size(), BySize.Unreached.size());
  for (unsigned Line : Drawn.Unreached)
    EXPECT_TRUE(llvm::is_contained(BySize.Unreached, Line)) << "line " << Line;
  EXPECT_EQ(Drawn.Reason.find("ran in none of them (" + std::to_string(BySize.Unreached[0])),
            std::string::npos)
      << Drawn.Reason;

  // The seeded bug: on the steps only drawn launches run, no wait for the stores' reads.
  unsigned Seeded = 0;
  for (RoleProgram &Pr : K->RP.Programs)
    for (unsigned SI = 0; SI < Pr.Steps.size(); ++SI)
      if (unsigned Event = Pr.Steps[SI].Event; Event != NoIndex) {
        unsigned Line = K->P->Events[Event].Where.PtxLine;
        if (llvm::is_contained(BySize.Unreached, Line) &&
            !llvm::is_contained(Drawn.Unreached, Line))
          Seeded += dropBulkWaits(Pr, {SI});
      }
  ASSERT_GT(Seeded, 0u);

  ParametricResult Missed = exploreAllTrips(K->RP, Sizes);
  EXPECT_EQ(Missed.Verdict, ExploreVerdict::Unknown) << "the search in order of size ran them";

  ParametricResult Found = exploreAllTrips(K->RP, K->Options);
  expectReplayedRace(Found);
  // A stream-K launch beyond the search in order of size: more than 6 clusters, or a tile
  // count its M and N up to 512 cannot make (a cluster's whole tile before its piece).
  const Instance &L = Found.Launch;
  EXPECT_GE(L.Params.at("K"), 4096u);
  EXPECT_TRUE(L.GridCtas > 6 * K->RP.ClusterSize || L.Params.at("M") > 512 ||
              L.Params.at("N") > 512)
      << L.GridCtas << " CTAs, M = " << L.Params.at("M") << ", N = " << L.Params.at("N");
}

/// The steps of Items, with those of the loops in it, into Out.
void stepsIn(const RoleProgram &Pr, const std::vector<RoleItem> &Items,
             std::vector<unsigned> &Out) {
  for (const RoleItem &It : Items) {
    if (It.IsLoop)
      stepsIn(Pr, Pr.Loops[It.Index].Body, Out);
    else
      Out.push_back(It.Index);
  }
}

TEST_F(ExploreDirectedTest, ALeftoverStoreRaceNeedsAndGetsAManyClusterLaunch) {
  // The leftover loops of the stream-K pieces: loops that store (a bulk wait) and wait on
  // no mbarrier (the k-loop does), whose steps no launch of the search in order of size ran.
  unsigned Seeded = 0;
  for (RoleProgram &Pr : K->RP.Programs)
    for (const RoleLoop &L : Pr.Loops) {
      std::vector<unsigned> Steps;
      stepsIn(Pr, L.Body, Steps);
      bool Waits = false, Stores = false, Unrun = !Steps.empty();
      for (unsigned SI : Steps) {
        const RoleStep &St = Pr.Steps[SI];
        Waits |= St.Kind == StepKind::Wait;
        Stores |= St.Kind == StepKind::GroupWait;
        Unrun &= St.Event == NoIndex ||
                 llvm::is_contained(BySize.Unreached, K->P->Events[St.Event].Where.PtxLine);
      }
      if (!Waits && Stores && Unrun)
        Seeded += dropBulkWaits(Pr, Steps);
    }
  ASSERT_GT(Seeded, 0u);

  ParametricResult Found = exploreAllTrips(K->RP, K->Options);
  expectReplayedRace(Found);
  // A piece of 1 to 3 k-tiles after a whole tile: on G clusters with T = K / 64 k-tiles a
  // tile, cluster w's share starts floor(q T / G) k-tiles into a tile (q = w rem mod G <=
  // G - 1), at least T - 3 only where T <= 3 G; and stream-K runs only where a share saves
  // 32 k-tiles with rem >= G / 2 tiles split, so T >= 64: G >= 22.
  const Instance &L = Found.Launch;
  EXPECT_GE(L.GridCtas, 22 * K->RP.ClusterSize);
  EXPECT_GE(L.Params.at("K") / 64, 64u);
}

} // namespace
