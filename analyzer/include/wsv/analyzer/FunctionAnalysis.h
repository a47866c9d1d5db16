//===- FunctionAnalysis.h - every analysis of one function, built together --------===//
//
// The order the analyses depend on each other, in one object: Cfg, then dominators and
// post-dominators, natural loops, values (with induction variables, trip counts and spin
// waits), and guards on demand. What later layers (roles, barrier identity, the protocol IR)
// start from.
//
//   wsv::analyzer::FunctionAnalysis FA(Module, *Module.function("kernel"));
//   for (const Loop &L : FA.loops().loops())
//     FA.values().loopSummary(L.Index).Trip ...
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Dominators.h"
#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/Guards.h"
#include "wsv/analyzer/Loops.h"
#include "wsv/analyzer/Solver.h"
#include "wsv/analyzer/Values.h"

#include <memory>

namespace wsv {
namespace analyzer {

struct AnalysisOptions {
  CfgOptions Graph;
  /// Ask Z3 what the builders cannot decide (implications, thread counts of odd guards).
  bool UseSolver = true;
  /// A solver to share between analyses (a Z3 context takes milliseconds to create); when
  /// null and UseSolver is set, the analysis makes its own.
  Solver *SharedSolver = nullptr;
};

class FunctionAnalysis {
public:
  FunctionAnalysis(const ptx::Module &M, const ptx::Function &F,
                   const AnalysisOptions &Options = {}, ptx::DiagnosticEngine *Diags = nullptr);
  ~FunctionAnalysis();

  ExprContext &context() { return Ctx; }
  /// The solver the analyses ask, or nullptr.
  Solver *solver() { return SolverUsed; }
  const Cfg &cfg() const { return *G; }
  const DominatorTree &dominators() const { return *Dom; }
  const DominatorTree &postDominators() const { return *PostDom; }
  const LoopInfo &loops() const { return *Loops; }
  const ValueAnalysis &values() const { return *Values; }
  /// Built on first use.
  GuardAnalysis &guards();

private:
  ExprContext Ctx;
  std::unique_ptr<Solver> Own;
  Solver *SolverUsed = nullptr;
  std::unique_ptr<Cfg> G;
  std::unique_ptr<DominatorTree> Dom, PostDom;
  std::unique_ptr<LoopInfo> Loops;
  std::unique_ptr<ValueAnalysis> Values;
  std::unique_ptr<GuardAnalysis> Guards;
};

} // namespace analyzer
} // namespace wsv
