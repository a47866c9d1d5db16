//===- SyncOpDecodeFence.cpp - fence.*, membar.* ----------------------------------===//
//
// PTX ISA 9.0, "Parallel Synchronization and Communication Instructions: membar / fence":
//   fence{.sem}.scope                                  thread fence, .sem defaults to .acq_rel
//   fence.acquire.sync_restrict::shared::cluster.cluster
//   fence.release.sync_restrict::shared::cta.cluster
//   fence.mbarrier_init.release.cluster                 (.op_restrict)
//   fence.proxy.alias | fence.proxy.async{.global,.shared::cta,.shared::cluster}
//   fence.proxy.tensormap::generic.release.scope
//   fence.proxy.tensormap::generic.acquire.scope [addr], size
//   fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster
//   fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster
//   membar.{cta,gl,sys}                                 = fence.sc.{cta,gpu,sys}
//   membar.proxy.proxykind                              = fence.proxy.proxykind
//
//===----------------------------------------------------------------------------------===//
#include "SyncOpDecoder.h"

using namespace wsv;
using namespace wsv::models;
using llvm::StringRef;

namespace {

const Reject Fail{SyncFamily::Fence};

/// The proxy kinds of `fence.proxy.<kind>` and `membar.proxy.<kind>`.
enum class ProxyKind { Alias, Async, AsyncGeneric, TensormapGeneric };

/// The words after `fence` (or `fence.proxy`), in any order as ptxas takes them.
struct FenceWords {
  ModifierSlot<MemorySemantics> Sem;
  ModifierSlot<SyncScope> Scope;
  ModifierSlot<StateSpace> Restrict; ///< `sync_restrict::shared::{cta,cluster}`
  ModifierSlot<bool> MbarrierInit;   ///< the `.op_restrict` of fence.mbarrier_init
  ModifierSlot<ProxyKind> Kind;      ///< proxy fences only
  ModifierSlot<StringRef> Space;     ///< fence.proxy.async's state space
};

std::optional<SyncDecodeResult> scanFenceWords(ModifierCursor &C, bool Proxy, FenceWords &W) {
  return scanWords(C, Fail, [&](StringRef M) {
    if (auto Sem = semanticsWord(M))
      return fit(W.Sem, Sem, M);
    if (auto Scope = scopeWord(M))
      return fit(W.Scope, Scope, M);
    if (M == "sync_restrict::shared::cluster")
      return fit(W.Restrict, std::optional(StateSpace::SharedCluster), M);
    if (M == "sync_restrict::shared::cta")
      return fit(W.Restrict, std::optional(StateSpace::SharedCta), M);
    if (M == "mbarrier_init" && !Proxy)
      return flag(W.MbarrierInit, M);
    if (!Proxy)
      return WordFit::Unknown;
    if (M == "alias")
      return fit(W.Kind, std::optional(ProxyKind::Alias), M);
    if (M == "async")
      return fit(W.Kind, std::optional(ProxyKind::Async), M);
    if (M == "async::generic")
      return fit(W.Kind, std::optional(ProxyKind::AsyncGeneric), M);
    if (M == "tensormap::generic")
      return fit(W.Kind, std::optional(ProxyKind::TensormapGeneric), M);
    if (spaceWord(M))
      return fit(W.Space, std::optional(M), M);
    return WordFit::Unknown;
  });
}

/// `.sync_restrict` fences are uni-directional and cluster-scoped: an acquire restricted to
/// `shared::cluster`, or a release restricted to `shared::cta`.
std::optional<SyncDecodeResult> checkRestricted(const FenceWords &W) {
  bool Acquire = W.Sem && *W.Sem == MemorySemantics::Acquire;
  bool Release = W.Sem && *W.Sem == MemorySemantics::Release;
  if (!Acquire && !Release)
    return Fail("a '.sync_restrict' fence is '.acquire' or '.release'", W.Sem.Text);
  if ((Acquire && *W.Restrict != StateSpace::SharedCluster) ||
      (Release && *W.Restrict != StateSpace::SharedCta))
    return Fail("'.acquire' restricts to 'shared::cluster', '.release' to 'shared::cta'",
                W.Restrict.Text);
  if (!W.Scope || *W.Scope != SyncScope::Cluster)
    return Fail("a '.sync_restrict' fence has the '.cluster' scope", W.Scope.Text);
  return std::nullopt;
}

SyncDecodeResult noOperands(const ptx::Instruction &I, SyncOpBuilder &B) {
  if (!I.operands().empty())
    return Fail("this fence takes no operands");
  return B.done();
}

/// After `fence.proxy` or `membar.proxy`.
SyncDecodeResult decodeProxyFence(const ptx::Instruction &I, ModifierCursor &C) {
  FenceWords W;
  if (auto R = scanFenceWords(C, /*Proxy=*/true, W))
    return *R;
  if (!W.Kind)
    return Fail("a proxy fence names its proxy kind, such as '.async'");
  bool Ordered = W.Sem || W.Scope || W.Restrict;
  if (W.Space && *W.Kind != ProxyKind::Async)
    return Fail("only fence.proxy.async names a state space", W.Space.Text);
  switch (*W.Kind) {
  case ProxyKind::Alias: {
    if (Ordered)
      return Fail("fence.proxy.alias takes no semantics or scope");
    SyncOpBuilder B(I, SyncKind::FenceProxyAlias);
    return noOperands(I, B);
  }
  case ProxyKind::Async: {
    if (Ordered)
      return Fail("fence.proxy.async takes no semantics or scope");
    SyncOpBuilder B(I, SyncKind::FenceProxyAsync);
    // Without a state space the fence covers all of them.
    B->Space = StateSpace::Generic;
    if (W.Space) {
      if (*W.Space != "global" && *W.Space != "shared::cta" && *W.Space != "shared::cluster")
        return Fail("fence.proxy.async names '.global', '.shared::cta' or '.shared::cluster'",
                    W.Space.Text);
      B->Space = *spaceWord(*W.Space);
    }
    return noOperands(I, B);
  }
  case ProxyKind::AsyncGeneric: {
    if (!W.Restrict)
      return Fail("fence.proxy.async::generic is '.sync_restrict'");
    if (auto R = checkRestricted(W))
      return *R;
    SyncOpBuilder B(I, SyncKind::FenceProxyAsync);
    B->Sem = *W.Sem;
    B->Scope = SyncScope::Cluster;
    B->Space = *W.Restrict;
    return noOperands(I, B);
  }
  case ProxyKind::TensormapGeneric:
    break;
  }
  if (W.Restrict)
    return Fail("the tensormap fence has no '.sync_restrict'", W.Restrict.Text);
  if (!W.Sem || (*W.Sem != MemorySemantics::Release && *W.Sem != MemorySemantics::Acquire))
    return Fail("the tensormap fence is '.release' or '.acquire'", W.Sem.Text);
  if (!W.Scope)
    return Fail("the tensormap fence needs a scope");
  SyncOpBuilder B(I, SyncKind::FenceProxyTensormap);
  B->Sem = *W.Sem;
  B->Scope = *W.Scope;
  ptx::OperandRange Ops = I.operands();
  if (*W.Sem == MemorySemantics::Release)
    return noOperands(I, B);
  if (Ops.size() != 2 || !isAddress(Ops[0]) || !isScalar(Ops[1]))
    return Fail("the acquiring tensormap fence takes [addr], size");
  B.roles(0, {OperandRole::Address, OperandRole::Size});
  return B.done();
}

} // namespace

SyncDecodeResult wsv::models::decodeFence(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (C.take("proxy"))
    return decodeProxyFence(I, C);
  FenceWords W;
  if (auto R = scanFenceWords(C, /*Proxy=*/false, W))
    return *R;
  if (W.MbarrierInit) {
    // `.mbarrier_init` restricts the fence to prior mbarrier.init operations: a
    // release at cluster scope, so that peers and the async proxy see the barrier.
    if (!W.Sem || *W.Sem != MemorySemantics::Release || !W.Scope ||
        *W.Scope != SyncScope::Cluster || W.Restrict)
      return Fail("the mbarrier_init fence is 'fence.mbarrier_init.release.cluster'");
    SyncOpBuilder B(I, SyncKind::FenceMbarrierInit);
    B->Sem = MemorySemantics::Release;
    B->Scope = SyncScope::Cluster;
    return noOperands(I, B);
  }
  if (W.Restrict) {
    if (auto R = checkRestricted(W))
      return *R;
  } else if (W.Sem && *W.Sem != MemorySemantics::Sc && *W.Sem != MemorySemantics::AcqRel &&
             *W.Sem != MemorySemantics::Acquire && *W.Sem != MemorySemantics::Release) {
    return Fail("fence semantics are '.sc', '.acq_rel', '.acquire' and '.release'", W.Sem.Text);
  }
  if (!W.Scope)
    return Fail("a thread fence needs a scope: '.cta', '.cluster', '.gpu' or '.sys'");
  SyncOpBuilder B(I, SyncKind::Fence);
  B->Sem = W.Sem.valueOr(MemorySemantics::AcqRel);
  B->Scope = *W.Scope;
  if (W.Restrict)
    B->Space = *W.Restrict;
  return noOperands(I, B);
}

SyncDecodeResult wsv::models::decodeMembar(const ptx::Instruction &I) {
  ModifierCursor C(I);
  if (C.take("proxy"))
    return decodeProxyFence(I, C);
  StringRef Level = C.next();
  SyncScope Scope = Level == "cta"   ? SyncScope::Cta
                    : Level == "gl"  ? SyncScope::Gpu
                    : Level == "sys" ? SyncScope::Sys
                                     : SyncScope::None;
  if (Scope == SyncScope::None)
    return Fail("membar levels are '.cta', '.gl' and '.sys'", Level);
  if (!C.atEnd())
    return Fail("unknown modifier", C.peek());
  SyncOpBuilder B(I, SyncKind::Fence);
  B->Sem = MemorySemantics::Sc;
  B->Scope = Scope;
  return noOperands(I, B);
}
