//===- SyncSupport.cpp - places, thread coverage, per-thread values, cluster shape -===//
#include "SyncSupport.h"

#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/LaunchSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::checks;

std::vector<EventSite> checks::eventSites(const Protocol &P) {
  std::vector<EventSite> Sites;
  unsigned Order = 0;
  auto Walk = [&](const std::vector<ProtocolItem> &Items, Part In, const Role *R) {
    P.forEachEvent(Items, [&](const Event &E, llvm::ArrayRef<const ProtocolLoop *> Loops) {
      EventSite S;
      S.E = &E;
      S.Index = static_cast<unsigned>(&E - P.Events.data());
      S.In = In;
      S.R = R;
      S.Order = Order++;
      S.Loops.assign(Loops.begin(), Loops.end());
      Sites.push_back(std::move(S));
    });
  };
  Walk(P.Prologue, Part::Prologue, nullptr);
  for (const Role &R : P.Roles)
    Walk(R.Body, Part::Role, &R);
  Walk(P.Epilogue, Part::Epilogue, nullptr);
  return Sites;
}

llvm::BitVector checks::possibleThreads(const ThreadSet &T) {
  llvm::BitVector All = T.Members;
  for (const ThreadSet::ElectedGroup &G : T.Elected) {
    if (All.size() < G.Candidates.size())
      All.resize(G.Candidates.size());
    All |= G.Candidates;
  }
  for (const ThreadSet::ConditionalGroup &G : T.Conditional) {
    if (All.size() < G.Threads.size())
      All.resize(G.Threads.size());
    All |= G.Threads;
  }
  return All;
}

std::string checks::describeThreads(const llvm::BitVector &Threads, bool WithCount) {
  ThreadSet S;
  S.Members = Threads;
  std::string Text = S.str();
  if (!WithCount && !Text.empty() && Text.back() == ')') {
    size_t Open = Text.rfind(" (");
    if (Open != std::string::npos)
      Text.erase(Open);
  }
  return Text;
}

std::optional<unsigned> checks::threadCount(const ThreadSet &T) {
  if (T.isUnknown())
    return std::nullopt;
  llvm::BitVector Plain = T.Members;
  unsigned N = 0;
  for (const ThreadSet::ElectedGroup &G : T.Elected) {
    if (G.Excluded) {
      // Members hold every candidate; one lane per warp is not in the set.
      llvm::BitVector InSet = G.Candidates;
      InSet &= Plain;
      unsigned Candidates = InSet.count();
      Plain.reset(G.Candidates);
      N += Candidates >= G.Warps.size() ? Candidates - G.Warps.size() : 0;
      continue;
    }
    N += G.Warps.size();
  }
  N += Plain.count();
  for (const ThreadSet::ConditionalGroup &G : T.Conditional)
    N += G.Threads.count();
  return N;
}

namespace {
/// The first group of Granule threads that Threads covers in part, described.
std::string firstPartialGroup(const llvm::BitVector &Threads, unsigned BlockThreads,
                              unsigned Granule) {
  for (unsigned First = 0; First < BlockThreads; First += Granule) {
    unsigned End = std::min(First + Granule, BlockThreads);
    unsigned In = 0;
    for (unsigned T = First; T < End && T < Threads.size(); ++T)
      In += Threads.test(T);
    if (In == 0 || In == End - First)
      continue;
    llvm::BitVector Group(Threads.size());
    for (unsigned T = First; T < End && T < Threads.size(); ++T)
      if (Threads.test(T))
        Group.set(T);
    std::string Unit = Granule == WarpSize ? "warp" : "warpgroup";
    return describeThreads(Group, false) + " of " + Unit + " " + std::to_string(First / Granule) +
           " (" + std::to_string(In) + " of its " + std::to_string(End - First) + " threads)";
  }
  return {};
}
} // namespace

Coverage checks::coverage(const ThreadSet &T, unsigned Granule) {
  Coverage C;
  if (T.isUnknown()) {
    C.Unknown = T.reason();
    return C;
  }
  unsigned Block = T.blockThreads();
  for (const ThreadSet::ElectedGroup &G : T.Elected) {
    // One lane of a warp (or all but one) never covers a warp.
    std::string Which = G.Excluded ? "all but the elected lane" : "one elected lane";
    unsigned Warp = G.Warps.empty() ? 0 : G.Warps.front();
    C.Partial = Which + " of warp " + std::to_string(Warp) + " (elect.sync)";
    return C;
  }
  C.Partial = firstPartialGroup(T.Members, Block, Granule);
  if (!C.Partial.empty())
    return C;
  // Threads that run only when a value that is not a thread id says so: partial groups are
  // a fact only when no other group can fill them up.
  llvm::BitVector Union = possibleThreads(T);
  for (const ThreadSet::ConditionalGroup &G : T.Conditional) {
    std::string Partial = firstPartialGroup(G.Threads, Block, Granule);
    if (Partial.empty())
      continue;
    if (!firstPartialGroup(Union, Block, Granule).empty()) {
      C.Partial = Partial;
      return C;
    }
    C.Unknown = "whether " + Partial + " run with the rest depends on " +
                (G.Condition ? G.Condition->str() : std::string("a value that is not a thread id"));
    return C;
  }
  return C;
}

std::optional<uint64_t> checks::valueInThread(const Expr *E, unsigned Tid, const LaunchShape &L) {
  if (!E)
    return std::nullopt;
  unsigned X = L.BlockX ? L.BlockX : 1, Y = L.BlockY ? L.BlockY : 1;
  return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
    if (Leaf->isConstant())
      return Leaf->payload();
    if (!Leaf->is(ExprKind::SpecialReg))
      return std::nullopt;
    switch (Leaf->specialRegister()) {
    case SpecialRegister::TidX:
      return Tid % X;
    case SpecialRegister::TidY:
      return (Tid / X) % Y;
    case SpecialRegister::TidZ:
      return Tid / (X * Y);
    case SpecialRegister::NtidX:
      return L.BlockX;
    case SpecialRegister::NtidY:
      return L.BlockY;
    case SpecialRegister::NtidZ:
      return L.BlockZ;
    // Lanes follow the linear thread id (PTX ISA, "Special Registers: %laneid").
    case SpecialRegister::LaneId:
      return Tid % WarpSize;
    default:
      return std::nullopt;
    }
  });
}

ClusterShape checks::clusterShape(const Protocol &P) {
  ClusterShape S;
  if (!P.ClusterFrom.empty()) { // the builder took it from the PTX or the launch
    S.Size = P.Launch.ClusterSize;
    S.Known = true;
    S.From = P.ClusterFrom;
  }
  return S;
}

namespace {
/// Bytes of a `.shared` declaration with known dimensions; 0 for `extern ... []`.
uint64_t declBytes(const ptx::VariableDecl &D) {
  llvm::StringRef Type = D.type();
  unsigned Bits = 8;
  size_t Digits = Type.find_first_of("0123456789");
  if (Digits != llvm::StringRef::npos)
    Type.substr(Digits).getAsInteger(10, Bits);
  uint64_t Bytes = std::max(1u, Bits / 8);
  for (int64_t Dim : D.dimensions()) {
    if (Dim < 0)
      return 0;
    Bytes *= static_cast<uint64_t>(Dim);
  }
  return Bytes;
}

uint64_t sharedBytes(llvm::ArrayRef<const ptx::Statement *> Items) {
  uint64_t Bytes = 0;
  for (const ptx::Statement *S : Items)
    if (const auto *D = llvm::dyn_cast<ptx::VariableDecl>(S))
      if (D->space() == ".shared")
        Bytes += declBytes(*D);
  return Bytes;
}
} // namespace

Residency checks::residentCtas(const Protocol &P) {
  constexpr unsigned ThreadsPerSm = 2048, CtasPerSm = 32;
  constexpr uint64_t SmemPerSm = 228 * 1024, ReservedPerCta = 1024;
  Residency R;
  unsigned Threads = std::max(1u, P.Launch.threads());
  R.MaxCtas = std::min(CtasPerSm, ThreadsPerSm / Threads);
  R.Why = std::to_string(R.MaxCtas) + " by threads (" + std::to_string(Threads) + " per CTA)";
  if (!P.Analysis)
    return R;
  const ptx::Module &M = P.Analysis->cfg().module();
  const ptx::Function &F = P.Analysis->cfg().function();
  // Module-scope declarations count for every entry: a bound from below on each one's use.
  uint64_t Static = sharedBytes(M.items());
  if (F.body())
    Static += sharedBytes(F.body()->body());
  uint64_t Dynamic = 0;
  if (std::optional<LaunchSpec> Spec = readKernelInfo(M, F))
    Dynamic = Spec->DynamicSmemBytes.value_or(0);
  uint64_t PerCta = Static + Dynamic + ReservedPerCta;
  unsigned BySmem = static_cast<unsigned>(SmemPerSm / PerCta);
  if (BySmem < R.MaxCtas) {
    R.MaxCtas = BySmem;
    R.Why = std::to_string(BySmem) + " by shared memory (" + std::to_string(PerCta / 1024) +
            " KB per CTA)";
  }
  return R;
}

SourceRef checks::sourceOf(const Protocol &P, InstId I) {
  SourceRef R;
  if (!P.Analysis)
    return R;
  const Cfg &G = P.Analysis->cfg();
  ptx::SourceLocation L = G.location(I);
  R.PtxLine = L.Line;
  R.PtxColumn = L.Column;
  for (const ptx::CudaLocation &C : G.module().cudaLocationChain(*G.inst(I).I)) {
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

std::optional<SourceRef> checks::operandSource(const Protocol &P, const Event &E,
                                               models::OperandRole Role) {
  if (!P.Analysis || E.Inst == NoIndex)
    return std::nullopt;
  const Cfg &G = P.Analysis->cfg();
  const ValueAnalysis &V = P.Analysis->values();
  models::SyncDecodeResult D = models::decodeSyncOp(*G.inst(E.Inst).I);
  if (!D)
    return std::nullopt;
  ptx::Operand Op = D->operand(Role);
  if (!Op || !Op.isName())
    return std::nullopt;
  std::optional<RegId> Reg = V.registerAt(E.Inst, Op.text());
  if (!Reg)
    return std::nullopt;
  // Backwards through the block and its single predecessors, a bounded walk.
  InstId I = E.Inst;
  BlockId B = G.inst(I).Block;
  for (unsigned Steps = 0; Steps < 256; ++Steps) {
    if (I == G.block(B).Begin) {
      if (G.block(B).Preds.size() != 1)
        return std::nullopt;
      B = G.block(B).Preds.front();
      if (G.block(B).empty())
        return std::nullopt;
      I = G.block(B).End;
    }
    --I;
    const ptx::Instruction &Inst = *G.inst(I).I;
    if (Inst.operands().empty() || !V.isDestination(I, 0))
      continue;
    ptx::Operand Dst = Inst.operands()[0];
    if (Dst.isName() && V.registerAt(I, Dst.text()) == Reg)
      return sourceOf(P, I);
  }
  return std::nullopt;
}

std::optional<SourceRef> checks::threadGuard(const Protocol &P, const Event &E) {
  if (!P.Analysis || E.Inst == NoIndex)
    return std::nullopt;
  const Cfg &G = P.Analysis->cfg();
  const DominatorTree &Dom = P.Analysis->dominators();
  const ValueAnalysis &V = P.Analysis->values();
  auto PerThread = [](const Expr *L) {
    if (!L->is(ExprKind::SpecialReg))
      return L->is(ExprKind::Elect);
    SpecialRegister R = L->specialRegister();
    return R == SpecialRegister::TidX || R == SpecialRegister::TidY || R == SpecialRegister::TidZ ||
           R == SpecialRegister::LaneId;
  };
  for (BlockId B = G.inst(E.Inst).Block; Dom.inTree(B) && B != G.entry();) {
    B = Dom.idom(B);
    const BasicBlock &D = G.block(B);
    if (D.Terminator != TerminatorKind::CondBranch || D.Succs.empty())
      continue;
    const Expr *C = V.edgeCondition(B, D.Succs.front());
    if (C && C->mentions(PerThread))
      return sourceOf(P, G.terminatorInst(B));
  }
  return std::nullopt;
}

std::vector<SourceRef> checks::kernelExits(const Protocol &P) {
  std::vector<SourceRef> Out;
  if (!P.Analysis)
    return Out;
  const Cfg &G = P.Analysis->cfg();
  for (const BasicBlock &B : G.blocks()) {
    if (!B.Reachable || B.NeverReturns || B.empty())
      continue;
    if (B.Terminator != TerminatorKind::Return && B.Terminator != TerminatorKind::Exit)
      continue;
    InstId Last = B.End - 1;
    if (G.inst(Last).Frame != 0)
      continue;
    Out.push_back(sourceOf(P, Last));
  }
  std::sort(Out.begin(), Out.end(),
            [](const SourceRef &A, const SourceRef &B) { return A.PtxLine < B.PtxLine; });
  return Out;
}

std::vector<SourceRef> checks::pathsIntoExits(const Protocol &P) {
  std::vector<SourceRef> Out;
  if (!P.Analysis)
    return Out;
  const Cfg &G = P.Analysis->cfg();
  for (const BasicBlock &B : G.blocks()) {
    if (!B.Reachable || B.NeverReturns || B.Terminator != TerminatorKind::Return)
      continue;
    for (BlockId Pred : B.Preds) {
      const BasicBlock &From = G.block(Pred);
      if (!From.Reachable || From.empty() || G.inst(From.End - 1).Frame != 0)
        continue;
      Out.push_back(sourceOf(P, From.End - 1));
    }
  }
  std::sort(Out.begin(), Out.end(),
            [](const SourceRef &A, const SourceRef &B) { return A.PtxLine < B.PtxLine; });
  return Out;
}

std::string checks::at(const SourceRef &S) {
  std::string Out = "ptx " + std::to_string(S.PtxLine);
  if (const CudaFrame *F = S.kernelFrame())
    if (F->Line)
      Out = llvm::sys::path::filename(F->File).str() + ":" + std::to_string(F->Line) + ", " + Out;
  return Out;
}

void checks::note(Finding &F, std::string Message, const SourceRef &Where) {
  F.Notes.push_back(FindingNote{std::move(Message), Where});
}

unsigned checks::alignedGranule(const Event &E) {
  llvm::StringRef Op = E.Opcode;
  // wgmma and setmaxnreg are warpgroup-wide (PTX ISA: "wgmma.mma_async", "setmaxnreg").
  if (Op.starts_with("wgmma.") || Op.starts_with("setmaxnreg"))
    return 4 * WarpSize;
  // bar.sync / bar.arrive / bar.red are the .aligned forms of barrier.* ("bar, barrier").
  if ((Op.starts_with("bar.") && !Op.starts_with("bar.warp")) || Op.contains(".aligned"))
    return WarpSize;
  return 0;
}

bool checks::usesTmem(const Event &E) {
  if (!E.Sync)
    return false;
  switch (*E.Sync) {
  case models::SyncKind::Tcgen05Mma:
  case models::SyncKind::Tcgen05Ld:
  case models::SyncKind::Tcgen05St:
  case models::SyncKind::Tcgen05Cp:
  case models::SyncKind::Tcgen05Shift:
    return true;
  default:
    return false;
  }
}

bool checks::crossesCtas(const Event &E) {
  if (E.Barrier.PeerRank.known() || !E.Barrier.PeerRank.Unknown.empty())
    return true;
  if (E.Multicast || E.CtaGroup == 2)
    return true;
  return false;
}

bool checks::isCtaWideSync(const Protocol &P, const Event &E) {
  if (E.When.known())
    return false;
  std::optional<unsigned> N = threadCount(E.Threads);
  if (!N || *N != P.Launch.threads() || !E.Threads.Conditional.empty())
    return false;
  if (E.Kind == EventKind::ClusterWait)
    return true;
  return E.Kind == EventKind::NamedBarrier && E.Named.Threads.absent() &&
         E.Sync != models::SyncKind::BarrierArrive;
}

std::vector<std::optional<uint64_t>> checks::ctaBarrierKeys(const Protocol &P,
                                                            const std::vector<EventSite> &Sites) {
  unsigned Block = P.Launch.threads();
  std::map<uint64_t, llvm::BitVector> Unaligned;
  NamedBarrierUses Uses = namedBarrierUses(P, Sites);
  for (const NamedBarrierUse &U : Uses.Uses) {
    if (U.Count || alignedGranule(*U.Site->E))
      continue;
    llvm::BitVector &R = Unaligned[U.Id];
    R.resize(Block);
    llvm::BitVector T = U.Threads;
    T.resize(Block);
    R |= T;
  }
  // Keys of unaligned barriers live above every event index.
  const uint64_t UnalignedBase = uint64_t(1) << 40;
  std::vector<std::optional<uint64_t>> Keys(Sites.size());
  for (size_t I = 0; I < Sites.size(); ++I) {
    const Event &E = *Sites[I].E;
    if (isCtaWideSync(P, E)) {
      Keys[I] = Sites[I].Index;
      continue;
    }
    std::optional<uint64_t> Id = E.Named.Id.constant();
    if (E.Kind == EventKind::NamedBarrier && E.Named.Threads.absent() && !alignedGranule(E) &&
        E.Sync != models::SyncKind::BarrierArrive && Id && Unaligned.count(*Id) &&
        Unaligned[*Id].count() == Block)
      Keys[I] = UnalignedBase + *Id;
  }
  return Keys;
}

NamedBarrierUses checks::namedBarrierUses(const Protocol &P, const std::vector<EventSite> &Sites) {
  NamedBarrierUses Out;
  llvm::SmallVector<bool, 64> Seen(P.Events.size(), false);
  unsigned Block = P.Launch.threads();
  for (const EventSite &S : Sites) {
    const Event &E = *S.E;
    if (E.Kind != EventKind::NamedBarrier || Seen[S.Index])
      continue;
    Seen[S.Index] = true;
    auto Unresolved = [&](std::string Why) {
      Out.Unresolved.push_back(UnresolvedBarrier{&S, std::move(Why)});
    };
    if (E.Threads.isUnknown()) {
      Unresolved("the threads that execute it are unknown: " + E.Threads.reason());
      continue;
    }
    if (!E.Named.Id.known()) {
      Unresolved("its barrier id is unknown" +
                 (E.Named.Id.Unknown.empty() ? std::string() : ": " + E.Named.Id.Unknown));
      continue;
    }
    if (!E.Named.Threads.absent() && !E.Named.Threads.known()) {
      Unresolved("its thread count is unknown: " + E.Named.Threads.Unknown);
      continue;
    }
    // Per thread: the id and count it passes (every candidate of an election included).
    std::map<std::pair<uint64_t, std::optional<uint64_t>>, NamedBarrierUse> ById;
    llvm::BitVector Threads = possibleThreads(E.Threads);
    bool Failed = false;
    for (unsigned T = 0; T < Threads.size() && T < Block && !Failed; ++T) {
      if (!Threads.test(T))
        continue;
      std::optional<uint64_t> Id = valueInThread(E.Named.Id.E, T, P.Launch);
      std::optional<uint64_t> Count;
      if (!E.Named.Threads.absent()) {
        Count = valueInThread(E.Named.Threads.E, T, P.Launch);
        if (!Count) {
          Unresolved("its thread count " + P.exprString(E.Named.Threads.E) +
                     " depends on more than the thread id");
          Failed = true;
          break;
        }
      }
      if (!Id) {
        Unresolved("its barrier id " + P.exprString(E.Named.Id.E) +
                   " depends on more than the thread id");
        Failed = true;
        break;
      }
      NamedBarrierUse &U = ById[{*Id, Count}];
      if (!U.Site) {
        U.Site = &S;
        U.Id = *Id;
        U.Count = Count;
        U.Threads.resize(Block);
      }
      U.Threads.set(T);
    }
    if (Failed)
      continue;
    for (auto &[Key, U] : ById) {
      U.Conditional = !E.Threads.Conditional.empty() || !E.Threads.Elected.empty();
      Out.Uses.push_back(std::move(U));
    }
  }
  return Out;
}
