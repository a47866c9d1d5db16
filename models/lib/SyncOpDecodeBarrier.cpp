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

/// The named-barrier forms, after `bar` or `barrier`:
/// ::= {.cta}.sync{.aligned} a{, b}
/// ::= {.cta}.arrive{.aligned} a, b
/// ::= {.cta}.red.popc{.aligned}.u32 d, a{, b}, {!}c
/// ::= {.cta}.red.{and,or}{.aligned}.pred p, a{, b}, {!}c
/// `bar` is the aligned spelling and takes no `.aligned`; `barrier` is aligned only with it.
/// `.cta` comes before the operation (ptxas refuses it after); the other words in any order.
SyncDecodeResult decodeNamedBarrier(const ptx::Instruction &I, ModifierCursor &C, bool Bar) {
  ModifierSlot<SyncKind> Operation;
  ModifierSlot<bool> Cta, AlignedWord;
  ModifierSlot<ReductionOp> Red;
  ModifierSlot<StringRef> Type;
  bool CtaAfterOperation = false;
  if (auto R = scanWords(C, FailBarrier, [&](StringRef M) {
        if (M == "cta") {
          CtaAfterOperation = Operation.has_value();
          return flag(Cta, M);
        }
        if (M == "sync")
          return fit(Operation, std::optional(SyncKind::BarrierSync), M);
        if (M == "arrive")
          return fit(Operation, std::optional(SyncKind::BarrierArrive), M);
        if (M == "red")
          return fit(Operation, std::optional(SyncKind::BarrierRed), M);
        if (M == "aligned" && !Bar)
          return flag(AlignedWord, M);
        if (M == "popc" || M == "and" || M == "or")
          return fit(Red,
                     std::optional(M == "popc"  ? ReductionOp::Popc
                                   : M == "and" ? ReductionOp::And
                                                : ReductionOp::Or),
                     M);
        if (M == "u32" || M == "pred")
          return fit(Type, std::optional(M), M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!Operation)
    return FailBarrier("a barrier needs '.sync', '.arrive' or '.red'");
  if (CtaAfterOperation)
    return FailBarrier("'.cta' comes before the barrier operation", Cta.Text);
  SyncKind Kind = *Operation;
  if (Kind == SyncKind::BarrierRed) {
    if (!Red)
      return FailBarrier("barrier reductions are '.popc', '.and' and '.or'");
    if (!Type || *Type != (*Red == ReductionOp::Popc ? "u32" : "pred"))
      return FailBarrier(*Red == ReductionOp::Popc
                             ? "'.red.popc' has the type '.u32'"
                             : "'.red.and' and '.red.or' have the type '.pred'",
                         Type.Text);
  } else if (Red || Type) {
    return FailBarrier("only '.red' takes a reduction and a type",
                       Red ? Red.Text : Type.Text);
  }

  ptx::OperandRange Ops = I.operands();
  for (ptx::Operand Op : Ops)
    if (!isScalar(Op))
      return FailBarrier("barrier operands are registers or immediates");
  SyncOpBuilder B(I, Kind);
  B->Aligned = Bar || AlignedWord.has_value();
  B->Scope = SyncScope::Cta;
  B->Reduction = Red.valueOr(ReductionOp::None);
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
  ModifierSlot<bool> Sync;
  if (auto R = scanWords(C, FailElect, [&](StringRef M) {
        return M == "sync" ? flag(Sync, M) : WordFit::Unknown;
      }))
    return *R;
  if (!Sync)
    return FailElect("elect is 'elect.sync'");
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
