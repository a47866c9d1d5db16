//===- Loops.h - natural loops and their nesting ----------------------------------===//
//
// A back edge is an edge T -> H where H dominates T; the natural loop of H is H plus every
// block that reaches a back-edge source without passing H. Back edges to the same header
// make one loop. Loops nest by containment; they are numbered so that a loop comes after the
// loop that contains it (headers in reverse post-order).
//
// A retreating edge (its target comes no later in reverse post-order than its source) whose
// target does not dominate its source enters a cycle at more than one point: the graph is
// irreducible there. Such edges are reported, not treated as loops; analyses that need loops
// give up on values across them.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Dominators.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {

using LoopId = unsigned;

struct Loop {
  LoopId Index = 0;
  BlockId Header = 0;
  /// The header first, then the other blocks in reverse post-order.
  llvm::SmallVector<BlockId, 8> Blocks;
  /// Blocks inside the loop with an edge back to the header.
  llvm::SmallVector<BlockId, 2> Latches;
  /// Edges leaving the loop: (block inside, block outside).
  llvm::SmallVector<std::pair<BlockId, BlockId>, 2> ExitEdges;
  /// The only predecessor of the header outside the loop, if that block has no other
  /// successor; NoIndex otherwise.
  BlockId Preheader = NoIndex;
  /// Predecessors of the header outside the loop.
  llvm::SmallVector<BlockId, 2> Entries;
  LoopId Parent = NoIndex;
  llvm::SmallVector<LoopId, 2> Children;
  unsigned Depth = 1; ///< 1 for a loop that no other loop contains

  bool contains(BlockId B) const { return B < Members.size() && Members.test(B); }
  /// Blocks inside with an edge leaving the loop, each once.
  llvm::SmallVector<BlockId, 2> exitingBlocks() const;
  /// Blocks outside reached by an exit edge, each once.
  llvm::SmallVector<BlockId, 2> exitBlocks() const;

private:
  friend class LoopInfo;
  llvm::BitVector Members;
};

class LoopInfo {
public:
  LoopInfo(const Cfg &G, const DominatorTree &Dom);

  llvm::ArrayRef<Loop> loops() const { return Loops; }
  const Loop &loop(LoopId L) const { return Loops[L]; }
  unsigned size() const { return Loops.size(); }
  /// The innermost loop containing B, or NoIndex.
  LoopId loopFor(BlockId B) const { return Innermost[B]; }
  /// Loops containing B (0 when none).
  unsigned depth(BlockId B) const;
  /// The loop whose header B is, or NoIndex.
  LoopId loopWithHeader(BlockId B) const;
  bool isBackEdge(BlockId From, BlockId To) const;
  /// Whether Inner is Outer or nested in it.
  bool isNestedIn(LoopId Inner, LoopId Outer) const;
  /// Retreating edges into cycles that are not natural loops.
  llvm::ArrayRef<std::pair<BlockId, BlockId>> irreducibleEdges() const { return Irreducible; }
  bool isIrreducible() const { return !Irreducible.empty(); }

  void print(llvm::raw_ostream &OS) const;

private:
  const Cfg &G;
  std::vector<Loop> Loops;
  std::vector<LoopId> Innermost;
  std::vector<std::pair<BlockId, BlockId>> Irreducible;
};

} // namespace analyzer
} // namespace wsv
