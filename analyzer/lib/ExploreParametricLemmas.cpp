//===- ExploreParametricLemmas.cpp - the k-loop's parameter and Z3's lemmas ---------===//
//
// Which parameter the k-loop counts with, which loops vary with it (and the tile loop of a
// persistent kernel), and the lemmas of ExploreParametric.cpp's argument, proved by Z3 over
// bit vectors: trip counts in one T, and every value repeating with the period.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include <functional>

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
  std::set<const Expr *> Leaves, TileLeaves;
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
      // (A loop over the grid's tiles: findTileLoops.)
      Tiles |= Grid;
      L.Trip->mentions([&](const Expr *E) {
        if (E->is(ExprKind::Param))
          (Grid ? TileLeaves : Leaves).insert(E);
        return false;
      });
    }
  // `K, M`: the parameters' names in order (the leaves' order is their addresses').
  auto Names = [&](const std::set<const Expr *> &Of) {
    std::set<std::string> Sorted;
    for (const Expr *L : Of)
      Sorted.insert(paramName(L));
    std::string Out;
    for (const std::string &N : Sorted)
      Out += (Out.empty() ? "" : ", ") + N;
    return Out;
  };
  if (Leaves.size() > 1)
    return unknown("trip counts depend on several parameters (" + Names(Leaves) + ")");
  if (Leaves.empty() && !Tiles)
    return true; // every trip count is a constant: one instance is every launch
  if (Leaves.empty()) {
    // The tile loop's trip count varies but no k-loop's does: softmax's loop over rows, a
    // causal k-loop whose trip count only the CTA's index sets. The argument over tiles
    // then has one class of k-tiles: K is a leaf that no program reads, its lemmas hold
    // trivially, and it is named nowhere (KStandIn). A count of tiles times k-tiles (a
    // persistent matmul's loops flattened into one) reads three sizes, more than the
    // launches that stand for the tile counts give values to.
    if (TileLeaves.size() > 2)
      return unknown("the tile loop's trip count varies but no k-loop's does, and it reads " +
                     std::to_string(TileLeaves.size()) + " parameters (" + Names(TileLeaves) +
                     "): tiles and k-tiles in one loop?");
    K = Ctx.param(Ctx.save("wsv.k"), 0, 32);
    KStandIn = true;
    OnlyTV = O.MinTiles;
  } else {
    K = *Leaves.begin();
    R.Parameter = paramName(K);
  }
  KWidth = K->width();
  KPrime = Ctx.param(Ctx.save(K->name().str() + "'"), K->payload(), KWidth);
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
                                  S.Barrier.Slot, S.Barrier.PeerRank, S.TmemColumn})
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

bool wsv::analyzer::parametric::readsGridRegister(const Expr *E) {
  return E->mentions([](const Expr *L) {
    return L->is(ExprKind::SpecialReg) && (L->specialRegister() == SpecialRegister::CtaidX ||
                                           L->specialRegister() == SpecialRegister::NctaidX);
  });
}

std::string wsv::analyzer::parametric::tileLoops(const RolePrograms &RP,
                                                 std::vector<unsigned> &TileLoop) {
  TileLoop.assign(RP.Programs.size(), NoIndex);
  auto ReadsGrid = [](const RoleLoop &L) { return L.Trip && readsGridRegister(L.Trip); };
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
                            St.Barrier.PeerRank, St.TmemColumn})
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
  // (Where no k-loop varies, K is the argument's own stand-in and has no name.)
  const std::string Through =
      KStandIn ? "the launch only through the tile count"
      : Tiles  ? R.Parameter + " and the launch only through the trip count and the tile count"
               : R.Parameter + " only through the trip count";
  std::set<const Expr *> Done;
  std::vector<Lemma> Lemmas;
  for (const Use &U : Uses)
    if (Done.insert(U.E).second && !(!U.InTile && decidedByTiles(U.E))) {
      // As in proveLemmas: what whether the CTA has a tile decides, one unknown for both.
      const Expr *A = Tiles && !U.InTile ? abstractDecided(U.E) : U.E;
      const Expr *Other = Tiles ? prime(A) : Ctx.substitute(A, K, KPrime);
      if (Other == A)
        continue; // it reads nothing the launches differ in
      // What reads K (and the grid) only through T (and NT) needs no query: Triton's
      // flattened loop tests `2 <=s NT * T` before it, a product that Z3 bit-blasts before
      // it uses the hypothesis that both factors are equal (it gave up on it).
      if (const Expr *Counts = throughCounts(A);
          (Tiles ? prime(Counts) : Ctx.substitute(Counts, K, KPrime)) == Counts)
        continue;
      Lemmas.push_back({readsGrid(U.E) ? SameTiles : Same, Ctx.eq(A, Other),
                        "an expression of " + RP.Programs[U.Program].Name + " (" +
                            P.exprString(U.E) + ") depends on " + Through,
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
      Ctx.logicalAnd(Ctx.ult(J, Small), Ctx.ult(T, c(O.TripsBelow, TW))),
      Ctx.eq(TP, Ctx.add(T, Ctx.mul(J, c(M, TW)))));
  // Where the caller bounds the counts (ParametricOptions::TripsBelow), the other launch
  // is one of the bounded ones too.
  if (O.TripsBelow < (uint64_t(1) << 24))
    Ahead = Ctx.logicalAnd(Ahead, Ctx.ult(TP, c(O.TripsBelow, TW)));
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
    const Expr *NTFreePrime = Ctx.add(NTFree, Ctx.mul(I, c(M, TW)));
    FreeLarge = Ctx.logicalAnd(
        Ctx.logicalAnd(Large, Ctx.ult(NTFree, c(O.TilesBelow, TW))),
        Periods(NTFree, NTFreePrime));
    if (O.TilesBelow < (uint64_t(1) << 28))
      FreeLarge = Ctx.logicalAnd(FreeLarge, Ctx.ult(NTFreePrime, c(O.TilesBelow, TW)));
  }

  // Q0: the domain's K with a small (or wrapped) T are the scanned ones.
  uint64_t Scan = O.TileK * O.ScanTiles;
  if (!Probe && !KStandIn && !valid(Ctx.logicalAnd(D, Ctx.logicalNot(Ctx.logicalAnd(
                                   Ctx.uge(T, c(Tmin, TW)),
                                   Ctx.ult(T, c(uint64_t(1) << 24, TW))))),
             Ctx.ule(K, c(Scan, KWidth)),
             "every " + R.Parameter + " with fewer than " + std::to_string(Tmin) +
                 " iterations is at most " + std::to_string(Scan)))
    return false;

  std::vector<Lemma> Lemmas;
  std::set<std::pair<const Expr *, unsigned>> Done;
  // A k-loop's expression that tells the last tiles apart (LastTiles) is asked twice: in
  // the tiles before them and in them, each with those tests decided (onLastTiles).
  std::vector<std::pair<Use, TileRegion>> Work;
  for (const Use &U : Uses) {
    if (LastTiles && U.InTile && U.VaryingLoop != NoIndex) {
      Use Before = U, Last = U;
      Before.E = onLastTiles(U, false);
      Last.E = onLastTiles(U, true);
      if (Before.E != U.E || Last.E != U.E) {
        Work.push_back({Before, TileRegion::BeforeLast});
        Work.push_back({Last, TileRegion::Last});
        continue;
      }
    }
    Work.push_back({U, TileRegion::Any});
  }
  for (const auto &[U, Region] : Work) {
    if (!Done.insert({U.E, U.VaryingLoop == NoIndex && !U.InTile ? NoIndex : U.Program})
             .second)
      continue;
    const Expr *EP = Tiles ? prime(U.E) : Ctx.substitute(U.E, K, KPrime);
    std::string Where = "an expression of " + RP.Programs[U.Program].Name + " (" +
                        P.exprString(U.E) + ")" +
                        (Region == TileRegion::BeforeLast ? " before the last tiles"
                         : Region == TileRegion::Last     ? " in the last tiles"
                                                          : "");
    bool Grid = Tiles && readsGrid(U.E);
    const Expr *Hyp = Ctx.logicalAnd(Both, Grid ? GridLarge : FreeLarge);
    if (Region != TileRegion::Any) {
      const Expr *Tv =
          Ctx.iterationVar(RP.Programs[U.Program].Loops[TileLoop[U.Program]].Loop);
      const Expr *Before = Ctx.ult(Ctx.add(Ctx.resize(Tv, TW), c(LastTiles, TW)),
                                   Grid ? NTw : NTFree);
      Hyp = Ctx.logicalAnd(Hyp, Region == TileRegion::Last ? Ctx.logicalNot(Before) : Before);
    }
    if (U.InTile) {
      const RoleLoop &TL = RP.Programs[U.Program].Loops[TileLoop[U.Program]];
      const Expr *Tv = Ctx.iterationVar(TL.Loop);
      // What reads the tile's number but no value of the launch, and comes back to itself
      // Period tiles later from the tile threshold on, needs no query: the lemma compares
      // it with itself shifted by q * Period (tile numbers stay below 2^26, as the rules
      // need). A causal k-loop's stage and parity (`i == 0 ? -1 : (i - 1) % 3`, its loop
      // being the tile loop) took Z3 past its budget.
      // In the tiles before the last TileTail (a tile loop's tail: where no k-loop varies)
      // a test `t + a < NT` with a <= TileTail holds, in them one with a >= TileTail fails,
      // in both launches alike (decidedByTrip), which leaves such an expression too.
      if (U.VaryingLoop == NoIndex && upperBound(NT) < (uint64_t(1) << 26)) {
        const unsigned TileTail = KStandIn ? E : 0;
        auto Repeats = [&](const Expr *X) {
          return !readsGrid(X) && !X->mentions([&](const Expr *L) { return L == K; }) &&
                 shiftInvariant(X, Tv, M, TileThreshold);
        };
        if (Repeats(decidedByTrip(U.E, Tv, NT, TileTail, true)) &&
            (!TileTail || Repeats(decidedByTrip(U.E, Tv, NT, TileTail, false))))
          continue;
      }
      unsigned VW = Tv->width();
      EP = Ctx.substitute(EP, Tv, Ctx.add(Tv, Ctx.mul(Ctx.resize(Q, VW), c(M, VW))));
      // Tile t stands for t + q * Period as the periodic system runs it: q = 0 before the
      // cycle, any pass q <= i in the cycle (the Period tiles from the threshold), and q = i
      // after it, where the last tiles keep their distance to the end (the tests `t + a <
      // NT` of the tile loop's tail hold there as in the longer launch).
      Hyp = Ctx.logicalAnd(
          Hyp, Ctx.logicalAnd(
                   Ctx.logicalAnd(Ctx.ult(Ctx.resize(Tv, TW), Grid ? NTw : NTFree),
                                  Ctx.ule(Q, I)),
                   Ctx.logicalAnd(
                       Ctx.logicalOr(Ctx.eq(Q, c(0, TW)), Ctx.uge(Tv, c(TileThreshold, VW))),
                       Ctx.logicalOr(Ctx.eq(Q, I),
                                     Ctx.ult(Tv, c(TileThreshold + M, VW))))));
    }
    if (U.VaryingLoop == NoIndex) {
      if (!U.InTile && decidedByTiles(U.E))
        continue; // both launches have a tile (NT >= NTmin, NT' >= NT)
      if (!U.InTile && EP == U.E)
        continue; // it reads nothing the launches differ in (B1's TMEM column `i == 0 ? 0 : 64`)
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
    // A ring counted across tiles (a loop over tiles x k-tiles made two: slot and phase
    // of c = t * T + k) that comes back to itself every Period counts: tile t + q*M of the
    // other launch, its iteration k + p*M and its T + j*M move c by a multiple of M, and
    // no more is needed where the counts keep c below 2^26 (the caller's bounds), which
    // Z3, with the product t * T in it, did not decide.
    bool CountedLater = false;
    if (U.InTile && Rates[U.Program] == 1 && (!FirstHolds || !TailHolds) &&
        O.TripsBelow * O.TilesBelow <= (uint64_t(1) << 26)) {
      const Expr *Tv =
          Ctx.iterationVar(RP.Programs[U.Program].Loops[TileLoop[U.Program]].Loop);
      unsigned CW = Iter->width();
      const Expr *Count = Ctx.param(Ctx.save("wsv.count"), 0, CW);
      const Expr *KOf = Ctx.add(Count, Ctx.neg(Ctx.mul(Ctx.resize(Tv, CW),
                                                       Ctx.resize(TripHere, CW))));
      // The first iteration of all, as ExploreUnflatten.cpp writes `i == 0`, is c == 0.
      const Expr *First = Ctx.logicalAnd(Ctx.eq(Ctx.resize(Tv, 32), c(0, 32)),
                                         Ctx.eq(Ctx.resize(Iter, 32), c(0, 32)));
      auto Counted = [&](const Expr *X, uint64_t From) {
        const Expr *F = Ctx.substitute(Ctx.substitute(X, First, Ctx.eq(Count, c(0, CW))), Iter,
                                       KOf);
        return !Launch(F) && !F->mentions([&](const Expr *L) { return L == Iter || L == Tv; }) &&
               shiftInvariant(F, Count, M, From);
      };
      // c moves only in a tile t >= 1 (by t * j * M, and by q * M * T' from the tile
      // threshold on) or where k >= C0 (by p * M; in the tail by j * M, where k >= T - E
      // and T >= Tmin). With T >= 1, c >= 1 wherever it moves if the tile threshold and C0
      // (or Tmin - E) are at least 1, which a ring that starts at -1 needs (Triton's `c ==
      // 0 ? -1 : (c - 1) % 3`).
      const uint64_t BodyFrom = TileThreshold > 0 && C0 > 0 ? 1 : 0;
      const uint64_t TailFrom = TileThreshold > 0 && Tmin > E ? 1 : 0;
      FirstHolds = FirstHolds || Counted(InBody, BodyFrom);
      TailHolds = TailHolds || Counted(InTail, TailFrom);
      CountedLater = !FirstHolds && Counted(InBody, uint64_t(1) << 20);
    }
    if (FirstHolds && TailHolds)
      continue;
    // One that repeats only past its first iterations (a ring that starts at -1 is
    // `i == 0 ? -1 : (i - 1) % 3`) needs a higher threshold: said at once, rather than after
    // Z3 gave up on the division at this one.
    bool LaterOnly = CountedLater || (!FirstHolds && !Launch(InBody) &&
                                      shiftInvariant(InBody, Iter, LoopPeriod, uint64_t(1) << 20));
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
    // What the region decides of the tests `a * k + b < K` in the expression
    // (decidedByTrip), as facts of the hypothesis for both launches, the other's iteration
    // shifted too: Z3 need not relate such a test to the trip count itself. (Triton's
    // attention counts a ring's advances as `i * 64 + 128 < K ? i : G`; with T = (K + 63) /
    // 64, Z3 gave up on every lemma it was in.)
    auto Decided = [&](bool InBodyRegion, const Expr *By) {
      const Expr *Facts = Ctx.boolean(true);
      Ctx.rewrite(U.E, [&](const Expr *N) -> const Expr * {
        if (!N->is(ExprKind::ULt) && !N->is(ExprKind::ULe))
          return nullptr;
        const Expr *V = decidedByTrip(N, Iter, TripHere, E, InBodyRegion);
        if (!V->isConstant())
          return nullptr;
        const Expr *Other = Tiles ? prime(N) : Ctx.substitute(N, K, KPrime);
        Other = Ctx.substitute(Other, Iter,
                               Ctx.add(Iter, Ctx.mul(Ctx.resize(By, IW), c(LoopPeriod, IW))));
        Facts = Ctx.logicalAnd(Facts, Ctx.logicalAnd(Ctx.eq(N, V), Ctx.eq(Other, V)));
        return nullptr;
      });
      return Facts;
    };
    if (!FirstHolds)
      Lemmas.push_back({Ctx.logicalAnd(Hyp, Ctx.logicalAnd(Ctx.logicalAnd(Body, PassOk),
                                                           Decided(true, Pass))),
                        LaterOnly ? Ctx.boolean(false) : Ctx.eq(U.E, Shift(Pass)),
                        Where + " repeats every " + std::to_string(LoopPeriod) +
                            " iterations from iteration " + std::to_string(C0) +
                            " up to the last " + std::to_string(E),
                        false, U.Program});
    if (E && !TailHolds)
      Lemmas.push_back({Ctx.logicalAnd(Hyp, Ctx.logicalAnd(Tail, Decided(false, J))),
                        Ctx.eq(U.E, Shift(J)),
                        Where + " in the last " + std::to_string(E) +
                            " iterations depends only on the distance to the end"});
  }
  // The lemmas that assume a program's threshold first: those are the ones that fail (a
  // loop that tests k == 0 needs a threshold of 1), and the failure ends the candidate
  // sooner (H5's first candidate: 265 ms of queries before the failing lemma was reached).
  abstractTileCounts(Lemmas);
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

