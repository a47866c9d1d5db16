//===- SyncOpDecodeMbarrier.cpp - mbarrier.* and cp.async.mbarrier.arrive ----------===//
//
// PTX ISA 9.0, "Parallel Synchronization and Communication Instructions: mbarrier" and its
// subsections mbarrier.init, mbarrier.inval, mbarrier.expect_tx, mbarrier.complete_tx,
// mbarrier.arrive, mbarrier.arrive_drop, cp.async.mbarrier.arrive,
// mbarrier.test_wait / mbarrier.try_wait and mbarrier.pending_count.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

/// The modifier categories of the mbarrier syntax blocks, after the operation word.
struct MbarrierWords {
  ModifierSlot<MemorySemantics> Sem;
  ModifierSlot<SyncScope> Scope;
  ModifierSlot<StateSpace> Space;
  ModifierSlot<bool> Type;
  ModifierSlot<bool> ExpectTx;   ///< arrive / arrive_drop
  ModifierSlot<bool> NoComplete; ///< arrive / arrive_drop
  ModifierSlot<bool> Parity;     ///< test_wait / try_wait
};

enum WordFlags : unsigned {
  AllowExpectTx = 1,
  AllowNoComplete = 2,
  AllowParity = 4,
};

const Reject Fail{SyncFamily::Mbarrier};

/// Sorts the modifiers after the operation word into MbarrierWords. Which values of each
/// category the operation accepts is checked by the caller.
std::optional<SyncDecodeResult> scanMbarrierWords(ModifierCursor &C, unsigned Flags,
                                                  MbarrierWords &W) {
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (auto Sem = semanticsWord(M))
      Fresh = W.Sem.set(*Sem, M);
    else if (auto Scope = scopeWord(M))
      Fresh = W.Scope.set(*Scope, M);
    else if (auto Space = spaceWord(M))
      Fresh = W.Space.set(*Space, M);
    else if (typeWordBytes(M))
      Fresh = W.Type.set(M == "b64", M);
    else if (M == "expect_tx" && (Flags & AllowExpectTx))
      Fresh = W.ExpectTx.set(true, M);
    else if (M == "noComplete" && (Flags & AllowNoComplete))
      Fresh = W.NoComplete.set(true, M);
    else if (M == "parity" && (Flags & AllowParity))
      Fresh = W.Parity.set(true, M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!W.Type)
    return Fail("mbarrier operations take the type '.b64'");
  if (!*W.Type)
    return Fail("mbarrier operations take the type '.b64', not this one", W.Type.Text);
  return std::nullopt;
}

/// The barrier's state space: generic addressing when none is written.
StateSpace barrierSpace(const MbarrierWords &W) {
  return W.Space.valueOr(StateSpace::Generic);
}

std::optional<SyncDecodeResult> onlySharedCta(const MbarrierWords &W) {
  if (W.Space && *W.Space != StateSpace::SharedCta)
    return Fail("this mbarrier operation takes only '.shared' or '.shared::cta'", W.Space.Text);
  return std::nullopt;
}

std::optional<SyncDecodeResult> noSemanticsOrScope(const MbarrierWords &W) {
  if (W.Sem)
    return Fail("this mbarrier operation takes no memory semantics", W.Sem.Text);
  if (W.Scope)
    return Fail("this mbarrier operation takes no scope", W.Scope.Text);
  return std::nullopt;
}

std::optional<SyncDecodeResult> scopeCtaOrCluster(const MbarrierWords &W) {
  if (W.Scope && *W.Scope != SyncScope::Cta && *W.Scope != SyncScope::Cluster)
    return Fail("mbarrier scopes are '.cta' and '.cluster'", W.Scope.Text);
  return std::nullopt;
}

/// ::= mbarrier.init{.shared{::cta}}.b64 [addr], count
/// ::= mbarrier.inval{.shared{::cta}}.b64 [addr]
SyncDecodeResult decodeInitOrInval(const ptx::Instruction &I, ModifierCursor &C, bool Init) {
  MbarrierWords W;
  if (auto R = scanMbarrierWords(C, 0, W))
    return *R;
  if (auto R = onlySharedCta(W))
    return *R;
  if (auto R = noSemanticsOrScope(W))
    return *R;
  ptx::OperandRange Ops = I.operands();
  unsigned Want = Init ? 2 : 1;
  if (Ops.size() != Want)
    return Fail(Init ? "mbarrier.init takes [addr], count" : "mbarrier.inval takes [addr]");
  if (!isAddress(Ops[0]))
    return Fail("the mbarrier operand must be an address '[...]'");
  if (Init && !isScalar(Ops[1]))
    return Fail("the count must be a register or an immediate");
  SyncOpBuilder B(I, Init ? SyncKind::MbarrierInit : SyncKind::MbarrierInval);
  B->Space = barrierSpace(W);
  B.role(OperandRole::Barrier, 0);
  if (Init)
    B.role(OperandRole::Count, 1);
  return B.done();
}

/// ::= mbarrier.arrive{.sem}{.scope}{.shared{::cta}}.b64 state, [addr]{, count}
/// ::= mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr]{, count}
/// ::= mbarrier.arrive.expect_tx{.sem}{.scope}{.space}.b64 state, [addr], txCount
/// ::= mbarrier.arrive.noComplete{.release}{.cta}{.shared{::cta}}.b64 state, [addr], count
/// and the same for arrive_drop. .sem = {.release, .relaxed}, .scope = {.cta, .cluster}.
SyncDecodeResult decodeArrive(const ptx::Instruction &I, ModifierCursor &C, bool Drop) {
  MbarrierWords W;
  if (auto R = scanMbarrierWords(C, AllowExpectTx | AllowNoComplete, W))
    return *R;
  if (W.Sem && *W.Sem != MemorySemantics::Release && *W.Sem != MemorySemantics::Relaxed)
    return Fail("arrive semantics are '.release' and '.relaxed'", W.Sem.Text);
  if (auto R = scopeCtaOrCluster(W))
    return *R;
  StateSpace Space = barrierSpace(W);
  if (Space != StateSpace::Generic && Space != StateSpace::SharedCta &&
      Space != StateSpace::SharedCluster)
    return Fail("an mbarrier lives in shared memory", W.Space.Text);
  if (W.NoComplete) {
    // The sm_80 form: it never completes the phase, so it has none of the sm_90 options.
    if (W.ExpectTx)
      return Fail("'.noComplete' cannot be combined with '.expect_tx'", W.NoComplete.Text);
    if (W.Sem && *W.Sem != MemorySemantics::Release)
      return Fail("'.noComplete' takes only '.release' semantics", W.Sem.Text);
    if (W.Scope && *W.Scope != SyncScope::Cta)
      return Fail("'.noComplete' takes only the '.cta' scope", W.Scope.Text);
    if (Space == StateSpace::SharedCluster)
      return Fail("'.noComplete' cannot arrive on a '.shared::cluster' barrier", W.Space.Text);
  }

  ptx::OperandRange Ops = I.operands();
  bool ExpectTx = W.ExpectTx.has_value();
  if (Ops.size() < 2 || Ops.size() > 3 || ((ExpectTx || W.NoComplete) && Ops.size() != 3))
    return Fail(ExpectTx ? "arrive.expect_tx takes state, [addr], txCount"
                : W.NoComplete ? "arrive.noComplete takes state, [addr], count"
                               : "arrive takes state, [addr]{, count}");
  if (!isScalar(Ops[0]))
    return Fail("the state operand must be a register or '_'");
  if (Space == StateSpace::SharedCluster && !isSink(Ops[0]))
    return Fail("an arrive on a '.shared::cluster' barrier returns no state: write '_'");
  if (W.NoComplete && isSink(Ops[0]))
    return Fail("arrive.noComplete returns its state in a register");
  if (!isAddress(Ops[1]))
    return Fail("the mbarrier operand must be an address '[...]'");
  if (Ops.size() == 3 && !isScalar(Ops[2]))
    return Fail(ExpectTx ? "txCount must be a register or an immediate"
                         : "the count must be a register or an immediate");

  SyncKind Kind = Drop ? (ExpectTx ? SyncKind::MbarrierArriveDropExpectTx
                                   : SyncKind::MbarrierArriveDrop)
                       : (ExpectTx ? SyncKind::MbarrierArriveExpectTx : SyncKind::MbarrierArrive);
  SyncOpBuilder B(I, Kind);
  B->Sem = W.Sem.valueOr(MemorySemantics::Release);
  B->Scope = W.Scope.valueOr(SyncScope::Cta);
  B->Space = Space;
  B->NoComplete = W.NoComplete.has_value();
  B.roles(0, {OperandRole::State, OperandRole::Barrier});
  if (Ops.size() == 3)
    B.role(ExpectTx ? OperandRole::TxBytes : OperandRole::Count, 2);
  return B.done();
}

/// ::= mbarrier.expect_tx{.relaxed}{.scope}{.space}.b64 [addr], txCount
/// ::= mbarrier.complete_tx{.relaxed}{.scope}{.space}.b64 [addr], txCount
/// .space = {.shared, .shared::cta, .shared::cluster}
SyncDecodeResult decodeTxOp(const ptx::Instruction &I, ModifierCursor &C, bool Complete) {
  MbarrierWords W;
  if (auto R = scanMbarrierWords(C, 0, W))
    return *R;
  if (W.Sem && *W.Sem != MemorySemantics::Relaxed)
    return Fail("expect_tx and complete_tx take only '.relaxed' semantics", W.Sem.Text);
  if (auto R = scopeCtaOrCluster(W))
    return *R;
  StateSpace Space = barrierSpace(W);
  if (Space != StateSpace::Generic && Space != StateSpace::SharedCta &&
      Space != StateSpace::SharedCluster)
    return Fail("an mbarrier lives in shared memory", W.Space.Text);
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2 || !isAddress(Ops[0]) || !isScalar(Ops[1]))
    return Fail(Complete ? "complete_tx takes [addr], txCount" : "expect_tx takes [addr], txCount");
  SyncOpBuilder B(I, Complete ? SyncKind::MbarrierCompleteTx : SyncKind::MbarrierExpectTx);
  B->Sem = MemorySemantics::Relaxed;
  B->Scope = W.Scope.valueOr(SyncScope::Cta);
  B->Space = Space;
  B.roles(0, {OperandRole::Barrier, OperandRole::TxBytes});
  return B.done();
}

/// ::= mbarrier.test_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr],
///         state | phaseParity
/// ::= mbarrier.try_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr],
///         state | phaseParity {, suspendTimeHint}
/// .sem = {.acquire, .relaxed}, .scope = {.cta, .cluster}
SyncDecodeResult decodeWait(const ptx::Instruction &I, ModifierCursor &C, bool Try) {
  MbarrierWords W;
  if (auto R = scanMbarrierWords(C, AllowParity, W))
    return *R;
  if (W.Sem && *W.Sem != MemorySemantics::Acquire && *W.Sem != MemorySemantics::Relaxed)
    return Fail("wait semantics are '.acquire' and '.relaxed'", W.Sem.Text);
  if (auto R = scopeCtaOrCluster(W))
    return *R;
  if (auto R = onlySharedCta(W))
    return *R;
  ptx::OperandRange Ops = I.operands();
  unsigned Max = Try ? 4 : 3;
  if (Ops.size() < 3 || Ops.size() > Max)
    return Fail(Try ? "try_wait takes waitComplete, [addr], state or parity{, suspendTimeHint}"
                    : "test_wait takes waitComplete, [addr], state or parity");
  if (!isScalar(Ops[0]) || isSink(Ops[0]))
    return Fail("waitComplete must be a predicate register");
  if (!isAddress(Ops[1]))
    return Fail("the mbarrier operand must be an address '[...]'");
  if (!isScalar(Ops[2]) || isSink(Ops[2]))
    return Fail(W.Parity ? "the parity must be a register or an immediate"
                         : "the state must be a register");
  if (Ops.size() == 4 && (!isScalar(Ops[3]) || isSink(Ops[3])))
    return Fail("suspendTimeHint must be a register or an immediate");
  SyncOpBuilder B(I, Try ? SyncKind::MbarrierTryWait : SyncKind::MbarrierTestWait);
  B->Sem = W.Sem.valueOr(MemorySemantics::Acquire);
  B->Scope = W.Scope.valueOr(SyncScope::Cta);
  B->Space = barrierSpace(W);
  B->WaitsOnParity = W.Parity.has_value();
  B.roles(0, {OperandRole::WaitComplete, OperandRole::Barrier,
              W.Parity ? OperandRole::Parity : OperandRole::StateToken});
  if (Ops.size() == 4)
    B.role(OperandRole::SuspendTimeHint, 3);
  return B.done();
}

/// ::= mbarrier.pending_count.b64 count, state
SyncDecodeResult decodePendingCount(const ptx::Instruction &I, ModifierCursor &C) {
  MbarrierWords W;
  if (auto R = scanMbarrierWords(C, 0, W))
    return *R;
  if (W.Space)
    return Fail("pending_count reads a state token, not a barrier: no state space",
                W.Space.Text);
  if (auto R = noSemanticsOrScope(W))
    return *R;
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2 || !isScalar(Ops[0]) || isSink(Ops[0]) || !isScalar(Ops[1]))
    return Fail("pending_count takes count, state");
  SyncOpBuilder B(I, SyncKind::MbarrierPendingCount);
  B.roles(0, {OperandRole::PendingCount, OperandRole::StateToken});
  return B.done();
}

} // namespace

SyncDecodeResult wsv::models::decodeMbarrier(const ptx::Instruction &I) {
  ModifierCursor C(I);
  StringRef Operation = C.next();
  if (Operation == "init" || Operation == "inval")
    return decodeInitOrInval(I, C, Operation == "init");
  if (Operation == "arrive" || Operation == "arrive_drop")
    return decodeArrive(I, C, Operation == "arrive_drop");
  if (Operation == "expect_tx" || Operation == "complete_tx")
    return decodeTxOp(I, C, Operation == "complete_tx");
  if (Operation == "test_wait" || Operation == "try_wait")
    return decodeWait(I, C, Operation == "try_wait");
  if (Operation == "pending_count")
    return decodePendingCount(I, C);
  if (Operation.empty())
    return Fail("'mbarrier' needs an operation such as '.arrive'");
  return Fail("unknown mbarrier operation", Operation);
}

/// ::= cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]
/// Called with the cursor after `cp.async.mbarrier`.
SyncDecodeResult wsv::models::decodeCpAsyncMbarrierArrive(const ptx::Instruction &I,
                                                          ModifierCursor &C) {
  if (!C.take("arrive"))
    return Fail("cp.async.mbarrier has only the operation '.arrive'", C.peek());
  ModifierSlot<bool> NoInc, Type;
  ModifierSlot<StateSpace> Space;
  while (!C.atEnd()) {
    StringRef M = C.next();
    bool Fresh;
    if (M == "noinc")
      Fresh = NoInc.set(true, M);
    else if (auto S = spaceWord(M))
      Fresh = Space.set(*S, M);
    else if (typeWordBytes(M))
      Fresh = Type.set(M == "b64", M);
    else
      return Fail("unknown modifier", M);
    if (!Fresh)
      return Fail("repeated modifier", M);
  }
  if (!Type || !*Type)
    return Fail("cp.async.mbarrier.arrive takes the type '.b64'", Type.Text);
  if (Space && *Space != StateSpace::SharedCta)
    return Fail("cp.async.mbarrier.arrive takes only '.shared' or '.shared::cta'", Space.Text);
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 1 || !isAddress(Ops[0]))
    return Fail("cp.async.mbarrier.arrive takes [addr]");
  SyncOpBuilder B(I, SyncKind::CpAsyncMbarrierArrive);
  B->Space = Space.valueOr(StateSpace::Generic);
  B->NoInc = NoInc.has_value();
  B.role(OperandRole::Barrier, 0);
  return B.done();
}
