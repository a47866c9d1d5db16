//===- SyncOpDecodeBarrier.cpp - bar, barrier, barrier.cluster, elect.sync ---------===//
//
// PTX ISA 9.0, "Parallel Synchronization and Communication Instructions": bar / barrier,
// bar.warp.sync, barrier.cluster and elect.sync.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject FailBarrier{SyncFamily::Barrier};
const Reject FailCluster{SyncFamily::ClusterBarrier};
const Reject FailElect{SyncFamily::Elect};

/// ::= bar.warp.sync membermask
SyncDecodeResult decodeWarpSync(const ptx::Instruction &I, ModifierCursor &C) {
  if (!C.atEnd())
    return FailBarrier("unknown modifier", C.peek());
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 1 || !isScalar(Ops[0]) || isSink(Ops[0]))
    return FailBarrier("bar.warp.sync takes membermask");
  SyncOpBuilder B(I, SyncKind::BarWarpSync);
  B.role(OperandRole::MemberMask, 0);
  return B.done();
}

/// The named-barrier forms, after `bar` or `barrier` and an optional `.cta`:
/// ::= .sync{.aligned} a{, b}
/// ::= .arrive{.aligned} a, b
/// ::= .red.popc{.aligned}.u32 d, a{, b}, {!}c
/// ::= .red.{and,or}{.aligned}.pred p, a{, b}, {!}c
/// `bar` is the aligned spelling and takes no `.aligned`; `barrier` is aligned only with it.
SyncDecodeResult decodeNamedBarrier(const ptx::Instruction &I, ModifierCursor &C, bool Bar) {
  C.take("cta");
  StringRef Operation = C.next();
  SyncKind Kind;
  if (Operation == "sync")
    Kind = SyncKind::BarrierSync;
  else if (Operation == "arrive")
    Kind = SyncKind::BarrierArrive;
  else if (Operation == "red")
    Kind = SyncKind::BarrierRed;
  else if (Operation.empty())
    return FailBarrier("a barrier needs '.sync', '.arrive' or '.red'");
  else
    return FailBarrier("unknown barrier operation", Operation);

  ReductionOp Red = ReductionOp::None;
  if (Kind == SyncKind::BarrierRed) {
    StringRef Op = C.next();
    Red = Op == "popc" ? ReductionOp::Popc
          : Op == "and" ? ReductionOp::And
          : Op == "or"  ? ReductionOp::Or
                        : ReductionOp::None;
    if (Red == ReductionOp::None)
      return FailBarrier("barrier reductions are '.popc', '.and' and '.or'", Op);
  }
  bool Aligned = Bar;
  if (!Bar && C.take("aligned"))
    Aligned = true;
  if (Kind == SyncKind::BarrierRed) {
    StringRef Type = C.next();
    if (Type != (Red == ReductionOp::Popc ? "u32" : "pred"))
      return FailBarrier(Red == ReductionOp::Popc ? "'.red.popc' has the type '.u32'"
                                                  : "'.red.and' and '.red.or' have the type "
                                                    "'.pred'",
                         Type);
  }
  if (!C.atEnd())
    return FailBarrier("unknown modifier", C.peek());

  ptx::OperandRange Ops = I.operands();
  for (ptx::Operand Op : Ops)
    if (!isScalar(Op))
      return FailBarrier("barrier operands are registers or immediates");
  SyncOpBuilder B(I, Kind);
  B->Aligned = Aligned;
  B->Scope = SyncScope::Cta;
  B->Reduction = Red;
  switch (Kind) {
  case SyncKind::BarrierSync:
    if (Ops.empty() || Ops.size() > 2)
      return FailBarrier("a barrier sync takes a{, b}");
    B.role(OperandRole::BarrierId, 0);
    if (Ops.size() == 2)
      B.role(OperandRole::ThreadCount, 1);
    break;
  case SyncKind::BarrierArrive:
    // An arrive must say how many threads complete the barrier: it does not wait to see.
    if (Ops.size() != 2)
      return FailBarrier("a barrier arrive takes a, b");
    B.roles(0, {OperandRole::BarrierId, OperandRole::ThreadCount});
    break;
  default:
    if (Ops.size() != 3 && Ops.size() != 4)
      return FailBarrier("a barrier reduction takes d, a{, b}, {!}c");
    B.role(OperandRole::RedResult, 0);
    B.role(OperandRole::BarrierId, 1);
    if (Ops.size() == 4)
      B.role(OperandRole::ThreadCount, 2);
    B.role(OperandRole::RedPredicate, Ops.size() - 1);
    break;
  }
  return B.done();
}

/// ::= barrier.cluster.arrive{.release|.relaxed}{.aligned}
/// ::= barrier.cluster.wait{.acquire}{.aligned}
SyncDecodeResult decodeClusterBarrier(const ptx::Instruction &I, ModifierCursor &C) {
  StringRef Operation = C.next();
  bool Arrive = Operation == "arrive";
  if (!Arrive && Operation != "wait")
    return FailCluster("barrier.cluster has '.arrive' and '.wait'", Operation);
  ModifierSlot<MemorySemantics> Sem;
  ModifierSlot<bool> Aligned;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (M == "aligned")
      Fresh = Aligned.set(true, M);
    else if (auto S = semanticsWord(M))
      Fresh = Sem.set(*S, M);
    else
      return FailCluster("unknown modifier", M);
    if (!Fresh)
      return FailCluster("repeated modifier", M);
  }
  if (Sem) {
    bool Ok = Arrive ? (*Sem == MemorySemantics::Release || *Sem == MemorySemantics::Relaxed)
                     : *Sem == MemorySemantics::Acquire;
    if (!Ok)
      return FailCluster(Arrive ? "barrier.cluster.arrive is '.release' or '.relaxed'"
                                : "barrier.cluster.wait is '.acquire'",
                         Sem.Text);
  }
  if (!I.operands().empty())
    return FailCluster("barrier.cluster takes no operands");
  SyncOpBuilder B(I, Arrive ? SyncKind::ClusterArrive : SyncKind::ClusterWait);
  B->Aligned = Aligned.has_value();
  B->Scope = SyncScope::Cluster;
  B->Sem = Sem.valueOr(Arrive ? MemorySemantics::Release : MemorySemantics::Acquire);
  return B.done();
}

} // namespace

SyncDecodeResult wsv::models::decodeBar(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (C.take("warp")) {
    if (!C.take("sync"))
      return FailBarrier("'bar.warp' is 'bar.warp.sync'", C.peek());
    return decodeWarpSync(I, C);
  }
  return decodeNamedBarrier(I, C, /*Bar=*/true);
}

SyncDecodeResult wsv::models::decodeBarrier(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (C.take("cluster"))
    return decodeClusterBarrier(I, C);
  return decodeNamedBarrier(I, C, /*Bar=*/false);
}

/// ::= elect.sync d|p, membermask   (d may be the sink `_`)
SyncDecodeResult wsv::models::decodeElect(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (!C.take("sync"))
    return FailElect("elect is 'elect.sync'", C.peek());
  if (!C.atEnd())
    return FailElect("unknown modifier", C.peek());
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2 || !Ops[0].is(ptx::OperandKind::Pair) || !isScalar(Ops[1]) ||
      isSink(Ops[1]))
    return FailElect("elect.sync takes d|p, membermask");
  if (isSink(Ops[0].second()))
    return FailElect("elect.sync needs its predicate result");
  SyncOpBuilder B(I, SyncKind::ElectSync);
  B.pairRoles(0, OperandRole::ElectedLane, OperandRole::IsElected);
  B.role(OperandRole::MemberMask, 1);
  return B.done();
}
