//===- Dominators.h - dominator and post-dominator trees over a Cfg ---------------===//
//
// Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm"):
// on graphs of a few hundred blocks it converges in two or three passes over the reverse
// post-order and needs nothing but the idom array.
//
// Post-dominators are computed towards a virtual exit that every exiting block (ret, exit,
// trap, a guarded one of those) leads to. A block that cannot reach any exit (inside a loop
// with no way out) is not in the post-dominator tree; inTree() says so.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace wsv {
namespace analyzer {

class DominatorTree {
public:
  enum class Direction : uint8_t { Forward, Backward };

  explicit DominatorTree(const Cfg &G, Direction D = Direction::Forward);

  bool isPostDominatorTree() const { return Dir == Direction::Backward; }
  /// Whether B is in the tree: reachable from the entry (forward), or reachable from the
  /// entry and able to reach an exit (backward).
  bool inTree(BlockId B) const { return B < Idom.size() && Idom[B] != Unset; }
  /// The immediate (post-)dominator, or NoIndex for the root: the entry, or for
  /// post-dominators a block whose immediate post-dominator is the virtual exit.
  BlockId idom(BlockId B) const;
  /// Reflexive: every block in the tree dominates itself.
  bool dominates(BlockId A, BlockId B) const;
  bool properlyDominates(BlockId A, BlockId B) const { return A != B && dominates(A, B); }
  /// The deepest block dominating both, or NoIndex (only the virtual exit does).
  BlockId nearestCommonDominator(BlockId A, BlockId B) const;
  llvm::ArrayRef<BlockId> children(BlockId B) const { return Children[B]; }
  /// Tree roots: the entry, or the blocks whose immediate post-dominator is the virtual exit.
  llvm::ArrayRef<BlockId> roots() const { return Roots; }

  void print(llvm::raw_ostream &OS) const;

private:
  static constexpr unsigned Unset = ~0u;
  Direction Dir;
  unsigned NumBlocks;
  std::vector<unsigned> Idom;   ///< index NumBlocks is the virtual exit (post-dominators)
  std::vector<std::vector<BlockId>> Children;
  std::vector<BlockId> Roots;
  std::vector<unsigned> In, Out; ///< DFS numbers of the tree, for O(1) dominates()
};

} // namespace analyzer
} // namespace wsv
