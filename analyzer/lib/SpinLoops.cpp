//===- SpinLoops.cpp - mbarrier wait loops as one blocking wait -------------------===//
//
// `mbarrier.try_wait` may give up after a time limit, so every wait is a loop around it; so is
// `test_wait`, which never blocks. A loop is one blocking wait when it contains no other loop,
// exactly one try_wait/test_wait, nothing but register plumbing around it (setp, selp, mov,
// arithmetic, branches, a nanosleep back-off, a timer read), and is left only when the wait's
// result says the phase completed (or towards code that never returns: a checked build's
// timeout that reports the hang and traps). The shapes compilers write all fit:
//
//   nvcc inline asm     { WAIT: try_wait P1, [a], p; @P1 bra DONE; bra.uni WAIT; DONE: }
//   selp outside        L: { try_wait P1, [a], p; selp.b32 %r, 1, 0, P1; }
//                          setp.eq.s32 %p, %r, 0; @%p bra L;
//   Triton              waitLoop: try_wait complete, [a], p; @!complete bra.uni waitLoop;
//
// Operands (PTX ISA, mbarrier.try_wait): waitComplete, [addr], phaseParity | state
// {, suspendTimeHint}.
//
//===----------------------------------------------------------------------------------===//
#include "ValueBuilder.h"

#include "wsv/models/SyncOp.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

// Instructions a wait loop may run besides the wait: register arithmetic with no effect on
// memory or other threads (the branch plumbing, a back-off, a checked build's timer reads).
static bool isWaitPlumbing(const ptx::Instruction &I) {
  return llvm::StringSwitch<bool>(I.baseName())
      .Cases("bra", "setp", "selp", "mov", "not", "and", "or", "xor", true)
      .Cases("nanosleep", "cvt", "add", "sub", "shl", "shr", "min", "max", true)
      .Default(false);
}

// The position of Op among I's top-level operands.
static std::optional<unsigned> operandIndex(const ptx::Instruction &I, ptx::Operand Op) {
  if (!Op)
    return std::nullopt;
  ptx::OperandRange Ops = I.operands();
  for (unsigned K = 0; K < Ops.size(); ++K)
    if (Ops[K].slot() == Op.slot())
      return K;
  return std::nullopt;
}

void ValueBuilder::recognizeSpinWait(LoopId L) {
  const Loop &Lp = Loops.loop(L);
  if (!Lp.Children.empty())
    return;
  InstId Wait = NoIndex;
  std::optional<models::SyncOp> Op;
  for (BlockId B : Lp.Blocks) {
    for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I) {
      const ptx::Instruction &In = *G.inst(I).I;
      models::SyncDecodeResult D = models::decodeSyncOp(In);
      if (D && (D->Kind == models::SyncKind::MbarrierTryWait ||
                D->Kind == models::SyncKind::MbarrierTestWait)) {
        if (Wait != NoIndex)
          return; // two waits: not one blocking wait
        Wait = I;
        Op = *D;
        continue;
      }
      if (!isWaitPlumbing(In))
        return;
    }
  }
  if (Wait == NoIndex)
    return;
  // The loop must be left only when the wait succeeded: every exit condition reads its result.
  const void *Site = &G.inst(Wait);
  auto ReadsWait = [&](const Expr *E) {
    return E && E->mentions([&](const Expr *Leaf) {
             return Leaf->is(ExprKind::Opaque) && Leaf->site() == Site;
           });
  };
  // Exits towards code that never returns (a timeout that reports a hang and traps) are
  // aborts, not ways the wait ends.
  bool LeftByWait = false;
  for (auto [From, To] : Lp.ExitEdges) {
    if (G.block(To).NeverReturns)
      continue;
    if (!ReadsWait(edgeCondition(From, To)))
      return;
    LeftByWait = true;
  }
  if (!LeftByWait)
    return;
  const ptx::Instruction &In = *G.inst(Wait).I;
  SpinWait W;
  W.Wait = Wait;
  W.Op = *Op;
  W.IsTestWait = Op->Kind == models::SyncKind::MbarrierTestWait;
  if (auto K = operandIndex(In, Op->barrier()))
    W.Barrier = VA.operand(Wait, *K);
  if (auto K = operandIndex(In, Op->WaitsOnParity ? Op->parity() : Op->stateToken()))
    (Op->WaitsOnParity ? W.Parity : W.State) = VA.operand(Wait, *K);
  Summaries[L].Spin = W;
}
