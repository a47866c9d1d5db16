//===- Values.h - symbolic values of registers, per instruction -------------------===//
//
// Registers are written many times in PTX; ValueAnalysis gives each read the value of the
// definition that reaches it, as an Expr. It walks the blocks in reverse post-order, one loop
// at a time (a loop's blocks are finished before anything after the loop), keeping the value
// of every register at the end of each block:
//
//  - Where paths join and disagree, a two-way join below a conditional branch becomes a select
//    on the branch condition (a gated phi: `s = c ? 0 : s + 1` written as a diamond); other
//    joins become Phi leaves whose incoming values phiInfo() lists.
//  - At a loop header, every register the loop writes becomes a Phi leaf. When the body is
//    done, the values carried back along the latches are matched against the induction
//    shapes of Induction.h, the trip count is derived, and registers leaving the loop get
//    their value after the last iteration (the closed form at the trip count), or an Opaque
//    leaf saying why not.
//  - Instructions map to expressions (add, mad, mul.wide, shifts, setp, selp, cvt, bfe, ...);
//    ld.param of a kernel parameter is a Param leaf; mov of a variable, cvta and `sym+16` are
//    symbol addresses; mapa is MapA; elect.sync's predicate is an Elect leaf; loads from other
//    spaces are Load leaves; what is not modelled (floating point, mul.hi of unknowns,
//    try_wait results) is an Opaque leaf with the reason. A predicated instruction writes
//    guard ? new : old.
//  - Inlined calls pass values through their `.param` cells: a callee's ld.param of its
//    formal parameter reads what the caller stored into the actual one.
//
// closedForm() replaces the phis of recognized induction variables by their closed forms in
// the iteration numbers, so a wait's parity reads `p0 ^ (((s0 + i) / S) & 1)`.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Cfg.h"
#include "wsv/analyzer/Dominators.h"
#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/Induction.h"
#include "wsv/analyzer/Loops.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>

namespace wsv {
namespace analyzer {

class Solver;
class ValueBuilder;

/// What flows into a Phi leaf.
struct PhiInfo {
  BlockId Block = NoIndex;
  RegId Register = 0;
  /// Loop headers: the loop; the incoming values are the entry value, then the latch values.
  LoopId Loop = NoIndex;
  llvm::SmallVector<std::pair<BlockId, const Expr *>, 2> Incoming;
};

class ValueAnalysis {
public:
  /// Runs the analysis. S, when given, is asked to prove implications the builders cannot
  /// see syntactically (that a loop-skipping branch means a zero trip count).
  ValueAnalysis(const Cfg &G, const DominatorTree &Dom, const LoopInfo &Loops,
                ExprContext &Ctx, Solver *S = nullptr);
  ~ValueAnalysis();
  ValueAnalysis(const ValueAnalysis &) = delete;
  ValueAnalysis &operator=(const ValueAnalysis &) = delete;

  const Cfg &cfg() const { return G; }
  const LoopInfo &loops() const { return Loops; }
  ExprContext &context() const { return Ctx; }

  //===- Instructions ----------------------------------------------------------------===//
  /// Elements of top-level operand Op of I: 1 for a scalar or an address, n for `{a, b, ...}`
  /// and for `d|p`.
  unsigned numElements(InstId I, unsigned Op) const;
  /// The value of element Element of operand Op: for a source, what it reads before I runs;
  /// for a destination, what I writes (guard ? new : old when predicated); for an address
  /// `[base+off]`, base + off. nullptr for a sink `_`, a label, or a list.
  const Expr *operand(InstId I, unsigned Op, unsigned Element = 0) const;
  /// Whether operand Op of I is written by it.
  bool isDestination(InstId I, unsigned Op) const;
  /// The guard's value with `!` applied; nullptr when I is not predicated.
  const Expr *guard(InstId I) const;

  //===- Registers and control -------------------------------------------------------===//
  /// The register a name means at I, if it is one.
  std::optional<RegId> registerAt(InstId I, llvm::StringRef Name) const;
  llvm::StringRef registerName(RegId R) const;
  unsigned numRegisters() const;
  /// The value of R just before I runs.
  const Expr *valueBefore(InstId I, RegId R) const;
  /// The value of R at the end of B (nullptr when B was not evaluated).
  const Expr *valueAtEnd(BlockId B, RegId R) const;
  /// When a thread at the end of From takes the edge to To, in the values at the end of
  /// From: the branch predicate, its negation, an index test for brx.idx, or true.
  const Expr *edgeCondition(BlockId From, BlockId To) const;

  //===- Joins and loops ---------------------------------------------------------------===//
  const PhiInfo *phiInfo(const Expr *Phi) const;
  const LoopSummary &loopSummary(LoopId L) const;
  /// E with the phis of recognized induction variables replaced by their closed forms.
  const Expr *closedForm(const Expr *E) const;
  /// Whether E has the same value in every iteration of L.
  bool isLoopInvariant(const Expr *E, LoopId L) const;
  /// The block an opaque, load, elect or phi leaf comes from (NoIndex for other leaves).
  BlockId leafBlock(const Expr *Leaf) const;
  /// Whether no thread reaches B: every way in is an edge whose branch conditions contradict
  /// (the impossible default of clang's comparison tree for an exhaustive switch, which
  /// exits), as the trip counts of loops with several exits found.
  bool isDeadBlock(BlockId B) const;

  /// Induction variables and trip counts of every loop, for debugging and golden tests.
  void print(llvm::raw_ostream &OS) const;

private:
  friend class ValueBuilder;
  const Cfg &G;
  const LoopInfo &Loops;
  ExprContext &Ctx;
  std::unique_ptr<ValueBuilder> Impl;
};

} // namespace analyzer
} // namespace wsv
