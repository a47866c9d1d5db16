//===- TransitionSystemZ3Encoding.h - the Z3 encoding's state, shared by its engines ===//
//
// Private to TransitionSystemZ3.cpp (the encoding: layout, expressions, moves, properties)
// and TransitionSystemZ3Engines.cpp (bounded model checking, Spacer, reading a model back
// into a schedule). Nothing else includes z3++.h.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "TransitionSystemZ3.h"

#include <z3++.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace ts {
namespace detail {

/// E's value where Z3 has simplified it to a number.
std::optional<int64_t> numeral(const z3::expr &E);

/// An expression the encoding cannot express in linear integer arithmetic.
struct EncodeError {
  std::string Reason;
};

struct Move {
  unsigned Agent = NoIndex; ///< NoIndex for a completion
  unsigned OpIndex = NoIndex;
  unsigned Key = NoIndex;   ///< completions: the in-flight key
  unsigned Slot = 0;        ///< completions: the slot
  unsigned Cta = 0;         ///< completions: the CTA whose barrier it reaches
  std::string Text;         ///< how a schedule prints it, where not its op's text (a run)
  z3::expr Guard;
  std::vector<std::pair<unsigned, z3::expr>> Updates; ///< variable index, next value
  /// What a schedule prints about the step, over the state before it.
  std::optional<z3::expr> SlotE, ParityE, TxE, WhenE;
  /// An agent's op that touches nothing but its own pc and counters and has no bad state
  /// (loop bookkeeping, a guard, an exit, a run of no-ops): foldMoves() runs it as part of
  /// the move before it.
  bool Foldable = false;
  explicit Move(z3::context &C) : Guard(C.bool_val(true)) {}
};

class Encoding {
public:
  Encoding(z3::context &C, const Protocol &P, const TransitionSystem &TS,
           const VerifyOptions &Options)
      : C(C), P(P), TS(TS), Options(Options), X(C) {}

  Verdict check(Property Prop);

private:
  z3::context &C;
  const Protocol &P;
  const TransitionSystem &TS;
  const VerifyOptions &Options;
  /// Whether buffer fills are updated: only stage safety reads them (no other bad state or
  /// guard does), so the other properties leave them at their initial value, and a run of
  /// reads has no bad state to keep (it folds).
  bool TracksFills = true;

  // Layout. Per-CTA state is indexed CTA first: Exp[arr(c, a)], Fly[key(c, k)],
  // Fill[buf(c, b)], NArr[named(c, n)].
  z3::expr_vector X; ///< the state variables
  std::vector<std::string> Names;
  std::vector<unsigned> Pc, Saved;
  std::vector<std::vector<unsigned>> Ctr;
  std::vector<std::vector<unsigned>> Exp, Pend, Par, Tx, Fly, Fill;
  /// Per in-flight key, the key whose counts it shares (itself, or an earlier key that
  /// completes alike when fills are not tracked).
  std::vector<unsigned> FlyKey;
  /// The order of one thread's tcgen05.commit arrivals (TransitionSystem::Assumptions):
  /// per commit key and slot, parallel to Fly, the commit in flight there as its issuer's
  /// sequence number and the issuer (-1 for both where no order is known: several commits
  /// there at once, or one from several threads); per agent, the count of its commits.
  std::vector<std::vector<unsigned>> Stamp, Issuer;
  std::vector<unsigned> CommitSeq;
  /// Whether commit (key Kf, slot S of CTA Cta) may land now: no earlier commit of its
  /// issuer is still in flight.
  z3::expr inOrder(unsigned Cta, unsigned Kf, unsigned S);
  std::vector<unsigned> NArr, NGen;
  /// barrier.cluster: threads arrived in this generation, generation parity, and per agent
  /// 0 (not arrived) or 1 + the generation parity it arrived in. NoIndex / empty when unused.
  unsigned CArr = NoIndex, CGen = NoIndex;
  std::vector<unsigned> CSaved;
  unsigned arr(unsigned Cta, unsigned Array) const { return Cta * TS.Arrays.size() + Array; }
  unsigned key(unsigned Cta, unsigned Key) const { return Cta * TS.InFlightKeys.size() + Key; }
  unsigned buf(unsigned Cta, unsigned Buffer) const { return Cta * TS.Buffers.size() + Buffer; }
  unsigned named(unsigned Cta, unsigned N) const { return Cta * TS.NamedBarriers.size() + N; }
  /// `@cta1` where the model has several CTAs, else nothing.
  std::string at(unsigned Cta) const {
    return TS.Ctas > 1 ? "@cta" + std::to_string(Cta) : std::string();
  }
  /// Every agent of the CTA has finished: its barriers and shared memory are gone.
  z3::expr exited(unsigned Cta);
  /// Whether agent A's op O reaches CTA Cta's barrier (its own, a peer's through mapa, or
  /// one of its multicast mask); false where it cannot.
  z3::expr reaches(const Op &O, unsigned A, unsigned Cta);
  std::map<std::string, z3::expr> ParamVars;
  std::vector<Move> Moves;
  z3::expr Deadlock{C}, Stage{C}, Hygiene{C}, InitState{C}, Finished{C};
  std::vector<std::pair<z3::expr, std::string>> StageWhy, HygieneWhy;

  /// A new state variable. Z3 constants are their names: two loops of one agent that both
  /// count `k` would share one counter (and a move that steps one of them would have no
  /// next state, ending every path there), so a repeated name gets the variable's number.
  unsigned var(const std::string &Name) {
    std::string Unique = Name;
    if (!UsedNames.insert(Name).second)
      Unique += "#" + std::to_string(X.size());
    X.push_back(C.int_const(Unique.c_str()));
    Names.push_back(Unique);
    UsedNames.insert(Unique);
    return X.size() - 1;
  }
  std::set<std::string> UsedNames;
  z3::expr v(unsigned I) const { return X[I]; }
  void layout();
  z3::expr param(const Expr *Leaf);
  /// The parameter's fixed value (VerifyOptions::Params) when it has one, else param().
  z3::expr paramValue(const Expr *Leaf);
  z3::expr intOf(const Expr *E, unsigned Agent);
  z3::expr boolOf(const Expr *E, unsigned Agent);
  z3::expr slotSelect(const std::vector<unsigned> &Vars, const z3::expr &Slot);
  void buildMoves();
  void agentMoves(unsigned A);
  void foldMoves(unsigned A, unsigned FirstMove);
  /// Arrivals and tx on CTA Cta's slot Slot of Array (none where Slot matches no slot).
  void phaseStep(Move &M, unsigned Cta, unsigned Array, const z3::expr &Slot,
                 const z3::expr &Arrivals, const z3::expr &TxDelta);
  void buildProperties();
  /// The next value of variable VarIndex in a step that takes the moves Taken (at most one
  /// of which writes it).
  z3::expr next(const z3::expr_vector &Taken, unsigned VarIndex,
                const std::vector<std::vector<std::pair<unsigned, z3::expr>>> &ByVar);
  /// Pairs of moves that may not run in one step: one writes a variable the other reads or
  /// writes.
  std::vector<std::pair<unsigned, unsigned>> conflicts() const;
  /// Why a bounded search that neither refuted nor exhausted stopped (Verdict::Reason).
  std::string BmcStop;
  Verdict bmc(Property Prop, const z3::expr &Bad, unsigned &Bound, bool &Exhausted,
              std::chrono::steady_clock::time_point Deadline);
  Verdict spacer(Property Prop, const z3::expr &Bad, unsigned TimeoutMs);
  Verdict schedule(Property Prop, const z3::model &M, const std::vector<z3::expr_vector> &States,
                   const std::vector<z3::expr_vector> &StepMoves, const z3::expr &Bad);
  std::string moveText(const Move &M) const;
  std::string forParameters() const;
};

} // namespace detail
} // namespace ts
} // namespace analyzer
} // namespace wsv
