// The async-group and tcgen05.commit reference models.
#include "wsv/models/AsyncGroups.h"

#include "SavedIntegers.h"

#include <gtest/gtest.h>

using namespace wsv::models;

namespace {

TEST(AsyncGroupQueue, WaitZeroNeedsEveryCommittedGroup) {
  AsyncGroupQueue Q;
  Q.issue(1);
  Q.commit();
  Q.issue(2);
  Q.commit();
  EXPECT_FALSE(Q.waitPasses(0));
  Q.complete(1);
  EXPECT_FALSE(Q.waitPasses(0));
  Q.complete(2);
  EXPECT_TRUE(Q.waitPasses(0));
}

TEST(AsyncGroupQueue, WaitOneLeavesTheNewestGroupInFlight) {
  // The wgmma pipelining idiom: wait_group 1 after committing k+1 releases stage k only.
  AsyncGroupQueue Q;
  Q.issue(10);
  Q.commit();
  Q.issue(11);
  Q.commit();
  EXPECT_FALSE(Q.waitPasses(1));
  Q.complete(11); // groups may finish out of order; the oldest still blocks
  EXPECT_FALSE(Q.waitPasses(1));
  Q.complete(10);
  EXPECT_TRUE(Q.waitPasses(1));
  EXPECT_EQ(Q.inFlight().size(), 0u);
}

TEST(AsyncGroupQueue, UncommittedWorkIsNotWaitedFor) {
  // wgmma without commit_group: wait_group 0 returns while the MMA still reads its stage.
  AsyncGroupQueue Q;
  Q.issue(7);
  EXPECT_TRUE(Q.waitPasses(0));
  EXPECT_EQ(Q.uncommitted(), 1u);
  EXPECT_EQ(Q.readsInFlight(), std::vector<uint32_t>{7});
}

TEST(AsyncGroupQueue, ReadWaitOnlyNeedsSourcesRead) {
  // TMA store: wait_group.read 0 frees the staging buffer before the global writes land.
  AsyncGroupQueue Q;
  Q.issue(3);
  Q.commit();
  EXPECT_FALSE(Q.waitPasses(0, /*ReadOnly=*/true));
  Q.completeRead(3);
  EXPECT_TRUE(Q.waitPasses(0, /*ReadOnly=*/true));
  EXPECT_FALSE(Q.waitPasses(0));
  EXPECT_TRUE(Q.readsInFlight().empty());
  EXPECT_EQ(Q.inFlight(), std::vector<uint32_t>{3});
}

TEST(AsyncGroupQueue, EmptyGroupIsComplete) {
  AsyncGroupQueue Q;
  Q.commit();
  EXPECT_TRUE(Q.waitPasses(0));
  EXPECT_FALSE(Q.complete(42)) << "unknown operation";
}

TEST(Tcgen05CommitTracker, EmptyCommitArrivesAtOnce) {
  // A non-elected lane's commit tracks nothing, so its arrival is due immediately: with 32
  // lanes committing, 31 arrivals land before the MMA has read its operands.
  Tcgen05CommitTracker Lane;
  EXPECT_TRUE(Lane.commit(1));
  EXPECT_EQ(Lane.pendingCommits(), 0u);
}

TEST(Tcgen05CommitTracker, CommitWaitsForEveryEarlierOperation) {
  Tcgen05CommitTracker T;
  T.issue(100);
  T.issue(101);
  EXPECT_FALSE(T.commit(1));
  EXPECT_TRUE(T.complete(101).empty());
  EXPECT_EQ(T.complete(100), std::vector<uint32_t>{1});
  EXPECT_EQ(T.pendingCommits(), 0u);
}

TEST(Tcgen05CommitTracker, FlushCommitCoversEverythingStillInFlight) {
  // Tilus V3: per-stage commits on empty[], then one more commit on the flush barrier.
  Tcgen05CommitTracker T;
  T.issue(1);
  T.commit(/*empty[0]*/ 10);
  T.issue(2);
  T.commit(/*empty[1]*/ 11);
  T.commit(/*flush*/ 12);
  EXPECT_EQ(T.complete(1), std::vector<uint32_t>{10});
  EXPECT_EQ(T.complete(2), (std::vector<uint32_t>{11, 12}));
}

TEST(AsyncGroupQueue, RetireCompletesWhatTheWaitNeedsAndNoMore) {
  // A simulation that completes operations lazily: wait_group 1 completes every group but
  // the newest, which stays in flight (its reads of the stage may still race).
  AsyncGroupQueue Q;
  Q.issue(1);
  Q.commit();
  Q.issue(2);
  Q.commit();
  Q.issue(3); // uncommitted: no wait covers it
  Q.retire(1);
  EXPECT_TRUE(Q.waitPasses(1));
  EXPECT_FALSE(Q.waitPasses(0));
  EXPECT_EQ(Q.inFlight(), (std::vector<uint32_t>{2, 3}));
  Q.completeAll();
  EXPECT_TRUE(Q.inFlight().empty());
  EXPECT_EQ(Q.committedGroups(), 0u);
}

TEST(AsyncGroupQueue, RetireReadOnlyLeavesTheWritesInFlight) {
  // wait_group.read: the staging buffer is free, the store itself is not done.
  AsyncGroupQueue Q;
  Q.issue(4);
  Q.commit();
  Q.retire(0, /*ReadOnly=*/true);
  EXPECT_TRUE(Q.readsInFlight().empty());
  EXPECT_EQ(Q.inFlight(), std::vector<uint32_t>{4});
  EXPECT_FALSE(Q.waitPasses(0));
}

/// Operations 1 and 2 under commit 10, operation 3 under commit 11.
Tcgen05CommitTracker twoCommits() {
  Tcgen05CommitTracker T;
  T.issue(1);
  T.issue(2);
  T.commit(10);
  T.issue(3);
  T.commit(11);
  return T;
}

TEST(Tcgen05CommitTracker, CompleteOldestDeliversOneCommitAtATime) {
  Tcgen05CommitTracker T = twoCommits();
  T.issue(4); // after the last commit
  EXPECT_EQ(T.completeOldest(), std::vector<uint32_t>{10});
  EXPECT_EQ(T.inFlight(), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(T.completeOldest(), std::vector<uint32_t>{11});
  EXPECT_EQ(T.inFlight(), std::vector<uint32_t>{4});
  EXPECT_TRUE(T.completeOldest().empty()); // no commit: the rest completes, nothing arrives
  EXPECT_TRUE(T.inFlight().empty());
}

TEST(AsyncGroupQueue, SavedAndLoadedItBehavesTheSame) {
  // Two committed groups (one half done, one with a finished read) and an open one.
  AsyncGroupQueue Q;
  Q.issue(1);
  Q.issue(2);
  Q.commit();
  Q.issue(3);
  Q.commit();
  Q.issue(4);
  Q.complete(1);
  Q.completeRead(3);
  test::SavedIntegers Saved;
  Q.save(Saved);
  AsyncGroupQueue R;
  R.issue(99); // load replaces whatever was there
  R.load(Saved);
  EXPECT_EQ(Saved.Next, Saved.Values.size());
  EXPECT_EQ(R.inFlight(), Q.inFlight());
  EXPECT_EQ(R.readsInFlight(), Q.readsInFlight());
  EXPECT_EQ(R.committedGroups(), Q.committedGroups());
  EXPECT_EQ(R.uncommitted(), Q.uncommitted());
  for (uint32_t N : {0u, 1u, 2u})
    for (bool ReadOnly : {false, true})
      EXPECT_EQ(R.waitPasses(N, ReadOnly), Q.waitPasses(N, ReadOnly));
  // The groups' bounds came back too: completing 2 drops the first group in both.
  Q.complete(2);
  R.complete(2);
  EXPECT_EQ(R.committedGroups(), 1u);
  EXPECT_EQ(R.waitPasses(0, true), Q.waitPasses(0, true));
}

TEST(Tcgen05CommitTracker, SavedAndLoadedItDeliversTheSameCommits) {
  Tcgen05CommitTracker T = twoCommits();
  test::SavedIntegers Saved;
  T.save(Saved);
  Tcgen05CommitTracker R;
  R.load(Saved);
  EXPECT_EQ(R.inFlight(), T.inFlight());
  EXPECT_EQ(R.pendingCommits(), 2u);
  EXPECT_TRUE(R.complete(1).empty());
  EXPECT_EQ(R.complete(2), std::vector<uint32_t>{10});
  EXPECT_EQ(R.complete(3), std::vector<uint32_t>{11});
}

} // namespace
