//===- Guards.h - which threads reach a block, as predicates and thread sets ------===//
//
// The condition for a thread to reach a block is built from the branch conditions on the way:
// a block that post-dominates its immediate dominator (in the same loop) has the dominator's
// condition; otherwise it is the disjunction over its incoming edges of (the predecessor's
// condition and the edge's branch condition), which the builders simplify back when both arms
// of a branch meet. A loop counts as one step: a thread that enters a loop leaves it, so the
// block after a loop with one way out has the condition of the loop's entry (for a spin wait,
// whatever the try_wait loop did). Conditions inside a loop are per iteration: they may read
// the loop's phis (`k == 0` for a peeled first iteration).
//
// threadSet() turns a condition into the threads of a CTA (ThreadSet.h); elect.sync leaves are
// resolved against the threads that reach the elect.sync.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Dominators.h"
#include "wsv/analyzer/Loops.h"
#include "wsv/analyzer/ThreadSet.h"
#include "wsv/analyzer/Values.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <tuple>
#include <vector>

namespace wsv {
namespace analyzer {

class Solver;

class GuardAnalysis {
public:
  GuardAnalysis(const ValueAnalysis &Values, const DominatorTree &Dom,
                const DominatorTree &PostDom, Solver *S = nullptr);

  /// When a thread reaches B (nullptr for unreachable blocks).
  const Expr *blockCondition(BlockId B);
  /// When a thread executes I: its block's condition and its guard.
  const Expr *instructionCondition(InstId I);
  /// Which threads execute I: the thread-dependent conjuncts of its condition in closed form.
  /// The others (loop counters, parameters, the CTA's rank) say when, not who; Uniform gets
  /// them. The threads are threadSet() of the result.
  const Expr *threadCondition(InstId I, llvm::SmallVectorImpl<const Expr *> *Uniform = nullptr);

  /// The threads of one CTA shaped Launch for which Predicate holds.
  ThreadSet threadSet(const Expr *Predicate, const LaunchShape &Launch);
  /// The threads that execute I.
  ThreadSet threadsAt(InstId I, const LaunchShape &Launch) {
    return threadSet(instructionCondition(I), Launch);
  }

private:
  /// Whether P -> B stays in the loop of P's exit test, a counted loop with that one exit:
  /// every iteration its count runs takes the edge.
  bool staysInCountedLoop(BlockId P, BlockId B) const;
  /// The exits of loop L a thread can take: to a block that is live and returns.
  unsigned liveExits(LoopId L) const;
  void computeConditions();
  bool postDominatesUnlessTrapped(BlockId B, BlockId D) const;
  ThreadSet evaluate(const Expr *Predicate, const LaunchShape &Launch, unsigned Depth);

  const ValueAnalysis &Values;
  const Cfg &G;
  const DominatorTree &Dom, &PostDom;
  const LoopInfo &Loops;
  ExprContext &Ctx;
  Solver *S;
  std::vector<const Expr *> Conditions;
  bool Computed = false;
  /// Residual conditions already put to the solver: (always true, never true).
  llvm::DenseMap<const Expr *, std::pair<bool, bool>> Decided;
  /// Thread sets already computed, by predicate and launch shape: every instruction of a block
  /// without its own guard shares the block's.
  std::map<std::tuple<const Expr *, unsigned, unsigned, unsigned, unsigned, unsigned>, ThreadSet>
      Sets;
};

} // namespace analyzer
} // namespace wsv
