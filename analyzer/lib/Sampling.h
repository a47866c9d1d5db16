//===- Sampling.h - expressions evaluated over sample values of their leaves ------===//
//
// Barrier identity and the protocol's readable forms ask questions like "which byte offsets
// can this address take" and "is this parity the same function as ((k / 4) & 1) ^ 1". The
// closed forms only mention iteration numbers, kernel parameters and special registers, so
// evaluating them on a grid of sample values answers the first exactly (for the iteration
// numbers sampled) and the second as a check on every sample. Sampling never decides
// anything sound by itself: what it finds is a name for a value the IR keeps exactly.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/ThreadSet.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace wsv {
namespace analyzer {

class Sampler {
public:
  /// MaxIterations, when given, bounds each loop's iteration numbers (by LoopId).
  explicit Sampler(const LaunchShape &Launch, llvm::ArrayRef<uint64_t> MaxIterations = {})
      : Launch(Launch), MaxIterations(MaxIterations) {}

  /// One value per leaf of the expressions last enumerated.
  using Assignment = llvm::ArrayRef<std::pair<const Expr *, uint64_t>>;

  /// Calls F for each assignment of sample values to the leaves of Exprs (stopping when F
  /// returns false). False when a leaf has no sample values (a phi, a load, a symbol's
  /// address) or there would be more than Limit assignments.
  bool forEach(llvm::ArrayRef<const Expr *> Exprs, llvm::function_ref<bool(Assignment)> F,
               unsigned Limit = 4096) const;

  /// E's value under an assignment of its leaves.
  static std::optional<uint64_t> evaluate(const Expr *E, Assignment A);

  /// E flattened once for evaluating it on every sample of one forEach: the same values as
  /// evaluate(E, A), without a memo built per call (the protocol listing compares closed
  /// forms of hundreds of nodes on thousands of samples). Its leaves' places in the
  /// assignments are found on the first one: forEach keeps the order.
  class Flat {
  public:
    explicit Flat(const Expr *E) : F(E), In(F.leaves().size()) {}
    std::optional<uint64_t> operator()(Assignment A);

  private:
    FlatExpr F;
    std::vector<std::optional<uint64_t>> In;
    std::vector<int> Place; ///< index into the assignment, or -1; empty until the first call
  };

  /// The values E takes over the samples; std::nullopt when it cannot be sampled.
  std::optional<std::set<uint64_t>> values(const Expr *E, unsigned Limit = 4096) const;

  /// Whether A and B agree on every sample (and there was at least one).
  bool agree(const Expr *A, const Expr *B, unsigned Limit = 4096) const;

  /// Iteration numbers are sampled from 0 up to this (exclusive) while the grid stays small.
  static constexpr unsigned IterationSamples = 12;

private:
  bool sampleValues(const Expr *Leaf, unsigned Iterations,
                    llvm::SmallVectorImpl<uint64_t> &Out) const;
  LaunchShape Launch;
  llvm::ArrayRef<uint64_t> MaxIterations;
};

} // namespace analyzer
} // namespace wsv
