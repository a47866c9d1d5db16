//===- FunctionAnalysis.cpp - the analyses of one function, in order ---------------===//
#include "wsv/analyzer/FunctionAnalysis.h"

using namespace wsv;
using namespace wsv::analyzer;

FunctionAnalysis::FunctionAnalysis(const ptx::Module &M, const ptx::Function &F,
                                   const AnalysisOptions &Options, ptx::DiagnosticEngine *Diags) {
  if (Options.UseSolver && !Options.SharedSolver)
    Own = Solver::createZ3();
  Solver *S = Options.UseSolver ? (Options.SharedSolver ? Options.SharedSolver : Own.get())
                                : nullptr;
  SolverUsed = S;
  G = std::make_unique<Cfg>(M, F, Options.Graph, Diags);
  Dom = std::make_unique<DominatorTree>(*G);
  PostDom = std::make_unique<DominatorTree>(*G, DominatorTree::Direction::Backward);
  Loops = std::make_unique<LoopInfo>(*G, *Dom);
  Values = std::make_unique<ValueAnalysis>(*G, *Dom, *Loops, Ctx, S);
}

FunctionAnalysis::~FunctionAnalysis() = default;

GuardAnalysis &FunctionAnalysis::guards() {
  if (!Guards)
    Guards = std::make_unique<GuardAnalysis>(*Values, *Dom, *PostDom, SolverUsed);
  return *Guards;
}
