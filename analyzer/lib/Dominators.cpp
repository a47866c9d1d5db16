//===- Dominators.cpp - Cooper-Harvey-Kennedy dominators --------------------------===//
#include "wsv/analyzer/Dominators.h"

#include "llvm/ADT/SmallVector.h"

using namespace wsv::analyzer;

DominatorTree::DominatorTree(const Cfg &G, Direction D) : Dir(D), NumBlocks(G.size()) {
  const unsigned N = NumBlocks;
  // Node N is the virtual exit; it is the root of the backward graph.
  const unsigned Root = D == Direction::Forward ? G.entry() : N;
  auto Succs = [&](unsigned B, llvm::SmallVectorImpl<unsigned> &Out) {
    Out.clear();
    if (D == Direction::Forward) {
      for (BlockId S : G.block(B).Succs)
        Out.push_back(S);
    } else if (B == N) {
      for (const BasicBlock &BB : G.blocks())
        if (BB.Reachable && BB.exits())
          Out.push_back(BB.Index);
    } else {
      for (BlockId P : G.block(B).Preds)
        if (G.block(P).Reachable)
          Out.push_back(P);
    }
  };
  auto Preds = [&](unsigned B, llvm::SmallVectorImpl<unsigned> &Out) {
    Out.clear();
    if (D == Direction::Forward) {
      for (BlockId P : G.block(B).Preds)
        Out.push_back(P);
    } else {
      for (BlockId S : G.block(B).Succs)
        Out.push_back(S);
      if (G.block(B).exits())
        Out.push_back(N);
    }
  };

  // Reverse post-order of the graph in this direction.
  std::vector<unsigned> Order;
  std::vector<unsigned> Number(N + 1, Unset);
  {
    std::vector<char> Seen(N + 1, 0);
    std::vector<unsigned> Post;
    llvm::SmallVector<std::pair<unsigned, unsigned>, 32> Stack;
    llvm::SmallVector<llvm::SmallVector<unsigned, 4>, 32> SuccCache;
    llvm::SmallVector<unsigned, 4> Tmp;
    Seen[Root] = 1;
    Succs(Root, Tmp);
    SuccCache.push_back(Tmp);
    Stack.push_back({Root, 0});
    while (!Stack.empty()) {
      auto &[B, Next] = Stack.back();
      if (Next < SuccCache.back().size()) {
        unsigned S = SuccCache.back()[Next++];
        if (!Seen[S]) {
          Seen[S] = 1;
          Succs(S, Tmp);
          SuccCache.push_back(Tmp);
          Stack.push_back({S, 0});
        }
        continue;
      }
      Post.push_back(B);
      Stack.pop_back();
      SuccCache.pop_back();
    }
    Order.assign(Post.rbegin(), Post.rend());
    for (unsigned I = 0; I < Order.size(); ++I)
      Number[Order[I]] = I;
  }

  Idom.assign(N + 1, Unset);
  Idom[Root] = Root;
  auto Intersect = [&](unsigned A, unsigned B) {
    while (A != B) {
      while (Number[A] > Number[B])
        A = Idom[A];
      while (Number[B] > Number[A])
        B = Idom[B];
    }
    return A;
  };
  llvm::SmallVector<unsigned, 4> Ps;
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned I = 1; I < Order.size(); ++I) {
      unsigned B = Order[I];
      Preds(B, Ps);
      unsigned NewIdom = Unset;
      for (unsigned P : Ps) {
        if (Number[P] == Unset || Idom[P] == Unset)
          continue;
        NewIdom = NewIdom == Unset ? P : Intersect(P, NewIdom);
      }
      if (NewIdom != Unset && Idom[B] != NewIdom) {
        Idom[B] = NewIdom;
        Changed = true;
      }
    }
  }

  Children.assign(N, {});
  for (unsigned B = 0; B < N; ++B) {
    if (Idom[B] == Unset || B == Root)
      continue;
    if (Idom[B] == N)
      Roots.push_back(B);
    else
      Children[Idom[B]].push_back(B);
  }
  if (D == Direction::Forward)
    Roots.push_back(Root);

  // Number the tree for constant-time dominance queries.
  In.assign(N, Unset);
  Out.assign(N, Unset);
  unsigned Clock = 0;
  llvm::SmallVector<std::pair<unsigned, unsigned>, 32> Stack;
  for (BlockId R : Roots) {
    In[R] = Clock++;
    Stack.push_back({R, 0});
    while (!Stack.empty()) {
      auto &[B, Next] = Stack.back();
      if (Next < Children[B].size()) {
        BlockId C = Children[B][Next++];
        In[C] = Clock++;
        Stack.push_back({C, 0});
        continue;
      }
      Out[B] = Clock++;
      Stack.pop_back();
    }
  }
}

BlockId DominatorTree::idom(BlockId B) const {
  if (!inTree(B))
    return NoIndex;
  unsigned I = Idom[B];
  if (I == B || I == NumBlocks)
    return NoIndex;
  return I;
}

bool DominatorTree::dominates(BlockId A, BlockId B) const {
  if (!inTree(A) || !inTree(B) || In[A] == Unset || In[B] == Unset)
    return false;
  return In[A] <= In[B] && Out[B] <= Out[A];
}

BlockId DominatorTree::nearestCommonDominator(BlockId A, BlockId B) const {
  if (!inTree(A) || !inTree(B))
    return NoIndex;
  for (BlockId X = A; X != NoIndex; X = idom(X))
    if (dominates(X, B))
      return X;
  return NoIndex;
}

void DominatorTree::print(llvm::raw_ostream &OS) const {
  OS << (isPostDominatorTree() ? "post-dominators" : "dominators") << ":\n";
  for (unsigned B = 0; B < NumBlocks; ++B) {
    OS << "  bb" << B << ": ";
    if (!inTree(B))
      OS << "not in tree";
    else if (idom(B) == NoIndex)
      OS << (isPostDominatorTree() ? "exit" : "root");
    else
      OS << "bb" << idom(B);
    OS << "\n";
  }
}
