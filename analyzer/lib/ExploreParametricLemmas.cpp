//===- ExploreParametricLemmas.cpp - the k-loop's parameter and Z3's lemmas ---------===//
//
// Which parameter the k-loop counts with, which loops vary with it (and the tile loop of a
// persistent kernel), and the lemmas of ExploreParametric.cpp's argument, proved by Z3 over
// bit vectors: trip counts in one T, and every value repeating with the period.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <functional>
#include <numeric>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

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
    // A condition of several parts repeats when each part does; a part that only says
    // whether the CTA has a tile is then decided cheaply (decidedByTiles) instead of in one
    // query with the rest (B4's `%ctaid.x / 2 < M / 256 * N / 256 && %cluster_ctarank == 0`
    // took Z3 about 2 s, its whole time budget).
    //
    // Inside a loop that does not vary, a value matters only in the iterations that run:
    // each use there is taken under its loops' guards (entered, and the iteration below the
    // trip count), which must repeat themselves. H6's leftover chunks (`j == 0` with j =
    // K / 64 + i, a loop not entered once K / 64 >= 4) repeat only so.
    std::vector<const Expr *> Guards;
    std::function<void(const Expr *, unsigned)> Add = [&](const Expr *E, unsigned Loop) {
      if (!E || E->isConstant())
        return;
      if (E->width() == 1 && (E->is(ExprKind::And) || E->is(ExprKind::Or) ||
                              E->is(ExprKind::Xor) || E->is(ExprKind::Not))) {
        for (const Expr *Part : E->ops())
          Add(Part, Loop);
        return;
      }
      // A choice on whether the CTA has tiles (H6's last chunks: `has a tile ? 4 : 0`)
      // repeats when its condition and both values do; the condition alone is then decided
      // cheaply (decidedByTiles), where the whole took Z3 past its budget.
      if (Tiles && NT && E->is(ExprKind::Select) && readsTileCount(E->ops()[0]) &&
          !E->ops()[0]->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); })) {
        for (const Expr *Part : E->ops())
          Add(Part, Loop);
        return;
      }
      for (auto G = Guards.rbegin(); G != Guards.rend(); ++G)
        E = Ctx.select(*G, E, c(0, E->width()));
      Uses.push_back({inDomain(E), Loop, PI, InTile});
    };
    Add(Prog.When, NoIndex);
    std::function<void(const std::vector<RoleItem> &, unsigned)> Walk =
        [&](const std::vector<RoleItem> &Items, unsigned In) {
          for (const RoleItem &It : Items) {
            if (It.IsLoop) {
              const RoleLoop &L = Prog.Loops[It.Index];
              Add(L.When, In);
              bool Tile = Tiles && It.Index == TileLoop[PI];
              // A loop runs its trip count only where it is entered: elsewhere the count
              // means nothing (H6's leftover chunks: 4 - K / 64 wraps where K >= 256, and
              // the loop is not entered there), so the value that must repeat is the
              // iterations it runs.
              bool Fixed = It.Index != Varying[PI] && !Tile && L.Trip;
              const Expr *Entered = L.When && !L.When->isConstant()
                                        ? Ctx.ne(L.When, c(0, L.When->width()))
                                        : nullptr;
              if (Fixed)
                Add(Entered ? Ctx.select(Entered, L.Trip, c(0, L.Trip->width())) : L.Trip, In);
              InTile |= Tile;
              if (Fixed) {
                const Expr *Guard = Ctx.ult(
                    Ctx.resize(Ctx.iterationVar(L.Loop), L.Trip->width()), L.Trip);
                Guards.push_back(Entered ? Ctx.logicalAnd(Entered, Guard) : Guard);
              }
              Walk(L.Body, It.Index == Varying[PI] ? It.Index : In);
              if (Fixed)
                Guards.pop_back();
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
            // A skipped wait: whether it is skipped, waits, or reads a probe, with the probe
            // read as failed and as passed, must repeat too.
            for (const Expr *V : {S.SkipEntry, S.SkipLatch})
              for (uint64_t Probe : {0u, 1u})
                if (V)
                  Add(Ctx.rewrite(V,
                                  [&](const Expr *L) -> const Expr * {
                                    return L->is(ExprKind::Opaque) ? c(Probe, L->width())
                                                                   : nullptr;
                                  }),
                      In);
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
  for (const auto &Conditions : RP.TripConditions)
    for (const auto &[Cond, Established] : Conditions)
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

std::string wsv::analyzer::parametric::tileLoops(const RolePrograms &RP,
                                                 std::vector<unsigned> &TileLoop) {
  TileLoop.assign(RP.Programs.size(), NoIndex);
  auto ReadsGrid = [](const RoleLoop &L) {
    return L.Trip && L.Trip->mentions([](const Expr *E) {
      return E->is(ExprKind::SpecialReg) && (E->specialRegister() == SpecialRegister::CtaidX ||
                                             E->specialRegister() == SpecialRegister::NctaidX);
    });
  };
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    const RoleProgram &Prog = RP.Programs[PI];
    auto Why = [&](unsigned LI) {
      return Prog.Name + ": a loop over the grid's tiles that is not the one loop around the "
                         "role's work (ptx line " +
             std::to_string(RP.P->Loops[Prog.Loops[LI].ProtocolLoop].Where.PtxLine) + ")";
    };
    // Top-level loops whose trip count reads the grid. One is the tile loop: the only one,
    // or the only one with loops in it (the k-loop). Others without loops in them run a
    // fixed number of times after (or before) the tiles, a number the lemmas check like any
    // value outside the tile loop (H6's chunks of the last tile, stored once the tiles end).
    std::vector<unsigned> Top;
    for (const RoleItem &It : Prog.Body)
      if (It.IsLoop && ReadsGrid(Prog.Loops[It.Index]))
        Top.push_back(It.Index);
    for (unsigned LI = 0; LI < Prog.Loops.size(); ++LI)
      if (ReadsGrid(Prog.Loops[LI]) && !llvm::is_contained(Top, LI))
        return Why(LI);
    if (Top.size() <= 1) {
      TileLoop[PI] = Top.empty() ? NoIndex : Top.front();
      continue;
    }
    auto Nests = [&](unsigned LI) {
      return llvm::any_of(Prog.Loops[LI].Body, [](const RoleItem &It) { return It.IsLoop; });
    };
    for (unsigned LI : Top) {
      if (!Nests(LI))
        continue;
      if (TileLoop[PI] != NoIndex)
        return Why(LI);
      TileLoop[PI] = LI;
    }
    if (TileLoop[PI] == NoIndex)
      return Why(Top[1]);
  }
  return "";
}

bool Prover::findTileLoops() {
  if (std::string Why = tileLoops(RP, TileLoop); !Why.empty())
    return unknown(Why);
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    if (TileLoop[PI] == NoIndex)
      continue;
    // The tile count is one that all threads of a role share (B5's trip-count variant: the
    // writeback's count reads the thread, the MMA warp's does not).
    const RoleProgram &Prog = RP.Programs[PI];
    const RoleLoop &TL = Prog.Loops[TileLoop[PI]];
    if (!NT || (isThreadDependent(NT) && !isThreadDependent(TL.Trip))) {
      NT = TL.Trip;
      NTWhen = nullptr;
      for (const Expr *W : {Prog.When, TL.When}) {
        if (!W || W->isConstant())
          continue;
        if (W->width() != 1)
          W = Ctx.ne(W, c(0, W->width()));
        NTWhen = NTWhen ? Ctx.logicalAnd(NTWhen, W) : W;
      }
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
  for (const auto &Conditions : RP.TripConditions)
    for (const auto &[Cond, Established] : Conditions)
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
  // (Its signed forms made unsigned as in the uses, with which the lemmas compare it.)
  NT = inDomain(NT);
  if (NTWhen)
    NTWhen = inDomain(NTWhen);
  auto ReadsK = [&](const Expr *E) {
    return E && E->mentions([&](const Expr *L) { return L == K; });
  };
  ShapeReadsK = ReadsK(NT);
  for (const auto &Conditions : RP.TripConditions)
    for (const auto &[Cond, Established] : Conditions)
      ShapeReadsK |= !Established && ReadsK(Cond);
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

uint64_t Prover::upperBound(const Expr *E) const {
  const uint64_t Mask = ExprContext::mask(E->width());
  auto Op = [&](unsigned I) { return upperBound(E->op(I)); };
  switch (E->kind()) {
  case ExprKind::Constant: return E->payload();
  case ExprKind::SpecialReg:
    // gridDomain: %ctaid.x < %nctaid.x < 2^16, or %ctaid.x < 2^16 without %nctaid.x.
    if (llvm::is_contained(Grid, E) && (E->specialRegister() == SpecialRegister::CtaidX ||
                                        E->specialRegister() == SpecialRegister::NctaidX))
      return std::min<uint64_t>(Mask, (1 << 16) - 1);
    return E->range().Hi;
  case ExprKind::Param:
    // gridDomain: the grid's other parameters are below 2^20; the domain's K below 2^24.
    if (llvm::is_contained(Grid, E))
      return std::min<uint64_t>(Mask, (1 << 20) - 1);
    if (E == K)
      return std::min<uint64_t>(Mask, (1 << 24) - 1);
    return E->range().Hi;
  case ExprKind::IterationVar:
    // An iteration of a loop runs below its trip count (at most K / 64, or the tile count).
    for (const RoleProgram &Prog : RP.Programs)
      for (const RoleLoop &L : Prog.Loops)
        if (L.Loop == E->payload() && L.Trip &&
            !L.Trip->mentions([](const Expr *X) { return X->is(ExprKind::IterationVar); })) {
          uint64_t Trip = upperBound(L.Trip);
          return std::min<uint64_t>({Mask, Trip ? Trip - 1 : 0, (1 << 28) - 1});
        }
    return std::min<uint64_t>(Mask, (1 << 28) - 1);
  case ExprKind::AShr:
    // Of a value below the sign bit, a logical shift.
    if (E->op(1)->isConstant() && E->op(1)->payload() < E->width() &&
        Op(0) < (uint64_t(1) << (E->width() - 1)))
      return Op(0) >> E->op(1)->payload();
    return Mask;
  case ExprKind::ZExt: return Op(0);
  case ExprKind::UDiv:
    return E->op(1)->isConstant() && E->op(1)->payload() ? Op(0) / E->op(1)->payload() : Op(0);
  case ExprKind::URem:
    return E->op(1)->isConstant() && E->op(1)->payload()
               ? std::min(Op(0), E->op(1)->payload() - 1)
               : Op(0);
  case ExprKind::Add: {
    uint64_t A = Op(0), B = Op(1);
    return A <= Mask - B ? A + B : Mask; // past the mask it may wrap: anything
  }
  case ExprKind::Mul: {
    uint64_t A = Op(0), B = Op(1);
    return B == 0 || A <= Mask / B ? A * B : Mask;
  }
  default: return Mask;
  }
}

const Expr *Prover::decidedByTrip(const Expr *E, const Expr *Iter, const Expr *Trip,
                                  unsigned Tail, bool Body) {
  return Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
    if (!N->is(ExprKind::ULt))
      return nullptr;
    const Expr *L = N->op(0);
    unsigned W = L->width();
    bool Scaled = false;
    if (K && N->op(1) == Ctx.resize(K, W)) {
      // The scaled form: the trip must be K / s for the scale s found below.
      const Expr *M = L->is(ExprKind::Add) ? L->op(0) : L;
      Scaled = M->is(ExprKind::Mul) && M->op(1)->isConstant() &&
               Ctx.resize(Trip, W) == Ctx.udiv(Ctx.resize(K, W), M->op(1));
    }
    if (!Scaled && (N->op(1) != Ctx.resize(Trip, W) || Trip->width() > W))
      return nullptr;
    uint64_t A = 0;
    if (L->is(ExprKind::Add) && L->op(1)->isConstant() && L->op(1)->payload() < (1u << 20)) {
      A = L->op(1)->payload();
      L = L->op(0);
    }
    // s * k + a < K with K / s the trip and s dividing the k-tile (so that K is a multiple
    // of s in the domain) is k + a / s < K / s: Triton's `start_n < N_CTX - 128` counts in
    // elements.
    if (Scaled && L->is(ExprKind::Mul) && L->op(1)->isConstant()) {
      uint64_t Scale = L->op(1)->payload();
      if (!Scale || A % Scale || O.TileK % Scale)
        return nullptr;
      A /= Scale;
      L = L->op(0);
    }
    if (L != Ctx.resize(Iter, W))
      return nullptr;
    if (Body && A <= Tail)
      return Ctx.boolean(true);
    if (!Body && A >= Tail)
      return Ctx.boolean(false);
    return nullptr;
  });
}

const Expr *Prover::inDomain(const Expr *E) {
  // Compilers that keep sizes in signed integers (Triton's i32 K) divide with
  // `(x + (x >>s 31 >>u 26)) >>s 6` and compare with <s; where the domain keeps the values
  // below the sign bit those are the unsigned operations, which Z3 and shiftInvariant
  // reason about far better (the ashr form left Z3 undecided on every lemma of Triton's
  // persistent matmul). The domain is in every lemma's hypothesis, so the rewritten
  // expression stands for the original.
  llvm::DenseMap<const Expr *, const Expr *> Done;
  std::function<const Expr *(const Expr *)> Go = [&](const Expr *N) -> const Expr * {
    if (N->isLeaf())
      return N;
    auto It = Done.find(N);
    if (It != Done.end())
      return It->second;
    llvm::SmallVector<const Expr *, 3> Ops;
    for (const Expr *Op : N->ops())
      Ops.push_back(Go(Op));
    const Expr *Out = Ctx.rebuild(N, Ops);
    unsigned W = Out->isLeaf() ? 0 : Out->op(0)->width();
    auto Unsigned = [&](const Expr *X) {
      return W >= 2 && W <= 64 && upperBound(X) < (uint64_t(1) << (W - 1));
    };
    if (Out->is(ExprKind::AShr) && Out->op(1)->isConstant() && Out->op(1)->payload() < W &&
        Unsigned(Out->op(0)))
      Out = Ctx.udiv(Out->op(0), c(uint64_t(1) << Out->op(1)->payload(), W));
    else if (Out->is(ExprKind::SLt) || Out->is(ExprKind::SLe)) {
      // x <s y - c (`k < k_tiles - 2`, where k_tiles - 2 may be negative) is x + c <s y.
      const Expr *X = Out->op(0), *Y = Out->op(1);
      auto Minus = [&](const Expr *A, const Expr *&Rest) -> uint64_t {
        if (A->is(ExprKind::Add) && A->op(1)->isConstant() && A->op(1)->signedValue() < 0 &&
            A->op(1)->signedValue() > -(int64_t(1) << 20)) {
          Rest = A->op(0);
          return uint64_t(-A->op(1)->signedValue());
        }
        return 0;
      };
      const Expr *Rest = nullptr;
      if (uint64_t C = Minus(Y, Rest); C && W <= 62 && upperBound(X) < (uint64_t(1) << (W - 2)))
        X = Ctx.add(X, c(C, W)), Y = Rest;
      else if (uint64_t C = Minus(X, Rest); C && W <= 62 &&
                                            upperBound(Y) < (uint64_t(1) << (W - 2)))
        X = Rest, Y = Ctx.add(Y, c(C, W));
      if (Unsigned(X) && Unsigned(Y))
        Out = Out->is(ExprKind::SLt) ? Ctx.ult(X, Y) : Ctx.ule(X, Y);
    }
    // (K + c) / d with d dividing the k-tile and c < d is K / d: the domain's K is a
    // multiple of the k-tile (Triton's cdiv(K, 64) is then the K / 64 that T counts).
    if (K && Out->is(ExprKind::UDiv) && Out->op(1)->isConstant() &&
        Out->op(0)->is(ExprKind::Add) && Out->op(0)->op(0) == Ctx.resize(K, W) &&
        Out->op(0)->op(1)->isConstant()) {
      uint64_t D = Out->op(1)->payload(), C = Out->op(0)->op(1)->payload();
      if (D && O.TileK % D == 0 && C < D && upperBound(Out->op(0)) < ExprContext::mask(W))
        Out = Ctx.udiv(Out->op(0)->op(0), Out->op(1));
    }
    if (!Out->isConstant() && Out->width() > 1 && upperBound(Out) == 0)
      Out = c(0, Out->width());
    Done[N] = Out;
    return Out;
  };
  return Go(E);
}

const Expr *Prover::linearized(const Expr *Hyp, const Expr *Goal) {
  // Each product of two unknowns, and each division by one, becomes a variable of its own,
  // at most what the domain lets the product be: a claim for every value of it, stronger
  // than the one for the product, and linear.
  llvm::DenseMap<const Expr *, const Expr *> Fresh;
  const Expr *Bounds = Ctx.constant(1, 1);
  auto Replace = [&](const Expr *N) -> const Expr * {
    bool Product = N->is(ExprKind::Mul) && !N->op(0)->isConstant() && !N->op(1)->isConstant();
    bool Quotient = (N->is(ExprKind::UDiv) || N->is(ExprKind::URem)) && !N->op(1)->isConstant();
    if (!Product && !Quotient)
      return nullptr;
    auto [It, New] = Fresh.try_emplace(N, nullptr);
    if (New) {
      It->second = Ctx.param(Ctx.save("wsv.linear" + std::to_string(Fresh.size())), 0,
                             N->width());
      uint64_t Hi = upperBound(N);
      if (Hi < ExprContext::mask(N->width()))
        Bounds = Ctx.logicalAnd(Bounds, Ctx.ule(It->second, c(Hi, N->width())));
    }
    return It->second;
  };
  const Expr *LinearHyp = Ctx.rewrite(Hyp, Replace), *LinearGoal = Ctx.rewrite(Goal, Replace);
  if (Fresh.empty())
    return nullptr;
  return Ctx.implies(Ctx.logicalAnd(LinearHyp, Bounds), LinearGoal);
}

const Expr *Prover::abstractDecided(const Expr *E) {
  return Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
    if (N->width() != 1 || N->isLeaf() || !readsTileCount(N) ||
        N->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); }) ||
        !decidedByTiles(N))
      return nullptr;
    auto [It, New] = DecidedLeaves.try_emplace(N, nullptr);
    if (New)
      It->second = Ctx.param(Ctx.save("wsv.has_tile." + std::to_string(DecidedLeaves.size())),
                             0, 1);
    return It->second;
  });
}

bool Prover::readsTileCount(const Expr *E) const {
  return E->mentions([&](const Expr *L) {
    return NT->mentions([&](const Expr *N) { return N == L; });
  });
}

bool Prover::decidedByTiles(const Expr *E) {
  if (!Tiles || E->width() != 1)
    return false;
  auto [It, New] = Decided.emplace(E, false);
  if (!New)
    return It->second;
  // Its negation is decided alike (`M / 128 * N / 128 <= %ctaid.x` after `%ctaid.x <
  // M / 128 * N / 128`: about half a second of Z3 each for B3).
  if (auto Neg = Decided.find(Ctx.logicalNot(E)); Neg != Decided.end())
    return It->second = Neg->second;
  bool Iter = E->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); });
  if (Iter)
    return false;
  // What reads none of the tile count's values (B5's `%cluster_ctarank == 0`) is not decided
  // by it (it would have to be constant): no queries (four failing ones took 90 ms).
  if (!readsTileCount(E))
    return false;
  const Expr *D = domain(K);
  // NT = X / Y is nonzero exactly when X >= Y or Y = 0 (a bit-vector division by zero gives
  // all ones), which Z3 finds far easier than the division.
  const Expr *Some = Ctx.ne(NT, c(0, NT->width()));
  if (NT->is(ExprKind::UDiv))
    Some = Ctx.logicalOr(Ctx.uge(NT->ops()[0], NT->ops()[1]),
                         Ctx.eq(NT->ops()[1], c(0, NT->width())));
  // A loop that runs only where its condition holds has no tile elsewhere, whatever its
  // closed form says there (Triton's `(tiles - %ctaid.x + 131) / 132` wraps past the grid it
  // was written for, where the guard `%ctaid.x < tiles` keeps the loop from running).
  if (NTWhen)
    Some = Ctx.logicalAnd(NTWhen, Some);
  const Expr *None = Ctx.logicalNot(Some);
  // With a tile a condition on the CTA's tiles usually holds, without one it fails (`%ctaid.x
  // < tiles`): that goal is asked first, and the other only when it is not valid.
  auto Fixed = [&](const Expr *Case, bool HoldsFirst) {
    const Expr *Holds = E, *Fails = Ctx.logicalNot(E);
    for (const Expr *Goal : {HoldsFirst ? Holds : Fails, HoldsFirst ? Fails : Holds}) {
      // The tile count (M / 256 * N / 256) as a number of its own first: linear, the
      // claim takes Z3 milliseconds where the product took up to a second (B3).
      if (const Expr *Linear = linearized(Ctx.logicalAnd(D, Case), Goal)) {
        ++R.SolverQueries;
        if (gridZ3().isValid(Linear).Answer == SolverAnswer::Yes)
          return true;
      }
      SolverResult V = gridZ3().isValid(Ctx.implies(Ctx.logicalAnd(D, Case), Goal));
      ++R.SolverQueries;
      if (V.Answer == SolverAnswer::Yes)
        return true;
    }
    return false;
  };
  return It->second = Fixed(Some, true) && Fixed(None, false);
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
      if (!valid(Runs, Ctx.eq(Ctx.resize(inDomain(L.Trip), TW), Want),
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
        const Expr *Trip = inDomain(L.Trip);
        if (Trip != NT && !valid(D, Ctx.eq(Trip, NT),
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
  std::vector<Lemma> Lemmas;
  for (const Use &U : Uses)
    if (Done.insert(U.E).second && !(!U.InTile && decidedByTiles(U.E))) {
      // As in proveLemmas: what whether the CTA has a tile decides, one unknown for both.
      const Expr *A = Tiles && !U.InTile ? abstractDecided(U.E) : U.E;
      Lemmas.push_back({readsGrid(U.E) ? SameTiles : Same,
                        Ctx.eq(A, Tiles ? prime(A) : Ctx.substitute(A, K, KPrime)),
                        "an expression of " + RP.Programs[U.Program].Name + " (" +
                            P.exprString(U.E) + ") depends on " + R.Parameter +
                            " only through the trip count",
                        Tiles && readsGrid(U.E)});
    }
  return validAll(Lemmas);
}

bool Prover::proveLemmas(unsigned M, unsigned E) {
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
  if (!Probe && !valid(Ctx.logicalAnd(D, Ctx.logicalNot(Ctx.logicalAnd(
                                   Ctx.uge(T, c(Tmin, TW)),
                                   Ctx.ult(T, c(uint64_t(1) << 24, TW))))),
             Ctx.ule(K, c(Scan, KWidth)),
             "every " + R.Parameter + " with fewer than " + std::to_string(Tmin) +
                 " iterations is at most " + std::to_string(Scan)))
    return false;

  std::vector<Lemma> Lemmas;
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
      if (!U.InTile && Tiles) {
        // The parts decided by whether the CTA has a tile are the same in both launches:
        // one unknown stands for each in both (H6's last chunks, `has a tile && k + (has a
        // tile ? 0 : 4) == 0`, which Z3 did not decide with the tile counts in it).
        const Expr *A = abstractDecided(U.E);
        if (A != U.E) {
          Lemmas.push_back({Hyp, Ctx.eq(A, prime(A)),
                            Where + " is the same for every trip count >= " +
                                std::to_string(Tmin) + " in steps of " + std::to_string(M),
                            Grid});
          continue;
        }
      }
      Lemmas.push_back({Hyp, Ctx.eq(U.E, EP),
                        Where + " is the same for every trip count >= " +
                            std::to_string(Tmin) + " in steps of " + std::to_string(M)});
      continue;
    }
    // Iteration k of the loop under K: before the tail it stands for iteration k + p*M under
    // K' for every pass p <= j (only p = 0 before the threshold); in the tail, for k + j*M.
    const RoleLoop &L = RP.Programs[U.Program].Loops[U.VaryingLoop];
    unsigned LoopPeriod = M / Rates[U.Program];
    const Expr *Iter = Ctx.iterationVar(L.Loop);
    unsigned C0 = Thresholds[U.Program];
    // Inside the body (k + E < trip) a test `k + a < trip` with a <= E holds, in the tail
    // (k >= trip - E) one with a >= E fails, under K and, shifted, under K' alike: Triton's
    // prefetch guard `k < k_tiles - 2` is decided so.
    const Expr *TripHere = inDomain(L.Trip);
    const Expr *InBody = decidedByTrip(U.E, Iter, TripHere, E, true);
    const Expr *InTail = decidedByTrip(U.E, Iter, TripHere, E, false);
    // An expression that reads neither the launch nor the tile and comes back to itself a
    // period later (every shift is a multiple of the period) needs no query, from the
    // threshold on: the first lemma below asks no more, and the tail's iterations come after
    // a whole cycle that starts at the threshold (findThresholds makes Tmin so).
    auto Launch = [&](const Expr *X) {
      return X->mentions([&](const Expr *Leaf) {
        return Leaf == K || llvm::is_contained(this->Grid, Leaf) ||
               (U.InTile && Leaf->is(ExprKind::IterationVar) && Leaf != Iter &&
                Leaf == Ctx.iterationVar(
                            RP.Programs[U.Program].Loops[TileLoop[U.Program]].Loop));
      });
    };
    bool FirstHolds = !Launch(InBody) && shiftInvariant(InBody, Iter, LoopPeriod, C0);
    bool TailHolds = !E || (!Launch(InTail) && shiftInvariant(InTail, Iter, LoopPeriod, C0));
    if (FirstHolds && TailHolds)
      continue;
    // One that repeats only past its first iterations (a ring that starts at -1 is
    // `i == 0 ? -1 : (i - 1) % 3`) needs a higher threshold: said at once, rather than after
    // Z3 gave up on the division at this one.
    bool LaterOnly = !FirstHolds && !Launch(InBody) &&
                     shiftInvariant(InBody, Iter, LoopPeriod, uint64_t(1) << 20);
    unsigned IW = Iter->width();
    const Expr *Trip = Resize(inDomain(L.Trip)), *Kth = Ctx.resize(Iter, TW);
    // (k < Trip first: k + E must not wrap around.)
    const Expr *Body = Ctx.logicalAnd(Ctx.ult(Kth, Trip), Ctx.ult(Ctx.add(Kth, c(E, TW)), Trip));
    const Expr *Tail = Ctx.logicalAnd(Ctx.ult(Kth, Trip), Ctx.logicalNot(Body));
    auto Shift = [&](const Expr *By) {
      return Ctx.substitute(EP, Iter,
                            Ctx.add(Iter, Ctx.mul(Ctx.resize(By, IW), c(LoopPeriod, IW))));
    };
    const Expr *PassOk = Ctx.logicalAnd(
        Ctx.ule(Pass, J), Ctx.logicalOr(Ctx.eq(Pass, c(0, TW)), Ctx.uge(Iter, c(C0, IW))));
    if (!FirstHolds)
      Lemmas.push_back({Ctx.logicalAnd(Hyp, Ctx.logicalAnd(Body, PassOk)),
                        LaterOnly ? Ctx.boolean(false) : Ctx.eq(U.E, Shift(Pass)),
                        Where + " repeats every " + std::to_string(LoopPeriod) +
                            " iterations from iteration " + std::to_string(C0) +
                            " up to the last " + std::to_string(E),
                        false, U.Program});
    if (E && !TailHolds)
      Lemmas.push_back({Ctx.logicalAnd(Hyp, Tail), Ctx.eq(U.E, Shift(J)),
                        Where + " in the last " + std::to_string(E) +
                            " iterations depends only on the distance to the end"});
  }
  // The lemmas that assume a program's threshold first: those are the ones that fail (a
  // loop that tests k == 0 needs a threshold of 1), and the failure ends the candidate
  // sooner (H5's first candidate: 265 ms of queries before the failing lemma was reached).
  std::stable_partition(Lemmas.begin(), Lemmas.end(),
                        [](const Lemma &L) { return L.Program != NoIndex; });
  if (Probe) {
    // The same list whatever the thresholds (they only enter the hypotheses), so the index
    // names the same lemma.
    FailsForSure = false;
    if (*Probe >= Lemmas.size())
      return false;
    const Lemma &L = Lemmas[*Probe];
    ++R.SolverQueries;
    const Expr *Claim = Ctx.implies(L.Hyp, L.Goal);
    if (ProbeBudget) {
      // A solver of its own: a query Z3 gives up on leaves its context slower for the next
      // ones (B1's next round of lemmas took 113 ms instead of 6 after one on the shared
      // solver).
      std::unique_ptr<Solver> Own = makeZ3(L.Grid);
      FailsForSure = Own->isValidWithin(Claim, ProbeBudget).Answer == SolverAnswer::No;
    } else {
      FailsForSure = (L.Grid ? gridZ3() : *Z3).isValid(Claim).Answer == SolverAnswer::No;
    }
    return !FailsForSure;
  }
  return validAll(Lemmas);
}

