//===- ExploreCoverage.cpp - small launches that run every step of the protocol ------===//
//
// Where the argument for every parameter fails, Prover::smallLaunches explores a few small
// launches. Those need not run every part of a kernel: H6's stream-K pieces run only where
// the grid leaves a last wave at least half full and each share saves 32 k-tiles, so only
// at K >= 4096 and at least two clusters; a bug there went unseen while the verdict said
// that small launches showed none. Here, after those launches, launches are searched in
// order of size (k-tiles, then clusters, then M x N, then which cluster of the grid is
// modeled) for ones that run a step no explored launch ran, and each such launch is
// explored. Steps that search does not reach are then sought on drawn launches
// (ExploreDirected.cpp); what no launch reaches is reported by its PTX lines.
//
// The search is bounded by the number of launches it instantiates and by the concrete
// steps they have together (ParametricOptions has no clock in it: the same verdict on any
// machine).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

namespace {

// Bounds of the search (the budget of states of the explorations is the prover's own).
constexpr unsigned MaxCandidates = 4000;
constexpr uint64_t MaxInstantiatedSteps = 40'000'000;

bool readsLeaf(const Expr *E, llvm::function_ref<bool(const Expr *)> Is) {
  return E && E->mentions(Is);
}

bool isGrid(const Expr *L) {
  return L->is(ExprKind::SpecialReg) && (L->specialRegister() == SpecialRegister::CtaidX ||
                                         L->specialRegister() == SpecialRegister::NctaidX);
}

} // namespace

bool wsv::analyzer::parametric::programsRead(const RolePrograms &RP,
                                             llvm::function_ref<bool(const Expr *)> Is) {
  for (const RoleProgram &R : RP.Programs) {
    if (readsLeaf(R.When, Is))
      return true;
    for (const RoleLoop &L : R.Loops)
      if (readsLeaf(L.Trip, Is) || readsLeaf(L.When, Is))
        return true;
    for (const RoleStep &S : R.Steps)
      if (readsLeaf(S.When, Is) || readsLeaf(S.Barrier.Slot, Is) || readsLeaf(S.Count, Is) ||
          readsLeaf(S.TmemColumn, Is))
        return true;
  }
  return false;
}

void Prover::cover(const ConcreteSystem &S) {
  if (Reached.empty())
    for (const RoleProgram &Pr : RP.Programs)
      Reached.emplace_back(Pr.Steps.size());
  for (const ConcreteAgent &A : S.Agents)
    for (const ConcreteStep &C : A.Steps) {
      if (A.Program >= Reached.size())
        continue;
      llvm::BitVector &Mine = Reached[A.Program];
      if (C.RoleStep < Mine.size())
        Mine.set(C.RoleStep);
      for (unsigned F : C.Folded)
        if (F < Mine.size())
          Mine.set(F);
    }
  for (auto [Program, Step] : S.Elided)
    if (Program < Reached.size() && Step < Reached[Program].size())
      Reached[Program].set(Step);
}

bool Prover::reachesNew(const ConcreteSystem &S) const {
  auto New = [&](unsigned Program, unsigned Step) {
    return Program < Reached.size() && Step < Reached[Program].size() &&
           !Reached[Program].test(Step);
  };
  for (const ConcreteAgent &A : S.Agents)
    for (const ConcreteStep &C : A.Steps)
      if (New(A.Program, C.RoleStep) ||
          llvm::any_of(C.Folded, [&](unsigned F) { return New(A.Program, F); }))
        return true;
  return llvm::any_of(S.Elided, [&](auto PS) { return New(PS.first, PS.second); });
}

std::vector<unsigned> Prover::unreachedLines() const {
  std::vector<unsigned> Lines;
  for (unsigned PI = 0; PI < RP.Programs.size() && PI < Reached.size(); ++PI)
    for (unsigned SI = 0; SI < RP.Programs[PI].Steps.size(); ++SI) {
      const RoleStep &St = RP.Programs[PI].Steps[SI];
      if (Reached[PI].test(SI) || St.Kind == StepKind::Unknown || St.Event == NoIndex)
        continue;
      Lines.push_back(P.Events[St.Event].Where.PtxLine);
    }
  std::sort(Lines.begin(), Lines.end());
  Lines.erase(std::unique(Lines.begin(), Lines.end()), Lines.end());
  return Lines;
}

bool Prover::coverSteps(unsigned &Explored, bool &Bounded, std::string &NotRun) {
  if (!searchSizes(Explored, Bounded, NotRun))
    return false; // a bug
  if (Bounded || !O.DrawLaunches || unreachedLines().empty())
    return true;
  return directLaunches(Explored, Bounded, NotRun);
}

bool Prover::searchSizes(unsigned &Explored, bool &Bounded, std::string &NotRun) {
  // Where the argument proved every launch on which the restriction's term is 0, those
  // launches have nothing left to show: the steps the rewritten programs keep count as
  // run, and a launch where the term is 0 is not even instantiated (H6: every launch below
  // K = 4096; instantiating them took 0.5 s).
  const bool Proved = restrictedProved();
  if (Proved) {
    if (Reached.empty())
      for (const RoleProgram &Pr : RP.Programs)
        Reached.emplace_back(Pr.Steps.size());
    for (unsigned PI = 0; PI < Reached.size(); ++PI)
      for (unsigned SI = 0; SI < Reached[PI].size(); ++SI) {
        const Expr *When = Restrict->Programs.Programs[PI].Steps[SI].When;
        if (!When || !When->isFalse())
          Reached[PI].set(SI);
      }
  }
  if (unreachedLines().empty())
    return true;
  const bool Grid = programsRead(RP, isGrid);
  // M and N as the tile-count argument varies them (tileShape): ParametricOptions holds
  // 256 for both whether the kernel reads them or not.
  auto ReadsParam = [&](const char *Name) {
    return programsRead(RP, [&](const Expr *L) {
      return L->is(ExprKind::Param) && paramName(L) == Name;
    });
  };
  const bool VaryM = Grid && ReadsParam("M"), VaryN = Grid && ReadsParam("N");
  unsigned Ring = deepestRing();
  unsigned First = static_cast<unsigned>(O.MinTiles);
  std::vector<unsigned> KTiles;
  if (K)
    for (unsigned J : {First, First + 1, Ring + 1, 2 * Ring + 1, 8u, 16u, 32u, 64u, 96u, 128u})
      if (J >= First)
        KTiles.push_back(J);
  if (KTiles.empty())
    KTiles.push_back(First);
  // Searching the launches with the values the user fixed (ExploreFixed.cpp): the k-loop's
  // parameter is one of them where they fix it.
  if (OnlyFixed && K)
    if (std::optional<uint64_t> V = fixedValue(R.Parameter); V && *V % O.TileK == 0)
      KTiles = {static_cast<unsigned>(*V / O.TileK)};
  std::sort(KTiles.begin(), KTiles.end());
  KTiles.erase(std::unique(KTiles.begin(), KTiles.end()), KTiles.end());
  std::vector<uint64_t> Clusters = Grid ? std::vector<uint64_t>{1, 2, 3, 4, 6}
                                        : std::vector<uint64_t>{1};
  std::vector<std::pair<uint64_t, uint64_t>> Shapes;
  for (uint64_t M : {1, 2, 3, 4})
    for (uint64_t N : {1, 2, 3, 4})
      if ((VaryM || M == 2) && (VaryN || N == 2))
        Shapes.push_back({128 * M, 128 * N});
  std::stable_sort(Shapes.begin(), Shapes.end(), [](const auto &A, const auto &B) {
    return A.first * A.second < B.first * B.second;
  });

  unsigned Candidates = 0;
  uint64_t Steps = 0;
  for (unsigned J : KTiles)
    for (uint64_t G : Clusters) {
      // The first cluster, the second and the last: a persistent schedule gives the first
      // and last clusters of a grid the odd shares.
      llvm::SmallVector<uint64_t, 3> Which = {0};
      for (uint64_t C : {uint64_t(1), G - 1})
        if (C < G && !llvm::is_contained(Which, C))
          Which.push_back(C);
      for (auto [M, N] : Shapes)
        for (uint64_t C : Which) {
          Instance I = launch(J * O.TileK);
          if (VaryM)
            I.Params["M"] = M;
          if (VaryN)
            I.Params["N"] = N;
          I.GridCtas = G * RP.ClusterSize;
          I.FirstCta = C * RP.ClusterSize;
          if (Proved)
            if (std::optional<uint64_t> V = termAt(*Restrict, RP, I); V && *V == 0)
              continue;
          if (OnlyFixed) {
            for (const auto &[Name, Value] : O.Fixed)
              I.Params[Name] = Value;
            if (!hasFixedValues(I))
              continue;
          }
          if (++Candidates > MaxCandidates || Steps > MaxInstantiatedSteps)
            return true;
          ConcreteSystem S = instantiate(RP, I);
          for (const ConcreteAgent &A : S.Agents)
            Steps += A.Steps.size();
          if (!coverLaunch(S, I, Explored, Bounded, NotRun))
            return Bounded; // out of states (true), or a bug (false)
          if (unreachedLines().empty())
            return true;
        }
    }
  return true;
}

bool Prover::coverLaunch(const ConcreteSystem &S, const Instance &I, unsigned &Explored,
                         bool &Bounded, std::string &NotRun, const std::string &Why) {
  if (!S.Unknown.empty()) {
    if (NotRun.empty())
      NotRun = launchName(I) + ": " + S.Unknown;
    return true;
  }
  if (!reachesNew(S))
    return true;
  ++Explored;
  if (!explore(S, Why + launchName(I), I)) {
    Bounded = R.Verdict == ExploreVerdict::Unknown;
    return false;
  }
  cover(S);
  return true;
}

std::string Prover::launchName(const Instance &I) const {
  // The kernel's own parameters (the options hold M and N whether it has them or not).
  std::string Out;
  for (const auto &[Name, Value] : I.Params)
    if (llvm::is_contained(P.ParamNames, Name) || llvm::is_contained(P.ParamSymbols, Name))
      Out += (Out.empty() ? "" : ", ") + Name + " = " + std::to_string(Value);
  if (I.GridCtas > RP.ClusterSize)
    Out += ", " + std::to_string(I.GridCtas) + " CTAs, CTA " + std::to_string(I.FirstCta) +
           (RP.ClusterSize > 1 ? " and its cluster" : "");
  return Out;
}
