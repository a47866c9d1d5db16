//===- ExprLinear.h - sums in canonical linear form -------------------------------===//
//
// A sum c0 + k1*t1 + ... + kn*tn over non-constant terms t, coefficients modulo 2^width.
// Building every Add and constant multiple through this form is what makes (x + 1) + 2 equal
// x + 3, x - x equal 0, and (x / 32) * 32 + x % 32 equal x.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace wsv {
namespace analyzer {

struct LinearForm {
  unsigned Width = 32;
  llvm::SmallVector<std::pair<const Expr *, uint64_t>, 4> Terms; ///< term, coefficient
  uint64_t Constant = 0;

  /// Adds Scale * E, looking through Add and constant Mul.
  void addScaled(const Expr *E, uint64_t Scale);
  /// Sorts terms by id, merges equal ones, drops zero coefficients and applies the
  /// division/remainder identities (x/c)*c + x%c = x and x - x%c = (x/c)*c.
  void normalize(ExprContext &Ctx);
  bool isConstant() const { return Terms.empty(); }
};

/// Builds the canonical expression of a normalized form.
const Expr *buildLinear(ExprContext &Ctx, const LinearForm &L);
/// Whether the top bit of a coefficient is set (it reads as negative).
bool isNegativeCoefficient(uint64_t C, unsigned Width);

} // namespace analyzer
} // namespace wsv
