//===- ExploreUnflatten.cpp - a loop over tiles x k-tiles made two loops --------------===//
//
// Triton's persistent matmuls run one loop of NT * T iterations per role (NT tiles of the
// CTA, T k-tiles each) and find the tile and the k-tile again as i / T and i % T: the MMA
// warp commits the accumulator `if (i % T == T - 1)`, the epilogue waits on
// `acc[(i / T) % 2]`. The argument for every parameter (ExploreParametric.cpp) needs a loop
// over tiles with a k-loop in it, so this file writes each such loop as the two it stands
// for, i = t * T + k with t < NT and k < T, and simplifies the divisions and remainders by T
// that this makes exact: (t * T + k) / T = t, (t * T + k) % T = k, and the forms compilers
// write them in ((T + i - (2T - 1) % T - 1) / T: Triton's `(i + T - 1 - (T - 1)) / T`).
// Tests of i against the loop's end and start are taken apart the same way: Hopper's
// prefetch guard `i < NT * T - a` (the tiles after this one, and in the last a the k-tile
// against T and 2T), `i == 0` (t == 0 && k == 0), and the k-tile before, `((T == 1 ? 0 :
// 1) + i - 1) % T` (T == 1 ? 0 : k): no product of the tile and T is left in them.
//
// The programs so written run the same steps as the kernel's in the same order wherever
// t * T + k cannot wrap: the loop's own count is computed in its width, and the forms above
// are exact only below 2^32. They are programs in their own right for every launch; the
// argument for them assumes T < 2^14 and NT < 2^12 (which also keeps a ring counted across
// tiles, t * T + k, below 2^26, where its slot and phase repeat: ExploreParametricLemmas.cpp),
// so its proof is the kernel's for those launches, which the statement says. A bug it finds
// is the kernel's where its schedule replays on the kernel's own programs.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include <map>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

namespace {

/// The flattened loop's factors: Trip = T * NT, T reading one parameter and no grid
/// register, NT reading the grid.
struct Factors {
  const Expr *T = nullptr, *NT = nullptr;
};

/// The one parameter E reads (nullptr: none or several), where it reads nothing else that
/// varies between launches.
const Expr *onlyParameter(const Expr *E) {
  const Expr *Param = nullptr;
  bool Other = false;
  E->mentions([&](const Expr *L) {
    if (L->is(ExprKind::Param)) {
      Other |= Param && Param != L;
      Param = L;
    } else if (!L->isConstant()) {
      Other = true;
    }
    return false;
  });
  return Other ? nullptr : Param;
}

/// The terms of a sum.
void addends(const Expr *E, llvm::SmallVectorImpl<const Expr *> &Out) {
  if (E->is(ExprKind::Add)) {
    addends(E->op(0), Out);
    addends(E->op(1), Out);
  } else {
    Out.push_back(E);
  }
}

/// Trip as T * NT: a sum of products that share a factor of one parameter alone.
std::optional<Factors> factor(const Expr *Trip, ExprContext &Ctx) {
  llvm::SmallVector<const Expr *, 4> Terms;
  addends(Trip, Terms);
  const Expr *T = nullptr, *NT = nullptr;
  for (const Expr *Term : Terms) {
    if (!Term->is(ExprKind::Mul))
      return std::nullopt;
    const Expr *Mine = nullptr, *Rest = nullptr;
    for (unsigned I = 0; I < 2; ++I)
      if (onlyParameter(Term->op(I)) && !onlyParameter(Term->op(1 - I)) &&
          (!T || T == Term->op(I))) {
        Mine = Term->op(I);
        Rest = Term->op(1 - I);
      }
    if (!Mine)
      return std::nullopt;
    T = Mine;
    NT = NT ? Ctx.add(NT, Rest) : Rest;
  }
  if (!T || !readsGridRegister(NT) || readsGridRegister(T))
    return std::nullopt;
  return Factors{T, NT};
}

/// 1 <= Param < 2^24: the launches every T-form is compared on (the argument's own domain,
/// multiples of the k-tile, lies within).
const Expr *paramDomain(ExprContext &Ctx, const Expr *Param) {
  unsigned W = Param->width();
  return Ctx.logicalAnd(Ctx.uge(Param, Ctx.constant(1, W)),
                        Ctx.ult(Param, Ctx.constant(uint64_t(1) << 24, W)));
}

/// Rewrites one program's expressions for i = t * T + k: each value as
/// (Qt * t + Qc + QO) * T + A * k + C + O (modulo its width), where the integers are known,
/// QO (nullptr: 0) is the tile count NT or a part of it (the loop's count T * NT, read after
/// the loop, is such a value) and O (nullptr: 0) is any expression that does not read i.
/// A division or remainder by T of a value with no O, whose true value lies in
/// [0, (2 NT + Qc + 1) * T), is then exact.
class Rewriter {
public:
  Rewriter(ExprContext &Ctx, Solver &Z3, const Expr *Flat, const Expr *TileVar,
           const Expr *KVar, const Factors &F)
      : Ctx(Ctx), Z3(Z3), Flat(Flat), TileVar(TileVar), KVar(KVar), T(F.T), NT(F.NT),
        Param(onlyParameter(F.T)) {}

  /// E for i = t * T + k; one that does not read i only where a division by T was taken
  /// out of it (the count T * NT after the loop), E itself otherwise.
  const Expr *rewrite(const Expr *E) {
    if (!E)
      return E;
    Form F = form(E);
    if (!readsFlat(E) && !F.Changed)
      return E;
    return materialize(F, E->width());
  }

private:
  struct Form {
    int64_t Qt = 0, Qc = 0, A = 0, C = 0;
    const Expr *QO = nullptr, *O = nullptr;
    bool Changed = false; ///< a division or remainder by T was taken out
    /// At most (t + 64) * T + k: below 2^32 within the bounds (NT < 2^12, T < 2^14), so
    /// that its true value is its bit-vector value.
    bool small() const {
      return Qt >= 0 && Qt <= 1 && Qc >= 0 && Qc <= 64 && A >= 0 && A <= 1;
    }
  };

  /// (Asked of every node and its operands: remembered, not walked again each time.)
  bool readsFlat(const Expr *E) {
    auto [It, New] = ReadsFlat.try_emplace(E, false);
    if (New)
      It->second = E->mentions([&](const Expr *L) { return L == Flat; });
    return It->second;
  }

  const Expr *c(int64_t V, unsigned W) {
    return Ctx.constant(static_cast<uint64_t>(V) & ExprContext::mask(W), W);
  }

  /// Whether D, which reads no iteration, is T in every launch of the domain (one
  /// parameter below 2^24, at least 1): Triton writes T as (K + 63) / 64 in one place and
  /// as smax(1, (K + 63) >>s 6) in another.
  bool isT(const Expr *D) {
    if (D == T)
      return true;
    if (D->width() != T->width() || readsFlat(D) || onlyParameter(D) != Param)
      return false;
    auto [It, New] = SameAsT.try_emplace(D, false);
    if (!New)
      return It->second;
    // Launches first, Z3 only for what agrees on all of them.
    for (uint64_t K : {1u, 63u, 64u, 65u, 4096u, 12345u, 1u << 20, (1u << 24) - 1}) {
      auto At = [&](const Expr *L) -> std::optional<uint64_t> {
        return L == Param ? std::optional<uint64_t>(K) : std::nullopt;
      };
      std::optional<uint64_t> A = ExprContext::evaluate(D, At), B = ExprContext::evaluate(T, At);
      if (!A || !B || *A != *B)
        return It->second;
    }
    It->second = Z3.isValid(Ctx.implies(paramDomain(Ctx, Param), Ctx.eq(D, T))).Answer ==
                 SolverAnswer::Yes;
    return It->second;
  }

  Form opaque(const Expr *E) {
    Form F;
    F.O = E;
    return F;
  }

  const Expr *materialize(const Form &F, unsigned W) {
    const Expr *Out = c(F.C, W);
    auto Add = [&](const Expr *E) { Out = Ctx.add(Out, E); };
    const Expr *TW = Ctx.resize(T, W);
    if (F.Qt)
      Add(Ctx.mul(c(F.Qt, W), Ctx.mul(Ctx.resize(TileVar, W), TW)));
    if (F.Qc)
      Add(Ctx.mul(c(F.Qc, W), TW));
    if (F.QO)
      Add(Ctx.mul(Ctx.resize(F.QO, W), TW));
    if (F.A)
      Add(Ctx.mul(c(F.A, W), Ctx.resize(KVar, W)));
    if (F.O)
      Add(F.O);
    return Out;
  }

  Form scaled(Form F, int64_t By) {
    F.Qt *= By;
    F.Qc *= By;
    F.A *= By;
    F.C *= By;
    if (F.QO)
      F.QO = Ctx.mul(F.QO, c(By, F.QO->width()));
    if (F.O)
      F.O = Ctx.mul(F.O, c(By, F.O->width()));
    return F;
  }

  Form sum(Form X, const Form &Y) {
    X.Qt += Y.Qt;
    X.Qc += Y.Qc;
    X.A += Y.A;
    X.C += Y.C;
    X.QO = !X.QO ? Y.QO : !Y.QO ? X.QO : Ctx.add(X.QO, Y.QO);
    X.O = !X.O ? Y.O : !Y.O ? X.O : Ctx.add(X.O, Y.O);
    X.Changed |= Y.Changed;
    return X;
  }

  /// X / T or X % T where exact: X has no O, is t * T + k, Qc * T (+ t * T, + NT * T) or
  /// that less 1 (at least 0: Qc >= 1), and stays below 2^32 (NT < 2^12, T < 2^14).
  std::optional<Form> divided(const Form &X, bool Rem, unsigned W) {
    if (X.O || !X.small() || W < 32 || (X.QO && X.QO != Ctx.resize(NT, X.QO->width())))
      return std::nullopt;
    Form Q, R;
    if (X.A == 1 && X.C == 0) {
      R.A = 1;
    } else if (X.A == 0 && X.C == 0) {
    } else if (X.A == 0 && X.C == -1 && X.Qc >= 1) {
      Q.C = -1;
      R.Qc = 1;
      R.C = -1;
    } else {
      return std::nullopt;
    }
    R.Changed = true;
    if (Rem)
      return R;
    // The quotient is t * Qt + Qc + QO (+ Q.C): a plain value, not a multiple of T.
    const Expr *V = c(X.Qc + Q.C, W);
    if (X.Qt)
      V = Ctx.add(V, Ctx.mul(c(X.Qt, W), Ctx.resize(TileVar, W)));
    if (X.QO)
      V = Ctx.add(V, Ctx.resize(X.QO, W));
    Form Out = opaque(V);
    Out.Changed = true;
    return Out;
  }

  /// X < Y where X is i = t * T + k and Y is NT * T - a (1 <= a <= 4): whether i is
  /// before the last a iterations of the loop (Triton's prefetch guard `i < NT * T - 2`,
  /// which loads a k-tile of the next tile in the last ones of this). With d = NT - 1 - t
  /// tiles after this one and r = T - k >= 1 iterations left in it, it holds exactly where
  /// d * T + r > a: d >= a, or d < a and k + a < (d + 1) * T. No product of two unknowns
  /// is left (each d is a constant), and in every launch where i cannot wrap (t < NT,
  /// k < T within the bounds) it is the comparison's value.
  std::optional<Form> beforeLast(const Form &X, const Form &Y, unsigned W) {
    bool IsI = !X.O && !X.QO && X.Qt == 1 && X.Qc == 0 && X.A == 1 && X.C == 0;
    bool IsEnd = !Y.O && Y.QO && Y.QO == Ctx.resize(NT, Y.QO->width()) && Y.Qt == 0 &&
                 Y.Qc == 0 && Y.A == 0 && Y.C <= -1 && Y.C >= -4;
    if (!IsI || !IsEnd || W < 32)
      return std::nullopt;
    const int64_t A = -Y.C;
    const Expr *Tile = Ctx.resize(TileVar, W), *KW = Ctx.resize(KVar, W);
    const Expr *Tiles = Ctx.resize(NT, W), *TW = Ctx.resize(T, W);
    const Expr *Out = Ctx.ult(Ctx.add(Tile, c(A, W)), Tiles);
    for (int64_t D = 0; D < A; ++D)
      Out = Ctx.logicalOr(
          Out, Ctx.logicalAnd(Ctx.eq(Ctx.add(Tile, c(D + 1, W)), Tiles),
                              Ctx.ult(Ctx.add(KW, c(A, W)), Ctx.mul(c(D + 1, W), TW))));
    Form F = opaque(Out);
    F.Changed = true;
    return F;
  }

  /// X % T where X is i + (T == 1 ? a : b) + C (Triton's `(i + (T == 1 ? 0 : 1) - 1) %
  /// T`, the k-tile of the iteration before): 0 where T is 1, and where it is not, the
  /// remainder of i + b + C if that is exact.
  std::optional<Form> remainderByOne(const Form &X, const Expr *E, unsigned W) {
    const Expr *S = X.O;
    if (!E->is(ExprKind::URem) || !S || !S->is(ExprKind::Select) || !S->op(1)->isConstant() ||
        !S->op(2)->isConstant() || !S->op(0)->is(ExprKind::Eq))
      return std::nullopt;
    const Expr *Cond = S->op(0);
    bool IsOne = false;
    for (unsigned I = 0; I < 2 && !IsOne; ++I)
      IsOne = Cond->op(I)->isConstant(1) && !readsFlat(Cond->op(1 - I)) && isT(Cond->op(1 - I));
    if (!IsOne)
      return std::nullopt;
    Form Rest = X;
    Rest.O = nullptr;
    Rest.C += S->op(2)->signedValue();
    std::optional<Form> R = divided(Rest, /*Rem=*/true, W);
    if (!R)
      return std::nullopt;
    Form F = opaque(Ctx.select(Cond, c(0, W), materialize(*R, W)));
    F.Changed = true;
    return F;
  }

  Form form(const Expr *E) {
    if (auto It = Memo.find(E); It != Memo.end())
      return It->second;
    Form F = compute(E);
    Memo[E] = F;
    return F;
  }

  Form compute(const Expr *E) {
    if (E == Flat) {
      Form F;
      F.Qt = F.A = 1;
      return F;
    }
    // Values that do not read i are taken apart too: (2T - 1) % T is T - 1.
    const bool Reads = readsFlat(E);
    if (!Reads && E->isConstant()) {
      Form F;
      F.C = E->signedValue();
      return F;
    }
    if (!Reads && isT(E)) {
      Form F;
      F.Qc = 1;
      return F;
    }
    unsigned W = E->width();
    switch (E->kind()) {
    case ExprKind::Add:
      if (E->op(0)->width() == W && E->op(1)->width() == W)
        return sum(form(E->op(0)), form(E->op(1)));
      break;
    case ExprKind::Mul:
      for (unsigned I = 0; I < 2; ++I) {
        if (E->op(I)->isConstant() && E->op(1 - I)->width() == W)
          return scaled(form(E->op(1 - I)), E->op(I)->signedValue());
        // T times a part of the tile count (the loop's own count, after it).
        if (!Reads && E->op(I)->width() == W && E->op(1 - I)->width() == W &&
            isT(E->op(I)) && !E->op(1 - I)->isConstant()) {
          Form F;
          F.QO = E->op(1 - I);
          return F;
        }
      }
      break;
    case ExprKind::ZExt:
    case ExprKind::Trunc: {
      // A value of i's kind, at least 0 and below 2^31 (the bounds), keeps its form in
      // another width of at least 32 bits.
      Form F = form(E->op(0));
      if (!F.O && !F.QO && F.small() && F.C == 0 && W >= 32 && E->op(0)->width() >= 32)
        return F;
      break;
    }
    case ExprKind::Eq:
      // i == 0: the first tile's first k-tile (t * T + k is 0 only there, T >= 1).
      for (unsigned I = 0; I < 2; ++I)
        if (E->op(1 - I)->isConstant(0) && E->op(I)->width() >= 32) {
          Form X = form(E->op(I));
          if (!X.O && !X.QO && X.Qt == 1 && X.Qc == 0 && X.A == 1 && X.C == 0) {
            unsigned OW = E->op(I)->width();
            Form F = opaque(Ctx.logicalAnd(Ctx.eq(Ctx.resize(TileVar, OW), c(0, OW)),
                                           Ctx.eq(Ctx.resize(KVar, OW), c(0, OW))));
            F.Changed = true;
            return F;
          }
        }
      // k + a == T (the tile's last k-tiles) as the argument's tail reads it: k + a is not
      // below T, and k + a - 1 is (k < T makes that true for a = 1).
      for (unsigned I = 0; I < 2; ++I) {
        if (E->op(I)->width() < 32 || E->op(1 - I)->width() != E->op(I)->width())
          continue;
        Form X = form(E->op(I)), Y = form(E->op(1 - I));
        bool IsT = !Y.O && !Y.QO && Y.Qt == 0 && Y.Qc == 1 && Y.A == 0 && Y.C == 0;
        bool Near = !X.O && !X.QO && X.Qt == 0 && X.Qc == 0 && X.A == 1 && X.C >= 1 &&
                    X.C <= 64;
        if (!IsT || !Near)
          continue;
        unsigned OW = E->op(I)->width();
        const Expr *TW = Ctx.resize(T, OW), *KW = Ctx.resize(KVar, OW);
        const Expr *Out = Ctx.logicalNot(Ctx.ult(Ctx.add(KW, c(X.C, OW)), TW));
        if (X.C > 1)
          Out = Ctx.logicalAnd(Out, Ctx.ult(Ctx.add(KW, c(X.C - 1, OW)), TW));
        Form F = opaque(Out);
        F.Changed = true;
        return F;
      }
      break;
    case ExprKind::ULt:
    case ExprKind::SLt:
      if (std::optional<Form> F = beforeLast(form(E->op(0)), form(E->op(1)), E->op(0)->width()))
        return *F;
      break;
    case ExprKind::UDiv:
    case ExprKind::URem:
      if (isT(E->op(1))) {
        Form X = form(E->op(0));
        if (std::optional<Form> F = divided(X, E->is(ExprKind::URem), W))
          return *F;
        if (std::optional<Form> F = remainderByOne(X, E, W))
          return *F;
      }
      break;
    default:
      break;
    }
    // Any other operation on the operands' values, rebuilt where one changed.
    llvm::SmallVector<const Expr *, 3> Ops;
    bool Changed = false;
    for (const Expr *Op : E->ops()) {
      Form OF = Op->isConstant() ? Form() : form(Op);
      bool New = readsFlat(Op) || OF.Changed;
      Changed |= OF.Changed;
      Ops.push_back(New ? materialize(OF, Op->width()) : Op);
    }
    Form Out = opaque(Reads || Changed ? Ctx.rebuild(E, Ops) : E);
    Out.Changed = Changed;
    return Out;
  }

  ExprContext &Ctx;
  Solver &Z3;
  const Expr *Flat, *TileVar, *KVar, *T, *NT;
  const Expr *Param;
  std::map<const Expr *, Form> Memo;
  std::map<const Expr *, bool> SameAsT, ReadsFlat;
};

} // namespace

std::optional<Unflattened> wsv::analyzer::unflatten(const RolePrograms &RP) {
  ExprContext &Ctx = RP.P->Analysis->context();
  // The loops to rewrite, found before anything is copied or a solver made: every kernel's
  // verification asks, and almost none has such a loop. A top-level loop with no loop in
  // it, over tiles x k-tiles, all with one T.
  struct Site {
    unsigned Program, Loop;
    Factors F;
  };
  std::vector<Site> Sites;
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
    const RoleProgram &Pr = RP.Programs[PI];
    for (const RoleItem &It : Pr.Body) {
      if (!It.IsLoop)
        continue;
      const RoleLoop &L = Pr.Loops[It.Index];
      if (!L.Trip || L.Forever ||
          llvm::any_of(L.Body, [](const RoleItem &In) { return In.IsLoop; }))
        continue;
      std::optional<Factors> F = factor(L.Trip, Ctx);
      if (F && (Sites.empty() || F->T == Sites.front().F.T))
        Sites.push_back({PI, It.Index, *F});
    }
  }
  if (Sites.empty())
    return std::nullopt;
  // Loop ids beyond every one the programs use, for the loops this adds.
  LoopId Fresh = 0;
  for (const RoleProgram &Pr : RP.Programs)
    for (const RoleLoop &L : Pr.Loops)
      Fresh = std::max(Fresh, L.Loop + 1);
  Fresh = std::max<LoopId>(Fresh, static_cast<LoopId>(RP.P->Loops.size())) + 1000;
  std::unique_ptr<Solver> Z3 = Solver::createZ3(/*TimeoutMs=*/5000, /*ResourceLimit=*/1000000,
                                                /*Sample=*/false);
  Unflattened Out{RP, {}};
  for (const Site &S : Sites) {
    RoleProgram &Pr = Out.Programs.Programs[S.Program];
    const RoleLoop L = Pr.Loops[S.Loop]; // a copy: the loops grow below
    const Expr *Flat = Ctx.iterationVar(L.Loop);
    LoopId TileId = Fresh++, KId = Fresh++;
    Rewriter Rw(Ctx, *Z3, Flat, Ctx.iterationVar(TileId), Ctx.iterationVar(KId), S.F);
    // The steps of the loop, what they read of i, and what the steps after it read of its
    // count (Triton's epilogue after the loop: the accumulator of tile NT - 1).
    forEachProgramExpr(Pr, [&](const Expr *&E) { E = Rw.rewrite(E); });
    RoleLoop Inner;
    Inner.ProtocolLoop = L.ProtocolLoop;
    Inner.Loop = KId;
    Inner.Trip = S.F.T;
    Inner.Body = L.Body;
    unsigned InnerIndex = static_cast<unsigned>(Pr.Loops.size());
    Pr.Loops.push_back(Inner);
    RoleLoop &Outer = Pr.Loops[S.Loop];
    Outer.Loop = TileId;
    Outer.Trip = S.F.NT;
    Outer.Body = {RoleItem{true, InnerIndex}};
    Out.Loops.push_back({L.ProtocolLoop, S.F.T, S.F.NT});
  }
  // Loops that no k-tile count of at least 1 enters (Triton's path for K < 64, where the
  // partitions do nothing): never run. Their tile counts would otherwise be compared with
  // the others', for nothing.
  const Expr *Param = onlyParameter(Sites.front().F.T);
  const Expr *Domain = paramDomain(Ctx, Param);
  std::set<unsigned> Dead;
  for (RoleProgram &Pr : Out.Programs.Programs)
    for (const RoleItem &It : Pr.Body) {
      if (!It.IsLoop)
        continue;
      const RoleLoop &L = Pr.Loops[It.Index];
      if (!L.When || L.When->isConstant() ||
          !L.When->mentions([&](const Expr *E) { return E == Param; }))
        continue;
      const Expr *Enters =
          L.When->width() == 1 ? L.When : Ctx.ne(L.When, Ctx.constant(0, L.When->width()));
      if (Z3->isValid(Ctx.implies(Domain, Ctx.logicalNot(Enters))).Answer == SolverAnswer::Yes)
        neverRun(Pr, It.Index, Ctx, Dead);
    }
  for (unsigned LI : Dead)
    if (LI < Out.Programs.TripConditions.size())
      Out.Programs.TripConditions[LI].clear();
  return Out;
}

bool wsv::analyzer::parametric::arguedUnflattened(const RolePrograms &RP,
                                                  const ParametricOptions &O,
                                                  ParametricResult &R, ParametricResult &Left) {
  // A launch given in full is explored on the kernel's own programs: they need no
  // condition on its size.
  if (O.Launch)
    return false;
  std::optional<Unflattened> U = unflatten(RP);
  if (!U)
    return false;
  std::set<unsigned> Lines;
  for (const UnflattenedLoop &L : U->Loops)
    Lines.insert(RP.P->Loops[L.ProtocolLoop].Where.PtxLine);
  std::string Where;
  for (unsigned Line : Lines)
    Where += (Where.empty() ? "" : ", ") + std::to_string(Line);
  const std::string Mark = "[tiles and k-tiles as two loops] ";
  // The forms are exact, and t * T + k does not wrap (a ring of 3 slots counted across
  // tiles repeats only where it does not), where T < 2^16 and NT < 2^15: the lemmas assume
  // it, and the statement says it.
  ParametricOptions UO = O;
  UO.TripsBelow = uint64_t(1) << 14;
  UO.TilesBelow = uint64_t(1) << 12;
  // Its periodic systems run 12 tiles of 12 k-tiles where rings of 3 and 2 slots count across
  // tiles: Triton's persistent matmuls need up to 590,000 states in one exploration and 8.1
  // million in all (matmul_subtile_ws). The argument gets 5 times the bound of one
  // exploration and 3 times the budget of all, which a user's lower bounds lower alike.
  auto Scaled = [](uint64_t V, uint64_t By) {
    return V > UINT64_MAX / By ? UINT64_MAX : V * By;
  };
  UO.MaxStates = Scaled(O.MaxStates, 5);
  UO.MaxTotalStates = Scaled(O.MaxTotalStates, 3);
  if (O.OnRun)
    UO.OnRun = [&](const std::string &Run, double Ms) { O.OnRun(Mark + Run, Ms); };
  ParametricResult Part;
  Prover(U->Programs, UO, Part).runAndFallBack();
  for (std::string &Run : Part.Runs)
    Run = Mark + Run;
  switch (Part.Verdict) {
  case ExploreVerdict::Clean:
    // (A count the loop computes as negative, in a CTA past the tiles, reads as 2^32 - n:
    // such launches are not covered.)
    Part.ForParameters += ", where each CTA's count of tiles, as its loop computes it, is "
                          "below 2^12 and its count of k-tiles below 2^14 (the loop(s) at ptx "
                          "line(s) " + Where + " run both in one)";
    R = std::move(Part);
    return true;
  case ExploreVerdict::Unknown:
    // The kernel's own programs get their turn; their verdict keeps this reason.
    Left = std::move(Part);
    return false;
  default:
    break;
  }
  // The same schedule on the kernel's own programs: the rewrite changed no step.
  ExploreResult Again = replay(instantiate(RP, Part.Launch), Part.Found.Schedule, O.StopAtRace);
  if (Again.Verdict != Part.Verdict) {
    Part.Verdict = ExploreVerdict::Unknown;
    Part.Reason = "a schedule of them does not replay on the kernel's (" + Part.Found.Message +
                  ")";
    Left = std::move(Part);
    return false;
  }
  R = std::move(Part);
  return true;
}
