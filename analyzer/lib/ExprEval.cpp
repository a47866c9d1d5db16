//===- ExprEval.cpp - expressions evaluated on concrete values --------------------===//
#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace wsv::analyzer;

//===- Evaluation ------------------------------------------------------------------------===//

static int64_t toSigned(uint64_t V, unsigned Width) {
  if (Width >= 64)
    return static_cast<int64_t>(V);
  uint64_t Sign = 1ull << (Width - 1);
  return static_cast<int64_t>((V ^ Sign) - Sign);
}

std::optional<uint64_t> ExprContext::apply(const Expr *N, llvm::ArrayRef<uint64_t> V) {
  const uint64_t M = mask(N->width());
  if (N->is(ExprKind::Select))
    return V[0] ? V[1] : V[2];
  const unsigned W = N->op(0)->width();
  const int64_t S0 = toSigned(V[0], W), S1 = V.size() > 1 ? toSigned(V[1], W) : 0;
  const uint64_t V1 = V.size() > 1 ? V[1] : 0;
  switch (N->kind()) {
  case ExprKind::ZExt: return V[0];
  case ExprKind::SExt: return static_cast<uint64_t>(S0) & M;
  case ExprKind::Trunc: return V[0] & M;
  case ExprKind::Not: return ~V[0] & M;
  case ExprKind::Add: return (V[0] + V1) & M;
  case ExprKind::Mul: return (V[0] * V1) & M;
  case ExprKind::UDiv: return V1 ? std::optional<uint64_t>(V[0] / V1) : std::nullopt;
  case ExprKind::URem: return V1 ? std::optional<uint64_t>(V[0] % V1) : std::nullopt;
  case ExprKind::SDiv:
    return S1 ? std::optional<uint64_t>(static_cast<uint64_t>(S0 / S1) & M) : std::nullopt;
  case ExprKind::SRem:
    return S1 ? std::optional<uint64_t>(static_cast<uint64_t>(S0 % S1) & M) : std::nullopt;
  case ExprKind::Shl: return V1 >= W ? 0 : (V[0] << V1) & M;
  case ExprKind::LShr: return V1 >= W ? 0 : V[0] >> V1;
  case ExprKind::AShr: return static_cast<uint64_t>(S0 >> std::min<uint64_t>(V1, W - 1)) & M;
  case ExprKind::And: return V[0] & V1;
  case ExprKind::Or: return V[0] | V1;
  case ExprKind::Xor: return V[0] ^ V1;
  case ExprKind::UMin: return std::min(V[0], V1);
  case ExprKind::UMax: return std::max(V[0], V1);
  case ExprKind::SMin: return static_cast<uint64_t>(std::min(S0, S1)) & M;
  case ExprKind::SMax: return static_cast<uint64_t>(std::max(S0, S1)) & M;
  case ExprKind::MulHiU:
    return static_cast<uint64_t>((static_cast<unsigned __int128>(V[0]) * V1) >> W) & M;
  case ExprKind::Eq: return V[0] == V1;
  case ExprKind::ULt: return V[0] < V1;
  case ExprKind::ULe: return V[0] <= V1;
  case ExprKind::SLt: return S0 < S1;
  case ExprKind::SLe: return S0 <= S1;
  default: return std::nullopt; // MapA: an address in another CTA has no single number
  }
}

namespace {
/// Evaluation with a memo for shared subexpressions; most predicates are small, so the memo
/// lives on the stack.
class Evaluator {
public:
  explicit Evaluator(llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf)
      : Leaf(Leaf) {}

  std::optional<uint64_t> eval(const Expr *N) {
    if (N->isConstant())
      return N->payload();
    if (N->isLeaf())
      return Leaf(N);
    auto It = Memo.find(N);
    if (It != Memo.end())
      return It->second;
    std::optional<uint64_t> Result = compute(N);
    Memo[N] = Result;
    return Result;
  }

private:
  std::optional<uint64_t> compute(const Expr *N) {
    // Selects evaluate only the chosen arm, so an unknown in the other arm does not matter.
    if (N->is(ExprKind::Select)) {
      std::optional<uint64_t> C = eval(N->op(0));
      return C ? eval(N->op(*C ? 1 : 2)) : std::nullopt;
    }
    uint64_t V[2] = {0, 0};
    for (unsigned K = 0; K < N->ops().size() && K < 2; ++K) {
      std::optional<uint64_t> X = eval(N->op(K));
      if (!X)
        return std::nullopt;
      V[K] = *X;
    }
    return ExprContext::apply(N, llvm::ArrayRef<uint64_t>(V, N->ops().size()));
  }

  llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf;
  llvm::SmallDenseMap<const Expr *, std::optional<uint64_t>, 32> Memo;
};
} // namespace

std::optional<uint64_t>
ExprContext::evaluate(const Expr *E,
                      llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf) {
  return Evaluator(Leaf).eval(E);
}

