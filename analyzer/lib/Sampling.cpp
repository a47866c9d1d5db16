//===- Sampling.cpp - expressions evaluated over sample values of their leaves ----===//
#include "Sampling.h"

#include "llvm/ADT/DenseSet.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

void collectLeaves(const Expr *E, llvm::DenseSet<const Expr *> &Seen,
                   llvm::SmallVectorImpl<const Expr *> &Leaves) {
  if (!Seen.insert(E).second)
    return;
  if (E->isLeaf()) {
    if (!E->isConstant())
      Leaves.push_back(E);
    return;
  }
  for (const Expr *Op : E->ops())
    collectLeaves(Op, Seen, Leaves);
}

} // namespace

bool Sampler::sampleValues(const Expr *Leaf, unsigned Iterations,
                           llvm::SmallVectorImpl<uint64_t> &Out) const {
  switch (Leaf->kind()) {
  case ExprKind::IterationVar: {
    uint64_t Bound = Iterations;
    if (Leaf->payload() < MaxIterations.size())
      Bound = std::min<uint64_t>(Bound, std::max<uint64_t>(1, MaxIterations[Leaf->payload()]));
    for (unsigned I = 0; I < Bound; ++I)
      Out.push_back(I);
    return true;
  }
  case ExprKind::Param:
    // Pointers and tensor maps do not enter the values sampled here; sizes do, and GEMM sizes
    // are multiples of the tile: one tile, a few, an odd count, and a large one; 96 and 160
    // for kernels whose k-tile is 32 (a form that holds for multiples of 64 only is wrong
    // there).
    if (Leaf->width() > 32) {
      Out.push_back(0);
      return true;
    }
    for (uint64_t V : {64u, 96u, 128u, 160u, 192u, 320u, 4096u})
      Out.push_back(V);
    return true;
  case ExprKind::SpecialReg:
    switch (Leaf->specialRegister()) {
    case SpecialRegister::TidX:
      // Both sides of every warp and warpgroup boundary.
      for (unsigned T = 0; T < Launch.BlockX; T += 32) {
        Out.push_back(T);
        Out.push_back(T + 1);
        Out.push_back(T + 31);
      }
      return true;
    case SpecialRegister::TidY:
    case SpecialRegister::TidZ:
      Out.push_back(0);
      return true;
    case SpecialRegister::LaneId:
      for (uint64_t V : {0u, 1u, 31u})
        Out.push_back(V);
      return true;
    case SpecialRegister::NtidX:
      Out.push_back(Launch.BlockX);
      return true;
    case SpecialRegister::NtidY:
    case SpecialRegister::NtidZ:
      Out.push_back(1);
      return true;
    case SpecialRegister::ClusterCtaRank:
    case SpecialRegister::ClusterCtaidX:
      for (unsigned R = 0; R < std::max(1u, Launch.ClusterSize); ++R)
        Out.push_back(R);
      return true;
    case SpecialRegister::ClusterNctaRank:
    case SpecialRegister::ClusterNctaidX:
      Out.push_back(std::max(1u, Launch.ClusterSize));
      return true;
    case SpecialRegister::CtaidX:
    case SpecialRegister::CtaidY:
    case SpecialRegister::CtaidZ:
      for (uint64_t V : {0u, 1u, 3u})
        Out.push_back(V);
      return true;
    case SpecialRegister::NctaidX:
      for (uint64_t V : {4u, 132u})
        Out.push_back(V);
      return true;
    default:
      return false;
    }
  default:
    return false;
  }
}

bool Sampler::forEach(llvm::ArrayRef<const Expr *> Exprs, llvm::function_ref<bool(Assignment)> F,
                      unsigned Limit) const {
  llvm::DenseSet<const Expr *> Seen;
  llvm::SmallVector<const Expr *, 8> Leaves;
  for (const Expr *E : Exprs)
    collectLeaves(E, Seen, Leaves);
  // Fewer iteration samples when several loops' numbers meet, down to one full ring of 4.
  llvm::SmallVector<llvm::SmallVector<uint64_t, 16>, 8> Values;
  for (unsigned Iterations = IterationSamples;; Iterations -= 2) {
    Values.assign(Leaves.size(), {});
    uint64_t Total = 1;
    for (unsigned L = 0; L < Leaves.size(); ++L) {
      if (!sampleValues(Leaves[L], Iterations, Values[L]))
        return false;
      Total *= Values[L].size();
      if (Total > Limit)
        break;
    }
    if (Total <= Limit)
      break;
    if (Iterations <= 6)
      return false;
  }
  llvm::SmallVector<std::pair<const Expr *, uint64_t>, 8> Current(Leaves.size());
  llvm::SmallVector<unsigned, 8> Pos(Leaves.size(), 0);
  while (true) {
    for (unsigned L = 0; L < Leaves.size(); ++L)
      Current[L] = {Leaves[L], Values[L][Pos[L]]};
    if (!F(Current))
      return true;
    unsigned L = 0;
    for (; L < Leaves.size(); ++L) {
      if (++Pos[L] < Values[L].size())
        break;
      Pos[L] = 0;
    }
    if (L == Leaves.size())
      return true;
  }
}

std::optional<uint64_t> Sampler::evaluate(const Expr *E, Assignment A) {
  return ExprContext::evaluate(E, [&](const Expr *Leaf) -> std::optional<uint64_t> {
    for (const auto &[L, V] : A)
      if (L == Leaf)
        return V;
    return std::nullopt;
  });
}

std::optional<uint64_t> Sampler::Flat::operator()(Assignment A) {
  if (Place.size() != In.size()) {
    Place.assign(In.size(), -1);
    for (size_t I = 0; I < In.size(); ++I)
      for (size_t J = 0; J < A.size(); ++J)
        if (A[J].first == F.leaves()[I])
          Place[I] = static_cast<int>(J);
  }
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = Place[I] < 0 ? std::nullopt : std::optional<uint64_t>(A[Place[I]].second);
  return F.evaluate(In);
}

std::optional<std::set<uint64_t>> Sampler::values(const Expr *E, unsigned Limit) const {
  std::set<uint64_t> Out;
  bool Failed = false;
  Flat FlatE(E);
  bool Complete = forEach({E}, [&](Assignment A) {
    std::optional<uint64_t> V = FlatE(A);
    if (!V) {
      Failed = true;
      return false;
    }
    Out.insert(*V);
    return true;
  }, Limit);
  if (!Complete || Failed)
    return std::nullopt;
  return Out;
}

bool Sampler::agree(const Expr *A, const Expr *B, unsigned Limit) const {
  if (A == B)
    return true;
  if (A->width() != B->width())
    return false;
  bool Same = true, Any = false;
  Flat FlatA(A), FlatB(B);
  bool Complete = forEach({A, B}, [&](Assignment S) {
    std::optional<uint64_t> VA = FlatA(S), VB = FlatB(S);
    if (!VA || !VB) {
      // Division by zero at this sample (a trip count of zero tiles): not a disagreement.
      return true;
    }
    Any = true;
    Same = *VA == *VB;
    return Same;
  }, Limit);
  return Complete && Any && Same;
}
