//===- ExploreParametricQueries.cpp - putting the lemmas to Z3 ------------------------===//
//
// The lemmas of ExploreParametricLemmas.cpp go to Z3 as validity claims: one at a time, or
// many at once on several workers (grouped by hypothesis first, then one by one where a
// group's claim fails), with the verdict, the reason and the count of queries those of
// asking them in turn.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <numeric>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

bool Prover::valid(const Expr *Hyp, const Expr *Goal, const std::string &What, bool Grid) {
  SolverResult V = (Grid ? gridZ3() : *Z3).isValid(Ctx.implies(Hyp, Goal));
  ++R.SolverQueries;
  if (V.Answer == SolverAnswer::Yes)
    return true;
  if (V.Answer == SolverAnswer::Unknown)
    return unknown("Z3 could not decide whether " + What + ": " + V.Reason);
  return unknown(What + " does not hold");
}

bool Prover::validAll(const std::vector<Lemma> &Lemmas) {
  // A persistent kernel's lemmas with one hypothesis are asked together first, as one
  // claim: encoding its hypothesis (the grid's domain, with the tile count's products and
  // divisions) is most of what Z3 spends on each of them. H5's 39 lemmas of one hypothesis
  // took 84 ms together and 2 to 35 ms each one by one; its lemmas went from 100 queries to
  // 19, and 4.0 to 3.5 s of CPU. Other kernels' hypotheses are small, and Z3 does better on
  // each goal alone (B1's last round of 14 lemmas: 361 ms in three groups, about 60 ms one
  // by one; B1 0.47 -> 0.73 s of CPU with groups). A group that is not proved together is
  // asked lemma by lemma below, as are the lone ones: the verdict, the failing lemma and
  // the reason are those of asking each on its own.
  if (!Tiles) {
    std::vector<size_t> All(Lemmas.size());
    std::iota(All.begin(), All.end(), 0);
    return validEach(Lemmas, All);
  }
  std::vector<std::pair<std::pair<const Expr *, bool>, std::vector<size_t>>> Groups;
  for (size_t I = 0; I < Lemmas.size(); ++I) {
    std::pair<const Expr *, bool> Key{Lemmas[I].Hyp, Lemmas[I].Grid};
    auto It = llvm::find_if(Groups, [&](const auto &G) { return G.first == Key; });
    if (It == Groups.end())
      Groups.push_back({Key, {I}});
    else
      It->second.push_back(I);
  }
  std::vector<bool> Proved(Lemmas.size(), false);
  std::vector<const Expr *> Joint;
  std::vector<size_t> JointGroup;
  for (size_t G = 0; G < Groups.size(); ++G) {
    if (Groups[G].second.size() < 2)
      continue;
    const Expr *Goal = nullptr;
    for (size_t I : Groups[G].second)
      Goal = Goal ? Ctx.logicalAnd(Goal, Lemmas[I].Goal) : Lemmas[I].Goal;
    Joint.push_back(Ctx.implies(Groups[G].first.first, Goal));
    JointGroup.push_back(G);
  }
  // A claim that takes much longer than H5's largest (about 300,000 units) is left to its
  // lemmas one by one.
  const uint64_t JointBudget = 1000000;
  std::vector<SolverResult> JointResults = askAll(
      Joint, [&](size_t J) { return Groups[JointGroup[J]].first.second; },
      /*StopAtFailure=*/false, threads(), JointBudget);
  for (size_t J = 0; J < Joint.size(); ++J)
    if (JointResults[J].Answer == SolverAnswer::Yes)
      for (size_t I : Groups[JointGroup[J]].second)
        Proved[I] = true;
  R.SolverQueries += Joint.size();
  std::vector<size_t> Rest;
  for (size_t I = 0; I < Lemmas.size(); ++I)
    if (!Proved[I])
      Rest.push_back(I);
  return validEach(Lemmas, Rest);
}

std::vector<SolverResult>
Prover::askAll(const std::vector<const Expr *> &Claims,
               llvm::function_ref<bool(size_t)> Grid, bool StopAtFailure,
               unsigned Threads, uint64_t Budget) {
  std::vector<SolverResult> Results(Claims.size());
  unsigned N = std::min<size_t>(Threads, Claims.size());
  if (N <= 1) {
    for (size_t I = 0; I < Claims.size(); ++I) {
      Results[I] = (Grid(I) ? gridZ3() : *Z3).isValidWithin(Claims[I], Budget);
      if (StopAtFailure && Results[I].Answer != SolverAnswer::Yes)
        break;
    }
    return Results;
  }
  WorkerZ3.resize(std::max<size_t>(WorkerZ3.size(), N));
  WorkerGridZ3.resize(WorkerZ3.size());
  // Past the first claim known to fail, the answers are not needed.
  std::atomic<size_t> Next{0}, FirstFailed{Claims.size()};
  llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(N));
  for (unsigned W = 0; W < N; ++W)
    Pool.async([&, W] {
      for (size_t I; (I = Next++) < Claims.size();) {
        if (StopAtFailure && I > FirstFailed)
          continue;
        // The first worker asks the prover's own solvers: a context costs more to make
        // than most queries take.
        std::unique_ptr<Solver> &S = W == 0 ? (Grid(I) ? GridZ3 : Z3)
                                            : (Grid(I) ? WorkerGridZ3[W] : WorkerZ3[W]);
        if (!S)
          S = makeZ3(Grid(I));
        Results[I] = S->isValidWithin(Claims[I], Budget);
        if (Results[I].Answer != SolverAnswer::Yes)
          for (size_t F = FirstFailed; I < F && !FirstFailed.compare_exchange_weak(F, I);)
            ;
      }
    });
  Pool.wait();
  return Results;
}

bool Prover::validEach(const std::vector<Lemma> &Lemmas, const std::vector<size_t> &Which) {
  // A threshold that does not hold usually fails on one of its first lemmas: asked one by
  // one, the rest are never asked; at once, the other workers' queries run to their end
  // (and Z3's allocator, one per process, slows queries that run side by side). A few
  // lemmas go one by one: H1 tries 16 thresholds that fail among 9 to 14 lemmas, and took
  // 40% longer with them asked at once.
  const size_t FewLemmas = 20;
  FailedLemma = SIZE_MAX;
  // The claims are built here: the expression context is not for several threads. Z3 only
  // reads them, each worker in contexts of its own.
  std::vector<const Expr *> Claims;
  for (size_t I : Which)
    Claims.push_back(Ctx.implies(Lemmas[I].Hyp, Lemmas[I].Goal));
  auto Grid = [&](size_t J) { return Lemmas[Which[J]].Grid; };
  std::vector<SolverResult> Results =
      askAll(Claims, Grid, /*StopAtFailure=*/true, Which.size() < FewLemmas ? 1 : threads());
  for (size_t J = 0; J < Which.size(); ++J) {
    ++R.SolverQueries;
    if (Results[J].Answer == SolverAnswer::Yes)
      continue;
    const Lemma &L = Lemmas[Which[J]];
    FailedProgram = L.Program;
    FailedLemma = Which[J];
    if (Results[J].Answer == SolverAnswer::Unknown)
      return unknown("Z3 could not decide whether " + L.What + ": " + Results[J].Reason);
    return unknown(L.What + " does not hold");
  }
  return true;
}
