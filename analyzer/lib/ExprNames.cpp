//===- ExprNames.cpp - which recurring subterms of long expressions get a name -------===//
//
// The expressions form a DAG (the context builds each term once). Visited parents before
// children, a term's count is the number of places the text prints it: the sum over its
// parents of their counts, where a named parent counts once (its definition). A term printed
// twice or more and big enough is named; numbering follows the first time a definition is
// complete, innermost first, so each definition uses only smaller numbers.
//
// Dropping a name that stands for too little afterwards only adds to its parts' counts, so
// the parts stay named.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/ExprNames.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace wsv::analyzer;

namespace {
/// Nodes a definition has besides the names in it, at the least.
constexpr uint64_t MinOwnNodes = 4;
} // namespace

void ExprNames::add(const Expr *E) {
  if (E && !Chosen)
    Roots.push_back(printedExpr(E));
}

void ExprNames::choose(unsigned MinNodes) {
  Chosen = true;
  // Post-order over the printed operands of every root, each term once.
  std::vector<const Expr *> Post;
  llvm::DenseSet<const Expr *> Seen;
  std::vector<std::pair<const Expr *, unsigned>> Stack;
  llvm::DenseMap<const Expr *, llvm::SmallVector<const Expr *, 4>> Operands;
  for (const Expr *Root : Roots) {
    if (!Seen.insert(Root).second)
      continue;
    Stack.push_back({Root, 0});
    Operands[Root] = printedOperands(Root);
    while (!Stack.empty()) {
      auto &[E, Next] = Stack.back();
      const auto &Ops = Operands[E];
      if (Next < Ops.size()) {
        const Expr *O = Ops[Next++];
        if (Seen.insert(O).second) {
          Operands[O] = printedOperands(O);
          Stack.push_back({O, 0});
        }
        continue;
      }
      Post.push_back(E);
      Stack.pop_back();
    }
  }
  // Sizes, children first; capped so that deep sharing cannot overflow.
  llvm::DenseMap<const Expr *, uint64_t> Size;
  for (const Expr *E : Post) {
    uint64_t S = 1;
    for (const Expr *O : Operands[E])
      S = std::min<uint64_t>(S + Size[O], 1u << 30);
    Size[E] = S;
  }
  // Counts, parents first.
  llvm::DenseMap<const Expr *, uint64_t> Count;
  for (const Expr *Root : Roots)
    ++Count[Root];
  llvm::DenseSet<const Expr *> Chose;
  for (auto It = Post.rbegin(); It != Post.rend(); ++It) {
    const Expr *E = *It;
    uint64_t C = Count[E];
    if (C >= 2 && Size[E] >= MinNodes && !E->isLeaf())
      Chose.insert(E);
    uint64_t Each = Chose.count(E) ? 1 : C;
    for (const Expr *O : Operands[E])
      Count[O] = std::min<uint64_t>(Count[O] + Each, 1u << 30);
  }
  // A name that would stand for a few nodes around other names (`-$9`, `k + $27`) reads
  // worse than the nodes themselves: such terms are printed out again.
  llvm::DenseMap<const Expr *, uint64_t> Own;
  for (const Expr *E : Post) {
    uint64_t S = 1;
    for (const Expr *O : Operands[E])
      S = std::min<uint64_t>(S + (Chose.count(O) ? 1 : Own[O]), 1u << 30);
    Own[E] = S;
    if (S < MinOwnNodes)
      Chose.erase(E);
  }
  for (const Expr *E : Post)
    if (Chose.count(E)) {
      Named.push_back(E);
      Names[E] = "$" + std::to_string(Named.size());
    }
}

llvm::StringRef ExprNames::nameOf(const Expr *E) const {
  auto It = Names.find(E);
  return It == Names.end() ? llvm::StringRef() : llvm::StringRef(It->second);
}
