//===- ExploreDirected.cpp - launches sampled to run the steps no launch ran ------------===//
//
// ExploreCoverage.cpp searches launches in order of size. Some steps run only on launches
// that search does not reach: H6 stores a held tile's leftover D chunks only where a
// cluster had a whole tile and its first stream-K piece has fewer than 4 k-tiles, which
// needs a share boundary just short of a tile's end: 23 clusters, 35 tiles and K = 4288,
// say. Enumerating sizes finds that by luck or not at all, and a bug in those steps went
// unseen while the verdict listed their lines.
//
// Here the path to each such step is written down, as symbolic execution writes the
// condition of a branch (KLEE): the program's condition, every enclosing loop's with its
// iteration below the trip count, and the step's own, over the launch (the parameters,
// %nctaid.x in whole clusters, the cluster's %ctaid.x) and the iterations. Z3 cannot solve
// these in useful time: they divide by the grid and by K / 64, and a query on H6's took
// over 20 s without an answer. They are cheap to evaluate, though, and the launches that
// meet them are not that rare (H6's leftover stores: under one in a thousand of the
// launches drawn below). So launches are drawn, each size log-uniform (the small ones as
// often as whole ranges of large ones), one CTA rank drawn with them; for each cluster of
// the grid, the loops on the way to the open steps are entered with their first and last
// few iterations, and each step's condition evaluated there. Per step the cheapest launch
// that meets its path is kept (cost: k-tiles times the tiles per cluster, about the length
// of its exploration); it is instantiated and explored like any other, and counts only if
// it runs a step no launch ran (a closed-form trip count that is not exact there may take
// it elsewhere). A second round of larger sizes draws only for steps the first did not
// meet. The draws are a fixed sequence: the same launches, and the same verdict, on any
// machine. What stays open (H6: chunk 0's copy of the leftover store, which no launch runs,
// since a leftover chunk follows one the unit's k-loop stored) is reported by its lines.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include <functional>
#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

namespace {

/// The draws of each round with its largest sizes: k-tiles, clusters, and M and N in
/// 128-row blocks.
struct Round {
  uint64_t KTiles, Clusters, Rows;
  unsigned Draws;
};
constexpr Round Rounds[] = {{128, 8, 16, 4000}, {1024, 66, 64, 20000}};
/// Iterations tried of each loop on a path: the first and the last few (where conditions
/// such as `k == 0` or a leftover after the last k-tile hold).
constexpr uint64_t EdgeIterations = 4;
/// Levels of the loop nests entered at most, over all draws (deep nests on large grids
/// would take long otherwise); a count, not a clock: the same launches on any machine. H6
/// enters about 150,000.
constexpr uint64_t MaxEvaluations = 4'000'000;

/// splitmix64 from a fixed seed.
class Draws {
public:
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  uint64_t below(uint64_t N) { return N ? next() % N : 0; }
  /// In [Lo, Hi], each power-of-two range as likely as the others.
  uint64_t logUniform(uint64_t Lo, uint64_t Hi) {
    Lo = std::max<uint64_t>(Lo, 1);
    Hi = std::max(Hi, Lo);
    unsigned A = 63 - __builtin_clzll(Lo), B = 63 - __builtin_clzll(Hi);
    unsigned E = A + static_cast<unsigned>(below(B - A + 1));
    uint64_t From = std::max(Lo, uint64_t(1) << E);
    uint64_t To = std::min(Hi, (uint64_t(2) << E) - 1);
    return From + below(To - From + 1);
  }

private:
  uint64_t State = 0x77737600; // fixed: the same launches everywhere
};

/// A drawn launch, one of its clusters, and the iterations on the way to a step.
struct Point {
  uint64_t K = 0, M = 0, N = 0, Clusters = 1, Cluster = 0, Rank = 0, Thread = 0;
  std::vector<uint64_t> Iterations; ///< per loop, by Sampler::loopSlot
};

/// Where a leaf's value comes from in a Point.
enum class Source : uint8_t { Value, K, M, N, Ctaid, Nctaid, Rank, ClusterCtas, ClusterId,
                              Clusters, Thread, Lane, Warp, Iteration, None };

/// An expression evaluated at Points: its leaves resolved once to where their values come
/// from, so that a draw costs one pass over its nodes.
class PointExpr {
public:
  PointExpr(const Expr *E, llvm::function_ref<std::pair<Source, uint64_t>(const Expr *)> Resolve)
      : F(E) {
    for (const Expr *L : F.leaves())
      Leaves.push_back(L->isConstant() ? std::make_pair(Source::Value, L->payload())
                                       : Resolve(L));
    Values.resize(Leaves.size());
  }
  std::optional<uint64_t> at(const Point &P, uint64_t ClusterCtas) const {
    for (size_t I = 0; I < Leaves.size(); ++I) {
      auto [S, V] = Leaves[I];
      std::optional<uint64_t> &Out = Values[I];
      switch (S) {
      case Source::Value: Out = V; break;
      case Source::K: Out = P.K; break;
      case Source::M: Out = P.M; break;
      case Source::N: Out = P.N; break;
      case Source::Ctaid: Out = P.Cluster * ClusterCtas + P.Rank; break;
      case Source::Nctaid: Out = P.Clusters * ClusterCtas; break;
      case Source::Rank: Out = P.Rank; break;
      case Source::ClusterCtas: Out = ClusterCtas; break;
      case Source::ClusterId: Out = P.Cluster; break;
      case Source::Clusters: Out = P.Clusters; break;
      case Source::Thread: Out = P.Thread; break;
      case Source::Lane: Out = P.Thread % 32; break;
      case Source::Warp: Out = P.Thread / 32; break;
      case Source::Iteration: Out = P.Iterations[V]; break;
      case Source::None: Out = std::nullopt; break;
      }
    }
    return F.evaluate(Values);
  }
  bool holds(const Point &P, uint64_t ClusterCtas) const {
    std::optional<uint64_t> V = at(P, ClusterCtas);
    return V && *V != 0;
  }

private:
  FlatExpr F;
  std::vector<std::pair<Source, uint64_t>> Leaves;
  mutable std::vector<std::optional<uint64_t>> Values;
};

} // namespace

bool Prover::directLaunches(unsigned &Explored, bool &Bounded, std::string &NotRun) {
  // The open steps, grouped by the loops around them (outermost first) in their program.
  struct Step {
    unsigned Index;
    unsigned When; ///< into Group::Whens (NoIndex: always)
  };
  struct Level {
    unsigned Slot;
    std::optional<PointExpr> When;
    PointExpr Trip;
  };
  struct Group {
    unsigned Program;
    std::vector<unsigned> Loops;
    std::optional<PointExpr> When;
    std::vector<Level> Levels;
    std::vector<Step> Steps;
    /// The steps' distinct conditions (an unrolled copy's instructions share one), each
    /// evaluated once per iteration reached.
    std::vector<const Expr *> WhenExprs;
    std::vector<PointExpr> Whens;
    /// The cheapest cost at which every step has been found (UINT64_MAX: not all yet).
    uint64_t Done = UINT64_MAX;
  };
  std::map<uint64_t, unsigned> LoopSlots;
  auto Resolve = [&](const Expr *L) -> std::pair<Source, uint64_t> {
    switch (L->kind()) {
    case ExprKind::Param: {
      std::string Name = paramName(L);
      if (OnlyFixed) // the launches asked about (searchFixedValues)
        if (std::optional<uint64_t> V = fixedValue(Name))
          return {Source::Value, *V};
      if (L == K)
        return {Source::K, 0};
      if (Name == "M" || Name == "N")
        return {Name == "M" ? Source::M : Source::N, 0};
      if (auto It = O.Params.find(Name); It != O.Params.end())
        return {Source::Value, It->second};
      return {Source::None, 0};
    }
    case ExprKind::IterationVar:
      return {Source::Iteration, LoopSlots.try_emplace(L->payload(), LoopSlots.size())
                                     .first->second};
    case ExprKind::SpecialReg:
      switch (L->specialRegister()) {
      case SpecialRegister::CtaidX: return {Source::Ctaid, 0};
      case SpecialRegister::NctaidX: return {Source::Nctaid, 0};
      case SpecialRegister::ClusterCtaRank:
      case SpecialRegister::ClusterCtaidX: return {Source::Rank, 0};
      case SpecialRegister::ClusterNctaRank:
      case SpecialRegister::ClusterNctaidX: return {Source::ClusterCtas, 0};
      case SpecialRegister::ClusteridX: return {Source::ClusterId, 0};
      case SpecialRegister::NclusteridX: return {Source::Clusters, 0};
      case SpecialRegister::TidX: return {Source::Thread, 0};
      case SpecialRegister::LaneId: return {Source::Lane, 0};
      case SpecialRegister::WarpId: return {Source::Warp, 0};
      default: return {Source::None, 0};
      }
    default: return {Source::None, 0};
    }
  };
  auto Optional = [&](const Expr *E) {
    return E ? std::optional<PointExpr>(std::in_place, E, Resolve) : std::nullopt;
  };
  std::vector<Group> Groups;
  for (unsigned PI = 0; PI < RP.Programs.size() && PI < Reached.size(); ++PI) {
    const RoleProgram &Pr = RP.Programs[PI];
    std::vector<unsigned> Around;
    std::function<void(const std::vector<RoleItem> &)> Walk =
        [&](const std::vector<RoleItem> &Items) {
          for (const RoleItem &It : Items) {
            if (It.IsLoop) {
              if (!Pr.Loops[It.Index].Trip)
                continue; // its steps have no path to draw
              Around.push_back(It.Index);
              Walk(Pr.Loops[It.Index].Body);
              Around.pop_back();
              continue;
            }
            const RoleStep &St = Pr.Steps[It.Index];
            if (Reached[PI].test(It.Index) || St.Kind == StepKind::Unknown ||
                St.Event == NoIndex)
              continue;
            auto G = llvm::find_if(Groups, [&](const Group &G) {
              return G.Program == PI && G.Loops == Around;
            });
            if (G == Groups.end()) {
              Group New{PI, Around, Optional(Pr.When), {}, {}, {}, {}};
              for (unsigned L : Around) {
                const RoleLoop &Loop = Pr.Loops[L];
                unsigned Slot = LoopSlots.try_emplace(Loop.Loop, LoopSlots.size()).first->second;
                New.Levels.push_back({Slot, Optional(Loop.When), PointExpr(Loop.Trip, Resolve)});
              }
              Groups.push_back(std::move(New));
              G = Groups.end() - 1;
            }
            unsigned When = NoIndex;
            if (St.When) {
              auto W = llvm::find(G->WhenExprs, St.When);
              When = static_cast<unsigned>(W - G->WhenExprs.begin());
              if (W == G->WhenExprs.end()) {
                G->WhenExprs.push_back(St.When);
                G->Whens.emplace_back(St.When, Resolve);
              }
            }
            G->Steps.push_back({It.Index, When});
          }
        };
    Walk(Pr.Body);
  }
  if (Groups.empty())
    return true;
  // Where the argument proved every launch on which the term is 0, only the others.
  std::optional<PointExpr> Term;
  if (restrictedProved())
    Term.emplace(Restrict->Term, Resolve);
  const uint64_t Cluster = RP.ClusterSize;

  // Per step, the cheapest launch found that runs its path: about the k-tiles one cluster
  // works through, so that the exploration is as short as the draws allow.
  std::map<std::pair<unsigned, unsigned>, std::pair<uint64_t, Instance>> Best;
  Point At;
  At.Iterations.assign(LoopSlots.size(), 0);
  uint64_t Cost = 0;
  auto Record = [&](const Group &G, const Step &S) {
    auto [It, New] = Best.try_emplace({G.Program, S.Index}, Cost, Instance());
    if (!New && It->second.first <= Cost)
      return false;
    Instance I = launch(At.K);
    I.Params["M"] = At.M;
    I.Params["N"] = At.N;
    if (OnlyFixed)
      for (const auto &[Name, Value] : O.Fixed)
        I.Params[Name] = Value;
    I.GridCtas = At.Clusters * Cluster;
    I.FirstCta = At.Cluster * Cluster;
    It->second = {Cost, std::move(I)};
    return true;
  };
  std::vector<uint8_t> Holds;
  uint64_t Evaluations = 0;
  std::function<void(Group &, size_t)> Enter = [&](Group &G, size_t Depth) {
    ++Evaluations;
    if (Depth == G.Levels.size()) {
      Holds.resize(G.Whens.size());
      for (size_t W = 0; W < G.Whens.size(); ++W)
        Holds[W] = G.Whens[W].holds(At, Cluster);
      bool Better = false;
      for (const Step &S : G.Steps)
        if (S.When == NoIndex || Holds[S.When])
          Better |= Record(G, S);
      if (Better) { // every step found? Then no launch costing as much improves on them.
        uint64_t Dearest = 0;
        for (const Step &S : G.Steps) {
          auto It = Best.find({G.Program, S.Index});
          Dearest = It == Best.end() ? UINT64_MAX : std::max(Dearest, It->second.first);
        }
        G.Done = Dearest;
      }
      return;
    }
    const Level &L = G.Levels[Depth];
    if (L.When && !L.When->holds(At, Cluster))
      return;
    std::optional<uint64_t> Trip = L.Trip.at(At, Cluster);
    if (!Trip || !*Trip || *Trip > (uint64_t(1) << 32))
      return;
    for (uint64_t I = 0; I < *Trip; ++I) {
      if (I == EdgeIterations && *Trip > 2 * EdgeIterations)
        I = *Trip - EdgeIterations;
      At.Iterations[L.Slot] = I;
      Enter(G, Depth + 1);
    }
  };
  Draws D;
  for (const Round &Ro : Rounds) {
    // A round once begun draws to its end (for cheaper launches); the next only for steps
    // none of its launches ran.
    if (llvm::all_of(Groups, [](const Group &G) { return G.Done != UINT64_MAX; }))
      break;
    for (unsigned N = 0; N < Ro.Draws && Evaluations < MaxEvaluations; ++N) {
      At.K = O.TileK * D.logUniform(std::max<uint64_t>(1, O.MinTiles), Ro.KTiles);
      At.M = 128 * D.logUniform(1, Ro.Rows);
      At.N = 128 * D.logUniform(1, Ro.Rows);
      At.Clusters = D.logUniform(1, Ro.Clusters);
      At.Thread = D.below(std::max(1u, RP.BlockThreads));
      if (Term && !Term->holds(At, Cluster))
        continue;
      At.Rank = D.below(Cluster);
      Cost = At.K / O.TileK * (1 + At.M / 128 * (At.N / 128) / At.Clusters);
      for (At.Cluster = 0; At.Cluster < At.Clusters; ++At.Cluster)
        for (Group &G : Groups)
          if (Cost < G.Done && (!G.When || G.When->holds(At, Cluster)))
            Enter(G, 0);
    }
  }
  std::set<std::string> Tried;
  for (auto &[Where, Found] : Best) {
    const Instance &I = Found.second;
    if (Reached[Where.first].test(Where.second) || !Tried.insert(launchName(I)).second)
      continue; // an earlier launch ran it
    // The run names the step it was drawn for: why a launch that large was explored.
    // (Only steps with an event are sought.)
    unsigned Event = RP.Programs[Where.first].Steps[Where.second].Event;
    std::string Why = "[drawn for ptx line " + std::to_string(P.Events[Event].Where.PtxLine) + "] ";
    if (!coverLaunch(instantiate(RP, I), I, Explored, Bounded, NotRun, Why))
      return Bounded; // out of states (true), or a bug (false)
  }
  return true;
}
