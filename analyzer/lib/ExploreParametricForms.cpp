//===- ExploreParametricForms.cpp - the lemmas' expressions in the domain's terms -----===//
//
// What the domain (K a multiple of the k-tile below 2^24, the grid's values below 2^20 and
// 2^16) lets the lemmas say of an expression before Z3 sees it: bounds on its values
// (upperBound), signed arithmetic made unsigned (inDomain), tests of the iteration number
// that the lemma's region decides (decidedByTrip), products and divisions of unknowns made
// variables of their own (linearized), and conditions that only say whether the CTA has a
// tile (decidedByTiles, abstractDecided).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"
#include "ExprLinear.h"
#include "ProtocolBuild.h"

#include <functional>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

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
  std::function<const Expr *(const Expr *)> Decide = [&](const Expr *N) -> const Expr * {
    if (N->is(ExprKind::Eq) && N->op(0)->width() > 1)
      return decideEquality(N, Iter, Trip, Tail, Body, Decide);
    // `trip <= k + a` (a builder's form of !(k + a < trip)) is decided as its negation.
    if (N->is(ExprKind::ULe)) {
      const Expr *Lt = Ctx.ult(N->op(1), N->op(0));
      const Expr *V = Lt->is(ExprKind::ULt) ? Decide(Lt) : nullptr;
      return V ? Ctx.logicalNot(V) : nullptr;
    }
    if (!N->is(ExprKind::ULt) || Trip->width() > N->op(0)->width())
      return nullptr;
    unsigned W = N->op(0)->width();
    // s * k + a < X (s = 1 unless scaled) with the constant a split off.
    const Expr *L = N->op(0);
    uint64_t A = 0;
    if (L->is(ExprKind::Add) && L->op(1)->isConstant() && L->op(1)->payload() < (1u << 20)) {
      A = L->op(1)->payload();
      L = L->op(0);
    }
    if (N->op(1) != Ctx.resize(Trip, W)) {
      // s * k + a < X with (X + b) / s the trip and X a multiple of s is k + a / s + b / s
      // < the trip (a a multiple of s too). X is K, whose domain makes it a multiple of the
      // k-tile (Triton's `start_n < N_CTX - 128` counts in elements), or a product by a
      // multiple of s (a causal k-loop of (%ctaid.x * 128 + 191) / 64 tiles tests `i * 64
      // < %ctaid.x * 128`: its last two are the diagonal's).
      if (!L->is(ExprKind::Mul) || !L->op(1)->isConstant())
        return nullptr;
      const uint64_t Scale = L->op(1)->payload();
      const Expr *X = N->op(1), *Over = Ctx.resize(Trip, W);
      if (!Scale || A % Scale || !Over->is(ExprKind::UDiv) || Over->op(1) != L->op(1))
        return nullptr;
      uint64_t B = 0;
      const Expr *Sum = Over->op(0);
      if (Sum != X) {
        if (!Sum->is(ExprKind::Add) || Sum->op(0) != X || !Sum->op(1)->isConstant())
          return nullptr;
        B = Sum->op(1)->payload();
        // X + b must not wrap in the domain.
        if (upperBound(Sum) >= ExprContext::mask(W) || B >= (1u << 20))
          return nullptr;
      }
      const bool OfK = K && X == Ctx.resize(K, W) && O.TileK % Scale == 0;
      // A product wraps to a multiple of s only for s a power of two: it must not wrap,
      // nor s * k + a.
      const bool Product = X->is(ExprKind::Mul) && X->op(1)->isConstant() &&
                           X->op(1)->payload() % Scale == 0 &&
                           upperBound(X) < ExprContext::mask(W) &&
                           upperBound(N->op(0)) < ExprContext::mask(W);
      if (!OfK && !Product)
        return nullptr;
      A = A / Scale + B / Scale;
      L = L->op(0);
    }
    if (L != Ctx.resize(Iter, W))
      return nullptr;
    if (Body && A <= Tail)
      return Ctx.boolean(true);
    if (!Body && A >= Tail)
      return Ctx.boolean(false);
    // In the tail an iteration stands for the one j periods later, the trip count being j
    // periods longer: `k + a < trip` has one value in both, whatever it is. A leaf of its
    // own, the same for both launches, stands for it (causal attention's diagonal tests
    // `i + 1 < trip` to `i + 3 < trip` in its last iterations).
    if (!Body)
      return Ctx.param(Ctx.save("wsv.tail_test_" + std::to_string(A)), 0, 1);
    return nullptr;
  };
  return Ctx.rewrite(E, Decide);
}

const Expr *Prover::decideEquality(const Expr *N, const Expr *Iter, const Expr *Trip,
                                   unsigned Tail, bool Body,
                                   const std::function<const Expr *(const Expr *)> &Decide) {
  // X == Y as X - Y == 0: a choice among its terms is taken out first (Triton's `T == (i ==
  // 0 ? 0 : k) + 1`, whether k is the tile's last), each arm decided on its own.
  unsigned W = N->op(0)->width();
  LinearForm D;
  D.Width = W;
  D.addScaled(N->op(0), 1);
  D.addScaled(N->op(1), ExprContext::mask(W));
  D.normalize(Ctx);
  for (size_t I = 0; I < D.Terms.size(); ++I) {
    const auto [S, Coefficient] = D.Terms[I];
    if (!S->is(ExprKind::Select) || S->op(0)->mentions([&](const Expr *L) { return L == Iter; }))
      continue;
    auto Arm = [&](const Expr *V) {
      LinearForm A = D;
      A.Terms.erase(A.Terms.begin() + I);
      A.addScaled(V, Coefficient);
      A.normalize(Ctx);
      const Expr *Eq = Ctx.eq(buildLinear(Ctx, A), Ctx.constant(0, W));
      return Ctx.rewrite(Eq, Decide);
    };
    return Ctx.select(S->op(0), Arm(S->op(1)), Arm(S->op(2)));
  }
  // k + a == trip: in the body (k + Tail < trip) false for a <= Tail; in the last Tail
  // iterations it says how far the end is, one value in both launches (a leaf), and false
  // for a > Tail.
  const Expr *TripW = Ctx.resize(Trip, W), *IterW = Ctx.resize(Iter, W);
  if (D.Terms.size() != 2)
    return nullptr;
  uint64_t Sign = 0;
  for (const auto &[Term, Coefficient] : D.Terms)
    if (Term == IterW && (Coefficient == 1 || Coefficient == ExprContext::mask(W)))
      Sign = Coefficient;
  if (!Sign)
    return nullptr;
  for (const auto &[Term, Coefficient] : D.Terms)
    if (Term != IterW && (Term != TripW || ((Coefficient + Sign) & ExprContext::mask(W))))
      return nullptr;
  // Sign * (k - trip) + c == 0: a = Sign * c.
  uint64_t A = (D.Constant * Sign) & ExprContext::mask(W);
  if (A == 0 || A > 64)
    return nullptr;
  if (Body)
    return A <= Tail ? Ctx.boolean(false) : nullptr;
  return A > Tail ? Ctx.boolean(false)
                  : Ctx.param(Ctx.save("wsv.tail_eq_" + std::to_string(A)), 0, 1);
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

void Prover::makeCountLeaves() {
  if (TLeaf)
    return;
  TLeaf = Ctx.param(Ctx.save("wsv.trips"), 0, T->width());
  TPrimeLeaf = Ctx.param(Ctx.save("wsv.trips'"), 0, T->width());
  if (Tiles) {
    NTLeaf = Ctx.param(Ctx.save("wsv.tile_count"), 0, NT->width());
    NTPrimeLeaf = Ctx.param(Ctx.save("wsv.tile_count'"), 0, NT->width());
  }
}

const Expr *Prover::throughCounts(const Expr *E) {
  makeCountLeaves();
  return Tiles ? factorCounts(E, T, NT, TLeaf, NTLeaf) : Ctx.substitute(E, T, TLeaf);
}

const Expr *Prover::factorCounts(const Expr *E, const Expr *Trips, const Expr *Count,
                                 const Expr *TripsLeaf, const Expr *CountLeaf) {
  E = Ctx.substitute(E, Trips, TripsLeaf);
  // The builders distribute products over sums: NT * T of a flattened loop's trip count is
  // `a * T + b * T` where NT = a + b. In every sum, the terms y * T whose y add up to a
  // multiple of NT are that multiple of NT * T.
  LinearForm Tiles;
  Tiles.Width = Count->width();
  Tiles.addScaled(Count, 1);
  Tiles.normalize(Ctx);
  llvm::DenseMap<const Expr *, const Expr *> Done;
  std::function<const Expr *(const Expr *)> Go = [&](const Expr *N) -> const Expr * {
    if (N->isLeaf())
      return N;
    if (auto It = Done.find(N); It != Done.end())
      return It->second;
    llvm::SmallVector<const Expr *, 3> Ops;
    for (const Expr *Op : N->ops())
      Ops.push_back(Go(Op));
    const Expr *Out = Ctx.rebuild(N, Ops);
    if (Out->is(ExprKind::Add) && Out->width() == Count->width() && !Tiles.Terms.empty()) {
      LinearForm Sum, Factor, Rest;
      Sum.Width = Factor.Width = Rest.Width = Out->width();
      Sum.addScaled(Out, 1);
      Sum.normalize(Ctx);
      for (const auto &[Term, Coefficient] : Sum.Terms) {
        const Expr *Other = !Term->is(ExprKind::Mul)      ? nullptr
                            : Term->op(0) == TripsLeaf ? Term->op(1)
                            : Term->op(1) == TripsLeaf ? Term->op(0)
                                                       : nullptr;
        if (Other)
          Factor.addScaled(Other, Coefficient);
        else
          Rest.addScaled(Term, Coefficient);
      }
      Rest.Constant = Sum.Constant;
      Factor.normalize(Ctx);
      // Factor = Scale * NT, term by term (Scale read off NT's first term, whose
      // coefficient is 1 in the forms compilers give).
      uint64_t Mask = ExprContext::mask(Out->width());
      bool Same = !Factor.Terms.empty() && Factor.Terms.size() == Tiles.Terms.size() &&
                  Tiles.Terms[0].second == 1;
      uint64_t Scale = Same ? Factor.Terms[0].second : 0;
      Same = Same && ((Tiles.Constant * Scale) & Mask) == Factor.Constant;
      for (size_t I = 0; Same && I < Tiles.Terms.size(); ++I)
        Same = Factor.Terms[I].first == Tiles.Terms[I].first &&
               ((Tiles.Terms[I].second * Scale) & Mask) == Factor.Terms[I].second;
      if (Same) {
        Rest.addScaled(Ctx.mul(CountLeaf, TripsLeaf), Scale);
        Rest.normalize(Ctx);
        Out = buildLinear(Ctx, Rest);
      }
    }
    return Done[N] = Out;
  };
  return Ctx.substitute(Go(E), Count, CountLeaf);
}

const Expr *Prover::withTileCounts(const Expr *E) {
  makeCountLeaves();
  std::set<const Expr *> Counts{NT};
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    if (TileLoop[PI] != NoIndex &&
        RP.Programs[PI].Loops[TileLoop[PI]].Trip->width() == NT->width())
      Counts.insert(RP.Programs[PI].Loops[TileLoop[PI]].Trip);
  const Expr *TP = Ctx.substitute(T, K, KPrime);
  for (const Expr *Count : Counts) {
    E = factorCounts(E, TP, prime(Count), TPrimeLeaf, NTPrimeLeaf);
    E = factorCounts(E, T, Count, TLeaf, NTLeaf);
  }
  return E;
}

void Prover::abstractTileCounts(std::vector<Lemma> &Lemmas) {
  if (!Tiles || O.TilesBelow >= (uint64_t(1) << 28))
    return;
  auto ReadsLaunch = [&](const Expr *E) {
    return E->mentions([&](const Expr *L) {
      return L == K || L == KPrime || llvm::is_contained(Grid, L) ||
             llvm::is_contained(GridPrime, L);
    });
  };
  for (Lemma &L : Lemmas) {
    const Expr *Goal = withTileCounts(L.Goal);
    if (Goal == L.Goal || ReadsLaunch(Goal))
      continue;
    // The hypothesis's parts that still read the launch say nothing of the goal's unknowns:
    // left out (a weaker hypothesis, a stronger claim), Z3 encodes none of the divisions.
    llvm::SmallVector<const Expr *, 16> Parts;
    conjuncts(withTileCounts(L.Hyp), Parts);
    const Expr *Hyp = Ctx.boolean(true);
    for (const Expr *H : Parts)
      if (!ReadsLaunch(H))
        Hyp = Ctx.logicalAnd(Hyp, H);
    // What the domain said of the counts: the bounds the statement names, and at least
    // the fewest k-tiles.
    unsigned W = NT->width(), TW = T->width();
    const Expr *Tiles = Ctx.constant(O.TilesBelow, W), *Trips = Ctx.constant(O.TripsBelow, TW);
    const Expr *Fewest = Ctx.constant(O.MinTiles, TW);
    for (const Expr *N : {NTLeaf, NTPrimeLeaf})
      Hyp = Ctx.logicalAnd(Hyp, Ctx.ult(N, Tiles));
    for (const Expr *X : {TLeaf, TPrimeLeaf})
      Hyp = Ctx.logicalAnd(Hyp, Ctx.logicalAnd(Ctx.ult(X, Trips), Ctx.uge(X, Fewest)));
    // And proveLemmas' threshold, which the builders write on K itself (`K >= 896` for
    // T >= 14): j = 0 or T >= Tmin.
    const Expr *J = Ctx.param(Ctx.save("wsv.periods"), 0, TW);
    Hyp = Ctx.logicalAnd(Hyp, Ctx.logicalOr(Ctx.eq(J, Ctx.constant(0, TW)),
                                            Ctx.uge(TLeaf, Ctx.constant(Tmin, TW))));
    L.Hyp = Hyp;
    L.Goal = Goal;
  }
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
