//===- SyncOpModel.cpp - which reference-model operation a record performs ---------===//
//
// The map from records to the operations of Mbarrier.h, NamedBarrier.h, AsyncGroups.h and
// Tmem.h. A replay of a protocol (or of a solver's counterexample) walks the records of each
// role and calls these operations in order, at issue or when the async work completes.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/models/SyncOp.h"

using namespace wsv::models;

namespace {

ModelStep step(ModelOp Op, ModelTiming When = ModelTiming::AtIssue) {
  ModelStep S;
  S.Op = Op;
  S.When = When;
  return S;
}

ModelStep withOperand(ModelStep S, OperandRole Role) {
  S.Amount = AmountSource::Operand;
  S.AmountRole = Role;
  return S;
}

ModelStep withConstant(ModelStep S, uint32_t Value) {
  S.Amount = AmountSource::Constant;
  S.AmountConstant = Value;
  return S;
}

/// The count operand when written, else the ISA's default of one arrival.
ModelStep withCountOrOne(ModelStep S, const SyncOp &Op) {
  return Op.has(OperandRole::Count) ? withOperand(S, OperandRole::Count) : withConstant(S, 1);
}

ModelStep onQueue(ModelStep S, AsyncQueue Q) {
  S.Queue = Q;
  return S;
}

} // namespace

ModelSteps wsv::models::modelSteps(const SyncOp &Op) {
  ModelSteps Steps;
  const ModelTiming Later = ModelTiming::OnCompletion;
  switch (Op.Kind) {
  case SyncKind::MbarrierInit:
    Steps.push(withOperand(step(ModelOp::MbarrierInit), OperandRole::Count));
    break;
  case SyncKind::MbarrierInval:
    Steps.push(step(ModelOp::MbarrierInval));
    break;
  case SyncKind::MbarrierArrive:
    Steps.push(withCountOrOne(step(ModelOp::MbarrierArrive), Op));
    break;
  case SyncKind::MbarrierArriveDrop:
    Steps.push(withCountOrOne(step(ModelOp::MbarrierArriveDrop), Op));
    break;
  case SyncKind::MbarrierArriveExpectTx:
    Steps.push(withOperand(step(ModelOp::MbarrierArriveExpectTx), OperandRole::TxBytes));
    break;
  case SyncKind::MbarrierArriveDropExpectTx:
    // The tx-count rises before the arrival, as for arrive.expect_tx.
    Steps.push(withOperand(step(ModelOp::MbarrierExpectTx), OperandRole::TxBytes));
    Steps.push(withConstant(step(ModelOp::MbarrierArriveDrop), 1));
    break;
  case SyncKind::MbarrierExpectTx:
    Steps.push(withOperand(step(ModelOp::MbarrierExpectTx), OperandRole::TxBytes));
    break;
  case SyncKind::MbarrierCompleteTx:
    Steps.push(withOperand(step(ModelOp::MbarrierCompleteTx), OperandRole::TxBytes));
    break;
  case SyncKind::MbarrierTestWait:
  case SyncKind::MbarrierTryWait:
    if (Op.WaitsOnParity)
      Steps.push(withOperand(step(ModelOp::MbarrierTestWaitParity), OperandRole::Parity));
    else
      Steps.push(withOperand(step(ModelOp::MbarrierTestWaitToken), OperandRole::StateToken));
    break;
  case SyncKind::CpAsyncMbarrierArrive:
    // Without .noinc the pending count is raised at issue, so the later arrival is neutral
    // for the count the barrier was initialized with.
    if (!Op.NoInc)
      Steps.push(withConstant(step(ModelOp::MbarrierPendingIncrement), 1));
    Steps.push(withConstant(step(ModelOp::MbarrierArrive, Later), 1));
    break;

  case SyncKind::BulkTensorLoad: {
    ModelStep S = step(ModelOp::MbarrierCompleteTx, Later);
    S.Amount = AmountSource::TensorBox;
    Steps.push(S);
    break;
  }
  case SyncKind::BulkLoad:
  case SyncKind::BulkSharedToCluster:
    Steps.push(withOperand(step(ModelOp::MbarrierCompleteTx, Later), OperandRole::Size));
    break;
  case SyncKind::BulkReduce:
    if (Op.Completion == CompletionMechanism::MbarrierCompleteTx)
      Steps.push(withOperand(step(ModelOp::MbarrierCompleteTx, Later), OperandRole::Size));
    else
      Steps.push(onQueue(step(ModelOp::AsyncGroupIssue), AsyncQueue::BulkStore));
    break;
  case SyncKind::BulkTensorStore:
  case SyncKind::BulkTensorReduce:
  case SyncKind::BulkStore:
    Steps.push(onQueue(step(ModelOp::AsyncGroupIssue), AsyncQueue::BulkStore));
    break;
  case SyncKind::BulkCommitGroup:
    Steps.push(onQueue(step(ModelOp::AsyncGroupCommit), AsyncQueue::BulkStore));
    break;
  case SyncKind::BulkWaitGroup: {
    ModelStep S = onQueue(withOperand(step(ModelOp::AsyncGroupWait), OperandRole::WaitN),
                          AsyncQueue::BulkStore);
    S.ReadOnly = Op.ReadOnly;
    Steps.push(S);
    break;
  }

  case SyncKind::CpAsync:
    Steps.push(onQueue(step(ModelOp::AsyncGroupIssue), AsyncQueue::CpAsync));
    break;
  case SyncKind::CpAsyncCommitGroup:
    Steps.push(onQueue(step(ModelOp::AsyncGroupCommit), AsyncQueue::CpAsync));
    break;
  case SyncKind::CpAsyncWaitGroup:
    Steps.push(onQueue(withOperand(step(ModelOp::AsyncGroupWait), OperandRole::WaitN),
                       AsyncQueue::CpAsync));
    break;
  case SyncKind::CpAsyncWaitAll:
    // "cp.async.wait_all is equivalent to cp.async.commit_group; cp.async.wait_group 0".
    Steps.push(onQueue(step(ModelOp::AsyncGroupCommit), AsyncQueue::CpAsync));
    Steps.push(onQueue(withConstant(step(ModelOp::AsyncGroupWait), 0), AsyncQueue::CpAsync));
    break;

  case SyncKind::Tcgen05Mma:
  case SyncKind::Tcgen05Cp:
  case SyncKind::Tcgen05Shift:
    Steps.push(step(ModelOp::Tcgen05Issue));
    break;
  case SyncKind::Tcgen05Commit:
    Steps.push(step(ModelOp::Tcgen05Commit));
    Steps.push(withConstant(step(ModelOp::MbarrierArrive, Later), 1));
    break;
  case SyncKind::Tcgen05Alloc:
    Steps.push(withOperand(step(ModelOp::TmemAlloc), OperandRole::Columns));
    break;
  case SyncKind::Tcgen05Dealloc:
    Steps.push(withOperand(step(ModelOp::TmemDealloc), OperandRole::Columns));
    break;
  case SyncKind::Tcgen05RelinquishAllocPermit:
    Steps.push(step(ModelOp::TmemRelinquish));
    break;

  case SyncKind::WgmmaMmaAsync:
    Steps.push(onQueue(step(ModelOp::AsyncGroupIssue), AsyncQueue::Wgmma));
    break;
  case SyncKind::WgmmaCommitGroup:
    Steps.push(onQueue(step(ModelOp::AsyncGroupCommit), AsyncQueue::Wgmma));
    break;
  case SyncKind::WgmmaWaitGroup:
    Steps.push(onQueue(withOperand(step(ModelOp::AsyncGroupWait), OperandRole::WaitN),
                       AsyncQueue::Wgmma));
    break;

  case SyncKind::BarrierSync:
  case SyncKind::BarrierRed:
  case SyncKind::BarrierArrive: {
    ModelStep S = step(Op.Kind == SyncKind::BarrierArrive ? ModelOp::NamedBarrierArrive
                                                          : ModelOp::NamedBarrierSync);
    if (Op.has(OperandRole::ThreadCount))
      S = withOperand(S, OperandRole::ThreadCount);
    else
      S.Amount = AmountSource::AllThreads;
    Steps.push(S);
    break;
  }

  case SyncKind::ClusterLaunchTryCancel:
  case SyncKind::StAsync:
  case SyncKind::RedAsync:
    Steps.push(withConstant(step(ModelOp::MbarrierCompleteTx, Later), *Op.fixedCompleteTxBytes()));
    break;

  default:
    break;
  }
  return Steps;
}
