//===- SyncOpNames.cpp - printable names of the SyncOp enums ----------------------===//
//
// Names use the PTX spelling where there is one, so printouts read like the ISA.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/models/SyncOp.h"

using namespace wsv::models;

const char *wsv::models::toString(SyncFamily F) {
  switch (F) {
  case SyncFamily::Mbarrier: return "mbarrier";
  case SyncFamily::BulkCopy: return "cp.async.bulk";
  case SyncFamily::AsyncCopy: return "cp.async";
  case SyncFamily::Tcgen05: return "tcgen05";
  case SyncFamily::Wgmma: return "wgmma";
  case SyncFamily::Barrier: return "barrier";
  case SyncFamily::ClusterBarrier: return "barrier.cluster";
  case SyncFamily::Elect: return "elect";
  case SyncFamily::Fence: return "fence";
  case SyncFamily::Setmaxnreg: return "setmaxnreg";
  case SyncFamily::Mapa: return "mapa";
  case SyncFamily::ClusterLaunchControl: return "clusterlaunchcontrol";
  case SyncFamily::MemoryAccess: return "memory access";
  case SyncFamily::ThreadExit: return "exit";
  }
  return "?";
}

const char *wsv::models::toString(SyncKind K) {
  switch (K) {
  case SyncKind::MbarrierInit: return "mbarrier.init";
  case SyncKind::MbarrierInval: return "mbarrier.inval";
  case SyncKind::MbarrierArrive: return "mbarrier.arrive";
  case SyncKind::MbarrierArriveExpectTx: return "mbarrier.arrive.expect_tx";
  case SyncKind::MbarrierArriveDrop: return "mbarrier.arrive_drop";
  case SyncKind::MbarrierArriveDropExpectTx: return "mbarrier.arrive_drop.expect_tx";
  case SyncKind::MbarrierExpectTx: return "mbarrier.expect_tx";
  case SyncKind::MbarrierCompleteTx: return "mbarrier.complete_tx";
  case SyncKind::MbarrierTestWait: return "mbarrier.test_wait";
  case SyncKind::MbarrierTryWait: return "mbarrier.try_wait";
  case SyncKind::MbarrierPendingCount: return "mbarrier.pending_count";
  case SyncKind::CpAsyncMbarrierArrive: return "cp.async.mbarrier.arrive";
  case SyncKind::BulkTensorLoad: return "cp.async.bulk.tensor (load)";
  case SyncKind::BulkTensorStore: return "cp.async.bulk.tensor (store)";
  case SyncKind::BulkTensorReduce: return "cp.reduce.async.bulk.tensor";
  case SyncKind::BulkTensorPrefetch: return "cp.async.bulk.prefetch.tensor";
  case SyncKind::BulkLoad: return "cp.async.bulk (load)";
  case SyncKind::BulkSharedToCluster: return "cp.async.bulk (shared::cta to shared::cluster)";
  case SyncKind::BulkStore: return "cp.async.bulk (store)";
  case SyncKind::BulkReduce: return "cp.reduce.async.bulk";
  case SyncKind::BulkPrefetch: return "cp.async.bulk.prefetch";
  case SyncKind::BulkCommitGroup: return "cp.async.bulk.commit_group";
  case SyncKind::BulkWaitGroup: return "cp.async.bulk.wait_group";
  case SyncKind::CpAsync: return "cp.async";
  case SyncKind::CpAsyncCommitGroup: return "cp.async.commit_group";
  case SyncKind::CpAsyncWaitGroup: return "cp.async.wait_group";
  case SyncKind::CpAsyncWaitAll: return "cp.async.wait_all";
  case SyncKind::Tcgen05Mma: return "tcgen05.mma";
  case SyncKind::Tcgen05Commit: return "tcgen05.commit";
  case SyncKind::Tcgen05Ld: return "tcgen05.ld";
  case SyncKind::Tcgen05St: return "tcgen05.st";
  case SyncKind::Tcgen05WaitLd: return "tcgen05.wait::ld";
  case SyncKind::Tcgen05WaitSt: return "tcgen05.wait::st";
  case SyncKind::Tcgen05Alloc: return "tcgen05.alloc";
  case SyncKind::Tcgen05Dealloc: return "tcgen05.dealloc";
  case SyncKind::Tcgen05RelinquishAllocPermit: return "tcgen05.relinquish_alloc_permit";
  case SyncKind::Tcgen05FenceBeforeThreadSync: return "tcgen05.fence::before_thread_sync";
  case SyncKind::Tcgen05FenceAfterThreadSync: return "tcgen05.fence::after_thread_sync";
  case SyncKind::Tcgen05Cp: return "tcgen05.cp";
  case SyncKind::Tcgen05Shift: return "tcgen05.shift";
  case SyncKind::WgmmaFence: return "wgmma.fence";
  case SyncKind::WgmmaMmaAsync: return "wgmma.mma_async";
  case SyncKind::WgmmaCommitGroup: return "wgmma.commit_group";
  case SyncKind::WgmmaWaitGroup: return "wgmma.wait_group";
  case SyncKind::BarrierSync: return "barrier.sync";
  case SyncKind::BarrierArrive: return "barrier.arrive";
  case SyncKind::BarrierRed: return "barrier.red";
  case SyncKind::BarWarpSync: return "bar.warp.sync";
  case SyncKind::ClusterArrive: return "barrier.cluster.arrive";
  case SyncKind::ClusterWait: return "barrier.cluster.wait";
  case SyncKind::ElectSync: return "elect.sync";
  case SyncKind::Fence: return "fence";
  case SyncKind::FenceMbarrierInit: return "fence.mbarrier_init";
  case SyncKind::FenceProxyAsync: return "fence.proxy.async";
  case SyncKind::FenceProxyAlias: return "fence.proxy.alias";
  case SyncKind::FenceProxyTensormap: return "fence.proxy.tensormap";
  case SyncKind::SetmaxnregInc: return "setmaxnreg.inc";
  case SyncKind::SetmaxnregDec: return "setmaxnreg.dec";
  case SyncKind::Mapa: return "mapa";
  case SyncKind::ClusterLaunchTryCancel: return "clusterlaunchcontrol.try_cancel";
  case SyncKind::SharedLoad: return "ld.shared";
  case SyncKind::SharedStore: return "st.shared";
  case SyncKind::SharedAtomic: return "atom.shared";
  case SyncKind::GenericLoad: return "ld (generic)";
  case SyncKind::GenericStore: return "st (generic)";
  case SyncKind::GenericAtomic: return "atom (generic)";
  case SyncKind::Ldmatrix: return "ldmatrix";
  case SyncKind::Stmatrix: return "stmatrix";
  case SyncKind::StAsync: return "st.async";
  case SyncKind::RedAsync: return "red.async";
  case SyncKind::Exit: return "exit";
  case SyncKind::Trap: return "trap";
  case SyncKind::Ret: return "ret";
  }
  return "?";
}

const char *wsv::models::toString(MemorySemantics S) {
  switch (S) {
  case MemorySemantics::None: return "none";
  case MemorySemantics::Relaxed: return "relaxed";
  case MemorySemantics::Acquire: return "acquire";
  case MemorySemantics::Release: return "release";
  case MemorySemantics::AcqRel: return "acq_rel";
  case MemorySemantics::Sc: return "sc";
  case MemorySemantics::Weak: return "weak";
  case MemorySemantics::Volatile: return "volatile";
  case MemorySemantics::Mmio: return "mmio";
  }
  return "?";
}

const char *wsv::models::toString(SyncScope S) {
  switch (S) {
  case SyncScope::None: return "none";
  case SyncScope::Cta: return "cta";
  case SyncScope::Cluster: return "cluster";
  case SyncScope::Gpu: return "gpu";
  case SyncScope::Sys: return "sys";
  }
  return "?";
}

const char *wsv::models::toString(StateSpace S) {
  switch (S) {
  case StateSpace::None: return "none";
  case StateSpace::Generic: return "generic";
  case StateSpace::SharedCta: return "shared::cta";
  case StateSpace::SharedCluster: return "shared::cluster";
  case StateSpace::Global: return "global";
  case StateSpace::Local: return "local";
  case StateSpace::Param: return "param";
  case StateSpace::Const: return "const";
  case StateSpace::Tmem: return "tmem";
  }
  return "?";
}

const char *wsv::models::toString(CompletionMechanism C) {
  switch (C) {
  case CompletionMechanism::None: return "none";
  case CompletionMechanism::MbarrierCompleteTx: return "mbarrier::complete_tx::bytes";
  case CompletionMechanism::MbarrierArriveOne: return "mbarrier::arrive::one";
  case CompletionMechanism::BulkGroup: return "bulk_group";
  }
  return "?";
}

const char *wsv::models::toString(TensorLoadMode M) {
  switch (M) {
  case TensorLoadMode::None: return "none";
  case TensorLoadMode::Tile: return "tile";
  case TensorLoadMode::TileGather4: return "tile::gather4";
  case TensorLoadMode::TileScatter4: return "tile::scatter4";
  case TensorLoadMode::Im2col: return "im2col";
  case TensorLoadMode::Im2colW: return "im2col::w";
  case TensorLoadMode::Im2colW128: return "im2col::w::128";
  case TensorLoadMode::Im2colNoOffs: return "im2col_no_offs";
  }
  return "?";
}

const char *wsv::models::toString(MmaKind K) {
  switch (K) {
  case MmaKind::None: return "none";
  case MmaKind::F16: return "f16";
  case MmaKind::Tf32: return "tf32";
  case MmaKind::F8f6f4: return "f8f6f4";
  case MmaKind::I8: return "i8";
  case MmaKind::Mxf8f6f4: return "mxf8f6f4";
  case MmaKind::Mxf4: return "mxf4";
  case MmaKind::Mxf4nvf4: return "mxf4nvf4";
  }
  return "?";
}

const char *wsv::models::toString(ReductionOp R) {
  switch (R) {
  case ReductionOp::None: return "none";
  case ReductionOp::Popc: return "popc";
  case ReductionOp::And: return "and";
  case ReductionOp::Or: return "or";
  case ReductionOp::Xor: return "xor";
  case ReductionOp::Add: return "add";
  case ReductionOp::Inc: return "inc";
  case ReductionOp::Dec: return "dec";
  case ReductionOp::Min: return "min";
  case ReductionOp::Max: return "max";
  case ReductionOp::Cas: return "cas";
  case ReductionOp::Exch: return "exch";
  }
  return "?";
}

const char *wsv::models::toString(OperandRole R) {
  switch (R) {
  case OperandRole::None: return "none";
  case OperandRole::Barrier: return "barrier";
  case OperandRole::Count: return "count";
  case OperandRole::TxBytes: return "txBytes";
  case OperandRole::State: return "state";
  case OperandRole::StateToken: return "stateToken";
  case OperandRole::Parity: return "parity";
  case OperandRole::SuspendTimeHint: return "suspendTimeHint";
  case OperandRole::WaitComplete: return "waitComplete";
  case OperandRole::PendingCount: return "pendingCount";
  case OperandRole::Dst: return "dst";
  case OperandRole::Src: return "src";
  case OperandRole::Size: return "size";
  case OperandRole::TensorMap: return "tensor";
  case OperandRole::Im2colInfo: return "im2colInfo";
  case OperandRole::CtaMask: return "ctaMask";
  case OperandRole::CachePolicy: return "cachePolicy";
  case OperandRole::ByteMask: return "byteMask";
  case OperandRole::CopySize: return "copySize";
  case OperandRole::SrcSize: return "srcSize";
  case OperandRole::WaitN: return "waitN";
  case OperandRole::BarrierId: return "barrierId";
  case OperandRole::ThreadCount: return "threadCount";
  case OperandRole::RedPredicate: return "redPredicate";
  case OperandRole::RedResult: return "redResult";
  case OperandRole::MemberMask: return "memberMask";
  case OperandRole::ElectedLane: return "electedLane";
  case OperandRole::IsElected: return "isElected";
  case OperandRole::RegCount: return "regCount";
  case OperandRole::MappedAddress: return "mappedAddress";
  case OperandRole::Address: return "address";
  case OperandRole::TargetRank: return "targetRank";
  case OperandRole::Response: return "response";
  case OperandRole::Columns: return "columns";
  case OperandRole::TmemAddrDst: return "tmemAddrDst";
  case OperandRole::TmemAddr: return "tmemAddr";
  case OperandRole::DTmem: return "dTmem";
  case OperandRole::ADesc: return "aDesc";
  case OperandRole::ATmem: return "aTmem";
  case OperandRole::AFragment: return "aFragment";
  case OperandRole::BDesc: return "bDesc";
  case OperandRole::InstrDesc: return "instrDesc";
  case OperandRole::EnableInputD: return "enableInputD";
  case OperandRole::ScaleInputD: return "scaleInputD";
  case OperandRole::DisableOutputLane: return "disableOutputLane";
  case OperandRole::ScaleATmem: return "scaleATmem";
  case OperandRole::ScaleBTmem: return "scaleBTmem";
  case OperandRole::SparseMeta: return "sparseMeta";
  case OperandRole::SparseSelector: return "sparseSelector";
  case OperandRole::ZeroColumnMask: return "zeroColumnMask";
  case OperandRole::SourceDesc: return "sourceDesc";
  case OperandRole::HalfSplitOffset: return "halfSplitOffset";
  case OperandRole::ReduceValue: return "reduceValue";
  case OperandRole::Accumulators: return "accumulators";
  case OperandRole::ScaleD: return "scaleD";
  case OperandRole::ImmScaleA: return "immScaleA";
  case OperandRole::ImmScaleB: return "immScaleB";
  case OperandRole::ImmTransA: return "immTransA";
  case OperandRole::ImmTransB: return "immTransB";
  case OperandRole::Data: return "data";
  case OperandRole::Data2: return "data2";
  case OperandRole::Result: return "result";
  }
  return "?";
}

const char *wsv::models::toString(ModelOp Op) {
  switch (Op) {
  case ModelOp::None: return "none";
  case ModelOp::MbarrierInit: return "Mbarrier::init";
  case ModelOp::MbarrierInval: return "Mbarrier::inval";
  case ModelOp::MbarrierArrive: return "Mbarrier::arrive";
  case ModelOp::MbarrierArriveDrop: return "Mbarrier::arriveDrop";
  case ModelOp::MbarrierExpectTx: return "Mbarrier::expectTx";
  case ModelOp::MbarrierArriveExpectTx: return "Mbarrier::arriveExpectTx";
  case ModelOp::MbarrierCompleteTx: return "Mbarrier::completeTx";
  case ModelOp::MbarrierTestWaitParity: return "Mbarrier::testWaitParity";
  case ModelOp::MbarrierTestWaitToken: return "mbarrier token wait";
  case ModelOp::MbarrierPendingIncrement: return "mbarrier pending increment";
  case ModelOp::NamedBarrierArrive: return "NamedBarrierFile::arrive";
  case ModelOp::NamedBarrierSync: return "NamedBarrierFile::arrive+wait";
  case ModelOp::AsyncGroupIssue: return "AsyncGroupQueue::issue";
  case ModelOp::AsyncGroupCommit: return "AsyncGroupQueue::commit";
  case ModelOp::AsyncGroupWait: return "AsyncGroupQueue::waitPasses";
  case ModelOp::Tcgen05Issue: return "Tcgen05CommitTracker::issue";
  case ModelOp::Tcgen05Commit: return "Tcgen05CommitTracker::commit";
  case ModelOp::TmemAlloc: return "TmemAllocator::alloc";
  case ModelOp::TmemDealloc: return "TmemAllocator::dealloc";
  case ModelOp::TmemRelinquish: return "TmemAllocator::relinquishPermit";
  }
  return "?";
}

const char *wsv::models::toString(AsyncQueue Q) {
  switch (Q) {
  case AsyncQueue::None: return "none";
  case AsyncQueue::Wgmma: return "wgmma";
  case AsyncQueue::BulkStore: return "bulk store";
  case AsyncQueue::CpAsync: return "cp.async";
  }
  return "?";
}
