// The mbarrier reference model against the rules of the PTX ISA's mbarrier section.
#include "wsv/models/Mbarrier.h"

#include "SavedIntegers.h"

#include <gtest/gtest.h>

using namespace wsv::models;

namespace {

TEST(Mbarrier, InitStartsInPhaseZero) {
  Mbarrier B;
  ASSERT_EQ(B.init(3), MbarrierViolation::None);
  EXPECT_EQ(B.pending(), 3u);
  EXPECT_EQ(B.expected(), 3u);
  EXPECT_EQ(B.txCount(), 0);
  EXPECT_EQ(B.currentParity(), 0u);
  // A consumer waiting on parity 0 blocks; a producer waiting on parity 1 passes at once,
  // which is why producers start their empty-barrier phase at 1.
  EXPECT_FALSE(B.testWaitParity(0));
  EXPECT_TRUE(B.testWaitParity(1));
}

TEST(Mbarrier, PhaseCompletesAfterExpectedArrivals) {
  Mbarrier B;
  B.init(2);
  EXPECT_EQ(B.arrive(), MbarrierViolation::None);
  EXPECT_FALSE(B.testWaitParity(0));
  EXPECT_EQ(B.arrive(), MbarrierViolation::None);
  EXPECT_TRUE(B.testWaitParity(0));
  EXPECT_FALSE(B.testWaitParity(1));
  EXPECT_EQ(B.pending(), 2u) << "pending reloads from expected on completion";
  EXPECT_EQ(B.completedPhases(), 1u);
}

TEST(Mbarrier, ArriveWithCountLowersPendingByCount) {
  Mbarrier B;
  B.init(128);
  EXPECT_EQ(B.arrive(100), MbarrierViolation::None);
  EXPECT_EQ(B.pending(), 28u);
  EXPECT_EQ(B.arrive(28), MbarrierViolation::None);
  EXPECT_EQ(B.completedPhases(), 1u);
}

TEST(Mbarrier, ExpectTxHoldsThePhaseUntilBytesLand) {
  Mbarrier B;
  B.init(1);
  EXPECT_EQ(B.arriveExpectTx(16384), MbarrierViolation::None);
  EXPECT_EQ(B.pending(), 0u);
  EXPECT_FALSE(B.testWaitParity(0)) << "all arrivals in, but the bytes are still in flight";
  EXPECT_EQ(B.completeTx(8192), MbarrierViolation::None);
  EXPECT_FALSE(B.testWaitParity(0));
  EXPECT_EQ(B.completeTx(8192), MbarrierViolation::None);
  EXPECT_TRUE(B.testWaitParity(0));
  EXPECT_EQ(B.txCount(), 0);
}

TEST(Mbarrier, CopyThatLandsBeforeExpectTxDrivesTxCountNegative) {
  Mbarrier B;
  B.init(1);
  EXPECT_EQ(B.completeTx(4096), MbarrierViolation::None);
  EXPECT_EQ(B.txCount(), -4096);
  EXPECT_FALSE(B.testWaitParity(0)) << "the producer's arrival is still missing";
  EXPECT_EQ(B.arriveExpectTx(4096), MbarrierViolation::None);
  EXPECT_TRUE(B.testWaitParity(0));
}

TEST(Mbarrier, TooFewBytesNeverCompletes) {
  Mbarrier B;
  B.init(1);
  B.arriveExpectTx(32768); // expect_tx counts both operands ...
  B.completeTx(16384);     // ... but only one copy lands
  EXPECT_FALSE(B.testWaitParity(0));
  EXPECT_EQ(B.txCount(), 16384);
}

TEST(Mbarrier, ExtraArrivalIsAViolationAndChangesNothing) {
  Mbarrier B;
  B.init(1);
  B.arriveExpectTx(1024);
  Mbarrier Before = B;
  EXPECT_EQ(B.arrive(), MbarrierViolation::PendingUnderflow);
  EXPECT_TRUE(B == Before);
  EXPECT_EQ(B.arrive(2), MbarrierViolation::PendingUnderflow);
}

TEST(Mbarrier, CountsOutsideTheRangeAreRejected) {
  Mbarrier B;
  EXPECT_EQ(B.init(0), MbarrierViolation::CountOutOfRange);
  EXPECT_EQ(B.init(1u << 20), MbarrierViolation::CountOutOfRange);
  EXPECT_FALSE(B.initialized());
  EXPECT_EQ(B.init((1u << 20) - 1), MbarrierViolation::None);
  EXPECT_EQ(B.arrive(0), MbarrierViolation::CountOutOfRange);
}

TEST(Mbarrier, UseBeforeInitAndAfterInval) {
  Mbarrier B;
  EXPECT_EQ(B.arrive(), MbarrierViolation::NotInitialized);
  EXPECT_EQ(B.expectTx(8), MbarrierViolation::NotInitialized);
  EXPECT_EQ(B.completeTx(8), MbarrierViolation::NotInitialized);
  B.init(1);
  EXPECT_EQ(B.inval(), MbarrierViolation::None);
  EXPECT_EQ(B.arrive(), MbarrierViolation::NotInitialized);
}

TEST(Mbarrier, TxCountRange) {
  Mbarrier B;
  B.init(1);
  EXPECT_EQ(B.expectTx(Mbarrier::MaxTxCount), MbarrierViolation::None);
  EXPECT_EQ(B.expectTx(1), MbarrierViolation::TxOutOfRange);
  Mbarrier C;
  C.init(1);
  EXPECT_EQ(C.completeTx(Mbarrier::MaxTxCount + 1), MbarrierViolation::TxOutOfRange);
}

TEST(Mbarrier, ParityCannotTellPhaseNFromNPlusTwo) {
  // A waiter that falls two phases behind sees its phase as not completed: the phase-skip hang.
  Mbarrier B;
  B.init(1);
  B.arrive();
  B.arrive();
  EXPECT_EQ(B.completedPhases(), 2u);
  EXPECT_FALSE(B.testWaitParity(0));
}

TEST(Mbarrier, ArriveDropLowersLaterPhases) {
  Mbarrier B;
  B.init(4);
  EXPECT_EQ(B.arriveDrop(), MbarrierViolation::None);
  EXPECT_EQ(B.expected(), 3u);
  B.arrive(3);
  EXPECT_EQ(B.completedPhases(), 1u);
  EXPECT_EQ(B.pending(), 3u);
}

TEST(Mbarrier, ReinitIsOnlyLegalWhenIdle) {
  Mbarrier B;
  B.init(2);
  B.arrive();
  EXPECT_EQ(B.init(2), MbarrierViolation::ReinitWhileInUse);
  B.arrive();
  EXPECT_EQ(B.init(5), MbarrierViolation::None);
  EXPECT_EQ(B.completedPhases(), 0u);
  EXPECT_EQ(B.pending(), 5u);
}

TEST(Mbarrier, CpAsyncArriveWithoutNoincKeepsTheCount) {
  // cp.async.mbarrier.arrive: +1 pending at issue, -1 when the copies land.
  Mbarrier B;
  B.init(1);
  EXPECT_EQ(B.incrementPending(), MbarrierViolation::None);
  EXPECT_EQ(B.pending(), 2u);
  B.arrive(); // the thread's own arrival
  EXPECT_FALSE(B.testWaitParity(0));
  B.arrive(); // the asynchronous one
  EXPECT_TRUE(B.testWaitParity(0));
  Mbarrier Idle;
  EXPECT_EQ(Idle.incrementPending(), MbarrierViolation::NotInitialized);
}

TEST(Mbarrier, StateTokenWaitsForItsOwnPhase) {
  Mbarrier B;
  B.init(2);
  uint64_t Token = B.arrivalToken();
  B.arrive();
  EXPECT_FALSE(B.testWaitToken(Token));
  B.arrive();
  EXPECT_TRUE(B.testWaitToken(Token));
  // Unlike parity, a token is not fooled by a second completed phase.
  B.arrive(2);
  EXPECT_TRUE(B.testWaitToken(Token));
  EXPECT_FALSE(B.testWaitToken(B.arrivalToken()));
}

TEST(Mbarrier, SavedAndLoadedItIsTheSameBarrier) {
  // Mid-phase, with a negative tx-count (a copy landed before its expect_tx).
  Mbarrier B;
  B.init(3);
  B.arrive();
  B.arrive();
  B.arrive();
  B.arrive();
  B.completeTx(512);
  test::SavedIntegers Saved;
  B.save(Saved);
  Mbarrier R;
  R.load(Saved);
  EXPECT_EQ(Saved.Next, Saved.Values.size());
  EXPECT_TRUE(R == B);
  EXPECT_EQ(R.txCount(), -512);
  EXPECT_EQ(R.completedPhases(), 1u);
}

} // namespace
