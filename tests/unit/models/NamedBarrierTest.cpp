// The named-barrier reference model against the PTX ISA's bar/barrier rules.
#include "wsv/models/NamedBarrier.h"

#include <gtest/gtest.h>

using namespace wsv::models;

namespace {

TEST(NamedBarrier, CompletesWhenAllWarpsArrived) {
  NamedBarrierFile F;
  uint64_t T0 = 99, T1 = 99, T2 = 99, T3 = 99;
  // A warpgroup-wide barrier: 128 threads, four warps.
  EXPECT_EQ(F.arrive(10, 128, 32, T0), NamedBarrierViolation::None);
  EXPECT_EQ(F.arrive(10, 128, 32, T1), NamedBarrierViolation::None);
  EXPECT_EQ(F.arrive(10, 128, 32, T2), NamedBarrierViolation::None);
  EXPECT_FALSE(F.passed(10, T0));
  EXPECT_EQ(F.arrive(10, 128, 32, T3), NamedBarrierViolation::None);
  EXPECT_TRUE(F.passed(10, T0));
  EXPECT_TRUE(F.passed(10, T3));
  EXPECT_EQ(F.get(10).arrived(), 0u);
}

TEST(NamedBarrier, TooFewParticipantsNeverComplete) {
  // bar.sync 1, 256 reached by only one warpgroup: the barrier-divergent / count hang.
  NamedBarrierFile F;
  uint64_t T;
  for (int W = 0; W < 4; ++W)
    F.arrive(1, 256, 32, T);
  EXPECT_FALSE(F.passed(1, T));
  EXPECT_EQ(F.get(1).arrived(), 128u);
}

TEST(NamedBarrier, CountMismatchIsAViolation) {
  NamedBarrierFile F;
  uint64_t T;
  EXPECT_EQ(F.arrive(2, 256, 32, T), NamedBarrierViolation::None);
  EXPECT_EQ(F.arrive(2, 128, 32, T), NamedBarrierViolation::CountMismatch);
}

TEST(NamedBarrier, CountsMustBeWholeWarps) {
  NamedBarrierFile F;
  uint64_t T;
  EXPECT_EQ(F.arrive(0, 100, 32, T), NamedBarrierViolation::BadCount);
  EXPECT_EQ(F.arrive(0, 0, 32, T), NamedBarrierViolation::BadCount);
  EXPECT_EQ(F.arrive(0, 64, 1, T), NamedBarrierViolation::BadCount);
}

TEST(NamedBarrier, OnlySixteenIds) {
  NamedBarrierFile F;
  uint64_t T;
  EXPECT_EQ(F.arrive(16, 32, 32, T), NamedBarrierViolation::IdOutOfRange);
  EXPECT_EQ(F.arrive(15, 32, 32, T), NamedBarrierViolation::None);
  EXPECT_TRUE(F.passed(15, T));
}

TEST(NamedBarrier, ArriveThenSyncProducerConsumer) {
  // Producer warp bar.arrive 3, 160; consumer warpgroup bar.sync 3, 160.
  NamedBarrierFile F;
  uint64_t Producer, Consumer;
  F.arrive(3, 160, 32, Producer);
  F.arrive(3, 160, 128, Consumer);
  EXPECT_TRUE(F.passed(3, Consumer));
  // The next instance may use another count.
  EXPECT_EQ(F.arrive(3, 64, 32, Consumer), NamedBarrierViolation::None);
  EXPECT_FALSE(F.passed(3, Consumer));
  EXPECT_EQ(F.get(3).completedInstances(), 1u);
}

} // namespace
