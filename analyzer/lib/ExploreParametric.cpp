//===- ExploreParametric.cpp - every trip count of the k-loop, by periodicity ------===//
//
// A pipeline's k-loop runs T(K) times (K / 64, K / 64 - 3, ...), and every agent's steps in
// iteration k name slots and parities that repeat with a period M (k % S, (k / S) & 1: M = 2S).
// The explorer checks one instance; this file turns finitely many explorations into a
// statement for every K:
//
//  1. Lemmas, proved by Z3 over bit vectors for all values (Solver.h), with j, p >= 0 and
//     K, K' in the domain D (K a multiple of the k-tile, K >= the k-tile, K < 2^24, and the
//     trip-count conditions the code does not check itself):
//       - every agent's varying loop runs T(K) + c iterations (one T for all; c constant);
//       - when T(K') = T(K) + j*M and T(K) >= Tmin, every expression outside a varying loop
//         (counts, bytes, parities, conditions, trip counts of fixed loops) has the same value
//         under K and K', and every expression in iteration k of a varying loop has, under
//         K', the value it had under K in iteration k (for k < its trip under K) and in
//         iteration k + p*M (for C0 <= k, p <= j);
//       - two K with the same T give every expression the same value;
//       - every K of the domain with T(K) < Tmin is at most the largest K scanned.
//  2. Every T below Tmin that some K of the scan reaches is explored as it is (Explore.h).
//  3. For each residue r < M, the instance with T = Tmin + r becomes a periodic system: each
//     agent's last M iterations of its varying loop form a cycle that it may run any number
//     of times more, all agents the same number (ExploreSimulator: the first to leave fixes
//     the count). By the lemmas, unrolling the cycle j more times gives exactly the steps of
//     the instance with T = Tmin + r + j*M, for every j, so the periodic system's schedules
//     are those of all of them together. Its states are finite once completed phases count
//     only by parity and passes only by their differences; the search gives up (unknown)
//     when agents drift apart by more than ExploreOptions::MaxLag passes.
// A bad state of a periodic system is reproduced on concrete instances (T = Tmin + r + j*M for
// small j) before it is reported, so that every counterexample is a schedule of a real
// launch.
//
// Persistent kernels (every role's outermost loop runs over the grid's tiles, NT times, the
// k-loop inside it) get the same argument in two dimensions. The lemmas also cover the
// launch's grid and sizes (primed copies of M, N, %ctaid.x, %nctaid.x): with NT' = NT + i*M,
// tile t stands for tile t + q*M (q <= i), and conditions like `%ctaid.x < tiles` must be
// decided by whether the CTA has a tile. Each class of (T, NT) is explored: small ones as
// launches, the others with the last M tiles as an outer cycle and, in every tile, the last M
// k-iterations as an inner cycle (ConcreteAgent::InnerCycles). Agents agree on each tile's
// inner pass count separately, so the system also runs launches whose tiles differ in K; it
// has the real launches among its schedules, which is what a proof needs.
//
// What the lemmas cannot establish (a second parameter in trip counts, a nested varying
// loop, a value that depends on K other than through T) leaves the verdict unknown, with the
// reason.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/Solver.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// An expression of a program, with the varying loop around it (NoIndex: none).
struct Use {
  const Expr *E = nullptr;
  unsigned VaryingLoop = NoIndex; ///< into RoleProgram::Loops of Program
  unsigned Program = 0;
  bool InTile = false; ///< inside the program's tile loop (persistent kernels)
};

class Prover {
public:
  Prover(const RolePrograms &RP, const ParametricOptions &O, ParametricResult &R)
      : RP(RP), P(*RP.P), O(O), R(R), Ctx(P.Analysis->context()),
        Z3(Solver::createZ3(O.TimeoutMs)) {}

  void run();

private:
  bool unknown(std::string Why) {
    R.Verdict = ExploreVerdict::Unknown;
    R.Reason = std::move(Why);
    return false;
  }
  const Expr *c(uint64_t V, unsigned W) { return Ctx.constant(V & ExprContext::mask(W), W); }
  std::optional<uint64_t> eval(const Expr *E, uint64_t KValue) const;
  bool findParameter();
  bool classifyLoops();
  void collectUses();
  const Expr *domain(const Expr *KLeaf);
  /// Grid: the query reads the grid's tile count, whose product and division make it slow;
  /// it gets ten times the time, so that a loaded machine does not turn a proof into unknown.
  bool valid(const Expr *Hyp, const Expr *Goal, const std::string &What, bool Grid = false);
  Solver &gridZ3() {
    if (!GridZ3)
      GridZ3 = Solver::createZ3(10 * O.TimeoutMs);
    return *GridZ3;
  }
  /// What holds whatever the period: the varying loops' trip counts in T, and every value
  /// depending on the parameter only through T. Proved once.
  bool proveTripForms();
  /// The period's lemmas for one threshold and tail (and Tmin from them).
  bool proveLemmas(unsigned Period, unsigned Threshold, unsigned Tail);
  std::string paramName(const Expr *Leaf) const;
  Instance launch(uint64_t KValue) const;
  ConcreteSystem instance(uint64_t KValue) const { return instantiate(RP, launch(KValue)); }
  void smallLaunches(std::string Why);
  bool makePeriodic(ConcreteSystem &S, uint64_t T) const;
  bool explore(const ConcreteSystem &S, const std::string &What, const Instance &At);

  const RolePrograms &RP;
  const Protocol &P;
  const ParametricOptions &O;
  ParametricResult &R;
  ExprContext &Ctx;
  std::unique_ptr<Solver> Z3;

  const Expr *K = nullptr, *KPrime = nullptr;
  unsigned KWidth = 32;
  const Expr *T = nullptr; ///< the reference trip count
  /// Per program: its varying loop (NoIndex: none) and that loop's offset from T.
  std::vector<unsigned> Varying;
  std::vector<int64_t> Offset;
  std::vector<unsigned> Rates; ///< k-tiles per iteration of the varying loop
  std::vector<Use> Uses;
  unsigned Period = 1, Threshold = 0, TailLength = 0;
  std::set<uint64_t> CleanK; ///< launches already explored without a bug
  uint64_t Tmin = 0;

  // Persistent kernels: every role's top-level loop over the grid's tiles runs NT times, the
  // same expression for all; its iterations repeat with the period too (NTmin as Tmin).
  bool Tiles = false;
  const Expr *NT = nullptr;
  std::vector<unsigned> TileLoop;      ///< per program, into Loops (NoIndex: none)
  std::vector<const Expr *> Grid;      ///< leaves NT and the uses read besides K
  std::vector<const Expr *> GridPrime; ///< their primed copies
  unsigned TileThreshold = 0;
  uint64_t NTmin = 0;
  const Expr *prime(const Expr *E);
  const Expr *gridDomain(bool Primed);
  bool findTileLoops();
  std::optional<Instance> tileLaunch(uint64_t KValue, uint64_t Tiles) const;
  bool makeTilePeriodic(ConcreteSystem &S, std::optional<uint64_t> TPeriodic,
                        std::optional<uint64_t> NTPeriodic) const;
  void runTiles();
  unsigned slotPeriod() const;
  unsigned deepestRing() const;
  /// Sets Period, Threshold, TailLength, TileThreshold, Tmin and NTmin to the first
  /// candidates whose lemmas hold; false (unknown) when none do.
  bool findThresholds(unsigned M, std::initializer_list<unsigned> TileThresholds);
  /// A condition outside the loops that reads the grid (`%ctaid.x < tiles`), shown to be
  /// decided by whether the CTA has a tile at all: then every launch with as many tiles, or
  /// with at least one in both, agrees on it (cheaper for Z3 than comparing two launches).
  bool decidedByTiles(const Expr *E);
  /// E reads a value of the launch besides K (a Grid leaf).
  bool readsGrid(const Expr *E) const {
    return E->mentions([&](const Expr *L) {
      return std::find(Grid.begin(), Grid.end(), L) != Grid.end();
    });
  }
  std::map<const Expr *, bool> Decided;
  std::unique_ptr<Solver> GridZ3;
};

std::string Prover::paramName(const Expr *Leaf) const {
  for (size_t I = 0; I < P.ParamSymbols.size() && I < P.ParamNames.size(); ++I)
    if (P.ParamSymbols[I] == Leaf->name())
      return P.ParamNames[I];
  return Leaf->name().str();
}

std::optional<uint64_t> Prover::eval(const Expr *E, uint64_t KValue) const {
  return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L == K)
      return KValue;
    if (L->is(ExprKind::Param)) {
      auto It = O.Params.find(paramName(L));
      if (It != O.Params.end())
        return It->second;
    }
    return std::nullopt;
  });
}

bool Prover::findParameter() {
  std::set<const Expr *> Leaves;
  for (const RoleProgram &Prog : RP.Programs)
    for (const RoleLoop &L : Prog.Loops) {
      if (!L.Trip)
        return unknown("the trip count of the loop at ptx line " +
                       std::to_string(P.Loops[L.ProtocolLoop].Where.PtxLine) +
                       " has no closed form" + (L.Unknown.empty() ? "" : ": " + L.Unknown));
      bool Grid = L.Trip->mentions([](const Expr *E) {
        return E->is(ExprKind::SpecialReg) &&
               (E->specialRegister() == SpecialRegister::CtaidX ||
                E->specialRegister() == SpecialRegister::NctaidX);
      });
      if (Grid) {
        Tiles = true;
        continue; // findTileLoops
      }
      L.Trip->mentions([&](const Expr *E) {
        if (E->is(ExprKind::Param))
          Leaves.insert(E);
        return false;
      });
    }
  if (Leaves.size() > 1) {
    std::string Names;
    for (const Expr *L : Leaves)
      Names += (Names.empty() ? "" : ", ") + paramName(L);
    return unknown("trip counts depend on several parameters (" + Names + ")");
  }
  if (Leaves.empty() && !Tiles)
    return true; // every trip count is a constant: one instance is every launch
  if (Leaves.empty())
    return unknown("the tile loop's trip count varies but no k-loop's does");
  K = *Leaves.begin();
  KWidth = K->width();
  KPrime = Ctx.param(Ctx.save(K->name().str() + "'"), K->payload(), KWidth);
  R.Parameter = paramName(K);
  return !Tiles || findTileLoops();
}

bool Prover::classifyLoops() {
  Varying.assign(RP.Programs.size(), NoIndex);
  Offset.assign(RP.Programs.size(), 0);
  Rates.assign(RP.Programs.size(), 1);
  if (!K)
    return true;
  // The reference trip: the top-level loop that runs longest for a large K; loops that keep
  // a constant distance from it vary with it, the others (a prefill of min(K / 64, S)) are
  // fixed for large K, which the lemmas check.
  uint64_t Big1 = O.TileK * 1000, Big2 = O.TileK * 1016;
  // T counts k-tiles: the domain makes K a multiple of the tile, so T determines K.
  T = Ctx.udiv(K, c(O.TileK, KWidth));
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    const RoleProgram &Prog = RP.Programs[PI];
    // In a persistent kernel the k-loop is in the tile loop's body.
    const std::vector<RoleItem> &Items =
        Tiles && TileLoop[PI] != NoIndex ? Prog.Loops[TileLoop[PI]].Body : Prog.Body;
    for (const RoleItem &It : Items) {
      if (!It.IsLoop || (Tiles && It.Index == TileLoop[PI]))
        continue;
      const Expr *Trip = Prog.Loops[It.Index].Trip;
      std::optional<uint64_t> A1 = eval(Trip, Big1), A2 = eval(Trip, Big2);
      std::optional<uint64_t> T1 = eval(T, Big1), T2 = eval(T, Big2);
      if (!A1 || !A2 || !T1 || !T2)
        continue;
      if (*A2 <= *A1 || (*T2 - *T1) % (*A2 - *A1))
        continue;
      // A loop unrolled by the compiler runs Rate k-tiles per iteration: (T + c) / Rate
      // iterations, c found on one sample per residue and proved with the other lemmas.
      uint64_t Rate = (*T2 - *T1) / (*A2 - *A1);
      if (Rate > 16)
        continue;
      std::optional<int64_t> Found;
      for (int64_t C = -2 * int64_t(Rate); C <= 2 * int64_t(Rate) && !Found; ++C) {
        bool All = true;
        for (uint64_t S = 0; S <= Rate && All; ++S) {
          std::optional<uint64_t> A = eval(Trip, Big1 + S * O.TileK), TT = eval(T, Big1 + S * O.TileK);
          All = A && TT && int64_t(*A) * int64_t(Rate) <= int64_t(*TT) + C &&
                int64_t(*TT) + C < (int64_t(*A) + 1) * int64_t(Rate);
        }
        if (All)
          Found = C;
      }
      if (!Found)
        continue;
      if (Varying[PI] != NoIndex)
        return unknown(Prog.Name + " has two loops whose trip counts grow with " + R.Parameter);
      Varying[PI] = It.Index;
      Offset[PI] = *Found;
      Rates[PI] = static_cast<unsigned>(Rate);
    }
  }
  return true;
}

void Prover::collectUses() {
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    const RoleProgram &Prog = RP.Programs[PI];
    bool InTile = false;
    auto Add = [&](const Expr *E, unsigned Loop) {
      if (E && !E->isConstant())
        Uses.push_back({E, Loop, PI, InTile});
    };
    Add(Prog.When, NoIndex);
    std::function<void(const std::vector<RoleItem> &, unsigned)> Walk =
        [&](const std::vector<RoleItem> &Items, unsigned In) {
          for (const RoleItem &It : Items) {
            if (It.IsLoop) {
              const RoleLoop &L = Prog.Loops[It.Index];
              Add(L.When, In);
              bool Tile = Tiles && It.Index == TileLoop[PI];
              if (It.Index != Varying[PI] && !Tile)
                Add(L.Trip, In);
              InTile |= Tile;
              Walk(L.Body, It.Index == Varying[PI] ? It.Index : In);
              InTile &= !Tile;
              continue;
            }
            const RoleStep &S = Prog.Steps[It.Index];
            for (const Expr *E : {S.When, S.Count, S.TxBytes, S.Parity, S.Bytes, S.CtaMask,
                                  S.WaitN, S.NamedId, S.NamedThreads, S.Columns,
                                  S.Barrier.Slot, S.Barrier.PeerRank})
              Add(E, In);
            for (const auto &[Cond, N] : S.Threads.Conditional)
              Add(Cond, In);
            for (const std::vector<SlotExpr> *Slots : {&S.Reads, &S.Writes})
              for (const SlotExpr &X : *Slots) {
                Add(X.Slot, In);
                Add(X.Address, In);
              }
          }
        };
    Walk(Prog.Body, NoIndex);
  }
}

const Expr *Prover::domain(const Expr *Leaf) {
  unsigned W = KWidth;
  const Expr *D = Ctx.logicalAnd(Ctx.eq(Ctx.urem(Leaf, c(O.TileK, W)), c(0, W)),
                                 Ctx.uge(Leaf, c(O.TileK * O.MinTiles, W)));
  D = Ctx.logicalAnd(D, Ctx.ult(Leaf, c(uint64_t(1) << 24, W)));
  for (const ProtocolLoop &L : P.Loops)
    for (const auto &[Cond, Established] : L.TripConditions)
      if (!Established)
        D = Ctx.logicalAnd(D, Leaf == K ? Cond : prime(Cond));
  return Tiles ? Ctx.logicalAnd(D, gridDomain(Leaf != K)) : D;
}

const Expr *Prover::prime(const Expr *E) {
  E = Ctx.substitute(E, K, KPrime);
  for (size_t I = 0; I < Grid.size(); ++I)
    E = Ctx.substitute(E, Grid[I], GridPrime[I]);
  return E;
}

const Expr *Prover::gridDomain(bool Primed) {
  // Launches: 1 <= %nctaid.x < 2^16 whole clusters, %ctaid.x < %nctaid.x, other parameters
  // below 2^20.
  const Expr *D = Ctx.constant(1, 1);
  const Expr *Ctaid = nullptr, *Nctaid = nullptr;
  for (size_t I = 0; I < Grid.size(); ++I) {
    const Expr *L = Primed ? GridPrime[I] : Grid[I];
    unsigned W = L->width();
    if (Grid[I]->is(ExprKind::SpecialReg)) {
      (Grid[I]->specialRegister() == SpecialRegister::CtaidX ? Ctaid : Nctaid) = L;
      continue;
    }
    D = Ctx.logicalAnd(D, Ctx.ult(L, c(uint64_t(1) << 20, W)));
  }
  if (Nctaid) {
    // A grid is whole clusters (CUDA refuses a launch otherwise).
    unsigned W = Nctaid->width();
    D = Ctx.logicalAnd(D, Ctx.logicalAnd(Ctx.uge(Nctaid, c(1, W)), Ctx.ult(Nctaid, c(1 << 16, W))));
    if (RP.ClusterSize > 1)
      D = Ctx.logicalAnd(D, Ctx.eq(Ctx.urem(Nctaid, c(RP.ClusterSize, W)), c(0, W)));
  }
  if (Ctaid && Nctaid)
    D = Ctx.logicalAnd(D, Ctx.ult(Ctaid, Nctaid));
  else if (Ctaid)
    D = Ctx.logicalAnd(D, Ctx.ult(Ctaid, c(1 << 16, Ctaid->width())));
  return D;
}

bool Prover::findTileLoops() {
  TileLoop.assign(RP.Programs.size(), NoIndex);
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    const RoleProgram &Prog = RP.Programs[PI];
    for (unsigned LI = 0; LI < Prog.Loops.size(); ++LI) {
      const RoleLoop &L = Prog.Loops[LI];
      bool Grid = L.Trip->mentions([](const Expr *E) {
        return E->is(ExprKind::SpecialReg) &&
               (E->specialRegister() == SpecialRegister::CtaidX ||
                E->specialRegister() == SpecialRegister::NctaidX);
      });
      if (!Grid)
        continue;
      bool Top = false;
      for (const RoleItem &It : Prog.Body)
        Top |= It.IsLoop && It.Index == LI;
      if (!Top || TileLoop[PI] != NoIndex)
        return unknown(Prog.Name + ": a loop over the grid's tiles that is not the one loop "
                                   "around the role's work (ptx line " +
                       std::to_string(P.Loops[L.ProtocolLoop].Where.PtxLine) + ")");
      TileLoop[PI] = LI;
      if (!NT)
        NT = L.Trip;
    }
  }
  // The launch's values besides K: every parameter and grid register the tile count or a
  // step reads; each gets a primed copy for the launch it is compared with.
  std::set<const Expr *> Leaves;
  auto Collect = [&](const Expr *E) {
    if (E)
      E->mentions([&](const Expr *L) {
        if ((L->is(ExprKind::Param) && L != K) ||
            (L->is(ExprKind::SpecialReg) &&
             (L->specialRegister() == SpecialRegister::CtaidX ||
              L->specialRegister() == SpecialRegister::NctaidX)))
          Leaves.insert(L);
        return false;
      });
  };
  for (const RoleProgram &Prog : RP.Programs) {
    Collect(Prog.When);
    for (const RoleLoop &L : Prog.Loops) {
      Collect(L.Trip);
      Collect(L.When);
    }
    for (const RoleStep &St : Prog.Steps)
      for (const Expr *E : {St.When, St.Count, St.TxBytes, St.Parity, St.Bytes, St.CtaMask,
                            St.WaitN, St.NamedId, St.NamedThreads, St.Columns, St.Barrier.Slot,
                            St.Barrier.PeerRank})
        Collect(E);
    for (const RoleStep &St : Prog.Steps) {
      for (const auto &[Cond, N] : St.Threads.Conditional)
        Collect(Cond);
      for (const std::vector<SlotExpr> *Slots : {&St.Reads, &St.Writes})
        for (const SlotExpr &X : *Slots) {
          Collect(X.Slot);
          Collect(X.Address);
        }
    }
  }
  for (const ProtocolLoop &L : P.Loops)
    for (const auto &[Cond, Established] : L.TripConditions)
      Collect(Cond);
  for (const Expr *L : Leaves) {
    Grid.push_back(L);
    std::string Name = (L->is(ExprKind::Param) ? L->name().str()
                                               : std::string(L->specialRegister() ==
                                                                     SpecialRegister::CtaidX
                                                                 ? "%ctaid.x"
                                                                 : "%nctaid.x")) +
                       "'";
    GridPrime.push_back(Ctx.param(Ctx.save(Name), 0, L->width()));
  }
  return true;
}

bool Prover::valid(const Expr *Hyp, const Expr *Goal, const std::string &What, bool Grid) {
  SolverResult V = (Grid ? gridZ3() : *Z3).isValid(Ctx.implies(Hyp, Goal));
  ++R.SolverQueries;
  if (V.Answer == SolverAnswer::Yes)
    return true;
  if (V.Answer == SolverAnswer::Unknown)
    return unknown("Z3 could not decide whether " + What + ": " + V.Reason);
  return unknown(What + " does not hold");
}

bool Prover::decidedByTiles(const Expr *E) {
  if (!Tiles || E->width() != 1)
    return false;
  auto [It, New] = Decided.emplace(E, false);
  if (!New)
    return It->second;
  bool Iter = E->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); });
  if (Iter)
    return false;
  const Expr *D = domain(K);
  // NT = X / Y is nonzero exactly when X >= Y or Y = 0 (a bit-vector division by zero gives
  // all ones), which Z3 finds far easier than the division.
  const Expr *Some = Ctx.ne(NT, c(0, NT->width()));
  if (NT->is(ExprKind::UDiv))
    Some = Ctx.logicalOr(Ctx.uge(NT->ops()[0], NT->ops()[1]),
                         Ctx.eq(NT->ops()[1], c(0, NT->width())));
  const Expr *None = Ctx.logicalNot(Some);
  auto Fixed = [&](const Expr *Case) {
    for (const Expr *Goal : {E, Ctx.logicalNot(E)}) {
      SolverResult V = gridZ3().isValid(Ctx.implies(Ctx.logicalAnd(D, Case), Goal));
      ++R.SolverQueries;
      if (V.Answer == SolverAnswer::Yes)
        return true;
    }
    return false;
  };
  return It->second = Fixed(Some) && Fixed(None);
}

bool Prover::proveTripForms() {
  unsigned TW = T->width();
  const Expr *D = domain(K);
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    if (Varying[PI] != NoIndex) {
      const RoleLoop &L = RP.Programs[PI].Loops[Varying[PI]];
      const Expr *Want = Ctx.udiv(Ctx.add(T, c(static_cast<uint64_t>(Offset[PI]), TW)),
                                  c(Rates[PI], TW));
      // Where the loop's condition fails it does not run, and its trip count means nothing.
      const Expr *Runs = L.When ? Ctx.logicalAnd(D, Ctx.ne(L.When, c(0, L.When->width()))) : D;
      if (!valid(Runs, Ctx.eq(Ctx.resize(L.Trip, TW), Want),
                 "the loop at ptx line " +
                     std::to_string(P.Loops[L.ProtocolLoop].Where.PtxLine) + " runs (T + " +
                     std::to_string(Offset[PI]) + ") / " + std::to_string(Rates[PI]) +
                     " times (" + P.exprString(L.Trip) + ", T = " + P.exprString(T) + ")"))
        return false;
    }
  if (Tiles) {
    // One tile count for every role, and for every CTA of a cluster (the first CTA's
    // %ctaid.x a multiple of the cluster size).
    for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
      if (TileLoop[PI] != NoIndex) {
        const RoleLoop &L = RP.Programs[PI].Loops[TileLoop[PI]];
        if (L.Trip != NT && !valid(D, Ctx.eq(L.Trip, NT),
                                   RP.Programs[PI].Name + " runs as many tiles as the others"))
          return false;
      }
    const Expr *Ctaid = Ctx.specialRegister(SpecialRegister::CtaidX);
    // Usually %ctaid.x appears only as the cluster's index, %ctaid.x / C: then it is so by
    // construction (Z3 finds division by %nctaid.x hard).
    std::function<bool(const Expr *)> ByCluster = [&](const Expr *E) {
      if (E == Ctaid)
        return false;
      if (E->is(ExprKind::UDiv) && E->ops()[0] == Ctaid && E->ops()[1]->isConstant() &&
          E->ops()[1]->payload() == RP.ClusterSize)
        return true;
      for (const Expr *Op : E->ops())
        if (!ByCluster(Op))
          return false;
      return true;
    };
    for (unsigned Rank = 1; Rank < RP.ClusterSize && !ByCluster(NT); ++Rank) {
      unsigned W = Ctaid->width();
      const Expr *C = c(RP.ClusterSize, W);
      const Expr *Nctaid = Ctx.specialRegister(SpecialRegister::NctaidX);
      const Expr *First = Ctx.logicalAnd(
          Ctx.logicalAnd(D, Ctx.eq(Ctx.urem(Ctaid, C), c(0, W))),
          Ctx.eq(Ctx.urem(Nctaid, C), c(0, W)));
      if (!valid(First, Ctx.eq(NT, Ctx.substitute(NT, Ctaid, Ctx.add(Ctaid, c(Rank, W)))),
                 "every CTA of a cluster runs as many tiles (rank " + std::to_string(Rank) +
                     ")",
                 /*Grid=*/true))
        return false;
    }
  }
  // The same T (and tile count): the same value, for every expression.
  const Expr *Same = Ctx.logicalAnd(Ctx.logicalAnd(D, domain(KPrime)),
                                    Ctx.eq(Ctx.substitute(T, K, KPrime), T));
  // What reads no grid value needs no tile count in its hypothesis (the count's divisions
  // are what Z3 finds hard).
  const Expr *SameTiles = Tiles ? Ctx.logicalAnd(Same, Ctx.eq(prime(NT), NT)) : Same;
  std::set<const Expr *> Done;
  for (const Use &U : Uses)
    if (Done.insert(U.E).second && !(!U.InTile && decidedByTiles(U.E)) &&
        !valid(readsGrid(U.E) ? SameTiles : Same,
               Ctx.eq(U.E, Tiles ? prime(U.E) : Ctx.substitute(U.E, K, KPrime)),
               "an expression of " + RP.Programs[U.Program].Name + " (" + P.exprString(U.E) +
                   ") depends on " + R.Parameter + " only through the trip count",
               Tiles && readsGrid(U.E)))
      return false;
  return true;
}

bool Prover::proveLemmas(unsigned M, unsigned C0, unsigned E) {
  unsigned TW = T->width();
  auto Resize = [&](const Expr *E) { return Ctx.resize(E, TW); };
  const Expr *D = domain(K), *DP = domain(KPrime);
  const Expr *TP = Ctx.substitute(T, K, KPrime);
  // j and p: how many periods K' is ahead, and which pass of the cycle.
  const Expr *J = Ctx.param(Ctx.save("wsv.periods"), 0, TW);
  const Expr *Pass = Ctx.param(Ctx.save("wsv.pass"), 0, TW);
  const Expr *Small = c(uint64_t(1) << 20, TW);
  const Expr *Ahead = Ctx.logicalAnd(
      Ctx.logicalAnd(Ctx.ult(J, Small), Ctx.ult(T, c(uint64_t(1) << 24, TW))),
      Ctx.eq(TP, Ctx.add(T, Ctx.mul(J, c(M, TW)))));
  // (j = 0 needs no threshold: it is the same-T lemma, for the tile-count periods alone.)
  const Expr *Large = Ctx.logicalAnd(
      Ahead, Ctx.logicalOr(Ctx.eq(J, c(0, TW)), Ctx.uge(T, c(Tmin, TW))));
  const Expr *Both = Ctx.logicalAnd(D, DP);
  // Persistent kernels: NT' = NT + i*M tiles, tile t of the launch with NT standing for
  // tile t + q*M of the other (q <= i; q = 0 below the tile threshold).
  const Expr *I = nullptr, *Q = nullptr;
  const Expr *GridLarge = Large, *FreeLarge = Large; ///< with the tile count, or a free one
  const Expr *NTw = nullptr, *NTFree = nullptr;
  if (Tiles) {
    NTw = Resize(NT);
    NTFree = Ctx.param(Ctx.save("wsv.tiles"), 0, TW);
    I = Ctx.param(Ctx.save("wsv.tile_periods"), 0, TW);
    Q = Ctx.param(Ctx.save("wsv.tile_pass"), 0, TW);
    auto Periods = [&](const Expr *N, const Expr *NPrime) {
      return Ctx.logicalAnd(
          Ctx.logicalAnd(Ctx.ult(I, Small), Ctx.eq(NPrime, Ctx.add(N, Ctx.mul(I, c(M, TW))))),
          Ctx.logicalOr(Ctx.eq(I, c(0, TW)), Ctx.uge(N, c(NTmin, TW))));
    };
    GridLarge = Ctx.logicalAnd(Large, Periods(NTw, Resize(prime(NT))));
    // An expression that reads no grid value holds for every tile count if it holds for a
    // free one: NT' = NT + i*M is all it needs.
    FreeLarge = Ctx.logicalAnd(
        Ctx.logicalAnd(Large, Ctx.ult(NTFree, c(uint64_t(1) << 28, TW))),
        Periods(NTFree, Ctx.add(NTFree, Ctx.mul(I, c(M, TW)))));
  }

  // Q0: the domain's K with a small (or wrapped) T are the scanned ones.
  uint64_t Scan = O.TileK * O.ScanTiles;
  if (!valid(Ctx.logicalAnd(D, Ctx.logicalNot(Ctx.logicalAnd(
                                   Ctx.uge(T, c(Tmin, TW)),
                                   Ctx.ult(T, c(uint64_t(1) << 24, TW))))),
             Ctx.ule(K, c(Scan, KWidth)),
             "every " + R.Parameter + " with fewer than " + std::to_string(Tmin) +
                 " iterations is at most " + std::to_string(Scan)))
    return false;

  std::set<std::pair<const Expr *, unsigned>> Done;
  for (const Use &U : Uses) {
    if (!Done.insert({U.E, U.VaryingLoop == NoIndex && !U.InTile ? NoIndex : U.Program})
             .second)
      continue;
    const Expr *EP = Tiles ? prime(U.E) : Ctx.substitute(U.E, K, KPrime);
    std::string Where = "an expression of " + RP.Programs[U.Program].Name + " (" +
                        P.exprString(U.E) + ")";
    bool Grid = Tiles && readsGrid(U.E);
    const Expr *Hyp = Ctx.logicalAnd(Both, Grid ? GridLarge : FreeLarge);
    if (U.InTile) {
      const RoleLoop &TL = RP.Programs[U.Program].Loops[TileLoop[U.Program]];
      const Expr *Tv = Ctx.iterationVar(TL.Loop);
      unsigned VW = Tv->width();
      EP = Ctx.substitute(EP, Tv, Ctx.add(Tv, Ctx.mul(Ctx.resize(Q, VW), c(M, VW))));
      Hyp = Ctx.logicalAnd(
          Hyp, Ctx.logicalAnd(
                   Ctx.logicalAnd(Ctx.ult(Ctx.resize(Tv, TW), Grid ? NTw : NTFree),
                                  Ctx.ule(Q, I)),
                   Ctx.logicalOr(Ctx.eq(Q, c(0, TW)), Ctx.uge(Tv, c(TileThreshold, VW)))));
    }
    if (U.VaryingLoop == NoIndex) {
      if (!U.InTile && decidedByTiles(U.E))
        continue; // both launches have a tile (NT >= NTmin, NT' >= NT)
      if (!valid(Hyp, Ctx.eq(U.E, EP),
                 Where + " is the same for every trip count >= " + std::to_string(Tmin) +
                     " in steps of " + std::to_string(M)))
        return false;
      continue;
    }
    // Iteration k of the loop under K: before the tail it stands for iteration k + p*M under
    // K' for every pass p <= j (only p = 0 before the threshold); in the tail, for k + j*M.
    const RoleLoop &L = RP.Programs[U.Program].Loops[U.VaryingLoop];
    unsigned LoopPeriod = M / Rates[U.Program];
    const Expr *Iter = Ctx.iterationVar(L.Loop);
    unsigned IW = Iter->width();
    const Expr *Trip = Resize(L.Trip), *Kth = Ctx.resize(Iter, TW);
    // (k < Trip first: k + E must not wrap around.)
    const Expr *Body = Ctx.logicalAnd(Ctx.ult(Kth, Trip), Ctx.ult(Ctx.add(Kth, c(E, TW)), Trip));
    const Expr *Tail = Ctx.logicalAnd(Ctx.ult(Kth, Trip), Ctx.logicalNot(Body));
    auto Shift = [&](const Expr *By) {
      return Ctx.substitute(EP, Iter,
                            Ctx.add(Iter, Ctx.mul(Ctx.resize(By, IW), c(LoopPeriod, IW))));
    };
    const Expr *PassOk = Ctx.logicalAnd(
        Ctx.ule(Pass, J), Ctx.logicalOr(Ctx.eq(Pass, c(0, TW)), Ctx.uge(Iter, c(C0, IW))));
    if (!valid(Ctx.logicalAnd(Hyp, Ctx.logicalAnd(Body, PassOk)), Ctx.eq(U.E, Shift(Pass)),
               Where + " repeats every " + std::to_string(LoopPeriod) +
                   " iterations from iteration " +
                   std::to_string(C0) + " up to the last " + std::to_string(E)))
      return false;
    if (E && !valid(Ctx.logicalAnd(Hyp, Tail), Ctx.eq(U.E, Shift(J)),
                    Where + " in the last " + std::to_string(E) +
                        " iterations depends only on the distance to the end"))
      return false;
  }
  return true;
}

Instance Prover::launch(uint64_t KValue) const {
  Instance I;
  I.Params = O.Params;
  if (K)
    I.Params[R.Parameter] = KValue;
  I.GridCtas = RP.ClusterSize;
  return I;
}

bool Prover::makePeriodic(ConcreteSystem &S, uint64_t TValue) const {
  for (ConcreteAgent &A : S.Agents) {
    unsigned PI = A.Program;
    if (Varying[PI] == NoIndex)
      continue;
    LoopId L = RP.Programs[PI].Loops[Varying[PI]].Loop;
    int64_t Trip = (int64_t(TValue) + Offset[PI]) / Rates[PI];
    int64_t End = Trip - TailLength, First = End - Period / Rates[PI];
    int64_t Begin = -1, Last = -1;
    for (size_t I = 0; I < A.Steps.size(); ++I)
      for (const auto &[Loop, V] : A.Steps[I].Iterations)
        if (Loop == L && int64_t(V) >= First && int64_t(V) < End) {
          if (Begin < 0)
            Begin = static_cast<int64_t>(I);
          Last = static_cast<int64_t>(I);
        }
    if (Begin < 0)
      continue; // no step in the loop: nothing to repeat
    // The cycle must be exactly those iterations' steps.
    for (int64_t I = Begin; I <= Last; ++I) {
      bool In = false;
      for (const auto &[Loop, V] : A.Steps[I].Iterations)
        In |= Loop == L && int64_t(V) >= First && int64_t(V) < End;
      if (!In)
        return false;
    }
    A.CycleBegin = static_cast<uint32_t>(Begin);
    A.CycleEnd = static_cast<uint32_t>(Last + 1);
  }
  return true;
}

bool Prover::explore(const ConcreteSystem &S, const std::string &What, const Instance &At) {
  ExploreOptions EO;
  EO.MaxStates = O.MaxStates;
  EO.MaxLag = O.MaxLag;
  bool Budget = false;
  if (O.MaxTotalStates) {
    if (R.States >= O.MaxTotalStates)
      return unknown("the budget of " + std::to_string(O.MaxTotalStates) +
                     " states for all explorations was spent after " +
                     std::to_string(R.Runs.size()) + " of them, before " + What);
    Budget = O.MaxTotalStates - R.States < EO.MaxStates;
    EO.MaxStates = std::min(EO.MaxStates, O.MaxTotalStates - R.States);
  }
  auto Start = std::chrono::steady_clock::now();
  ExploreResult E = wsv::analyzer::explore(S, EO);
  if (Budget && E.Verdict == ExploreVerdict::Unknown && E.States > EO.MaxStates)
    E.Message = "the budget of " + std::to_string(O.MaxTotalStates) +
                " states for all explorations was spent in this one";
  R.States += E.States;
  R.Runs.push_back(What + ": " + toString(E.Verdict) + " (" + std::to_string(E.States) +
                   " states)");
  if (O.OnRun)
    O.OnRun(R.Runs.back(), std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - Start)
                               .count());
  if (E.Verdict == ExploreVerdict::Clean)
    return true;
  if (E.Verdict == ExploreVerdict::Unknown)
    return unknown(What + ": " + E.Message);
  R.Verdict = E.Verdict;
  R.Found = std::move(E);
  R.Launch = At;
  R.Reason = What + ": " + R.Found.Message;
  return false;
}

void Prover::smallLaunches(std::string Why) {
  // No statement for every parameter; small launches may still show a bug: 1 and 2 k-tiles
  // and one more than the deepest ring, 1 and 2 tiles per CTA for a persistent loop.
  unknown(Why);
  unsigned Ring = deepestRing();
  std::set<std::pair<unsigned, unsigned>> Tried;
  unsigned First = static_cast<unsigned>(O.MinTiles);
  bool Bounded = false;
  if (K) {
    // The k-loop's parameter alone: 1 to 2 * Ring + 1 k-tiles.
    for (unsigned J = First; J <= First + 2 * Ring && !Bounded; ++J) {
      if (CleanK.count(J * O.TileK))
        continue; // explored before the lemmas
      ConcreteSystem S = instance(J * O.TileK);
      if (!S.Unknown.empty())
        break;
      if (!explore(S, R.Parameter + " = " + std::to_string(J * O.TileK), launch(J * O.TileK))) {
        if (R.Verdict != ExploreVerdict::Unknown)
          return;
        Bounded = true;
      }
    }
    std::string Last = R.Reason;
    R.Verdict = ExploreVerdict::Unknown;
    R.Reason = Why + (Bounded ? "; the small launches ran out of states (" + Last + ")"
                              : "; launches up to " + R.Parameter + " = " +
                                    std::to_string((First + 2 * Ring) * O.TileK) +
                                    " explored without finding a bug");
    return;
  }
  for (unsigned KTiles : {First, First + 1, std::max(First, Ring + 1)})
    for (unsigned Tiles : {1u, 2u}) {
      if (Bounded || !Tried.insert({KTiles, Tiles}).second)
        continue;
      std::optional<Instance> I = chooseInstance(RP, O.TileK, KTiles, Tiles);
      if (!I)
        continue;
      for (const auto &[Name, Value] : O.Params)
        if (!I->Params.count(Name))
          I->Params[Name] = Value;
      ConcreteSystem S = instantiate(RP, *I);
      if (!S.Unknown.empty())
        continue;
      std::string What = std::to_string(KTiles) + " k-tile(s), " + std::to_string(Tiles) +
                         " tile(s) per CTA";
      if (!explore(S, What, *I)) {
        if (R.Verdict != ExploreVerdict::Unknown)
          return;
        Bounded = true; // larger launches would run out of states too
        continue;
      }
    }
  std::string Last = R.Reason;
  R.Verdict = ExploreVerdict::Unknown;
  R.Reason = Why + (Bounded ? "; the small launches ran out of states (" + Last + ")"
                            : "; small launches explored without finding a bug");
}

std::optional<Instance> Prover::tileLaunch(uint64_t KValue, uint64_t Count) const {
  // The smallest M x N (multiples of 128) and grid (1, 2 or 4 clusters) where CTA 0 runs
  // Count tiles; none tiles: the last cluster of a grid with one tile per cluster less.
  std::optional<Instance> Best;
  uint64_t BestArea = UINT64_MAX;
  for (uint64_t A = 1; A <= 32; ++A)
    for (uint64_t B = 1; B <= 32 && A * B * 16384 < BestArea; ++B)
      for (uint64_t Clusters : {1u, 2u, 4u})
        for (bool Last : {false, true}) {
          Instance I = launch(KValue);
          I.Params["M"] = 128 * A;
          I.Params["N"] = 128 * B;
          I.GridCtas = Clusters * RP.ClusterSize;
          I.FirstCta = Last ? I.GridCtas - RP.ClusterSize : 0;
          auto Value = [&](const Expr *L) -> std::optional<uint64_t> {
            if (L == K)
              return KValue;
            if (L->is(ExprKind::SpecialReg))
              return L->specialRegister() == SpecialRegister::CtaidX   ? I.FirstCta
                     : L->specialRegister() == SpecialRegister::NctaidX ? I.GridCtas
                                                                        : std::optional<uint64_t>();
            if (L->is(ExprKind::Param)) {
              auto It = I.Params.find(paramName(L));
              if (It != I.Params.end())
                return It->second;
            }
            return std::nullopt;
          };
          std::optional<uint64_t> V = ExprContext::evaluate(NT, Value);
          if (!V || *V != Count)
            continue;
          bool Ok = true;
          for (const ProtocolLoop &L : P.Loops)
            for (const auto &[Cond, Established] : L.TripConditions)
              if (!Established) {
                std::optional<uint64_t> C = ExprContext::evaluate(Cond, Value);
                Ok &= C && *C;
              }
          if (Ok && A * B * 16384 < BestArea) {
            BestArea = A * B * 16384;
            Best = I;
          }
        }
  return Best;
}

bool Prover::makeTilePeriodic(ConcreteSystem &S, std::optional<uint64_t> TValue,
                              std::optional<uint64_t> NTValue) const {
  for (ConcreteAgent &A : S.Agents) {
    unsigned PI = A.Program;
    if (A.Place != Placement::Role || TileLoop[PI] == NoIndex)
      continue;
    LoopId TL = RP.Programs[PI].Loops[TileLoop[PI]].Loop;
    auto TileOf = [&](const ConcreteStep &C) -> int64_t {
      for (const auto &[Loop, V] : C.Iterations)
        if (Loop == TL)
          return static_cast<int64_t>(V);
      return -1;
    };
    // Steps [Begin, End) where Pick holds, and nothing else in between; false if split.
    auto Range = [&](auto Pick, uint32_t &Begin, uint32_t &End) {
      int64_t B = -1, L = -1;
      for (size_t I = 0; I < A.Steps.size(); ++I)
        if (Pick(A.Steps[I])) {
          if (B < 0)
            B = static_cast<int64_t>(I);
          L = static_cast<int64_t>(I);
        }
      if (B < 0)
        return true; // nothing to repeat
      for (int64_t I = B; I <= L; ++I)
        if (!Pick(A.Steps[I]))
          return false;
      Begin = static_cast<uint32_t>(B);
      End = static_cast<uint32_t>(L + 1);
      return true;
    };
    if (NTValue) {
      int64_t First = int64_t(*NTValue) - Period;
      if (!Range([&](const ConcreteStep &C) { return TileOf(C) >= First; }, A.CycleBegin,
                 A.CycleEnd))
        return false;
    }
    if (!TValue || Varying[PI] == NoIndex)
      continue;
    LoopId KL = RP.Programs[PI].Loops[Varying[PI]].Loop;
    int64_t Trip = (int64_t(*TValue) + Offset[PI]) / Rates[PI];
    int64_t End = Trip - TailLength, First = End - Period / Rates[PI];
    uint64_t Count = NTValue ? *NTValue : 0;
    for (const ConcreteStep &C : A.Steps)
      Count = std::max<uint64_t>(Count, static_cast<uint64_t>(TileOf(C) + 1));
    for (int64_t Tile = 0; Tile < int64_t(Count); ++Tile) {
      uint32_t Begin = 0, Stop = 0;
      auto In = [&](const ConcreteStep &C) {
        if (TileOf(C) != Tile)
          return false;
        for (const auto &[Loop, V] : C.Iterations)
          if (Loop == KL)
            return int64_t(V) >= First && int64_t(V) < End;
        return false;
      };
      if (!Range(In, Begin, Stop))
        return false;
      if (Stop > Begin)
        A.InnerCycles.push_back({Begin, Stop});
    }
    // One inner cycle per tile, or the tiles would not line up between agents.
    if (!A.InnerCycles.empty() && A.InnerCycles.size() != Count)
      return false;
  }
  return true;
}

unsigned Prover::slotPeriod() const {
  // What slots and parities of every ring repeat with: 2 * slots for a barrier ring (its
  // parity flips every pass), slots for a buffer ring.
  unsigned M = 1;
  for (const BarrierArray &B : P.Barriers)
    M = std::lcm(M, 2 * std::max(1u, B.Slots));
  for (const Buffer &B : P.Buffers)
    M = std::lcm(M, std::max(1u, B.Slots));
  return M;
}

unsigned Prover::deepestRing() const {
  unsigned Ring = 1;
  for (const BarrierArray &B : P.Barriers)
    Ring = std::max(Ring, B.Slots);
  return Ring;
}

bool Prover::findThresholds(unsigned M, std::initializer_list<unsigned> TileThresholds) {
  // The smallest thresholds and tail the lemmas accept; R.Reason says why the first failed.
  std::string FirstFailure;
  for (unsigned Ct : TileThresholds)
    for (unsigned E : {0u, 1u, 2u, 4u, M})
      for (unsigned C0 : {0u, 1u, 2u, 4u, M}) {
        if (E > M || C0 > M)
          continue;
        Period = M;
        Threshold = C0;
        TailLength = E;
        TileThreshold = Ct;
        // Every varying loop's cycle must start at or after the threshold.
        int64_t Need = C0 + M + E;
        for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
          if (Varying[PI] != NoIndex)
            Need = std::max(Need, int64_t(Rates[PI]) * (C0 + E + M / Rates[PI]) - Offset[PI]);
        Tmin = static_cast<uint64_t>(std::max<int64_t>(Need, 1));
        NTmin = Ct + M;
        R.Verdict = ExploreVerdict::Unknown;
        R.Reason.clear();
        if (proveLemmas(M, C0, E))
          return true;
        if (FirstFailure.empty())
          FirstFailure = R.Reason;
      }
  return unknown(FirstFailure);
}

void Prover::runTiles() {
  auto Launch = [&](uint64_t TV, uint64_t NTV) { return tileLaunch(TV * O.TileK, NTV); };
  auto Explore = [&](uint64_t TV, uint64_t NTV, bool TP, bool NP) {
    std::optional<Instance> I = Launch(TV, NTV);
    std::string What = R.Parameter + " = " + std::to_string(TV * O.TileK) +
                       (TP ? " + " + std::to_string(Period) + "j tiles" : "") + ", " +
                       std::to_string(NTV) + (NP ? " + " + std::to_string(Period) + "i" : "") +
                       " tile(s) per CTA";
    if (!I)
      return unknown("no launch found where a CTA runs " + std::to_string(NTV) + " tiles");
    ConcreteSystem S = instantiate(RP, *I);
    if (!S.Unknown.empty())
      return unknown(What + ": " + S.Unknown);
    if ((TP || NP) && !makeTilePeriodic(S, TP ? std::optional<uint64_t>(TV) : std::nullopt,
                                        NP ? std::optional<uint64_t>(NTV) : std::nullopt))
      return unknown(What + ": the steps of the last " + std::to_string(Period) +
                     " iterations are not contiguous");
    if (explore(S, What, *I))
      return true;
    if (R.Verdict == ExploreVerdict::Unknown || (!TP && !NP))
      return false;
    // Reproduce it on a real launch of that class.
    ExploreResult Periodic = std::move(R.Found);
    for (uint64_t Jn = 0; Jn < 3; ++Jn)
      for (uint64_t In = 0; In < 3; ++In) {
        uint64_t TJ = TV + (TP ? Jn * Period : 0), NJ = NTV + (NP ? In * Period : 0);
        std::optional<Instance> L = Launch(TJ, NJ);
        if (!L)
          continue;
        ExploreResult E = wsv::analyzer::explore(instantiate(RP, *L));
        if (E.Verdict != ExploreVerdict::Clean && E.Verdict != ExploreVerdict::Unknown) {
          R.Verdict = E.Verdict;
          R.Found = std::move(E);
          R.Launch = *L;
          R.Reason = R.Parameter + " = " + std::to_string(TJ * O.TileK) + ", " +
                     std::to_string(NJ) + " tile(s) per CTA: " + R.Found.Message;
          return false;
        }
      }
    return unknown("the periodic search found '" + Periodic.Message +
                   "' but no launch with up to 2 more periods reproduces it");
  };
  // Bugs first: small launches.
  unsigned Ring = deepestRing();
  for (uint64_t NTV : {1u, 2u})
    for (uint64_t TV = O.MinTiles; TV <= O.MinTiles + Ring; ++TV)
      if (!Explore(TV, NTV, false, false))
        return;
  collectUses();
  unsigned M = slotPeriod();
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    M = std::lcm(M, Rates[PI]);
  if (M > 16)
    return void(unknown("the slots' period " + std::to_string(M) +
                        " is too long for tiles and k-tiles together"));
  if (!proveTripForms())
    return;
  if (!findThresholds(M, {0u, 1u}))
    return;
  R.Period = Period;
  R.Threshold = Threshold;
  R.Tail = TailLength;
  R.Tiles = true;
  R.TileThreshold = TileThreshold;
  // The classes: each small count as it is, each residue above the threshold periodic.
  std::vector<std::pair<uint64_t, bool>> TClasses, NTClasses;
  for (uint64_t TV = O.MinTiles; TV < Tmin + Period; ++TV)
    TClasses.push_back({TV, TV >= Tmin});
  for (uint64_t NTV = 0; NTV < NTmin + Period; ++NTV)
    NTClasses.push_back({NTV, NTV >= NTmin});
  for (auto [NTV, NP] : NTClasses)
    for (auto [TV, TP] : TClasses) {
      if (!NP && !TP && NTV >= 1 && NTV <= 2 && TV <= O.MinTiles + Ring)
        continue; // explored above
      if (!Explore(TV, NTV, TP, NP))
        return;
    }
  R.Verdict = ExploreVerdict::Clean;
  R.ForParameters = "every " + R.Parameter + " = " + std::to_string(O.TileK) + "*j with j >= " +
                    std::to_string(O.MinTiles) + " and " + R.Parameter +
                    " < 2^24, and every grid and tile count (M, N < 2^20, %nctaid.x < 2^16)";
}

void Prover::run() {
  if (!findParameter() || !classifyLoops())
    return smallLaunches(R.Reason);
  if (Tiles)
    return runTiles();
  if (!K) {
    ConcreteSystem S = instance(0);
    if (explore(S, "the only instance (no trip count depends on a parameter)", launch(0))) {
      R.Verdict = ExploreVerdict::Clean;
      R.ForParameters = "every launch (no trip count depends on a parameter)";
    }
    return;
  }
  // Most bugs show on a launch of a few k-tiles: explore those first, so that a
  // counterexample does not wait for the lemmas (one more than the deepest ring, so that
  // every stage is reused once).
  unsigned Ring = deepestRing();
  for (uint64_t J = O.MinTiles; J <= O.MinTiles + Ring; ++J) {
    uint64_t KV = J * O.TileK;
    ConcreteSystem S = instance(KV);
    if (!S.Unknown.empty())
      break;
    if (!explore(S, R.Parameter + " = " + std::to_string(KV), launch(KV))) {
      if (R.Verdict != ExploreVerdict::Unknown)
        return;
      R.Verdict = ExploreVerdict::Unknown; // the state bound: the argument below may still do
      R.Reason.clear();
      break;
    }
    CleanK.insert(KV);
  }
  collectUses();
  // The period: what slots and parities of every ring repeat with.
  unsigned M = slotPeriod();
  if (M > 64)
    return void(unknown("the slots' period " + std::to_string(M) + " is too long"));
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    M = std::lcm(M, Rates[PI]);
  if (!proveTripForms())
    return smallLaunches(R.Reason);
  if (!findThresholds(M, {0u}))
    return smallLaunches(R.Reason);
  R.Period = Period;
  R.Threshold = Threshold;
  R.Tail = TailLength;

  // The scan: one K per small trip count, and the base of each residue class.
  std::map<uint64_t, uint64_t> SmallTrips, Bases; // T -> K
  for (uint64_t J = O.MinTiles; J <= O.ScanTiles; ++J) {
    uint64_t KV = J * O.TileK;
    std::optional<uint64_t> TV = eval(T, KV);
    if (!TV)
      return void(unknown("the trip count cannot be evaluated for " + R.Parameter + " = " +
                          std::to_string(KV)));
    bool Wrapped = *TV >= (uint64_t(1) << 24);
    if (*TV < Tmin || Wrapped)
      SmallTrips.emplace(*TV, KV);
    else if (*TV < Tmin + Period)
      Bases.emplace(*TV, KV);
  }
  if (Bases.size() != Period)
    return void(unknown("the scan up to " + R.Parameter + " = " +
                        std::to_string(O.TileK * O.ScanTiles) + " reaches " +
                        std::to_string(Bases.size()) + " of the " + std::to_string(Period) +
                        " trip counts from " + std::to_string(Tmin)));
  for (const auto &[TV, KV] : SmallTrips) {
    R.SmallTrips.push_back(TV);
    if (CleanK.count(KV))
      continue; // explored above
    if (!explore(instance(KV), R.Parameter + " = " + std::to_string(KV), launch(KV)))
      return;
  }
  for (const auto &[TV, KV] : Bases) {
    ConcreteSystem S = instance(KV);
    if (!S.Unknown.empty())
      return void(unknown(S.Unknown));
    if (!makePeriodic(S, TV))
      return void(unknown("the steps of the last " + std::to_string(Period) +
                          " iterations are not contiguous for " + R.Parameter + " = " +
                          std::to_string(KV)));
    std::string What = R.Parameter + " = " + std::to_string(KV) + " + " +
                       std::to_string(Period) + "j tiles (every j >= 0)";
    if (explore(S, What, launch(KV)))
      continue;
    if (R.Verdict == ExploreVerdict::Unknown)
      return;
    // Reproduce it on a real launch of that residue class.
    ExploreResult Periodic = std::move(R.Found);
    for (uint64_t Jn = 0; Jn < 4; ++Jn) {
      uint64_t KJ = KV + Jn * Period * O.TileK;
      ExploreResult E = wsv::analyzer::explore(instance(KJ));
      if (E.Verdict != ExploreVerdict::Clean && E.Verdict != ExploreVerdict::Unknown) {
        R.Verdict = E.Verdict;
        R.Found = std::move(E);
        R.Launch = launch(KJ);
        R.Reason = R.Parameter + " = " + std::to_string(KJ) + ": " + R.Found.Message;
        return;
      }
    }
    return void(unknown("the periodic search found '" + Periodic.Message +
                        "' but no launch with up to 3 more periods reproduces it"));
  }
  R.Verdict = ExploreVerdict::Clean;
  R.ForParameters = "every " + R.Parameter + " = " + std::to_string(O.TileK) + "*j with j >= " +
                    std::to_string(O.MinTiles) + " and " + R.Parameter + " < 2^24";
}

} // namespace

ParametricResult wsv::analyzer::exploreAllTrips(const RolePrograms &RP,
                                                const ParametricOptions &Options) {
  auto Start = std::chrono::steady_clock::now();
  ParametricResult R;
  if (!RP.P || !RP.P->Analysis) {
    R.Reason = "no protocol";
    return R;
  }
  std::vector<std::string> Missing = RP.unknowns();
  if (!Missing.empty()) {
    R.Reason = "the protocol has parts the explorer cannot run: " + Missing.front();
  } else {
    Prover(RP, Options, R).run();
  }
  R.Milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
          .count();
  return R;
}
