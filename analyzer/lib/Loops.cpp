//===- Loops.cpp - natural loops from back edges ----------------------------------===//
#include "wsv/analyzer/Loops.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace wsv::analyzer;

llvm::SmallVector<BlockId, 2> Loop::exitingBlocks() const {
  llvm::SmallVector<BlockId, 2> Out;
  for (auto [From, To] : ExitEdges)
    if (!llvm::is_contained(Out, From))
      Out.push_back(From);
  return Out;
}

llvm::SmallVector<BlockId, 2> Loop::exitBlocks() const {
  llvm::SmallVector<BlockId, 2> Out;
  for (auto [From, To] : ExitEdges)
    if (!llvm::is_contained(Out, To))
      Out.push_back(To);
  return Out;
}

LoopInfo::LoopInfo(const Cfg &G, const DominatorTree &Dom) : G(G) {
  const unsigned N = G.size();
  Innermost.assign(N, NoIndex);
  for (BlockId H : G.reversePostOrder()) {
    llvm::SmallVector<BlockId, 2> Latches;
    for (BlockId P : G.block(H).Preds) {
      if (!G.block(P).Reachable || G.rpoNumber(P) < G.rpoNumber(H))
        continue;
      if (Dom.dominates(H, P))
        Latches.push_back(P);
      else
        Irreducible.push_back({P, H});
    }
    if (Latches.empty())
      continue;
    Loop L;
    L.Index = Loops.size();
    L.Header = H;
    L.Latches = Latches;
    L.Members.resize(N);
    L.Members.set(H);
    llvm::SmallVector<BlockId, 16> Work(Latches.begin(), Latches.end());
    while (!Work.empty()) {
      BlockId B = Work.pop_back_val();
      if (L.Members.test(B))
        continue;
      L.Members.set(B);
      for (BlockId P : G.block(B).Preds)
        if (G.block(P).Reachable && !L.Members.test(P))
          Work.push_back(P);
    }
    for (BlockId B : G.reversePostOrder())
      if (L.Members.test(B))
        L.Blocks.push_back(B);
    for (BlockId B : L.Blocks)
      for (BlockId S : G.block(B).Succs)
        if (!L.Members.test(S))
          L.ExitEdges.push_back({B, S});
    for (BlockId P : G.block(H).Preds)
      if (G.block(P).Reachable && !L.Members.test(P))
        L.Entries.push_back(P);
    if (L.Entries.size() == 1 && G.block(L.Entries[0]).Succs.size() == 1)
      L.Preheader = L.Entries[0];
    // Loops are found in header order, so the loops containing H found so far form a chain
    // and the last of them is the innermost.
    for (LoopId O = Loops.size(); O-- > 0;)
      if (Loops[O].contains(H)) {
        L.Parent = O;
        L.Depth = Loops[O].Depth + 1;
        break;
      }
    if (L.Parent != NoIndex)
      Loops[L.Parent].Children.push_back(L.Index);
    Loops.push_back(std::move(L));
  }
  for (const Loop &L : Loops)
    for (BlockId B : L.Blocks)
      if (Innermost[B] == NoIndex || Loops[Innermost[B]].Depth < L.Depth)
        Innermost[B] = L.Index;
}

unsigned LoopInfo::depth(BlockId B) const {
  return Innermost[B] == NoIndex ? 0 : Loops[Innermost[B]].Depth;
}

LoopId LoopInfo::loopWithHeader(BlockId B) const {
  LoopId L = Innermost[B];
  return L != NoIndex && Loops[L].Header == B ? L : NoIndex;
}

bool LoopInfo::isBackEdge(BlockId From, BlockId To) const {
  LoopId L = loopWithHeader(To);
  return L != NoIndex && llvm::is_contained(Loops[L].Latches, From);
}

bool LoopInfo::isNestedIn(LoopId Inner, LoopId Outer) const {
  for (LoopId L = Inner; L != NoIndex; L = Loops[L].Parent)
    if (L == Outer)
      return true;
  return false;
}

void LoopInfo::print(llvm::raw_ostream &OS) const {
  for (const Loop &L : Loops) {
    OS << "loop " << L.Index << ": header bb" << L.Header << ", depth " << L.Depth;
    if (L.Parent != NoIndex)
      OS << ", in loop " << L.Parent;
    OS << ", blocks";
    for (BlockId B : L.Blocks)
      OS << " bb" << B;
    OS << ", latches";
    for (BlockId B : L.Latches)
      OS << " bb" << B;
    OS << ", exits";
    for (auto [From, To] : L.ExitEdges)
      OS << " bb" << From << "->bb" << To;
    if (L.Preheader != NoIndex)
      OS << ", preheader bb" << L.Preheader;
    OS << "\n";
  }
  for (auto [From, To] : Irreducible)
    OS << "irreducible edge bb" << From << "->bb" << To << "\n";
}
