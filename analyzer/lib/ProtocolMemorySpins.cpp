//===- ProtocolMemorySpins.cpp - loops that wait on memory another thread writes ---===//
//
// A loop without synchronization events is not part of the protocol: the transition system
// runs past it as if it ended. That is right for a loop over data, but not for a spin on a
// flag in memory (`do ld.acquire.gpu v, [flag]; while (v == 0)`, a stream-K hand-over or a
// grid-wide barrier): it ends only when some other thread, often of another CTA, stores to
// the flag, and the model has no such thread. A verdict must not hide that, so every such
// loop becomes a protocol note, and the note an assumption of every verdict.
//
// A loop counts as a spin on memory when it holds no protocol event (none of its blocks,
// nested loops included), its trip count is unknown, and the condition of one of its exit
// edges reads a value loaded inside it (an ExprKind::Load leaf of one of its blocks).
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Path.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// A load leaf of E from one of Blocks, or nullptr.
const Expr *loadFrom(const Expr *E, const ValueAnalysis &V, const llvm::DenseSet<BlockId> &Blocks,
                     llvm::SmallPtrSetImpl<const Expr *> &Seen) {
  if (!E || !Seen.insert(E).second)
    return nullptr;
  if (E->is(ExprKind::Load) && Blocks.contains(V.leafBlock(E)))
    return E;
  for (const Expr *Op : E->ops())
    if (const Expr *L = loadFrom(Op, V, Blocks, Seen))
      return L;
  return nullptr;
}

/// The first load instruction of Blocks (in block order), for the note's line.
InstId firstLoad(const Cfg &G, const Loop &L) {
  for (BlockId B : L.Blocks)
    for (InstId I = G.block(B).Begin; I < G.block(B).End; ++I) {
      llvm::StringRef Base = G.inst(I).I->baseName();
      if (Base == "ld" || Base == "atom")
        return I;
    }
  return NoIndex;
}

} // namespace

void wsv::analyzer::noteMemorySpins(BuildState &S) {
  const Cfg &G = S.cfg();
  const LoopInfo &Loops = S.FA.loops();
  const ValueAnalysis &V = S.values();
  llvm::DenseSet<BlockId> EventBlocks;
  for (const Event &E : S.P.Events)
    if (E.Inst != NoIndex)
      EventBlocks.insert(G.inst(E.Inst).Block);
  for (LoopId Id = 0; Id < Loops.size(); ++Id) {
    const Loop &L = Loops.loop(Id);
    if (V.loopSummary(Id).Trip.K != TripCount::Kind::Unknown)
      continue;
    if (llvm::any_of(L.Blocks, [&](BlockId B) { return EventBlocks.contains(B); }))
      continue;
    llvm::DenseSet<BlockId> Blocks(L.Blocks.begin(), L.Blocks.end());
    const Expr *Load = nullptr;
    for (auto [From, To] : L.ExitEdges) {
      llvm::SmallPtrSet<const Expr *, 16> Seen;
      if ((Load = loadFrom(V.edgeCondition(From, To), V, Blocks, Seen)))
        break;
    }
    if (!Load)
      continue;
    unsigned HeaderLine = S.sourceOf(G.block(L.Header).Begin).PtxLine;
    InstId At = firstLoad(G, L);
    SourceRef Where = S.sourceOf(At != NoIndex ? At : G.block(L.Header).Begin);
    std::string What = "a load";
    if (At != NoIndex)
      What = G.inst(At).I->opcode().str() +
             (Where.PtxLine != HeaderLine ? " at ptx line " + std::to_string(Where.PtxLine)
                                          : std::string());
    const CudaFrame *Cuda = Where.kernelFrame();
    S.P.Notes.push_back(
        {"the loop at ptx line " + std::to_string(HeaderLine) +
             (Cuda ? " (" + llvm::sys::path::filename(Cuda->File).str() + ":" +
                         std::to_string(Cuda->Line) + ")"
                   : std::string()) +
             " spins until its " + What +
             " reads what another thread stores: assumed to end (that thread, another CTA's "
             "or the host's, is outside the model)",
         Where});
  }
}
