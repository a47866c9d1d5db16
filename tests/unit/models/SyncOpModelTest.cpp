// modelSteps(): which reference-model operation each record performs. The replay below drives
// the models of Mbarrier.h, NamedBarrier.h, AsyncGroups.h and Tmem.h from decoded records
// alone, the way a protocol replay does: it never looks at an opcode string.
#include "SyncOpTestSupport.h"

#include "wsv/models/AsyncGroups.h"
#include "wsv/models/Mbarrier.h"
#include "wsv/models/NamedBarrier.h"
#include "wsv/models/Tmem.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

using namespace wsv::models;
using namespace wsv::models::test;

namespace {

/// One CTA's state, changed by records. Barriers are keyed by the text of their address
/// operand, which is all a single-line test can tell them apart by; the protocol builder
/// resolves addresses properly.
class Replay {
public:
  /// Runs the steps of Op that happen at issue; steps due on completion wait in Pending until
  /// completeAll(). Box is the byte count of a tensor copy's box. Returns false when a model
  /// reports a violation or a wait does not pass.
  bool issue(const SyncOp &Op, uint32_t Box = 0) {
    for (const ModelStep &S : modelSteps(Op)) {
      if (S.When == ModelTiming::OnCompletion) {
        Pending.push_back({&Op, S, Box});
        continue;
      }
      if (!run(Op, S, Box))
        return false;
    }
    return true;
  }
  /// Completes all async work in issue order.
  bool completeAll() {
    std::vector<Deferred> Due;
    Due.swap(Pending);
    for (const Deferred &D : Due) {
      // A commit's arrival is due once the tcgen05 operations before it completed.
      for (uint32_t Id : Commits.inFlight())
        Commits.complete(Id);
      if (!run(*D.Op, D.Step, D.Box))
        return false;
    }
    return true;
  }

  /// Threads that execute a named-barrier record together (a warpgroup).
  uint32_t ArrivingThreads = 128;
  std::map<std::string, Mbarrier> Barriers;
  AsyncGroupQueue Wgmma, BulkStores;
  Tcgen05CommitTracker Commits;
  NamedBarrierFile Named;
  TmemAllocator Tmem;

private:
  struct Deferred {
    const SyncOp *Op;
    ModelStep Step;
    uint32_t Box;
  };

  static uint32_t amount(const SyncOp &Op, const ModelStep &S, uint32_t Box) {
    switch (S.Amount) {
    case AmountSource::Operand:
      return static_cast<uint32_t>(Op.immediate(S.AmountRole).value_or(0));
    case AmountSource::Constant:
      return S.AmountConstant;
    case AmountSource::TensorBox:
      return Box;
    case AmountSource::AllThreads:
      return 128; // the CTAs of these tests have 128 threads
    case AmountSource::None:
      return 0;
    }
    return 0;
  }

  AsyncGroupQueue &queue(AsyncQueue Q) { return Q == AsyncQueue::Wgmma ? Wgmma : BulkStores; }

  bool run(const SyncOp &Op, const ModelStep &S, uint32_t Box) {
    uint32_t N = amount(Op, S, Box);
    Mbarrier *B = nullptr;
    if (Op.has(OperandRole::Barrier))
      B = &Barriers[text(Op.barrier())];
    uint64_t Ticket = 0;
    switch (S.Op) {
    case ModelOp::MbarrierInit:
      return B->init(N) == MbarrierViolation::None;
    case ModelOp::MbarrierArrive:
      return B->arrive(N) == MbarrierViolation::None;
    case ModelOp::MbarrierArriveExpectTx:
      return B->arriveExpectTx(N) == MbarrierViolation::None;
    case ModelOp::MbarrierExpectTx:
      return B->expectTx(N) == MbarrierViolation::None;
    case ModelOp::MbarrierCompleteTx:
      return B->completeTx(N) == MbarrierViolation::None;
    case ModelOp::MbarrierTestWaitParity:
      return B->testWaitParity(N);
    case ModelOp::AsyncGroupIssue:
      queue(S.Queue).issue(NextId++);
      return true;
    case ModelOp::AsyncGroupCommit:
      queue(S.Queue).commit();
      return true;
    case ModelOp::AsyncGroupWait:
      return queue(S.Queue).waitPasses(N, S.ReadOnly);
    case ModelOp::Tcgen05Issue:
      Commits.issue(NextId++);
      return true;
    case ModelOp::Tcgen05Commit:
      Commits.commit(NextId++);
      return true;
    case ModelOp::NamedBarrierSync:
    case ModelOp::NamedBarrierArrive: {
      uint32_t Id = static_cast<uint32_t>(
          Op.immediate(OperandRole::BarrierId).value_or(NamedBarrier::NumIds));
      return Named.arrive(Id, N, ArrivingThreads, Ticket) == NamedBarrierViolation::None &&
             (S.Op == ModelOp::NamedBarrierArrive || Named.passed(Id, Ticket));
    }
    case ModelOp::TmemAlloc: {
      uint32_t Column;
      return Tmem.alloc(N, Column) == TmemResult::Ok;
    }
    case ModelOp::TmemDealloc:
      return Tmem.dealloc(0, N) == TmemResult::Ok;
    default:
      return false;
    }
  }

  std::vector<Deferred> Pending;
  uint32_t NextId = 1;
};

TEST(SyncOpModel, StepsNameTheModelOperationAndWhereItsAmountComes) {
  Line Init("mbarrier.init.shared::cta.b64 [%r1], 1;");
  ModelSteps S = modelSteps(Init.op());
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].Op, ModelOp::MbarrierInit);
  EXPECT_EQ(S[0].Amount, AmountSource::Operand);
  EXPECT_EQ(S[0].AmountRole, OperandRole::Count);

  Line Arrive("mbarrier.arrive.shared::cta.b64 _, [%r1];");
  S = modelSteps(Arrive.op());
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].Amount, AmountSource::Constant) << "no count written: one arrival";
  EXPECT_EQ(S[0].AmountConstant, 1u);

  Line Tma("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
           "[%r2], [%rd1, {%r3, %r4}], [%r1];");
  S = modelSteps(Tma.op());
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].Op, ModelOp::MbarrierCompleteTx);
  EXPECT_EQ(S[0].When, ModelTiming::OnCompletion);
  EXPECT_EQ(S[0].Amount, AmountSource::TensorBox) << "the box size is in the tensor map";

  Line Commit("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];");
  S = modelSteps(Commit.op());
  ASSERT_EQ(S.size(), 2u);
  EXPECT_EQ(S[0].Op, ModelOp::Tcgen05Commit);
  EXPECT_EQ(S[1].Op, ModelOp::MbarrierArrive);
  EXPECT_EQ(S[1].When, ModelTiming::OnCompletion);

  Line Read("cp.async.bulk.wait_group.read 0;");
  S = modelSteps(Read.op());
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].Queue, AsyncQueue::BulkStore);
  EXPECT_TRUE(S[0].ReadOnly);

  Line NoInc("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r1];");
  EXPECT_EQ(modelSteps(NoInc.op()).size(), 1u) << ".noinc arrives without a pending increment";
  Line Inc("cp.async.mbarrier.arrive.shared::cta.b64 [%r1];");
  S = modelSteps(Inc.op());
  ASSERT_EQ(S.size(), 2u);
  EXPECT_EQ(S[0].Op, ModelOp::MbarrierPendingIncrement);

  Line WaitAll("cp.async.wait_all;");
  S = modelSteps(WaitAll.op());
  ASSERT_EQ(S.size(), 2u);
  EXPECT_EQ(S[0].Op, ModelOp::AsyncGroupCommit);
  EXPECT_EQ(S[1].Op, ModelOp::AsyncGroupWait);
  EXPECT_EQ(S[1].AmountConstant, 0u);

  Line TryCancel("clusterlaunchcontrol.try_cancel.async.shared::cta."
                 "mbarrier::complete_tx::bytes.b128 [%r2], [%r1];");
  S = modelSteps(TryCancel.op());
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].AmountConstant, 16u);

  Line Fence("fence.proxy.async.shared::cta;");
  EXPECT_TRUE(modelSteps(Fence.op()).empty()) << "fences change no model state";
}

TEST(SyncOpModel, TmaPipelineStageReplaysOnTheMbarrierModel) {
  // One stage of the H2 protocol: the producer waits on empty (parity 1 passes on a fresh
  // barrier), arrives on full expecting 32768 bytes and issues two 16384-byte TMA loads; the
  // consumer's wait on full with parity 0 passes only after both loads land.
  Line InitFull("mbarrier.init.shared::cta.b64 [bars], 1;");
  Line InitEmpty("mbarrier.init.shared::cta.b64 [bars+8], 1;");
  Line WaitEmpty("mbarrier.try_wait.parity.shared::cta.b64 P1, [bars+8], 1;");
  Line Expect("mbarrier.arrive.expect_tx.shared::cta.b64 _, [bars], 32768;");
  Line LoadA("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
             "[%r2], [%rd1, {%r3, %r4}], [bars];");
  Line LoadB("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
             "[%r5], [%rd2, {%r3, %r4}], [bars];");
  Line WaitFull("mbarrier.try_wait.parity.shared::cta.b64 P1, [bars], 0;");
  Line Release("mbarrier.arrive.shared::cta.b64 _, [bars+8];");

  Replay R;
  ASSERT_TRUE(R.issue(InitFull.op()));
  ASSERT_TRUE(R.issue(InitEmpty.op()));
  EXPECT_TRUE(R.issue(WaitEmpty.op())) << "the producer starts at parity 1";
  ASSERT_TRUE(R.issue(Expect.op()));
  ASSERT_TRUE(R.issue(LoadA.op(), 16384));
  ASSERT_TRUE(R.issue(LoadB.op(), 16384));
  EXPECT_FALSE(R.issue(WaitFull.op())) << "the bytes have not landed";
  ASSERT_TRUE(R.completeAll());
  EXPECT_TRUE(R.issue(WaitFull.op()));
  ASSERT_TRUE(R.issue(Release.op()));
  EXPECT_EQ(R.Barriers["[bars+8]"].completedPhases(), 1u);
  EXPECT_FALSE(R.issue(WaitEmpty.op())) << "parity 1 of empty has not completed yet";
}

TEST(SyncOpModel, Tcgen05CommitArrivesAfterTheMma) {
  Line Init("mbarrier.init.shared::cta.b64 [bars], 1;");
  Line Mma("tcgen05.mma.cta_group::1.kind::f16 [%r5], %rd11, %rd12, %r446, %p1;");
  Line Commit("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bars];");
  Line Wait("mbarrier.try_wait.parity.shared::cta.b64 P1, [bars], 0;");
  Replay R;
  ASSERT_TRUE(R.issue(Init.op()));
  ASSERT_TRUE(R.issue(Mma.op()));
  ASSERT_TRUE(R.issue(Commit.op()));
  EXPECT_EQ(R.Commits.pendingCommits(), 1u);
  EXPECT_FALSE(R.issue(Wait.op()));
  ASSERT_TRUE(R.completeAll());
  EXPECT_TRUE(R.issue(Wait.op()));
}

TEST(SyncOpModel, WgmmaGroupsAndBulkStoresUseTheirQueues) {
  std::string Acc = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}";
  Line Mma("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " + Acc +
           ", %rd1, %rd2, %p1, 1, 1, 0, 0;");
  Line Commit("wgmma.commit_group.sync.aligned;");
  Line Wait0("wgmma.wait_group.sync.aligned 0;");
  Line Wait1("wgmma.wait_group.sync.aligned 1;");
  Line Store("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r2}], [%r3];");
  Line BulkCommit("cp.async.bulk.commit_group;");
  Line BulkWait("cp.async.bulk.wait_group.read 0;");
  Replay R;
  ASSERT_TRUE(R.issue(Mma.op()));
  ASSERT_TRUE(R.issue(Commit.op()));
  EXPECT_TRUE(R.issue(Wait1.op())) << "one group may stay in flight";
  EXPECT_FALSE(R.issue(Wait0.op()));
  EXPECT_EQ(R.Wgmma.committedGroups(), 1u);
  EXPECT_EQ(R.BulkStores.committedGroups(), 0u) << "wgmma groups are not bulk groups";
  ASSERT_TRUE(R.issue(Store.op()));
  ASSERT_TRUE(R.issue(BulkCommit.op()));
  EXPECT_FALSE(R.issue(BulkWait.op())) << "the store still reads its staging buffer";
  EXPECT_EQ(R.BulkStores.committedGroups(), 1u);
}

TEST(SyncOpModel, NamedBarrierAndTmemAllocation) {
  // A producer warpgroup arrives and a consumer warpgroup syncs: 2 x 128 = 256 threads.
  Line Producer("bar.arrive 1, 256;");
  Line Consumer("bar.sync 1, 256;");
  Line Everyone("bar.sync 0;");
  Replay R;
  ASSERT_TRUE(R.issue(Producer.op()));
  EXPECT_EQ(R.Named.get(1).arrived(), 128u);
  EXPECT_EQ(R.Named.get(1).threadCount(), 256u) << "the count comes from the operand";
  EXPECT_TRUE(R.issue(Consumer.op())) << "the second warpgroup completes the barrier";
  EXPECT_EQ(R.Named.get(1).completedInstances(), 1u);
  EXPECT_TRUE(R.issue(Everyone.op())) << "no count: all 128 threads of the test's CTA";
  Line Alloc("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r30], 512;");
  Line Again("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r30], 32;");
  Line Dealloc("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 512;");
  ASSERT_TRUE(R.issue(Alloc.op()));
  EXPECT_FALSE(R.issue(Again.op())) << "all 512 columns are taken";
  ASSERT_TRUE(R.issue(Dealloc.op()));
  EXPECT_TRUE(R.issue(Again.op()));
}

} // namespace
