//===- TripCount.cpp - trip counts and the values that leave a loop ---------------===//
//
// The exit test, rewritten in terms of the iteration number i, is a comparison of a value
// linear in i against one the loop does not change. Solving it for the first i at which the
// thread leaves gives the number of header runs H = i + 1. Counters are assumed not to wrap
// around during the loop (the usual reading of source-level loop bounds); everything else the
// formula needs is listed as a condition.
//
//===----------------------------------------------------------------------------------===//
#include "ExprLinear.h"
#include "ValueBuilder.h"

#include "wsv/analyzer/Solver.h"
#include "wsv/analyzer/ThreadSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {
/// E = A + B * i, with A and B free of i. False when E is not linear in i.
bool splitLinear(ExprContext &Ctx, const Expr *E, const Expr *Iter, const Expr *&A,
                 const Expr *&B) {
  LinearForm L;
  L.Width = E->width();
  L.addScaled(E, 1);
  const unsigned W = E->width();
  auto IsIter = [&](const Expr *X) {
    return X == Iter || ((X->is(ExprKind::ZExt) || X->is(ExprKind::Trunc)) && X->op(0) == Iter);
  };
  auto MentionsIter = [&](const Expr *X) {
    return X->mentions([&](const Expr *Leaf) { return Leaf == Iter; });
  };
  A = Ctx.constant(L.Constant, W);
  B = Ctx.constant(0, W);
  for (const auto &[Term, K] : L.Terms) {
    const Expr *Coefficient = Ctx.constant(K, W);
    // A wider counter's zext(i + c): the iteration number does not wrap.
    if (Term->is(ExprKind::ZExt) && Term->op(0)->is(ExprKind::Add) &&
        Term->op(0)->op(0) == Iter && Term->op(0)->op(1)->isConstant() &&
        !isNegativeCoefficient(Term->op(0)->op(1)->payload(), Iter->width())) {
      B = Ctx.add(B, Coefficient);
      A = Ctx.add(A, Ctx.mul(Coefficient, Ctx.constant(Term->op(0)->op(1)->payload(), W)));
      continue;
    }
    if (IsIter(Term)) {
      B = Ctx.add(B, Coefficient);
    } else if (Term->is(ExprKind::Mul) && IsIter(Term->op(0)) && !MentionsIter(Term->op(1))) {
      B = Ctx.add(B, Ctx.mul(Coefficient, Term->op(1)));
    } else if (Term->is(ExprKind::Mul) && IsIter(Term->op(1)) && !MentionsIter(Term->op(0))) {
      B = Ctx.add(B, Ctx.mul(Coefficient, Term->op(0)));
    } else if (MentionsIter(Term)) {
      return false;
    } else {
      A = Ctx.add(A, Ctx.mul(Coefficient, Term));
    }
  }
  return true;
}

/// A step that counts up: below half the range, so it reads as positive. A step that may be
/// zero (%nctaid.x / 2 in a 2-CTA cluster) needs a condition.
bool isUpwardStep(const Expr *B) {
  uint64_t Half = 1ull << (B->width() - 1);
  return B->range().Hi < Half && !B->isConstant(0);
}

bool isNegativeConstant(const Expr *B) {
  return B->isConstant() && isNegativeCoefficient(B->payload(), B->width());
}

struct Solution {
  const Expr *HeaderRuns = nullptr;
  llvm::SmallVector<const Expr *, 2> Conditions;
  /// Where the loop stays forever (see TripCount::Forever); nullptr: never.
  const Expr *Forever = nullptr;
  std::string Failure;
};

/// Solves "the loop continues while Stay(i)" for the number of header runs.
Solution solveStay(ExprContext &Ctx, const Expr *Stay, const Expr *Iter) {
  Solution Sol;
  // Continuing while every conjunct holds: the loop ends at the first bound it reaches
  // (`s < STAGES && s < k_tiles` is min(STAGES, k_tiles) iterations).
  if (Stay->is(ExprKind::And) && Stay->width() == 1) {
    Solution Left = solveStay(Ctx, Stay->op(0), Iter);
    if (!Left.HeaderRuns)
      return Left;
    Solution Right = solveStay(Ctx, Stay->op(1), Iter);
    if (!Right.HeaderRuns)
      return Right;
    const unsigned W = std::max(Left.HeaderRuns->width(), Right.HeaderRuns->width());
    Sol.HeaderRuns = Ctx.umin(Ctx.zext(Left.HeaderRuns, W), Ctx.zext(Right.HeaderRuns, W));
    Sol.Conditions = Left.Conditions;
    Sol.Conditions.append(Right.Conditions.begin(), Right.Conditions.end());
    // It stays forever only where neither bound is ever reached.
    if (Left.Forever && Right.Forever)
      Sol.Forever = Ctx.logicalAnd(Left.Forever, Right.Forever);
    return Sol;
  }
  const Expr *A, *B;
  auto Fail = [&](const char *Why) {
    Sol.Failure = Why;
    return Sol;
  };
  // Increasing counter below a bound: A + B*i < Y, B > 0. The first i where it fails is
  // ceil((Y - A) / B) (0 when A >= Y), so H = (Y - A + 2B - 1) / B, exact while A < Y + B.
  auto Below = [&](const Expr *X, const Expr *Y, bool Signed) {
    if (!splitLinear(Ctx, X, Iter, A, B) || !isUpwardStep(B))
      return Fail("the exit test's counter does not step up by a positive amount");
    const unsigned W = X->width();
    const Expr *Two = Ctx.constant(2, W), *One = Ctx.constant(1, W);
    if (B->range().Lo == 0) {
      // A step of zero: the counter stays A, so the loop ends never or at once.
      const Expr *Zero = Ctx.constant(0, W);
      Sol.Conditions.push_back(Ctx.ne(B, Zero));
      Sol.Forever = Ctx.logicalAnd(Ctx.eq(B, Zero), Signed ? Ctx.slt(A, Y) : Ctx.ult(A, Y));
    }
    Sol.HeaderRuns = Ctx.udiv(Ctx.add(Ctx.sub(Y, A), Ctx.sub(Ctx.mul(Two, B), One)), B);
    // When the test reads the updated counter (A = start + B) the natural condition is
    // start < Y; otherwise A <= Y suffices.
    const Expr *Start = Ctx.sub(A, B);
    // How simple a form is: its terms, then whether it adds a constant (a persistent loop's
    // `tile = %ctaid.x; do { ...; tile += 132; } while (tile < tiles)` tests %ctaid.x + 132,
    // whose start %ctaid.x has as many terms but no constant).
    auto Terms = [](const Expr *E) {
      LinearForm L;
      L.Width = E->width();
      L.addScaled(E, 1);
      return std::make_pair(L.Terms.size(), L.Constant != 0);
    };
    bool TestsUpdate = !A->isConstant() && Terms(Start) < Terms(A);
    if (A->isConstant() && B->isConstant())
      TestsUpdate = A->payload() >= B->payload();
    if (TestsUpdate)
      Sol.Conditions.push_back(Signed ? Ctx.slt(Start, Y) : Ctx.ult(Start, Y));
    else
      Sol.Conditions.push_back(Signed ? Ctx.sle(A, Y) : Ctx.ule(A, Y));
    return Sol;
  };
  // Decreasing counter above a bound: X <= A - b*i. H = (A - X + 2b) / b, exact while
  // X <= A + b.
  auto Above = [&](const Expr *X, const Expr *Y, bool Signed) {
    if (!splitLinear(Ctx, Y, Iter, A, B) || !isNegativeConstant(B))
      return Fail("the exit test's counter does not step down by a constant");
    const Expr *Step = Ctx.neg(B);
    Sol.HeaderRuns = Ctx.udiv(Ctx.add(Ctx.sub(A, X), Ctx.add(Step, Step)), Step);
    Sol.Conditions.push_back(Signed ? Ctx.sle(X, Ctx.add(A, Step)) : Ctx.ule(X, Ctx.add(A, Step)));
    return Sol;
  };
  auto MentionsIter = [&](const Expr *X) {
    return X->mentions([&](const Expr *Leaf) { return Leaf == Iter; });
  };

  if (Stay->is(ExprKind::Not) && Stay->op(0)->is(ExprKind::Eq)) {
    // Continues while X != Y: leaves when A + B*i == 0.
    const Expr *D = Ctx.sub(Stay->op(0)->op(0), Stay->op(0)->op(1));
    if (!splitLinear(Ctx, D, Iter, A, B) || !B->isConstant() || B->isConstant(0))
      return Fail("the exit test's counter does not change by a constant");
    const unsigned W = D->width();
    const Expr *First;
    if (B->isConstant(1)) {
      First = Ctx.neg(A);
    } else if (B->signedValue() == -1) {
      First = A;
    } else if (!isNegativeConstant(B)) {
      First = Ctx.udiv(Ctx.neg(A), B);
      Sol.Conditions.push_back(Ctx.eq(Ctx.urem(Ctx.neg(A), B), Ctx.constant(0, W)));
    } else {
      const Expr *Step = Ctx.neg(B);
      First = Ctx.udiv(A, Step);
      Sol.Conditions.push_back(Ctx.eq(Ctx.urem(A, Step), Ctx.constant(0, W)));
    }
    Sol.HeaderRuns = Ctx.add(First, Ctx.constant(1, W));
    Sol.Conditions.insert(Sol.Conditions.begin(),
                          Ctx.ne(Sol.HeaderRuns, Ctx.constant(0, W)));
    return Sol;
  }
  if (Stay->is(ExprKind::Eq)) {
    // Continues only while X == Y: with a constant difference that changes by a constant
    // other than 0, once or twice (clang -O1's init loop over two stages, `s += 8; while
    // (s == 8)`).
    const Expr *D = Ctx.sub(Stay->op(0), Stay->op(1));
    if (!splitLinear(Ctx, D, Iter, A, B) || !B->isConstant() || B->isConstant(0) ||
        !A->isConstant())
      return Fail("the loop continues only while a counter equals a value");
    Sol.HeaderRuns = Ctx.constant(A->isConstant(0) ? 2 : 1, D->width());
    return Sol;
  }
  bool Signed = Stay->is(ExprKind::SLt) || Stay->is(ExprKind::SLe);
  if (Stay->is(ExprKind::ULt) || Stay->is(ExprKind::SLt) || Stay->is(ExprKind::ULe) ||
      Stay->is(ExprKind::SLe)) {
    const Expr *X = Stay->op(0), *Y = Stay->op(1);
    bool Strict = Stay->is(ExprKind::ULt) || Stay->is(ExprKind::SLt);
    const unsigned W = X->width();
    if (MentionsIter(X) && !MentionsIter(Y))
      return Below(X, Strict ? Y : Ctx.add(Y, Ctx.constant(1, W)), Signed);
    if (MentionsIter(Y) && !MentionsIter(X) && !Signed && X->isConstant() &&
        splitLinear(Ctx, Y, Iter, A, B) && B->isConstant() && isUpwardStep(B)) {
      // A counter that climbs towards the top of the range, continuing while it stays above
      // a constant: `c += 2048; while (c >u -1793)` (clang's unrolled loop over a thread's
      // words). Complemented, ~c falls from ~A by B and stays below ~X until it passes 0:
      // the decreasing counter of Above with bound 0, exact when it starts below ~X and a
      // wrapped value cannot land below ~X again (~X <= 2^W - B).
      const Expr *Start = Ctx.bitNot(A); // ~c in iteration 0
      const uint64_t Step = B->payload();
      const Expr *Bound = Ctx.bitNot(Strict ? X : Ctx.sub(X, Ctx.constant(1, W)));
      if (Bound->payload() > ExprContext::mask(W) - Step + 1)
        return Fail("the exit test's counter climbs past the top of its range and back above "
                    "its bound");
      // Where ~c starts at or above ~X the first test fails: one run, which the form must
      // then give (clang's loop for a thread whose words start inside the first pass).
      Solution Down = Above(Ctx.constant(0, W), Ctx.bitNot(Y), false);
      if (Down.HeaderRuns)
        Down.Conditions.push_back(Ctx.bitOr(
            Ctx.ult(Start, Bound),
            Ctx.eq(Down.HeaderRuns, Ctx.constant(1, Down.HeaderRuns->width()))));
      return Down;
    }
    if (MentionsIter(Y) && !MentionsIter(X))
      return Above(Strict ? Ctx.add(X, Ctx.constant(1, W)) : X, Y, Signed);
    return Fail("the exit test compares two values that both change");
  }
  return Fail("the exit test is not a comparison of a counter with a bound");
}
} // namespace

std::string ValueBuilder::describeUnknown(const Expr *E, LoopId L) const {
  std::string Why;
  const Loop &Lp = Loops.loop(L);
  E->mentions([&](const Expr *Leaf) {
    BlockId B = leafBlock(Leaf);
    if (Leaf->is(ExprKind::Phi) && B == Lp.Header) {
      Why = "the exit test depends on " + Leaf->name().str() +
            ", which the loop updates in a way that has no closed form";
      return true;
    }
    if ((Leaf->is(ExprKind::Load) || Leaf->is(ExprKind::Opaque) ||
         Leaf->is(ExprKind::Elect)) && B != NoIndex && Lp.contains(B)) {
      const CfgInst *CI = static_cast<const CfgInst *>(Leaf->site());
      Why = "the exit test depends on " +
            (Leaf->is(ExprKind::Load) ? "a value loaded by " + Leaf->name().str()
                                      : Leaf->name().str()) +
            " at line " + std::to_string(G.module().location(*CI->I).Line);
      return true;
    }
    return false;
  });
  return Why.empty() ? "the exit test has no closed form in the iteration number" : Why;
}

void ValueBuilder::dominatingFacts(BlockId Child, llvm::function_ref<bool(BlockId)> Within,
                                   llvm::SmallVectorImpl<const Expr *> &Facts) {
  for (BlockId B = Dom.idom(Child); B != NoIndex && Within(B); Child = B, B = Dom.idom(B)) {
    const BasicBlock &BB = G.block(B);
    if (BB.Terminator != TerminatorKind::CondBranch || !Done[B])
      continue;
    for (BlockId Succ : BB.Succs) {
      // The edge B -> Succ is the only way to Child when Succ dominates Child and has no other
      // predecessor (or Succ is the loop header and B its only way in).
      bool OnlyWay = Dom.dominates(Succ, Child) &&
                     llvm::all_of(G.block(Succ).Preds, [&](BlockId P) {
                       return P == B || Loops.isBackEdge(P, Succ);
                     });
      if (OnlyWay)
        if (const Expr *C = edgeCondition(B, Succ))
          Facts.push_back(C);
    }
  }
}

llvm::SmallVector<const Expr *, 4> ValueBuilder::entryFacts(LoopId L) {
  llvm::SmallVector<const Expr *, 4> Facts;
  dominatingFacts(Loops.loop(L).Header, [](BlockId) { return true; }, Facts);
  launchFacts(Facts);
  return Facts;
}

bool ValueBuilder::infeasibleExit(LoopId L, BlockId From, BlockId To) {
  const Loop &Lp = Loops.loop(L);
  const Expr *Edge = edgeCondition(From, To);
  if (!Edge || !S || ExitQuestions >= MaxExitQuestions)
    return false;
  // The conditions on the only way from the header to From (the header's dominator is
  // outside the loop, where the walk stops).
  llvm::SmallVector<const Expr *, 8> Facts{Edge};
  dominatingFacts(From, [&](BlockId B) { return Lp.contains(B); }, Facts);
  if (Facts.size() < 2)
    return false;
  ++ExitQuestions;
  const Expr *All = Ctx.boolean(true);
  for (const Expr *F : Facts)
    All = Ctx.bitAnd(All, F);
  if (S->isValid(Ctx.bitNot(All)).Answer != SolverAnswer::Yes)
    return false;
  Infeasible.insert({From, To});
  return true;
}

void ValueBuilder::launchFacts(llvm::SmallVectorImpl<const Expr *> &Facts) {
  LaunchShape L;
  L.ClusterX = LaunchShape::clusterX(G.function());
  if (L.ClusterX > 1)
    Facts.push_back(L.gridFacts(Ctx));
}

bool ValueBuilder::implies(llvm::ArrayRef<const Expr *> Facts, const Expr *Goal) {
  if (Goal->isTrue())
    return true;
  if (Facts.empty() && Goal->isConstant())
    return false;
  llvm::SmallVector<const Expr *, 8> Known;
  for (const Expr *F : Facts) {
    llvm::SmallVector<const Expr *, 4> Work{F};
    while (!Work.empty()) {
      const Expr *X = Work.pop_back_val();
      if (X->is(ExprKind::And) && X->width() == 1) {
        Work.push_back(X->op(0));
        Work.push_back(X->op(1));
      } else {
        Known.push_back(X);
      }
    }
  }
  if (llvm::is_contained(Known, Goal))
    return true;
  if (Goal->is(ExprKind::And) && Goal->width() == 1)
    return implies(Known, Goal->op(0)) && implies(Known, Goal->op(1));
  // c1 <= x implies c2 <= x for c2 <= c1; x < c1 implies x < c2 for c2 >= c1.
  for (const Expr *K : Known) {
    if (K->kind() != Goal->kind())
      continue;
    if (K->is(ExprKind::ULe) && K->op(1) == Goal->op(1) && K->op(0)->isConstant() &&
        Goal->op(0)->isConstant() && Goal->op(0)->payload() <= K->op(0)->payload())
      return true;
    if (K->is(ExprKind::ULt) && K->op(0) == Goal->op(0) && K->op(1)->isConstant() &&
        Goal->op(1)->isConstant() && Goal->op(1)->payload() >= K->op(1)->payload())
      return true;
  }
  // Unsigned and signed orders agree between values known to be non-negative: a <u b with
  // 0 <=s b gives a <s b (and the same for <=).
  auto NonNegative = [&](const Expr *X) {
    if (X->range().Hi < (1ull << (X->width() - 1)))
      return true;
    const Expr *Zero = Ctx.constant(0, X->width());
    return llvm::is_contained(Known, Ctx.sle(Zero, X));
  };
  if ((Goal->is(ExprKind::SLt) || Goal->is(ExprKind::SLe)) && NonNegative(Goal->op(1))) {
    const Expr *Unsigned = Goal->is(ExprKind::SLt) ? Ctx.ult(Goal->op(0), Goal->op(1))
                                                   : Ctx.ule(Goal->op(0), Goal->op(1));
    if (llvm::is_contained(Known, Unsigned))
      return true;
  }
  if ((Goal->is(ExprKind::ULt) || Goal->is(ExprKind::ULe)) && NonNegative(Goal->op(0))) {
    const Expr *Signed = Goal->is(ExprKind::ULt) ? Ctx.slt(Goal->op(0), Goal->op(1))
                                                 : Ctx.sle(Goal->op(0), Goal->op(1));
    if (llvm::is_contained(Known, Signed))
      return true;
  }
  // c1 <=s x with c1 >= 0 puts x in [c1, smax]: also c2 <= x unsigned for c2 <= c1.
  for (const Expr *K : Known)
    if (K->is(ExprKind::SLe) && Goal->is(ExprKind::ULe) && K->op(1) == Goal->op(1) &&
        K->op(0)->isConstant() && Goal->op(0)->isConstant() && K->op(0)->signedValue() >= 0 &&
        Goal->op(0)->payload() <= K->op(0)->payload())
      return true;
  // x != 0 follows from a positive lower bound.
  if (Goal->is(ExprKind::Not) && Goal->op(0)->is(ExprKind::Eq) && Goal->op(0)->op(1)->isConstant(0))
    for (const Expr *K : Known)
      if ((K->is(ExprKind::ULe) || K->is(ExprKind::SLe)) && K->op(1) == Goal->op(0)->op(0) &&
          K->op(0)->isConstant() && K->op(0)->signedValue() >= 1)
        return true;
  // The solver costs milliseconds a question: a few per function, then conditions stay
  // unproven (which is honest, only less convenient).
  if (!S || SolverQuestions >= MaxSolverQuestions)
    return false;
  // Facts about values the goal does not involve (not even through other facts) cannot
  // matter: they hold on a path that reaches the loop, so they are satisfiable on their own.
  auto LeavesOf = [](const Expr *E) {
    llvm::SmallPtrSet<const Expr *, 8> Out;
    E->mentions([&](const Expr *L) {
      if (!L->isConstant())
        Out.insert(L);
      return false;
    });
    return Out;
  };
  llvm::SmallPtrSet<const Expr *, 8> Relevant = LeavesOf(Goal);
  llvm::SmallVector<const Expr *, 8> Used;
  llvm::SmallVector<bool, 8> Taken(Known.size(), false);
  for (bool Grew = true; Grew;) {
    Grew = false;
    for (unsigned K = 0; K < Known.size(); ++K) {
      if (Taken[K])
        continue;
      auto Leaves = LeavesOf(Known[K]);
      if (llvm::none_of(Leaves, [&](const Expr *L) { return Relevant.count(L); }))
        continue;
      Taken[K] = Grew = true;
      Used.push_back(Known[K]);
      Relevant.insert(Leaves.begin(), Leaves.end());
    }
  }
  ++SolverQuestions;
  const Expr *All = Ctx.boolean(true);
  for (const Expr *K : Used)
    All = Ctx.bitAnd(All, K);
  return S->isValid(Ctx.implies(All, Goal)).Answer == SolverAnswer::Yes;
}

void ValueBuilder::computeTripCount(LoopId L) {
  LoopSummary &Sum = Summaries[L];
  TripCount &T = Sum.Trip;
  const Loop &Lp = Loops.loop(L);
  auto Unknown = [&](std::string Why) {
    T.K = TripCount::Kind::Unknown;
    T.Reason = std::move(Why);
  };
  if (Sum.Spin) {
    T.K = TripCount::Kind::SpinWait;
    return;
  }
  // Exits into code that never returns (a trap) end the kernel, not the loop's count, unless
  // there is no other way out.
  bool NormalExit = llvm::any_of(Lp.ExitEdges, [&](std::pair<BlockId, BlockId> E) {
    return !G.block(E.second).NeverReturns;
  });
  llvm::SmallVector<BlockId, 2> Exiting;
  for (auto [From, To] : Lp.ExitEdges)
    if ((!NormalExit || !G.block(To).NeverReturns) && !llvm::is_contained(Exiting, From))
      Exiting.push_back(From);
  // Exits no thread can take are no exits: only asked where they are what stands between the
  // loop and a count.
  if (Exiting.size() > 1) {
    llvm::SmallVector<BlockId, 2> Feasible;
    for (BlockId From : Exiting)
      if (llvm::any_of(Lp.ExitEdges, [&](std::pair<BlockId, BlockId> E) {
            return E.first == From && (!NormalExit || !G.block(E.second).NeverReturns) &&
                   !infeasibleExit(L, E.first, E.second);
          }))
        Feasible.push_back(From);
    if (!Feasible.empty())
      Exiting = std::move(Feasible);
  }
  if (Exiting.empty())
    return Unknown("the loop has no exit");
  if (Exiting.size() > 1) {
    std::string Lines;
    for (BlockId E : Exiting) {
      InstId Term = G.block(E).empty() ? NoIndex : G.block(E).End - 1;
      Lines += (Lines.empty() ? "" : ", ") +
               (Term == NoIndex ? std::string("?") : std::to_string(G.location(Term).Line));
    }
    return Unknown("the loop has " + std::to_string(Exiting.size()) + " exits (lines " + Lines +
                   ")");
  }
  BlockId E = Exiting[0];
  const BasicBlock &BB = G.block(E);
  T.ExitingBlock = E;
  // The header may end before its test: a label between (nvcc -G writes `$L__tmp` labels
  // for line info) splits one straight run of code into blocks. The blocks from the header
  // to the test, each the only successor of the one before and entered from it alone, run
  // as often as the header.
  llvm::SmallVector<BlockId, 4> HeaderRun{Lp.Header};
  for (BlockId B = Lp.Header; B != E;) {
    const BasicBlock &Cur = G.block(B);
    if (Cur.Succs.size() != 1 || G.block(Cur.Succs[0]).Preds.size() != 1 ||
        !Lp.contains(Cur.Succs[0]) || Cur.Succs[0] == Lp.Header)
      break;
    B = Cur.Succs[0];
    HeaderRun.push_back(B);
  }
  T.ExitTestInHeader = llvm::is_contained(HeaderRun, E);
  if (BB.Terminator != TerminatorKind::CondBranch)
    return Unknown(std::string("the loop is left by a ") + toString(BB.Terminator));
  for (BlockId Latch : Lp.Latches)
    if (!Dom.dominates(E, Latch))
      return Unknown("the exit test at line " + std::to_string(G.location(BB.End - 1).Line) +
                     " does not run in every iteration");
  // The successor that stays in the loop (or, for a test whose other arm traps, the one that
  // does not leave towards the normal exit).
  BlockId Stay = Lp.contains(BB.Succs[0]) ? BB.Succs[0] : BB.Succs[1];
  if (!Lp.contains(BB.Succs[0]) && !Lp.contains(BB.Succs[1]))
    return Unknown("the exit test leaves the loop on both arms");
  const Expr *Cond = edgeCondition(E, Stay);
  if (!Cond)
    return Unknown("the exit branch has no condition");
  const Expr *Iter = Ctx.iterationVar(L);
  const Expr *StayAt = atIteration(Cond, L, Iter);
  if (!StayAt || !isInvariant(Ctx.substitute(StayAt, Iter, Ctx.constant(0, 32)), L))
    return Unknown(describeUnknown(Cond, L));
  Solution Sol = solveStay(Ctx, StayAt, Iter);
  if (!Sol.HeaderRuns)
    return Unknown(Sol.Failure);
  T.K = TripCount::Kind::Counted;
  T.HeaderRuns = Sol.HeaderRuns;
  T.Forever = Sol.Forever;
  // A test in the header makes a while loop only when something runs after it: blocks that
  // just branch back are the tail of a do-while whose body is the header.
  bool WorkAfterTest = false;
  if (T.ExitTestInHeader)
    for (BlockId B : Lp.Blocks)
      for (InstId I = G.block(B).Begin; !llvm::is_contained(HeaderRun, B) && I < G.block(B).End;
           ++I)
        WorkAfterTest |= G.inst(I).I->baseName() != "bra";
  T.Iterations = WorkAfterTest
                     ? Ctx.sub(Sol.HeaderRuns, Ctx.constant(1, Sol.HeaderRuns->width()))
                     : Sol.HeaderRuns;
  llvm::SmallVector<const Expr *, 4> Facts = entryFacts(L);
  for (const Expr *C : Sol.Conditions) {
    if (C->isTrue())
      continue;
    T.Conditions.push_back({C, implies(Facts, C)});
  }
}

void ValueBuilder::transformExits(LoopId L) {
  const Loop &Lp = Loops.loop(L);
  LoopSummary &Sum = Summaries[L];
  const llvm::BitVector &Defs = LoopDefs[L];
  const Expr *Last = nullptr;
  if (Sum.Trip.isCounted())
    Last = Ctx.resize(Ctx.sub(Sum.Trip.HeaderRuns, Ctx.constant(1, Sum.Trip.HeaderRuns->width())),
                      32);
  for (auto [From, To] : Lp.ExitEdges) {
    const State *Base = edgeState(From, To);
    if (!Base)
      continue;
    State Exit = *Base;
    for (unsigned R = Defs.find_first(); R != ~0u && R < Defs.size(); R = Defs.find_next(R)) {
      const Expr *V = get(Exit, R);
      if (!V || isInvariant(V, L))
        continue;
      const Expr *After = Last ? atIteration(V, L, Last) : nullptr;
      if (After && isInvariant(After, L)) {
        for (unsigned K = 0; K < Sum.Inductions.size(); ++K)
          if (V == Sum.Inductions[K].Update)
            ExitForms[After] = {L, K};
      } else {
        std::string Why = "value of " + Regs[R].Name.str() + " after the loop at line " +
                          std::to_string(G.block(Lp.Header).empty()
                                             ? 0
                                             : G.location(G.block(Lp.Header).Begin).Line);
        After = Ctx.opaque(Ctx.save(Why), &G.block(Lp.Header), R, Regs[R].Width);
      }
      set(Exit, R, After);
    }
    EdgeStates[{From, To}] = std::move(Exit);
  }
}
