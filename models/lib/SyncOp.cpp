//===- SyncOp.cpp - the record: operands by role, names, printing ------------------===//
#include "wsv/models/SyncOp.h"

#include "wsv/ptx_parser/Printer.h"

#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::models;

//===- SyncOp ---------------------------------------------------------------------===//

int SyncOp::indexOf(OperandRole Role) const {
  for (unsigned I = 0; I < NumRoles; ++I)
    if (Roles[I].Role == Role)
      return static_cast<int>(I);
  return -1;
}

ptx::Operand SyncOp::operandAt(unsigned I) const {
  assert(I < NumRoles && "role index out of range");
  ptx::Operand Op = instruction().operands()[Roles[I].Index];
  switch (Roles[I].Of) {
  case Part::Whole:
    return Op;
  case Part::PairFirst:
    return Op.first();
  case Part::PairSecond:
    return Op.second();
  }
  return Op;
}

ptx::Operand SyncOp::operand(OperandRole Role) const {
  int I = indexOf(Role);
  return I < 0 ? ptx::Operand() : operandAt(static_cast<unsigned>(I));
}

std::optional<int64_t> SyncOp::immediate(OperandRole Role) const {
  ptx::Operand Op = operand(Role);
  return Op ? Op.integerValue() : std::nullopt;
}

ptx::Operand SyncOp::tensorMap() const {
  // `[tensorMap, {...}]` has an extra part, so its elements are stored: the first is the base.
  ptx::Operand T = operand(OperandRole::TensorMap);
  return T && !T.elements().empty() ? T.elements().front() : ptx::Operand();
}

ptx::Operand SyncOp::coords() const {
  ptx::Operand T = operand(OperandRole::TensorMap);
  return T ? T.addressExtras()[0] : ptx::Operand();
}

std::optional<uint32_t> SyncOp::fixedCompleteTxBytes() const {
  switch (Kind) {
  case SyncKind::ClusterLaunchTryCancel:
    return 16; // the size of the response, "completeCount ... equal to amount of data stored"
  case SyncKind::StAsync:
  case SyncKind::RedAsync:
    return AccessBytes;
  default:
    return std::nullopt;
  }
}

bool SyncOp::isAsync() const {
  switch (Kind) {
  case SyncKind::CpAsyncMbarrierArrive:
  case SyncKind::BulkTensorLoad:
  case SyncKind::BulkTensorStore:
  case SyncKind::BulkTensorReduce:
  case SyncKind::BulkTensorPrefetch:
  case SyncKind::BulkLoad:
  case SyncKind::BulkSharedToCluster:
  case SyncKind::BulkStore:
  case SyncKind::BulkReduce:
  case SyncKind::BulkPrefetch:
  case SyncKind::CpAsync:
  case SyncKind::Tcgen05Mma:
  case SyncKind::Tcgen05Commit:
  case SyncKind::Tcgen05Ld:
  case SyncKind::Tcgen05St:
  case SyncKind::Tcgen05Cp:
  case SyncKind::Tcgen05Shift:
  case SyncKind::WgmmaMmaAsync:
  case SyncKind::ClusterLaunchTryCancel:
  case SyncKind::StAsync:
  case SyncKind::RedAsync:
    return true;
  default:
    return false;
  }
}

SyncFamily SyncOp::family() const {
  switch (Kind) {
  case SyncKind::MbarrierInit:
  case SyncKind::MbarrierInval:
  case SyncKind::MbarrierArrive:
  case SyncKind::MbarrierArriveExpectTx:
  case SyncKind::MbarrierArriveDrop:
  case SyncKind::MbarrierArriveDropExpectTx:
  case SyncKind::MbarrierExpectTx:
  case SyncKind::MbarrierCompleteTx:
  case SyncKind::MbarrierTestWait:
  case SyncKind::MbarrierTryWait:
  case SyncKind::MbarrierPendingCount:
  case SyncKind::CpAsyncMbarrierArrive:
    return SyncFamily::Mbarrier;
  case SyncKind::BulkTensorLoad:
  case SyncKind::BulkTensorStore:
  case SyncKind::BulkTensorReduce:
  case SyncKind::BulkTensorPrefetch:
  case SyncKind::BulkLoad:
  case SyncKind::BulkSharedToCluster:
  case SyncKind::BulkStore:
  case SyncKind::BulkReduce:
  case SyncKind::BulkPrefetch:
  case SyncKind::BulkCommitGroup:
  case SyncKind::BulkWaitGroup:
    return SyncFamily::BulkCopy;
  case SyncKind::CpAsync:
  case SyncKind::CpAsyncCommitGroup:
  case SyncKind::CpAsyncWaitGroup:
  case SyncKind::CpAsyncWaitAll:
    return SyncFamily::AsyncCopy;
  case SyncKind::Tcgen05Mma:
  case SyncKind::Tcgen05Commit:
  case SyncKind::Tcgen05Ld:
  case SyncKind::Tcgen05St:
  case SyncKind::Tcgen05WaitLd:
  case SyncKind::Tcgen05WaitSt:
  case SyncKind::Tcgen05Alloc:
  case SyncKind::Tcgen05Dealloc:
  case SyncKind::Tcgen05RelinquishAllocPermit:
  case SyncKind::Tcgen05FenceBeforeThreadSync:
  case SyncKind::Tcgen05FenceAfterThreadSync:
  case SyncKind::Tcgen05Cp:
  case SyncKind::Tcgen05Shift:
    return SyncFamily::Tcgen05;
  case SyncKind::WgmmaFence:
  case SyncKind::WgmmaMmaAsync:
  case SyncKind::WgmmaCommitGroup:
  case SyncKind::WgmmaWaitGroup:
    return SyncFamily::Wgmma;
  case SyncKind::BarrierSync:
  case SyncKind::BarrierArrive:
  case SyncKind::BarrierRed:
  case SyncKind::BarWarpSync:
    return SyncFamily::Barrier;
  case SyncKind::ClusterArrive:
  case SyncKind::ClusterWait:
    return SyncFamily::ClusterBarrier;
  case SyncKind::ElectSync:
    return SyncFamily::Elect;
  case SyncKind::Fence:
  case SyncKind::FenceMbarrierInit:
  case SyncKind::FenceProxyAsync:
  case SyncKind::FenceProxyAlias:
  case SyncKind::FenceProxyTensormap:
    return SyncFamily::Fence;
  case SyncKind::SetmaxnregInc:
  case SyncKind::SetmaxnregDec:
    return SyncFamily::Setmaxnreg;
  case SyncKind::Mapa:
    return SyncFamily::Mapa;
  case SyncKind::ClusterLaunchTryCancel:
    return SyncFamily::ClusterLaunchControl;
  case SyncKind::SharedLoad:
  case SyncKind::SharedStore:
  case SyncKind::SharedAtomic:
  case SyncKind::GenericLoad:
  case SyncKind::GenericStore:
  case SyncKind::GenericAtomic:
  case SyncKind::Ldmatrix:
  case SyncKind::Stmatrix:
  case SyncKind::StAsync:
  case SyncKind::RedAsync:
    return SyncFamily::MemoryAccess;
  case SyncKind::Exit:
  case SyncKind::Trap:
  case SyncKind::Ret:
    return SyncFamily::ThreadExit;
  }
  return SyncFamily::ThreadExit;
}

llvm::StringRef SyncOp::name() const {
  // Variants that differ in a field have their own names, so a printout tells them apart.
  switch (Kind) {
  case SyncKind::MbarrierTestWait:
    return WaitsOnParity ? "mbarrier.test_wait.parity" : "mbarrier.test_wait";
  case SyncKind::MbarrierTryWait:
    return WaitsOnParity ? "mbarrier.try_wait.parity" : "mbarrier.try_wait";
  case SyncKind::CpAsyncMbarrierArrive:
    return NoInc ? "cp.async.mbarrier.arrive.noinc" : "cp.async.mbarrier.arrive";
  case SyncKind::BulkWaitGroup:
    return ReadOnly ? "cp.async.bulk.wait_group.read" : "cp.async.bulk.wait_group";
  default:
    return toString(Kind);
  }
}

void SyncOp::print(llvm::raw_ostream &OS) const {
  OS << name();
  if (Sem != MemorySemantics::None)
    OS << " sem=" << toString(Sem);
  if (Scope != SyncScope::None)
    OS << " scope=" << toString(Scope);
  if (Space != StateSpace::None)
    OS << " space=" << toString(Space);
  if (DstSpace != StateSpace::None)
    OS << " dst=" << toString(DstSpace);
  if (SrcSpace != StateSpace::None)
    OS << " src=" << toString(SrcSpace);
  if (Completion != CompletionMechanism::None)
    OS << " completion=" << toString(Completion);
  if (Dims)
    OS << " dims=" << unsigned(Dims);
  if (LoadMode != TensorLoadMode::None)
    OS << " mode=" << toString(LoadMode);
  if (Mma != MmaKind::None)
    OS << " kind=" << toString(Mma);
  if (Reduction != ReductionOp::None)
    OS << " op=" << toString(Reduction);
  if (CtaGroup)
    OS << " cta_group=" << unsigned(CtaGroup);
  if (ShapeM)
    OS << " shape=" << ShapeM << 'x' << ShapeN << (ShapeK ? "x" : "");
  if (ShapeK)
    OS << ShapeK;
  if (Repeat)
    OS << " x" << unsigned(Repeat);
  if (AccessBytes)
    OS << " bytes=" << AccessBytes;
  struct Flag {
    bool On;
    const char *Name;
  };
  const Flag Flags[] = {{Multicast, "multicast"}, {CacheHint, "cache_hint"},
                        {Aligned, "aligned"},     {NoComplete, "noComplete"},
                        {Sparse, "sparse"},       {WarpSpecialized, "ws"},
                        {BlockScale, "block_scale"}, {Pack16, "pack16"},
                        {Transposed, "trans"}};
  for (const Flag &F : Flags)
    if (F.On)
      OS << ' ' << F.Name;
  for (unsigned I = 0; I < NumRoles; ++I) {
    OS << ' ' << toString(Roles[I].Role) << '=';
    ptx::printOperand(operandAt(I), OS);
  }
}

//===- SyncDecodeResult -----------------------------------------------------------===//

SyncDecodeResult SyncDecodeResult::decoded(const SyncOp &Op) {
  SyncDecodeResult R;
  R.Op = Op;
  R.Family = Op.family();
  R.St = Status::Decoded;
  return R;
}

SyncDecodeResult SyncDecodeResult::unrecognized(SyncFamily Family, const char *Reason,
                                                llvm::StringRef Detail) {
  SyncDecodeResult R;
  R.Family = Family;
  R.Reason = Reason;
  R.Detail = Detail;
  R.St = Status::Unrecognized;
  return R;
}

SyncFamily SyncDecodeResult::family() const {
  assert(isSyncRelevant() && "an instruction of no family");
  return Family;
}

void SyncDecodeResult::printReason(llvm::raw_ostream &OS) const {
  if (!isUnrecognized())
    return;
  OS << "unrecognized " << toString(Family) << " form: " << Reason;
  if (!Detail.empty())
    OS << " '" << Detail << "'";
}
