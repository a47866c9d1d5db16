//===- Protocol.cpp - names and walks of the protocol IR --------------------------===//
#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/FunctionAnalysis.h"

#include "wsv/analyzer/Barriers.h"

#include <algorithm>
#include <map>

using namespace wsv;
using namespace wsv::analyzer;

const CudaFrame *SourceRef::kernelFrame() const {
  if (Cuda.empty())
    return nullptr;
  const std::string &KernelFile = Cuda.back().File;
  for (const CudaFrame &F : Cuda)
    if (F.File == KernelFile && F.Line != 0)
      return &F;
  return &Cuda.back();
}

const char *wsv::analyzer::toString(NameOrigin O) {
  switch (O) {
  case NameOrigin::Symbol: return "symbol";
  case NameOrigin::Usage: return "usage";
  case NameOrigin::Fallback: return "fallback";
  }
  return "fallback";
}

bool wsv::analyzer::slotBounded(const Protocol &P, const Event &E) {
  const BufferRef &Smem = E.Kind == EventKind::AsyncStore ? E.Src : E.Dst;
  return Smem.resolved() && P.Buffers[Smem.Buffer].SlotBytes.has_value();
}

std::vector<std::string> wsv::analyzer::unplacedAccesses(const Protocol &P) {
  // One line per buffer and kind: a per-thread loop's reads are many events of one line.
  std::map<std::pair<unsigned, bool>, std::vector<unsigned>> Lines;
  for (const Event &E : P.Events) {
    bool Read = E.Kind == EventKind::SmemRead;
    if (!Read && E.Kind != EventKind::SmemWrite)
      continue;
    const BufferRef &R = Read ? E.Src : E.Dst;
    if (R.resolved() || R.InRegionOf == NoIndex)
      continue;
    // No thread runs it (nvcc's peeled first word of a per-thread loop, under a remainder
    // test no thread of the role passes): nothing for the model to follow.
    if (!E.Threads.isUnknown() && E.Threads.count() == 0u)
      continue;
    std::vector<unsigned> &L = Lines[{R.InRegionOf, Read}];
    if (llvm::find(L, E.Where.PtxLine) == L.end())
      L.push_back(E.Where.PtxLine);
  }
  std::vector<std::string> Out;
  for (const auto &[Key, L] : Lines) {
    std::string Text = std::string(Key.second ? "reads" : "writes") + " of " +
                       P.Buffers[Key.first].Name + " at ptx line(s) ";
    for (size_t I = 0; I < L.size(); ++I)
      Text += (I ? ", " : "") + std::to_string(L[I]);
    Out.push_back(Text + ", which no slot of it holds in full");
  }
  return Out;
}

const char *wsv::analyzer::toString(BytesOrigin O) {
  switch (O) {
  case BytesOrigin::None: return "none";
  case BytesOrigin::Operand: return "operand";
  case BytesOrigin::Fixed: return "fixed";
  case BytesOrigin::TensorBox: return "tensor-box";
  case BytesOrigin::AllocationBound: return "allocation-bound";
  case BytesOrigin::BarrierExpect: return "barrier-expect";
  case BytesOrigin::Unknown: return "unknown";
  }
  return "unknown";
}

const char *wsv::analyzer::toString(EventKind K) {
  switch (K) {
  case EventKind::Init: return "init";
  case EventKind::Inval: return "inval";
  case EventKind::Arrive: return "arrive";
  case EventKind::ArriveExpectTx: return "arrive.expect_tx";
  case EventKind::ExpectTx: return "expect_tx";
  case EventKind::CompleteTx: return "complete_tx";
  case EventKind::Wait: return "wait";
  case EventKind::Probe: return "probe";
  case EventKind::AsyncLoad: return "async-load";
  case EventKind::AsyncStore: return "async-store";
  case EventKind::AsyncCopy: return "async-copy";
  case EventKind::CpAsyncArrive: return "cp.async.mbarrier.arrive";
  case EventKind::MmaCommit: return "tcgen05.commit";
  case EventKind::Mma: return "mma";
  case EventKind::WgmmaFence: return "wgmma.fence";
  case EventKind::GroupCommit: return "commit_group";
  case EventKind::GroupWait: return "wait_group";
  case EventKind::TmemLoad: return "tcgen05.ld";
  case EventKind::TmemStore: return "tcgen05.st";
  case EventKind::TmemWait: return "tcgen05.wait";
  case EventKind::SmemRead: return "smem-read";
  case EventKind::SmemWrite: return "smem-write";
  case EventKind::AccumulatorRead: return "accumulator-read";
  case EventKind::NamedBarrier: return "named-barrier";
  case EventKind::WarpSync: return "warp-sync";
  case EventKind::ClusterArrive: return "cluster-arrive";
  case EventKind::ClusterWait: return "cluster-wait";
  case EventKind::Fence: return "fence";
  case EventKind::Alloc: return "tmem-alloc";
  case EventKind::Dealloc: return "tmem-dealloc";
  case EventKind::Relinquish: return "tmem-relinquish";
  case EventKind::Setmaxnreg: return "setmaxnreg";
  case EventKind::TryCancel: return "try-cancel";
  case EventKind::Exit: return "exit";
  case EventKind::Unknown: return "unknown";
  }
  return "unknown";
}

std::string Protocol::loopVar(LoopId L) const {
  if (L < LoopVars.size() && !LoopVars[L].empty())
    return LoopVars[L];
  return "i" + std::to_string(L);
}

namespace {
/// Protocol::printExpr's leaves, and the names of Names (except Own, the term a definition
/// defines).
void printNamed(const Protocol &P, const Expr *E, llvm::raw_ostream &OS,
                const ExprNames *Names, const Expr *Own) {
  if (!E) {
    OS << "?";
    return;
  }
  E->print(OS, [&](const Expr *Leaf, llvm::raw_ostream &Out) {
    if (Names && Leaf != Own) {
      llvm::StringRef Name = Names->nameOf(Leaf);
      if (!Name.empty()) {
        Out << Name;
        return true;
      }
    }
    switch (Leaf->kind()) {
    case ExprKind::IterationVar:
      Out << P.loopVar(static_cast<LoopId>(Leaf->payload()));
      return true;
    case ExprKind::Param:
      for (unsigned K = 0; K < P.ParamSymbols.size() && K < P.ParamNames.size(); ++K)
        if (P.ParamSymbols[K] == Leaf->name()) {
          Out << P.ParamNames[K];
          if (Leaf->payload())
            Out << '+' << Leaf->payload();
          return true;
        }
      return false;
    case ExprKind::Symbol:
      Out << sourceVariableName(Leaf->name());
      return true;
    default:
      return false;
    }
  });
}

std::string render(const Protocol &P, const Expr *E, const ExprNames *Names, const Expr *Own,
                   bool Compact) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printNamed(P, E, OS, Names, Own);
  OS.flush();
  if (Compact)
    S.erase(std::remove(S.begin(), S.end(), ' '), S.end());
  return S;
}
} // namespace

void Protocol::printExpr(const Expr *E, llvm::raw_ostream &OS) const {
  printNamed(*this, E, OS, nullptr, nullptr);
}

std::string Protocol::exprString(const Expr *E, bool Compact) const {
  std::string Plain = render(*this, E, nullptr, nullptr, Compact);
  if (Plain.size() <= LongExpression || !E)
    return Plain;
  if (SharedNames) {
    if (!SharedNames->chosen()) {
      SharedNames->add(E);
      return Plain;
    }
    return render(*this, E, SharedNames, nullptr, Compact);
  }
  ExprNames Local;
  Local.add(E);
  Local.choose();
  if (Local.named().empty())
    return Plain;
  std::string Out = render(*this, E, &Local, nullptr, Compact) + " (where ";
  for (const Expr *N : Local.named())
    Out += (N == Local.named().front() ? "" : ", ") + Local.nameOf(N).str() + " = " +
           render(*this, N, &Local, N, Compact);
  return Out + ")";
}

std::string Protocol::namedTermDefinition(const Expr *N) const {
  return render(*this, N, SharedNames, N, false);
}

std::optional<int64_t> Protocol::offsetIntoBarrier(unsigned A, const Expr *Address) const {
  const BarrierArray &Array = Barriers[A];
  if (!Address || !Array.Base || !Analysis)
    return std::nullopt;
  ExprContext &C = Analysis->context();
  const Expr *Start = C.add(C.resize(Array.Base, Address->width()),
                            C.constant(static_cast<uint64_t>(Array.Offset), Address->width()));
  const Expr *Diff = C.sub(Address, Start);
  if (!Diff->isConstant())
    return std::nullopt;
  return Diff->signedValue();
}

void Protocol::forEachEvent(
    const std::vector<ProtocolItem> &Items,
    const std::function<void(const Event &, llvm::ArrayRef<const ProtocolLoop *>)> &F) const {
  std::vector<const ProtocolLoop *> Stack;
  std::function<void(const std::vector<ProtocolItem> &)> Walk =
      [&](const std::vector<ProtocolItem> &Body) {
        for (const ProtocolItem &I : Body) {
          if (I.isEvent()) {
            F(Events[I.Index], Stack);
            continue;
          }
          Stack.push_back(&Loops[I.Index]);
          Walk(Loops[I.Index].Body);
          Stack.pop_back();
        }
      };
  Walk(Items);
}
