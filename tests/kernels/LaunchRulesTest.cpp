// The host rules of the Blackwell launcher: which GPUs may run the kernels, which shapes they
// cover, and the grids they get (reference_kernels/blackwell/host/LaunchRules.h).
#include "LaunchRules.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::blackwell;

namespace {

// B5's shape: 256 rows x 256 columns per CTA, clusters of two along M, persistent.
BlackwellLaunch step9Launch() {
  return {BlackwellLaunchVersion, 256, 256, 64, 384, 2, 229376, 1, 128, 128, 128, 64};
}

// B1's shape: one 128 x 128 tile per CTA.
BlackwellLaunch tilusLaunch() {
  return {BlackwellLaunchVersion, 128, 128, 64, 128, 1, 147456, 0, 128, 128, 128, 64};
}

} // namespace

TEST(DeviceRefusal, RunsOnlyOnSm100) {
  EXPECT_FALSE(deviceRefusal("b3", 10, 0, "NVIDIA B200"));
  auto Hopper = deviceRefusal("b3", 9, 0, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(Hopper);
  EXPECT_EQ(*Hopper, "kernel b3 is built for sm_100a and this GPU (NVIDIA H100 80GB HBM3) is "
                     "sm_90, an older architecture without tcgen05 and tensor memory");
  auto Newer = deviceRefusal("b1", 12, 0, "RTX");
  ASSERT_TRUE(Newer);
  EXPECT_NE(Newer->find("sm_100a code runs only on sm_100"), std::string::npos) << *Newer;
  EXPECT_TRUE(deviceRefusal("b1", 10, 3, "B300"));
}

TEST(ShapeRefusal, WholeClusterTilesOnly) {
  const BlackwellLaunch L = step9Launch();
  EXPECT_FALSE(shapeRefusal(L, 512, 256, 64));
  EXPECT_FALSE(shapeRefusal(L, 4096, 4096, 4096));
  auto Rows = shapeRefusal(L, 256, 256, 64);
  ASSERT_TRUE(Rows);
  EXPECT_EQ(*Rows, "M = 256 is not a positive multiple of 512 (tile rows x cluster size)");
  EXPECT_TRUE(shapeRefusal(L, 512, 128, 64));
  EXPECT_TRUE(shapeRefusal(L, 512, 256, 96));
  EXPECT_TRUE(shapeRefusal(L, 512, 256, 0));
  EXPECT_TRUE(shapeRefusal(tilusLaunch(), 0, 128, 64));
}

TEST(LaunchRefusal, VersionAndSizes) {
  EXPECT_FALSE(launchRefusal(step9Launch()));
  BlackwellLaunch Old = step9Launch();
  Old.Version = 0;
  EXPECT_TRUE(launchRefusal(Old));
  BlackwellLaunch NoThreads = step9Launch();
  NoThreads.Threads = 0;
  EXPECT_TRUE(launchRefusal(NoThreads));
}

TEST(GridFor, OneCtaPerTileWhenNotPersistent) {
  const Grid G = gridFor(tilusLaunch(), 1024, 512, 148);
  EXPECT_EQ(G.X, 8u);
  EXPECT_EQ(G.Y, 4u);
}

TEST(GridFor, PersistentGridIsWholeClustersUpToTheSmCount) {
  const BlackwellLaunch L = step9Launch();
  // 4096 x 4096: 16 x 16 CTA tiles, more than the 148 SMs of a B200.
  EXPECT_EQ(gridFor(L, 4096, 4096, 148).X, 148u);
  EXPECT_EQ(gridFor(L, 4096, 4096, 147).X, 146u);
  EXPECT_EQ(gridFor(L, 4096, 4096, 148).Y, 1u);
  // 512 x 256: one cluster tile, two CTAs.
  EXPECT_EQ(gridFor(L, 512, 256, 148).X, 2u);
  // Never fewer than one cluster, even on a GPU reporting a single SM.
  EXPECT_EQ(gridFor(L, 512, 256, 1).X, 2u);
}
