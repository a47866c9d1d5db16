//===- ExploreParametricLastTiles.cpp - the last tiles a k-loop's test tells apart ----===//
//
// Triton's Hopper persistent matmul, its loop of tiles x k-tiles made two, guards the copy of
// a k-tile two ahead with `t + 2 < NT || ...` (ExploreUnflatten.cpp): the last two tiles run
// other steps than the ones before. The argument keeps those tiles after the cycle of tiles
// (LastTiles raises the tile threshold), and asks a k-loop's expression once before them and
// once in them, with such tests decided: true or false before them, and in them one value
// at the same distance from the end of both launches (ExploreParametric.cpp says why).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

std::optional<uint64_t> Prover::tileDistance(const Expr *X, const Expr *Count,
                                             const RoleLoop &TL) const {
  if (Count != NT && Count != TL.Trip)
    return std::nullopt;
  const Expr *D = Ctx.sub(X, Ctx.resize(Ctx.iterationVar(TL.Loop), X->width()));
  if (!D->isConstant() || D->payload() < 1 || D->payload() > 64)
    return std::nullopt;
  return D->payload();
}

unsigned Prover::lastTilesTold() const {
  unsigned Most = 0;
  for (const Use &U : Uses) {
    if (!U.InTile || U.VaryingLoop == NoIndex)
      continue;
    const RoleLoop &TL = RP.Programs[U.Program].Loops[TileLoop[U.Program]];
    llvm::SmallVector<const Expr *, 16> Work{U.E};
    llvm::SmallPtrSet<const Expr *, 16> Seen;
    while (!Work.empty()) {
      const Expr *N = Work.pop_back_val();
      if (!Seen.insert(N).second || N->isLeaf())
        continue;
      Work.append(N->ops().begin(), N->ops().end());
      if (!N->is(ExprKind::ULt) && !N->is(ExprKind::Eq))
        continue;
      if (std::optional<uint64_t> A = tileDistance(N->op(0), N->op(1), TL); A && *A <= 4)
        Most = std::max<unsigned>(Most, unsigned(*A));
    }
  }
  return Most;
}

const Expr *Prover::onLastTiles(const Use &U, bool Last) {
  const RoleLoop &TL = RP.Programs[U.Program].Loops[TileLoop[U.Program]];
  auto Leaf = [&](const char *Test, uint64_t A) {
    return Ctx.param(Ctx.save("wsv.last_tiles." + std::string(Test) + std::to_string(A)), 0, 1);
  };
  return Ctx.rewrite(U.E, [&](const Expr *N) -> const Expr * {
    if (N->is(ExprKind::ULt) || N->is(ExprKind::ULe)) {
      // `NT <= t + a` is the builders' form of !(t + a < NT).
      const bool Negated = N->is(ExprKind::ULe);
      std::optional<uint64_t> A = Negated ? tileDistance(N->op(1), N->op(0), TL)
                                          : tileDistance(N->op(0), N->op(1), TL);
      if (!A)
        return nullptr;
      const Expr *V = !Last ? (*A <= LastTiles ? Ctx.boolean(true) : nullptr)
                            : (*A >= LastTiles ? Ctx.boolean(false) : Leaf("lt", *A));
      return V && Negated ? Ctx.logicalNot(V) : V;
    }
    if (N->is(ExprKind::Eq)) {
      std::optional<uint64_t> A = tileDistance(N->op(0), N->op(1), TL);
      if (!A)
        A = tileDistance(N->op(1), N->op(0), TL);
      if (!A)
        return nullptr;
      return !Last ? (*A <= LastTiles ? Ctx.boolean(false) : nullptr) : Leaf("eq", *A);
    }
    return nullptr;
  });
}
