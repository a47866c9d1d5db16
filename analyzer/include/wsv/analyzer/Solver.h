//===- Solver.h - questions about expressions, answered by an SMT solver ----------===//
//
// The one door to Z3. Callers ask about Exprs and get values back: Yes, No, or Unknown with
// the reason (a timeout, an encoding limit). No Z3 type or exception crosses this header.
//
// Encoding (lib/SolverZ3.cpp): every expression is a bit vector of its width (predicates are
// 1-bit vectors); every leaf that is not a constant is a free variable constrained to the
// unsigned range the builders gave it (%tid.x <= 1023, %laneid <= 31, ...); mapa is an
// uninterpreted function of the address and the rank. Division by zero follows SMT-LIB, where
// PTX leaves the result unspecified; the analyzer does not ask about divisions by zero.
// A predicate whose operations all have an exact linear reading is asked over integers
// first, each value as its unsigned value with the wraps spelled out
// (lib/SolverZ3Integers.h): the same answers, found without reasoning about carries. Where
// Z3 gives up on it there, the bit-vector encoding is asked.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace wsv {
namespace analyzer {

enum class SolverAnswer : uint8_t { Yes, No, Unknown };

struct SolverResult {
  SolverAnswer Answer = SolverAnswer::Unknown;
  std::string Reason; ///< why the answer is Unknown
};

struct ModelCount {
  std::optional<uint64_t> Count; ///< nullopt: more than the limit, or the solver gave up
  std::string Reason;
};

class Solver {
public:
  /// A solver backed by Z3; each query gives up after ResourceLimit units of Z3's resource
  /// count (its `rlimit`; 0: no limit) or TimeoutMs milliseconds, whichever comes first.
  /// The count is the same on any machine and under any load, so where it binds first the
  /// answers do not depend on them; the time then only stops a query gone wrong. The
  /// default bounds the lint checks' queries: the largest that succeeds on the reference
  /// kernels and the corpus takes about 860,000 units (0.3 s here). Sample: first try up
  /// to 2,000 values of the leaves for an answer without Z3; off for claims that only
  /// hold-or-fail under constraints few values meet (exploreAllTrips's lemmas, where it
  /// found nothing and took a fifth of their time). Integers: ask a linear predicate over
  /// integers first (off: bit-vectors only, which the tests compare it with).
  static std::unique_ptr<Solver> createZ3(unsigned TimeoutMs = 5000,
                                          uint64_t ResourceLimit = 1500000,
                                          bool Sample = true, bool Integers = true);
  virtual ~Solver();

  /// Whether the predicate holds for every value of its leaves.
  virtual SolverResult isValid(const Expr *Predicate) = 0;
  /// The same, giving up (Unknown) after at most Budget units of the resource count, for a
  /// question that has a cheaper way to an answer when this one takes long.
  virtual SolverResult isValidWithin(const Expr *Predicate, uint64_t Budget) = 0;
  /// Whether some value of its leaves makes the predicate true.
  virtual SolverResult isSatisfiable(const Expr *Predicate) = 0;
  /// How many assignments of Vars (leaves, each within its range) make the predicate true
  /// for some value of the other leaves: models are enumerated, each blocked once found,
  /// up to Limit.
  virtual ModelCount countModels(const Expr *Predicate, llvm::ArrayRef<const Expr *> Vars,
                                 unsigned Limit) = 0;
};

/// Whether the Z3 solvers ask whether Predicate is valid over integers first: every
/// operation in it has an exact linear reading (lib/SolverZ3Integers.h), given the bounds
/// its negation's conjuncts set.
bool hasLinearReading(const Expr *Predicate);

} // namespace analyzer
} // namespace wsv
