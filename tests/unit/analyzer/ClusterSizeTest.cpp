// Where the protocol's cluster size comes from: `.reqnctapercluster`, else the launch
// (ProtocolOptions::ClusterSize), else the kernel's launch description, else 1, with a note
// where the kernel reaches its cluster's peers; and which launch sizes a kernel refuses.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/ProtocolBuilder.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

/// A kernel that arrives on its peer's barrier through mapa, with the given directives.
std::string peerArrival(const std::string &Directives) {
  return R"(
.visible .entry k()
.maxntid 128, 1, 1
)" + Directives + R"(
{
  .reg .b32 %r<8>;
  .shared .align 8 .b8 bar[8];
  mov.u32 %r1, bar;
  mov.u32 %r2, %cluster_ctarank;
  xor.b32 %r3, %r2, 1;
  mapa.shared::cluster.u32 %r4, %r1, %r3;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r4];
  ret;
}
)";
}

bool notesSayAssumed(const Protocol &P) {
  for (const ProtocolNote &N : P.Notes)
    if (N.Message.find("clusters of 1 CTA assumed") != std::string::npos)
      return true;
  return false;
}

TEST(ClusterSize, UnstatedIsOneAndSaidWhereThePeersAreReached) {
  Analyzed A(peerArrival(""));
  std::unique_ptr<Protocol> P = buildProtocol(A.module(), *A.module().function("k"));
  EXPECT_EQ(P->Launch.ClusterSize, 1u);
  EXPECT_EQ(P->ClusterFrom, "");
  EXPECT_TRUE(notesSayAssumed(*P));
}

TEST(ClusterSize, ALaunchWithoutPeersNeedsNoNote) {
  // Shared::cluster alone is the CTA's own window (every TMA copy is written so).
  Analyzed A(R"(
.visible .entry k()
.maxntid 128, 1, 1
{
  .reg .b32 %r<4>;
  .shared .align 8 .b8 bar[8];
  mov.u32 %r1, bar;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1];
  ret;
}
)");
  std::unique_ptr<Protocol> P = buildProtocol(A.module(), *A.module().function("k"));
  EXPECT_FALSE(notesSayAssumed(*P));
}

TEST(ClusterSize, TheLaunchGivesItWhereThePtxStatesNone) {
  Analyzed A(peerArrival(""));
  ProtocolOptions O;
  O.ClusterSize = 2;
  O.ClusterFrom = "--cluster-size";
  std::unique_ptr<Protocol> P = buildProtocol(A.module(), *A.module().function("k"), O);
  EXPECT_EQ(P->Launch.ClusterSize, 2u);
  EXPECT_EQ(P->Launch.ClusterX, 2u);
  EXPECT_EQ(P->ClusterFrom, "--cluster-size");
  EXPECT_FALSE(notesSayAssumed(*P));
  EXPECT_EQ(clusterSizeConflict(*A.module().function("k"), 2), std::nullopt);
}

TEST(ClusterSize, ThePtxsOwnSizeWinsAndRefusesAnother) {
  Analyzed A(peerArrival(".reqnctapercluster 2, 1, 1"));
  const ptx::Function &F = *A.module().function("k");
  ProtocolOptions O;
  O.ClusterSize = 2;
  std::unique_ptr<Protocol> P = buildProtocol(A.module(), F, O);
  EXPECT_EQ(P->Launch.ClusterSize, 2u);
  EXPECT_EQ(P->ClusterFrom, ".reqnctapercluster");
  EXPECT_EQ(clusterSizeConflict(F, 2), std::nullopt);
  std::optional<std::string> Four = clusterSizeConflict(F, 4);
  ASSERT_TRUE(Four);
  EXPECT_NE(Four->find("states .reqnctapercluster 2, 1, 1"), std::string::npos) << *Four;
}

TEST(ClusterSize, ClustersOverYAndImpossibleSizesAreRefused) {
  Analyzed A(peerArrival(".reqnctapercluster 1, 2, 1"));
  const ptx::Function &F = *A.module().function("k");
  EXPECT_TRUE(clusterSizeConflict(F, 1));
  EXPECT_TRUE(clusterSizeConflict(F, 2));
  Analyzed B(peerArrival(""));
  EXPECT_TRUE(clusterSizeConflict(*B.module().function("k"), 0));
  EXPECT_TRUE(clusterSizeConflict(*B.module().function("k"), 17));
  EXPECT_FALSE(clusterSizeConflict(*B.module().function("k"), 16));
}

} // namespace
