// The tensor-memory allocator model.
#include "wsv/models/Tmem.h"

#include <gtest/gtest.h>

using namespace wsv::models;

namespace {

TEST(Tmem, FullAllocationBlocksOthersUntilFreed) {
  TmemAllocator A;
  uint32_t C0 = 99, C1 = 99;
  EXPECT_EQ(A.alloc(512, C0), TmemResult::Ok);
  EXPECT_EQ(C0, 0u);
  EXPECT_EQ(A.alloc(32, C1), TmemResult::Blocked);
  EXPECT_EQ(A.dealloc(C0, 512), TmemResult::Ok);
  EXPECT_EQ(A.alloc(32, C1), TmemResult::Ok);
  EXPECT_EQ(A.columnsInUse(), 32u);
}

TEST(Tmem, ColumnCountsArePowersOfTwoFrom32To512) {
  TmemAllocator A;
  uint32_t C;
  for (uint32_t Bad : {0u, 16u, 48u, 96u, 1024u})
    EXPECT_EQ(A.alloc(Bad, C), TmemResult::BadColumnCount) << Bad;
  for (uint32_t Good : {32u, 64u, 128u, 256u})
    EXPECT_TRUE(TmemAllocator::validColumnCount(Good)) << Good;
}

TEST(Tmem, TwoCtasOfHalfTheColumnsFitAThirdBlocks) {
  // Occupancy: two CTAs on one SM asking 256 columns each fit; a third waits forever if the
  // others never free theirs (tcgen05-alloc-exhaustion).
  TmemAllocator A;
  uint32_t C0, C1, C2;
  EXPECT_EQ(A.alloc(256, C0), TmemResult::Ok);
  EXPECT_EQ(A.alloc(256, C1), TmemResult::Ok);
  EXPECT_NE(C0, C1);
  EXPECT_EQ(A.alloc(256, C2), TmemResult::Blocked);
}

TEST(Tmem, DeallocMustMatchAnAllocation) {
  TmemAllocator A;
  uint32_t C;
  A.alloc(128, C);
  EXPECT_EQ(A.dealloc(C, 64), TmemResult::NotAllocated);
  EXPECT_EQ(A.dealloc(C + 128, 128), TmemResult::NotAllocated);
  EXPECT_EQ(A.dealloc(C, 128), TmemResult::Ok);
  EXPECT_EQ(A.dealloc(C, 128), TmemResult::NotAllocated);
}

TEST(Tmem, NoAllocAfterRelinquish) {
  TmemAllocator A;
  uint32_t C;
  A.relinquishPermit();
  EXPECT_EQ(A.alloc(32, C), TmemResult::PermitRelinquished);
}

} // namespace
