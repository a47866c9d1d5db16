//===- Induction.h - induction variables, ring counters, trip counts, spin waits --===//
//
// What ValueAnalysis learns about each natural loop once its body has been evaluated:
//
//  - Induction variables: registers carried around the loop whose value in iteration i (from
//    0, the IterationVar leaf of the loop) has a closed form. Linear counters
//    (v = s0 + step * i), ring counters as pipelines write them (stage = (s0 + i) mod S, by
//    `s = s + 1 == S ? 0 : s + 1`, `s = (s + 1) & (S - 1)` or `s = (s + 1) % S`), phase bits
//    that flip when a ring counter wraps (parity = p0 ^ (((s0 + i) / S) & 1)) or every iteration
//    (p ^= 1), and flags that only the first iteration sees. A ring advanced by an inner loop
//    of T iterations per outer iteration is a ring of step T in the outer loop, so a stage
//    carried across persistent tiles gets a closed form in the outer iteration number and the
//    inner trip count. A ring advanced only where another ring of the loop is at one value
//    (Triton's accumulator ring in a loop over tiles and k-tiles as one, advanced at the last
//    k-tile) is a gated ring: it advanced as often as that value came up in the iterations
//    before, ((i + S - 1 - d) / S with d the first such iteration); its phase likewise.
//
//  - Trip counts: how many times the header runs, symbolic in kernel parameters and special
//    registers, for loops with one exit test on an induction variable, with the conditions
//    under which the formula holds (K >= 64 for a do-while over K / 64 tiles). A condition that
//    a branch dominating the loop already establishes is marked discharged.
//
//  - Spin waits: a loop whose only work is an mbarrier.try_wait or test_wait and the branch on
//    its result is one blocking wait (barrier and parity operands), in the shapes compilers
//    write: a wait loop inside an inline-asm scope, a selp of the result tested outside the
//    scope, Triton's `@!complete bra.uni waitLoop`.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/Loops.h"
#include "wsv/models/SyncOp.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace wsv {
namespace analyzer {

/// A register (or a `.param` cell of a call sequence) of one frame, numbered densely.
using RegId = unsigned;

enum class InductionKind : uint8_t {
  Linear,         ///< Start + Step * i
  Ring,           ///< (Start + Step * i) mod Modulus
  Parity,         ///< Start ^ (((RingStart + RingStep * i) / Modulus) & 1), flips when Ring wraps
  Alternating,    ///< Start ^ (i & 1)
  FirstIteration, ///< Start in iteration 0, Next afterwards
  Lagged,         ///< Start in iteration 0, then what induction variable Ring was one before
  Carried,        ///< Start in iteration 0, then its latch value as of the iteration before:
                  ///< a function of other induction variables and loop invariants
  Gated,          ///< (Start + Step * Advances) mod Modulus: a ring advanced only in the
                  ///< iterations where Gate holds, Advances of them before iteration i
};
const char *toString(InductionKind K);

struct InductionVar {
  InductionKind Kind = InductionKind::Linear;
  RegId Register = 0;
  const Expr *Phi = nullptr;     ///< the header's phi leaf that loop values refer to
  const Expr *Start = nullptr;   ///< value entering the loop
  const Expr *Update = nullptr;  ///< value carried back to the header (in terms of Phi)
  const Expr *Step = nullptr;    ///< Linear, Ring
  const Expr *Modulus = nullptr; ///< Ring, Parity
  /// Parity: index of the ring counter in the same summary; Lagged: of the variable it
  /// trails.
  unsigned Ring = NoIndex;
  const Expr *Next = nullptr;    ///< FirstIteration
  const Expr *ClosedForm = nullptr; ///< value in iteration i
  /// Ring: the value of iteration 1 where the start lies outside 0 .. Modulus - 1 (Triton's
  /// `s = -1; do { s = s + 1 > 2 ? 0 : s + 1; ... }`): the ring runs from there, and
  /// iteration 0 keeps the start. nullptr otherwise.
  const Expr *Peeled = nullptr;
  /// Gated (and a Parity of a Gated ring): the condition, on another ring of the loop,
  /// under which the update runs (Triton's accumulator ring in a loop that runs tiles and
  /// k-tiles as one: advanced when the k-tile ring is at its last stage), and how many
  /// earlier iterations it held in, in terms of the iteration number.
  const Expr *Gate = nullptr;
  const Expr *Advances = nullptr;
  /// What must hold for ClosedForm to be exact (a ring's start below its modulus).
  llvm::SmallVector<const Expr *, 1> Conditions;
};

struct TripCondition {
  const Expr *Condition = nullptr;
  bool Discharged = false; ///< established by a branch that dominates the loop
};

struct TripCount {
  enum class Kind : uint8_t { Counted, SpinWait, Unknown };
  Kind K = Kind::Unknown;
  /// Counted: how many times the header runs per entry into the loop.
  const Expr *HeaderRuns = nullptr;
  /// Counted: full iterations of the body. Equals HeaderRuns, except for a while loop (the
  /// exit test in the header and work after it), whose blocks after the test run
  /// HeaderRuns - 1 times.
  const Expr *Iterations = nullptr;
  llvm::SmallVector<TripCondition, 2> Conditions;
  /// Counted: where this holds, the loop never ends (its counter's step is zero and the test
  /// passes at the start: `tile += step` with a step of 0 for some threads); nullptr where
  /// every count is finite. Conditions then fail, so Iterations means nothing there.
  const Expr *Forever = nullptr;
  BlockId ExitingBlock = NoIndex;
  bool ExitTestInHeader = false;
  /// Unknown: why no count could be given.
  std::string Reason;

  bool isCounted() const { return K == Kind::Counted; }
};

/// A loop that only waits on an mbarrier: one blocking wait for later passes.
struct SpinWait {
  InstId Wait = NoIndex;          ///< the mbarrier.try_wait / test_wait occurrence
  models::SyncOp Op;              ///< its decoded record (scope, semantics, operand roles)
  const Expr *Barrier = nullptr;  ///< the barrier's address
  const Expr *Parity = nullptr;   ///< `.parity` forms: the phase parity waited for
  const Expr *State = nullptr;    ///< state-token forms: the token
  bool IsTestWait = false;
};

struct LoopSummary {
  LoopId Loop = NoIndex;
  llvm::SmallVector<InductionVar, 4> Inductions;
  TripCount Trip;
  std::optional<SpinWait> Spin;

  /// The induction variable whose header phi is Phi, or nullptr.
  const InductionVar *induction(const Expr *Phi) const;
};

} // namespace analyzer
} // namespace wsv
