//===- ProtocolEvents.cpp - the synchronization events of a function --------------===//
//
// Step 1 of the protocol builder: walk the CFG in an order where every loop's blocks are
// contiguous, decode every instruction (models::decodeSyncOp), and make an Event of each one
// that matters for synchronization, with its operands' closed forms, the threads that run it
// and the CTA-uniform part of its condition. A try_wait spin loop becomes one Wait; a
// try_wait outside such a loop is a Probe (peeking). Unrecognized forms and calls that were
// not inlined become Unknown events with the reason.
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "wsv/models/SyncOp.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using models::OperandRole;
using models::SyncKind;

SourceRef BuildState::sourceOf(InstId I) {
  SourceRef R;
  ptx::SourceLocation L = cfg().location(I);
  R.PtxLine = L.Line;
  R.PtxColumn = L.Column;
  for (const ptx::CudaLocation &C : M.cudaLocationChain(*cfg().inst(I).I)) {
    CudaFrame Frame;
    Frame.File = C.File.str();
    Frame.Line = C.Line;
    Frame.Column = C.Column;
    if (!C.InlinedFunction.empty())
      Frame.Function = llvm::demangle(C.InlinedFunction);
    R.Cuda.push_back(std::move(Frame));
  }
  return R;
}

LoopId BuildState::countedLoopOf(BlockId B) {
  LoopId L = FA.loops().loopFor(B);
  while (L != NoIndex && SpinLoop[L])
    L = FA.loops().loop(L).Parent;
  return L;
}

namespace {

/// Blocks in reverse post-order, except that a loop's blocks (nested loops included) follow
/// its header without interruption, so a loop is one run of events.
std::vector<BlockId> loopContiguousOrder(const Cfg &G, const LoopInfo &Loops) {
  std::vector<BlockId> Order;
  std::vector<bool> Done(G.size(), false);
  std::function<void(LoopId)> EmitLoop = [&](LoopId L) {
    for (BlockId B : Loops.loop(L).Blocks) {
      if (Done[B])
        continue;
      LoopId Inner = Loops.loopFor(B);
      while (Inner != NoIndex && Loops.loop(Inner).Parent != L && Inner != L)
        Inner = Loops.loop(Inner).Parent;
      if (Inner != NoIndex && Inner != L) {
        EmitLoop(Inner);
        continue;
      }
      Done[B] = true;
      Order.push_back(B);
    }
  };
  for (BlockId B : G.reversePostOrder()) {
    if (Done[B])
      continue;
    LoopId Outer = Loops.loopFor(B);
    while (Outer != NoIndex && Loops.loop(Outer).Parent != NoIndex)
      Outer = Loops.loop(Outer).Parent;
    if (Outer != NoIndex) {
      EmitLoop(Outer);
      continue;
    }
    Done[B] = true;
    Order.push_back(B);
  }
  return Order;
}

/// Low zero bits that E has whatever its leaves are (a multiple of 1024 has 10).
unsigned knownTrailingZeros(const Expr *E) {
  const unsigned W = E->width();
  switch (E->kind()) {
  case ExprKind::Constant:
    return E->payload() ? std::min<unsigned>(llvm::countr_zero(E->payload()), W) : W;
  case ExprKind::Mul:
    return std::min(W, knownTrailingZeros(E->op(0)) + knownTrailingZeros(E->op(1)));
  case ExprKind::Add:
  case ExprKind::Or:
  case ExprKind::Select:
  case ExprKind::UMin:
  case ExprKind::UMax: {
    unsigned Z = W;
    for (unsigned I = E->is(ExprKind::Select) ? 1 : 0; I < E->ops().size(); ++I)
      Z = std::min(Z, knownTrailingZeros(E->op(I)));
    return Z;
  }
  case ExprKind::And:
    return std::max(knownTrailingZeros(E->op(0)), knownTrailingZeros(E->op(1)));
  case ExprKind::URem:
    // x % 2^n keeps x's low bits.
    if (E->op(1)->isConstant() && llvm::isPowerOf2_64(E->op(1)->payload()))
      return knownTrailingZeros(E->op(0));
    return 0;
  case ExprKind::ZExt:
  case ExprKind::SExt:
    return knownTrailingZeros(E->op(0));
  case ExprKind::Trunc:
    return std::min(W, knownTrailingZeros(E->op(0)));
  default:
    return 0;
  }
}

/// The address under the mask a descriptor's start-address field applies. The field is
/// `(address & 0x3FFFF) >> 4` (PTX ISA, "Matrix Descriptor" of wgmma and tcgen05), and
/// compilers narrow the mask to the bits they cannot prove zero (`& 261120` on a 1024-byte
/// aligned tile). A CTA's shared memory (at most 228 KiB on sm_90 and sm_100) lies below
/// 2^18, so `C & A` is A itself when C keeps every bit of A that can be set: the bits from
/// A's alignment up to bit 17, and the set bits of A's constant part below its alignment.
const Expr *unmaskedAddress(const Expr *Masked) {
  if (!Masked->is(ExprKind::And) || Masked->width() == 1)
    return Masked;
  for (unsigned Side = 0; Side < 2; ++Side) {
    const Expr *Mask = Masked->op(Side), *A = Masked->op(1 - Side);
    if (!Mask->isConstant())
      continue;
    // A = (terms that are multiples of 2^Zeros) + Low.
    llvm::SmallVector<const Expr *, 8> Terms, Work{A};
    while (!Work.empty()) {
      const Expr *T = Work.pop_back_val();
      if (T->is(ExprKind::Add))
        Work.append(T->ops().begin(), T->ops().end());
      else
        Terms.push_back(T);
    }
    unsigned Zeros = 18;
    uint64_t Low = 0;
    for (const Expr *T : Terms)
      if (T->isConstant())
        Low += T->payload();
      else
        Zeros = std::min(Zeros, knownTrailingZeros(T));
    const uint64_t Field = (uint64_t(1) << 18) - 1;
    const uint64_t AlignedBits = Field & ~((uint64_t(1) << Zeros) - 1);
    Low &= (uint64_t(1) << Zeros) - 1;
    uint64_t C = Mask->payload();
    if ((C & AlignedBits) == AlignedBits && (Low & ~C) == 0)
      return A;
  }
  return Masked;
}

/// The address inside a shared-memory matrix descriptor: descriptors keep address >> 4 in
/// their low 14 bits, so the closed form holds `(address) / 16` under a mask.
const Expr *descriptorAddress(const Expr *Desc) {
  if (!Desc)
    return nullptr;
  if (Desc->is(ExprKind::UDiv) && Desc->op(1)->isConstant(16) &&
      Desc->op(0)->mentions([](const Expr *L) { return L->is(ExprKind::Symbol); }))
    return unmaskedAddress(Desc->op(0));
  for (const Expr *Op : Desc->ops())
    if (const Expr *A = descriptorAddress(Op))
      return A;
  return nullptr;
}

class Collector {
public:
  explicit Collector(BuildState &S) : S(S), Launch(S.P.Launch) {}

  void run();

private:
  const Expr *operandValue(InstId I, const models::SyncOp &Op, OperandRole Role);
  ProtocolValue value(InstId I, const models::SyncOp &Op, OperandRole Role);
  std::optional<unsigned> paramIndex(const Expr *E);
  void addEvent(InstId I, Event E, EventInfo Info);
  bool fillFromSyncOp(InstId I, const models::SyncOp &Op, bool InSpinWait, Event &E,
                      EventInfo &Info);

  BuildState &S;
  const LaunchShape &Launch;
};

const Expr *Collector::operandValue(InstId I, const models::SyncOp &Op, OperandRole Role) {
  ptx::Operand Want = Op.operand(Role);
  if (!Want)
    return nullptr;
  ptx::OperandRange Ops = S.cfg().inst(I).I->operands();
  for (unsigned K = 0; K < Ops.size(); ++K)
    if (Ops[K].slot() == Want.slot()) {
      const Expr *E = S.values().operand(I, K);
      return E ? S.values().closedForm(E) : nullptr;
    }
  return nullptr;
}

ProtocolValue Collector::value(InstId I, const models::SyncOp &Op, OperandRole Role) {
  if (!Op.has(Role))
    return {};
  if (const Expr *E = operandValue(I, Op, Role))
    return ProtocolValue::of(E);
  return ProtocolValue::unknown("operand '" + std::string(models::toString(Role)) +
                                "' has no value");
}

std::optional<unsigned> Collector::paramIndex(const Expr *E) {
  if (!E)
    return std::nullopt;
  if (E->is(ExprKind::Param) || (E->is(ExprKind::Symbol) && E->symbolSpace() == SymbolSpace::Param)) {
    llvm::ArrayRef<const ptx::VariableDecl *> Params = S.F.params();
    for (unsigned K = 0; K < Params.size(); ++K)
      if (Params[K]->name() == E->name())
        return K;
    return std::nullopt;
  }
  for (const Expr *Op : E->ops())
    if (std::optional<unsigned> K = paramIndex(Op))
      return K;
  return std::nullopt;
}

bool Collector::fillFromSyncOp(InstId I, const models::SyncOp &Op, bool InSpinWait, Event &E,
                               EventInfo &Info) {
  auto One = [&] { return ProtocolValue::of(S.ctx().constant(1, 32)); };
  E.Sync = Op.Kind;
  E.CtaGroup = Op.CtaGroup;
  E.Multicast = Op.Multicast;
  switch (Op.Kind) {
  case SyncKind::MbarrierInit:
    E.Kind = EventKind::Init;
    E.Count = value(I, Op, OperandRole::Count);
    break;
  case SyncKind::MbarrierInval:
    E.Kind = EventKind::Inval;
    break;
  case SyncKind::MbarrierArrive:
  case SyncKind::MbarrierArriveDrop:
    E.Kind = EventKind::Arrive;
    E.Count = Op.has(OperandRole::Count) ? value(I, Op, OperandRole::Count) : One();
    if (Op.Kind == SyncKind::MbarrierArriveDrop)
      E.Detail = "drop";
    break;
  case SyncKind::MbarrierArriveExpectTx:
  case SyncKind::MbarrierArriveDropExpectTx:
    E.Kind = EventKind::ArriveExpectTx;
    E.TxBytes = value(I, Op, OperandRole::TxBytes);
    E.Count = One();
    if (Op.Kind == SyncKind::MbarrierArriveDropExpectTx)
      E.Detail = "drop";
    break;
  case SyncKind::MbarrierExpectTx:
    E.Kind = EventKind::ExpectTx;
    E.TxBytes = value(I, Op, OperandRole::TxBytes);
    break;
  case SyncKind::MbarrierCompleteTx:
    E.Kind = EventKind::CompleteTx;
    E.TxBytes = value(I, Op, OperandRole::TxBytes);
    break;
  case SyncKind::MbarrierTryWait:
  case SyncKind::MbarrierTestWait:
    E.Kind = InSpinWait ? EventKind::Wait : EventKind::Probe;
    if (Op.WaitsOnParity)
      E.Parity = value(I, Op, OperandRole::Parity);
    else
      E.Token = value(I, Op, OperandRole::StateToken);
    break;
  case SyncKind::MbarrierPendingCount:
    return false;
  case SyncKind::CpAsyncMbarrierArrive:
    E.Kind = EventKind::CpAsyncArrive;
    E.Detail = Op.NoInc ? "noinc" : "";
    break;
  case SyncKind::BulkTensorLoad:
  case SyncKind::BulkLoad:
  case SyncKind::BulkSharedToCluster:
    E.Kind = EventKind::AsyncLoad;
    Info.DstAddress = operandValue(I, Op, OperandRole::Dst);
    E.CtaMask = value(I, Op, OperandRole::CtaMask);
    if (Op.Kind == SyncKind::BulkTensorLoad) {
      E.Detail = std::to_string(Op.Dims) + "d";
      ptx::Operand Map = Op.tensorMap();
      for (unsigned K = 0; K < S.cfg().inst(I).I->operands().size(); ++K)
        if (S.cfg().inst(I).I->operands()[K].slot() == Op.operand(OperandRole::TensorMap).slot() &&
            Map)
          Info.TensorMapParam = paramIndex(S.values().closedForm(S.values().operand(I, K)));
    } else {
      E.Bytes = value(I, Op, OperandRole::Size);
      E.BytesFrom = E.Bytes.known() ? BytesOrigin::Operand : BytesOrigin::Unknown;
    }
    break;
  case SyncKind::BulkTensorStore:
  case SyncKind::BulkTensorReduce:
  case SyncKind::BulkStore:
  case SyncKind::BulkReduce:
    E.Kind = EventKind::AsyncStore;
    Info.SrcAddress = operandValue(I, Op, OperandRole::Src);
    if (Op.Kind == SyncKind::BulkTensorStore || Op.Kind == SyncKind::BulkTensorReduce) {
      E.Detail = std::to_string(Op.Dims) + "d";
      for (unsigned K = 0; K < S.cfg().inst(I).I->operands().size(); ++K)
        if (S.cfg().inst(I).I->operands()[K].slot() == Op.operand(OperandRole::TensorMap).slot())
          Info.TensorMapParam = paramIndex(S.values().closedForm(S.values().operand(I, K)));
    } else {
      E.Bytes = value(I, Op, OperandRole::Size);
      E.BytesFrom = E.Bytes.known() ? BytesOrigin::Operand : BytesOrigin::Unknown;
    }
    if (Op.Kind == SyncKind::BulkTensorReduce || Op.Kind == SyncKind::BulkReduce)
      E.Detail += E.Detail.empty() ? "reduce" : " reduce";
    break;
  case SyncKind::BulkTensorPrefetch:
  case SyncKind::BulkPrefetch:
    // An L2 prefetch writes no shared memory and completes on nothing.
    return false;
  case SyncKind::BulkCommitGroup:
  case SyncKind::CpAsyncCommitGroup:
  case SyncKind::WgmmaCommitGroup:
    E.Kind = EventKind::GroupCommit;
    E.Detail = Op.Kind == SyncKind::WgmmaCommitGroup ? "wgmma"
               : Op.Kind == SyncKind::BulkCommitGroup ? "bulk"
                                                     : "cp.async";
    break;
  case SyncKind::BulkWaitGroup:
  case SyncKind::CpAsyncWaitGroup:
  case SyncKind::WgmmaWaitGroup:
  case SyncKind::CpAsyncWaitAll:
    E.Kind = EventKind::GroupWait;
    E.Detail = Op.Kind == SyncKind::WgmmaWaitGroup ? "wgmma"
               : Op.Kind == SyncKind::BulkWaitGroup ? "bulk"
                                                   : "cp.async";
    E.ReadOnly = Op.ReadOnly;
    E.WaitN = Op.Kind == SyncKind::CpAsyncWaitAll ? ProtocolValue::of(S.ctx().constant(0, 32))
                                                  : value(I, Op, OperandRole::WaitN);
    break;
  case SyncKind::CpAsync:
    E.Kind = EventKind::AsyncCopy;
    Info.DstAddress = operandValue(I, Op, OperandRole::Dst);
    break;
  case SyncKind::Tcgen05Mma:
  case SyncKind::WgmmaMmaAsync: {
    E.Kind = EventKind::Mma;
    if (Op.Kind == SyncKind::WgmmaMmaAsync)
      E.Detail = "wgmma m" + std::to_string(Op.ShapeM) + "n" + std::to_string(Op.ShapeN) + "k" +
                 std::to_string(Op.ShapeK);
    else
      E.Detail = std::string("tcgen05.mma") + (Op.WarpSpecialized ? ".ws" : "");
    if (Op.Kind == SyncKind::Tcgen05Mma) {
      Info.TmemAddress = operandValue(I, Op, OperandRole::DTmem);
      // The instruction descriptor's bits 17-22 hold N / 8 (PTX ISA, "Instruction
      // descriptor"): the accumulator's columns, one 32-bit column per element of a row.
      if (const Expr *Desc = operandValue(I, Op, OperandRole::InstrDesc); Desc && Desc->isConstant())
        E.TmemColumns = static_cast<uint32_t>(((Desc->payload() >> 17) & 0x3f) << 3);
    }
    for (OperandRole R : {OperandRole::ADesc, OperandRole::BDesc})
      if (Op.has(R))
        if (const Expr *A = descriptorAddress(operandValue(I, Op, R)))
          Info.ReadAddresses.push_back(A);
    break;
  }
  case SyncKind::Tcgen05Commit:
    E.Kind = EventKind::MmaCommit;
    E.CtaMask = value(I, Op, OperandRole::CtaMask);
    break;
  case SyncKind::Tcgen05Ld:
  case SyncKind::Tcgen05St:
    E.Kind = Op.Kind == SyncKind::Tcgen05Ld ? EventKind::TmemLoad : EventKind::TmemStore;
    if (Op.Kind == SyncKind::Tcgen05St)
      E.Detail = "st";
    Info.TmemAddress = operandValue(I, Op, OperandRole::TmemAddr);
    // Each repetition (.num) reads or writes ShapeN bits of a lane: 32x32b one column,
    // 16x64b two, 16x128b four, 16x256b eight; 16x32bx2 one at the address and one at the
    // half-split offset after it.
    if (Op.Repeat && Op.ShapeN >= 32) {
      E.TmemColumns = Op.Repeat * (Op.ShapeN / 32);
      if (Op.has(OperandRole::HalfSplitOffset)) {
        std::optional<int64_t> Off = Op.immediate(OperandRole::HalfSplitOffset);
        E.TmemColumns = Off && *Off >= 0 ? E.TmemColumns + static_cast<uint32_t>(*Off) : 0;
      }
    }
    break;
  case SyncKind::Tcgen05Cp:
  case SyncKind::Tcgen05Shift:
    E.Kind = EventKind::TmemStore;
    E.Detail = Op.Kind == SyncKind::Tcgen05Cp ? "cp" : "shift";
    break;
  case SyncKind::Tcgen05WaitLd:
  case SyncKind::Tcgen05WaitSt:
    E.Kind = EventKind::TmemWait;
    E.Detail = Op.Kind == SyncKind::Tcgen05WaitLd ? "ld" : "st";
    break;
  case SyncKind::Tcgen05Alloc:
    E.Kind = EventKind::Alloc;
    E.Columns = value(I, Op, OperandRole::Columns);
    Info.DstAddress = operandValue(I, Op, OperandRole::TmemAddrDst);
    break;
  case SyncKind::Tcgen05Dealloc:
    E.Kind = EventKind::Dealloc;
    E.Columns = value(I, Op, OperandRole::Columns);
    break;
  case SyncKind::Tcgen05RelinquishAllocPermit:
    E.Kind = EventKind::Relinquish;
    break;
  case SyncKind::Tcgen05FenceBeforeThreadSync:
  case SyncKind::Tcgen05FenceAfterThreadSync:
  case SyncKind::Fence:
  case SyncKind::FenceMbarrierInit:
  case SyncKind::FenceProxyAsync:
  case SyncKind::FenceProxyAlias:
  case SyncKind::FenceProxyTensormap:
    E.Kind = EventKind::Fence;
    E.Detail = Op.name().str();
    break;
  case SyncKind::WgmmaFence:
    E.Kind = EventKind::WgmmaFence;
    break;
  case SyncKind::BarrierSync:
  case SyncKind::BarrierArrive:
  case SyncKind::BarrierRed:
    E.Kind = EventKind::NamedBarrier;
    E.Detail = Op.Kind == SyncKind::BarrierSync     ? "sync"
               : Op.Kind == SyncKind::BarrierArrive ? "arrive"
                                                    : "red";
    E.Named.Id = value(I, Op, OperandRole::BarrierId);
    E.Named.Threads = value(I, Op, OperandRole::ThreadCount);
    break;
  case SyncKind::BarWarpSync:
    E.Kind = EventKind::WarpSync;
    break;
  case SyncKind::ClusterArrive:
    E.Kind = EventKind::ClusterArrive;
    break;
  case SyncKind::ClusterWait:
    E.Kind = EventKind::ClusterWait;
    break;
  case SyncKind::SetmaxnregInc:
  case SyncKind::SetmaxnregDec:
    E.Kind = EventKind::Setmaxnreg;
    E.Increase = Op.Kind == SyncKind::SetmaxnregInc;
    E.RegCount = value(I, Op, OperandRole::RegCount);
    break;
  case SyncKind::ClusterLaunchTryCancel:
    E.Kind = EventKind::TryCancel;
    E.Bytes = ProtocolValue::of(S.ctx().constant(*Op.fixedCompleteTxBytes(), 32));
    E.BytesFrom = BytesOrigin::Fixed;
    break;
  case SyncKind::StAsync:
  case SyncKind::RedAsync:
    // A store into a peer CTA's shared memory that completes bytes on its mbarrier.
    E.Kind = EventKind::AsyncLoad;
    E.Detail = Op.Kind == SyncKind::StAsync ? "st.async" : "red.async";
    Info.DstAddress = operandValue(I, Op, OperandRole::Address);
    if (std::optional<uint32_t> B = Op.fixedCompleteTxBytes()) {
      E.Bytes = ProtocolValue::of(S.ctx().constant(*B, 32));
      E.BytesFrom = BytesOrigin::Fixed;
    }
    break;
  case SyncKind::SharedLoad:
  case SyncKind::Ldmatrix:
  case SyncKind::GenericLoad:
    E.Kind = EventKind::SmemRead;
    Info.SrcAddress = operandValue(I, Op, OperandRole::Address);
    break;
  case SyncKind::SharedStore:
  case SyncKind::Stmatrix:
  case SyncKind::SharedAtomic:
  case SyncKind::GenericStore:
  case SyncKind::GenericAtomic:
    E.Kind = EventKind::SmemWrite;
    Info.DstAddress = operandValue(I, Op, OperandRole::Address);
    break;
  case SyncKind::Exit:
  case SyncKind::Trap:
  case SyncKind::Ret:
    E.Kind = EventKind::Exit;
    E.Detail = Op.name().str();
    break;
  case SyncKind::ElectSync:
  case SyncKind::Mapa:
    // Guards and addresses: they shape other events, they are none themselves.
    return false;
  }
  if (Op.has(OperandRole::Barrier))
    Info.BarrierAddress = operandValue(I, Op, OperandRole::Barrier);
  // Generic accesses matter only when they reach shared memory.
  if ((Op.Kind == SyncKind::GenericLoad || Op.Kind == SyncKind::GenericStore ||
       Op.Kind == SyncKind::GenericAtomic) &&
      !((Info.SrcAddress ? Info.SrcAddress : Info.DstAddress) &&
        (Info.SrcAddress ? Info.SrcAddress : Info.DstAddress)->mentions([](const Expr *L) {
          return L->is(ExprKind::Symbol) && L->symbolSpace() == SymbolSpace::Shared;
        })))
    return false;
  return true;
}

void Collector::addEvent(InstId I, Event E, EventInfo Info) {
  const CfgInst &CI = S.cfg().inst(I);
  E.Inst = I;
  E.Opcode = CI.I->opcode().str();
  E.Where = S.sourceOf(I);
  Info.Block = CI.Block;
  Info.Loop = S.countedLoopOf(CI.Block);
  Info.Order = S.P.Events.size();

  // The threads come from the thread-dependent conjuncts of the condition; the rest (loop
  // counters, parameters, the CTA's rank) says when, and is kept for the sequence step.
  const Expr *ThreadPart = S.FA.guards().threadCondition(I, &Info.Uniform);
  E.Threads = S.FA.guards().threadSet(ThreadPart, Launch);
  Info.Shape = classifyThreads(E.Threads);
  if (!E.Threads.isUnknown()) {
    Info.Reach = reachingThreads(E.Threads);
  } else {
    // A bound: the threads every thread-dependent conjunct that can be decided selects (an
    // instrumented store by the first active lane of warp 4 is somewhere in warp 4).
    Info.Reach = llvm::BitVector(Launch.threads(), true);
    llvm::SmallVector<const Expr *, 8> Parts;
    conjuncts(ThreadPart, Parts);
    for (const Expr *C : Parts) {
      ThreadSet Part = S.FA.guards().threadSet(C, Launch);
      if (!Part.isUnknown())
        Info.Reach &= reachingThreads(Part);
    }
  }
  // The normal end of the kernel is implicit; only exits of some threads are events.
  if (E.Kind == EventKind::Exit && Info.Shape == ThreadShape::All)
    return;
  S.P.Events.push_back(std::move(E));
  S.Info.push_back(std::move(Info));
}

void Collector::run() {
  const Cfg &G = S.cfg();
  const LoopInfo &Loops = S.FA.loops();
  S.SpinLoop.assign(Loops.size(), false);
  llvm::DenseMap<InstId, LoopId> SpinWaitOf;
  for (const Loop &L : Loops.loops()) {
    const LoopSummary &Sum = S.values().loopSummary(L.Index);
    if (Sum.Spin) {
      S.SpinLoop[L.Index] = true;
      SpinWaitOf[Sum.Spin->Wait] = L.Index;
    }
  }
  AccumulatorAccesses Acc = findAccumulatorAccesses(G);
  std::vector<BlockId> Order = loopContiguousOrder(G, Loops);
  S.BlockOrder.assign(G.size(), NoIndex);
  for (unsigned K = 0; K < Order.size(); ++K)
    S.BlockOrder[Order[K]] = K;

  for (BlockId B : Order) {
    const BasicBlock &BB = G.block(B);
    // Hang reports and assertion traps are not part of the protocol, nor what no thread
    // reaches (an exhaustive switch's impossible default).
    if (!BB.Reachable || BB.NeverReturns || S.values().isDeadBlock(B))
      continue;
    LoopId Inner = Loops.loopFor(B);
    bool InSpin = Inner != NoIndex && S.SpinLoop[Inner];
    for (InstId I = BB.Begin; I < BB.End; ++I) {
      const ptx::Instruction &Inst = *G.inst(I).I;
      bool IsSpinWait = SpinWaitOf.count(I) != 0;
      // Inside a spin loop only the wait itself counts: the rest is the retry.
      if (InSpin && !IsSpinWait)
        continue;
      if (auto It = Acc.Reads.find(I); It != Acc.Reads.end()) {
        Event Read;
        Read.Kind = EventKind::AccumulatorRead;
        Read.Accumulators = It->second;
        addEvent(I, std::move(Read), EventInfo());
      }
      Event E;
      EventInfo Info;
      if (const CallSite *C = G.callAt(I)) {
        if (C->Status == CallStatus::Inlined || C->Status == CallStatus::Extern)
          continue;
        E.Kind = EventKind::Unknown;
        E.Reason = std::string("call not inlined (") + toString(C->Status) +
                   "): its synchronization is not modeled";
        addEvent(I, std::move(E), std::move(Info));
        continue;
      }
      models::SyncDecodeResult R = models::decodeSyncOp(Inst);
      if (R.isNotSync())
        continue;
      // The ret of an inlined .func returns to its caller: no thread leaves the kernel there.
      if (R.isDecoded() && R->Kind == models::SyncKind::Ret && G.inst(I).Frame != 0)
        continue;
      if (R.isUnrecognized()) {
        E.Kind = EventKind::Unknown;
        llvm::raw_string_ostream OS(E.Reason);
        R.printReason(OS);
        addEvent(I, std::move(E), std::move(Info));
        continue;
      }
      if (!fillFromSyncOp(I, *R, IsSpinWait, E, Info))
        continue;
      if (auto It = Acc.Writes.find(I); It != Acc.Writes.end())
        E.Accumulators = It->second;
      addEvent(I, std::move(E), std::move(Info));
    }
  }
}

} // namespace

void wsv::analyzer::collectEvents(BuildState &S) { Collector(S).run(); }
