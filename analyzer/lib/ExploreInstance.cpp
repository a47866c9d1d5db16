//===- ExploreInstance.cpp - small instances of GEMM kernels to explore -----------===//
//
// Exploration needs concrete parameters. For the kernels wsv ships (and kernels shaped like
// them: parameters M, N, K; a k-loop over K / TileK; maybe a persistent loop over tiles
// strided by the grid) this picks the smallest shape that gives the number of k-tiles and
// tiles a test asks for, by instantiating candidates and counting the persistent loop's
// iterations rather than by knowing each kernel's tile size.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/Explore.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

bool readsGrid(const Expr *E) {
  return E && E->mentions([](const Expr *L) {
    return L->is(ExprKind::SpecialReg) &&
           (L->specialRegister() == SpecialRegister::CtaidX ||
            L->specialRegister() == SpecialRegister::NctaidX);
  });
}

/// Iterations of the persistent loops in CTA 0's agents: the most any agent runs. Parts of
/// an agent (ConcreteAgent::After) do not count: threads that never leave the loop run one
/// pass beyond the others' count.
uint64_t tilesOf(const ConcreteSystem &S, const std::vector<LoopId> &Persistent) {
  uint64_t Tiles = 0;
  bool Any = false;
  for (const ConcreteAgent &A : S.Agents) {
    if (A.After != NoIndex)
      continue;
    for (const ConcreteStep &C : A.Steps)
      for (const auto &[L, V] : C.Iterations)
        if (std::find(Persistent.begin(), Persistent.end(), L) != Persistent.end()) {
          Tiles = std::max(Tiles, V + 1);
          Any = true;
        }
  }
  return Any ? Tiles : 0;
}

} // namespace

std::optional<Instance> wsv::analyzer::chooseInstance(const RolePrograms &Programs,
                                                      uint64_t TileK, unsigned KTiles,
                                                      unsigned Tiles) {
  std::vector<LoopId> Persistent;
  for (const RoleProgram &R : Programs.Programs)
    for (const RoleLoop &L : R.Loops)
      if (readsGrid(L.Trip))
        Persistent.push_back(L.Loop);
  Instance Base;
  Base.Params["K"] = KTiles * TileK;
  Base.Params["M"] = 256;
  Base.Params["N"] = 256;
  Base.GridCtas = Programs.ClusterSize;
  if (Persistent.empty())
    return Base;
  const uint64_t Sizes[] = {128, 256, 512, 1024};
  std::vector<Instance> Candidates;
  for (uint64_t M : Sizes)
    for (uint64_t N : Sizes)
      for (uint64_t Grid : {1u, 2u, 4u}) {
        Instance I = Base;
        I.Params["M"] = M;
        I.Params["N"] = N;
        I.GridCtas = Grid * Programs.ClusterSize;
        Candidates.push_back(I);
      }
  std::stable_sort(Candidates.begin(), Candidates.end(), [](const Instance &A, const Instance &B) {
    return A.Params.at("M") * A.Params.at("N") < B.Params.at("M") * B.Params.at("N");
  });
  for (const Instance &I : Candidates) {
    ConcreteSystem S = instantiate(Programs, I);
    if (S.Unknown.empty() && tilesOf(S, Persistent) == Tiles)
      return I;
  }
  return std::nullopt;
}
