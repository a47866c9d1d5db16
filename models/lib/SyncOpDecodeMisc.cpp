//===- SyncOpDecodeMisc.cpp - setmaxnreg, mapa, clusterlaunchcontrol, exit ---------===//
//
// PTX ISA 9.0: "Miscellaneous Instructions: setmaxnreg", "Data Movement and Conversion
// Instructions: mapa", "Parallel Synchronization and Communication Instructions:
// clusterlaunchcontrol.try_cancel", and "Control Flow Instructions": exit, ret, plus
// "Miscellaneous Instructions: trap" — the instructions after which a thread takes no further
// part in the protocol.
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

/// ::= setmaxnreg.{inc,dec}.sync.aligned.u32 imm-reg-count
/// The count's range (a multiple of 8 in [24, 256]) is a check's business, not the decoder's.
SyncDecodeResult wsv::models::decodeSetmaxnreg(const ptx::Instruction &I) {
  const Reject Fail{SyncFamily::Setmaxnreg};
  ModifierCursor C(I);
  StringRef Action = C.next();
  if (Action != "inc" && Action != "dec")
    return Fail("setmaxnreg is '.inc' or '.dec'", Action);
  ModifierSlot<bool> Sync, Aligned;
  ModifierSlot<StringRef> Type;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (M == "sync")
          return flag(Sync, M);
        if (M == "aligned")
          return flag(Aligned, M);
        if (typeWordBytes(M))
          return fit(Type, std::optional(M), M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!Sync || !Aligned)
    return Fail("setmaxnreg is '.sync.aligned'");
  if (!Type || *Type != "u32")
    return Fail("setmaxnreg takes the type '.u32'", Type.Text);
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 1 || !isImmediate(Ops[0]))
    return Fail("setmaxnreg takes an immediate register count");
  SyncOpBuilder B(I, Action == "inc" ? SyncKind::SetmaxnregInc : SyncKind::SetmaxnregDec);
  B->Aligned = true;
  B.role(OperandRole::RegCount, 0);
  return B.done();
}

/// ::= mapa{.shared::cluster}.{u32,u64} d, a, b
/// a is a register, a shared variable or variable+offset; b is the target CTA's rank.
SyncDecodeResult wsv::models::decodeMapa(const ptx::Instruction &I) {
  const Reject Fail{SyncFamily::Mapa};
  ModifierCursor C(I);
  ModifierSlot<StateSpace> Space;
  ModifierSlot<StringRef> Type;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (auto S = spaceWord(M))
          return fit(Space, S, M);
        if (typeWordBytes(M))
          return fit(Type, std::optional(M), M);
        return WordFit::Unknown;
      }))
    return *R;
  if (Space && *Space != StateSpace::SharedCluster)
    return Fail("mapa maps generic or '.shared::cluster' addresses", Space.Text);
  if (!Type || (*Type != "u32" && *Type != "u64"))
    return Fail("mapa takes the type '.u32' or '.u64'", Type.Text);
  bool Cluster = Space.has_value();
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 3 || !isScalar(Ops[0]) || isSink(Ops[0]) || !isScalar(Ops[1]) ||
      !isScalar(Ops[2]) || isSink(Ops[2]))
    return Fail("mapa takes d, a, b");
  SyncOpBuilder B(I, SyncKind::Mapa);
  B->Space = Cluster ? StateSpace::SharedCluster : StateSpace::Generic;
  B.roles(0, {OperandRole::MappedAddress, OperandRole::Address, OperandRole::TargetRank});
  return B.done();
}

/// ::= clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
///         {.multicast::cluster::all}.b128 [addr], [mbar]
/// query_cancel only decodes a response already in registers: no synchronization.
SyncDecodeResult wsv::models::decodeClusterLaunchControl(const ptx::Instruction &I) {
  const Reject Fail{SyncFamily::ClusterLaunchControl};
  ModifierCursor C(I);
  if (C.take("query_cancel"))
    return SyncDecodeResult::notSync();
  if (!C.take("try_cancel"))
    return Fail("unknown clusterlaunchcontrol operation", C.peek());
  ModifierSlot<bool> Async, SharedCta, CompleteTx, Multicast, B128;
  if (auto R = scanWords(C, Fail, [&](StringRef M) {
        if (M == "async")
          return flag(Async, M);
        if (M == "shared::cta")
          return flag(SharedCta, M);
        if (M == "mbarrier::complete_tx::bytes")
          return flag(CompleteTx, M);
        if (M == "multicast::cluster::all")
          return flag(Multicast, M);
        if (M == "b128")
          return flag(B128, M);
        return WordFit::Unknown;
      }))
    return *R;
  if (!Async)
    return Fail("try_cancel is '.async'");
  if (!CompleteTx)
    return Fail("try_cancel completes with '.mbarrier::complete_tx::bytes'");
  if (!B128)
    return Fail("try_cancel takes the type '.b128'");
  ptx::OperandRange Ops = I.operands();
  if (Ops.size() != 2 || !isAddress(Ops[0]) || !isAddress(Ops[1]))
    return Fail("try_cancel takes [addr], [mbar]");
  SyncOpBuilder B(I, SyncKind::ClusterLaunchTryCancel);
  B->Space = SharedCta ? StateSpace::SharedCta : StateSpace::Generic;
  B->Completion = CompletionMechanism::MbarrierCompleteTx;
  B->Multicast = Multicast.has_value();
  B.roles(0, {OperandRole::Response, OperandRole::Barrier});
  return B.done();
}

/// ::= exit  |  trap  |  ret{.uni}
SyncDecodeResult wsv::models::decodeThreadExit(const ptx::Instruction &I) {
  const Reject Fail{SyncFamily::ThreadExit};
  StringRef Base = I.baseName();
  ModifierCursor C(I);
  if (Base == "ret")
    C.take("uni");
  if (!C.atEnd())
    return Fail("unknown modifier", C.peek());
  if (!I.operands().empty())
    return Fail("exit, trap and ret take no operands");
  SyncKind Kind = Base == "exit" ? SyncKind::Exit
                  : Base == "trap" ? SyncKind::Trap
                                   : SyncKind::Ret;
  SyncOpBuilder B(I, Kind);
  return B.done();
}
