//===- ExprNames.h - long expressions with their recurring parts named --------------===//
//
// The closed forms of persistent and stream-K schedules repeat large terms many times: h6's
// stream-K tile count `(%nctaid.x < 133 && ... ? N / 256 * M / 256 % (%nctaid.x / 2) : 0)`
// recurs dozens of times in one trip condition, which printed plainly runs to 30,000
// characters. ExprNames chooses the subterms worth a name (printed at least twice, at least
// MinNodes nodes) over one expression or over every long expression of a listing; the
// printer writes them as $1, $2, ... and their definitions once.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

class ExprNames {
public:
  /// Counts the subterms of E as the printer writes them, one per occurrence in the text.
  /// Only before choose().
  void add(const Expr *E);
  /// Names every subterm that the added expressions print at least twice (counting a named
  /// term's own parts once, in its definition) and that has at least MinNodes nodes.
  void choose(unsigned MinNodes = 6);
  bool chosen() const { return Chosen; }
  /// `$n` for a named subterm, else empty.
  llvm::StringRef nameOf(const Expr *E) const;
  /// The named subterms by number: each after the ones its definition uses.
  llvm::ArrayRef<const Expr *> named() const { return Named; }

private:
  std::vector<const Expr *> Roots;
  llvm::DenseMap<const Expr *, std::string> Names;
  std::vector<const Expr *> Named;
  bool Chosen = false;
};

/// E without the width changes the printer looks through (it prints their operand).
const Expr *printedExpr(const Expr *E);
/// The operands the printer writes of E, width changes looked through: a sum's terms (a
/// negated term's positive part), a comparison's sides for `!=`, and so on.
llvm::SmallVector<const Expr *, 4> printedOperands(const Expr *E);

} // namespace analyzer
} // namespace wsv
