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
  // Dividing by -1 negates (in unsigned arithmetic: the most negative number divided by -1
  // overflows, which traps on x86).
  case ExprKind::SDiv:
    if (S1 == -1)
      return (0 - V[0]) & M;
    return S1 ? std::optional<uint64_t>(static_cast<uint64_t>(S0 / S1) & M) : std::nullopt;
  case ExprKind::SRem:
    if (S1 == -1)
      return 0;
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


//===- Flattened expressions -----------------------------------------------------===//

FlatExpr::FlatExpr(const Expr *E) {
  // Slots: leaves (constants among them) first, then the nodes, each after its operands.
  llvm::DenseMap<const Expr *, uint32_t> Slot;
  std::vector<const Expr *> Order;
  llvm::SmallVector<std::pair<const Expr *, bool>, 32> Work{{E, false}};
  llvm::DenseMap<const Expr *, bool> Entered;
  while (!Work.empty()) {
    auto [N, OpsDone] = Work.pop_back_val();
    if (N->isLeaf()) {
      if (Slot.try_emplace(N, Leaves.size()).second)
        Leaves.push_back(N);
      continue;
    }
    if (OpsDone) {
      Order.push_back(N);
      continue;
    }
    if (!Entered.try_emplace(N, true).second)
      continue;
    Work.push_back({N, true});
    for (const Expr *Op : llvm::reverse(N->ops()))
      Work.push_back({Op, false});
  }
  uint32_t Next = Leaves.size();
  for (const Expr *N : Order) {
    Node Out{N, {0, 0, 0}};
    for (unsigned K = 0; K < N->ops().size() && K < 3; ++K)
      Out.Ops[K] = Slot.lookup(N->op(K));
    Slot[N] = Next++;
    Nodes.push_back(Out);
  }
  Value.assign(Next, 0);
  Known.assign(Next, 0);
}

std::optional<uint64_t>
FlatExpr::evaluate(llvm::ArrayRef<std::optional<uint64_t>> Values) const {
  for (size_t I = 0; I < Leaves.size(); ++I) {
    std::optional<uint64_t> V =
        Leaves[I]->isConstant() ? std::optional<uint64_t>(Leaves[I]->payload()) : Values[I];
    Value[I] = V.value_or(0);
    Known[I] = V.has_value();
  }
  size_t Slot = Leaves.size();
  for (const Node &N : Nodes) {
    std::optional<uint64_t> V;
    if (N.E->is(ExprKind::Select)) {
      // Only the chosen arm counts, as in ExprContext::evaluate.
      uint32_t Arm = Value[N.Ops[0]] ? N.Ops[1] : N.Ops[2];
      if (Known[N.Ops[0]] && Known[Arm])
        V = Value[Arm];
    } else {
      unsigned Count = std::min<unsigned>(N.E->ops().size(), 2);
      uint64_t Ops[2] = {Value[N.Ops[0]], Count > 1 ? Value[N.Ops[1]] : 0};
      if (Known[N.Ops[0]] && (Count < 2 || Known[N.Ops[1]]))
        V = ExprContext::apply(N.E, llvm::ArrayRef<uint64_t>(Ops, Count));
    }
    Value[Slot] = V.value_or(0);
    Known[Slot++] = V.has_value();
  }
  if (Nodes.empty())
    return Known[0] ? std::optional<uint64_t>(Value[0]) : std::nullopt;
  return Known.back() ? std::optional<uint64_t>(Value.back()) : std::nullopt;
}
