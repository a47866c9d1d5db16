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

uint64_t wsv::analyzer::inferKTile(const RolePrograms &Programs, uint64_t Default) {
  // The parameter the k-loops count with: the one leaf of the trip counts that do not read
  // the grid (findParameter's choice).
  const Expr *K = nullptr;
  std::vector<const Expr *> Trips;
  for (const RoleProgram &R : Programs.Programs)
    for (const RoleLoop &L : R.Loops) {
      if (!L.Trip || readsGrid(L.Trip) ||
          !L.Trip->mentions([](const Expr *Leaf) { return Leaf->is(ExprKind::Param); }))
        continue; // a tile loop, or a fixed or per-thread count
      bool Other = L.Trip->mentions([&](const Expr *Leaf) {
        if (!Leaf->is(ExprKind::Param))
          return !Leaf->isConstant();
        if (!K)
          K = Leaf;
        return Leaf != K;
      });
      if (Other)
        return Default;
      if (K && !L.Trip->isConstant())
        Trips.push_back(L.Trip);
    }
  if (!K || Trips.empty())
    return Default;
  // The smallest power of two d with T(K + d) = T(K) + 1 for every K sampled, for every trip
  // count T that grows with K: `k_tiles` counts by 1, `K / 64` and `(K + 63) / 64` by 64.
  for (uint64_t D = 1; D <= Default; D *= 2) {
    bool Steps = true;
    for (const Expr *T : Trips)
      for (uint64_t Base = 1u << 20; Base < (1u << 20) + 2 * Default && Steps; ++Base) {
        auto At = [&](uint64_t V) {
          return ExprContext::evaluate(T, [&](const Expr *L) -> std::optional<uint64_t> {
            return L == K ? std::optional<uint64_t>(V) : std::nullopt;
          });
        };
        std::optional<uint64_t> A = At(Base), B = At(Base + D);
        Steps = A && B && *B == *A + 1;
      }
    if (Steps)
      return D;
  }
  return Default;
}
