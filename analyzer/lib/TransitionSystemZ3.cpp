//===- TransitionSystemZ3.cpp - the transition system in Z3, and its engines -------===//
//
// The encoding of DESIGN.md (Proofs), in one place. A state is a vector of integers:
//
//   pc[a]            the op agent a runs next (Ops.size() once it has finished)
//   ctr[a][c]        its loop counters (iteration numbers, from 0 in each entry of the loop)
//   saved[a]         the named-barrier generation its pending bar.sync waits to see change
//   exp/pend/par/tx  per mbarrier slot: expected arrivals (0 before the init), pending
//                    arrivals, phase parity, tx-count (bytes still to arrive; may go negative
//                    when a copy completes before its expect_tx)
//   fly[k][s]        async operations of key k (TMA loads, tcgen05.commit arrivals) in flight
//                    towards slot s; each completes at any later step
//   fill[b][s]       whether buffer slot s holds completed data (cleared when a copy into it
//                    starts, set when the copy completes)
//   narr/ngen[n]     per named barrier: threads arrived in this generation, generation parity
//   params           the kernel parameters the expressions mention; never change
//
// A step is one transition, chosen by a `move` number: one agent executing its next op, or
// one in-flight operation completing. Every variable's next value is an if-then-else over the
// moves that change it, so a step is linear in the size of the program. An agent's private
// ops (loop bookkeeping, guards, exits, runs of reads and no-ops) are folded into the move
// before them (foldMoves): the bounded search then needs as many steps as the protocol has
// visible ones, which is what it can afford (h1 at one k-tile: 19 instead of 40). What a
// property does not read is left out of it: fills outside stage safety, and with them the
// copies' buffers (copies that differ only there complete alike).
//
// Properties are predicates on one state (bad states):
//   deadlock: some agent has not finished and no move is enabled (async completions are
//             always enabled while something is in flight, so this is "all blocked");
//   stage:    an agent is about to read a buffer slot whose fill has not completed;
//   hygiene:  an agent is about to use an mbarrier before its init, arrive beyond the
//             pending count, name a slot outside its array, or overfill a named barrier.
//
// Engines: bounded model checking (the states after 0, 1, ... N moves from the initial state,
// one incremental solver; sat gives the schedule) and, when it finds nothing, Spacer on the
// Horn clauses  Init(X) -> Inv(X);  Inv(X) & T(X, X') -> Inv(X');  Inv(X) & Bad(X) -> false
// with the parameters as free arguments of Inv: unsat there is a proof for every parameter
// value the initial state allows. The engines are in TransitionSystemZ3Engines.cpp; Z3
// exceptions stop there and become Unknown verdicts.
//
//===----------------------------------------------------------------------------------===//

#include "TransitionSystemZ3Encoding.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <set>

namespace wsv {
namespace analyzer {
namespace ts {
namespace detail {

void Encoding::layout() {
  for (unsigned A = 0; A < TS.Agents.size(); ++A) {
    const Agent &Ag = TS.Agents[A];
    Pc.push_back(var("pc." + Ag.Name));
    Ctr.emplace_back();
    for (unsigned L : Ag.Counters)
      Ctr.back().push_back(var(Ag.Name + "." + P.loopVar(L)));
    Saved.push_back(var("saved." + Ag.Name));
  }
  auto PerSlot = [&](const char *What, std::vector<std::vector<unsigned>> &Out) {
    for (const Array &Ar : TS.Arrays) {
      Out.emplace_back();
      for (unsigned S = 0; S < Ar.Slots; ++S)
        Out.back().push_back(var(std::string(What) + "." + Ar.Name + "." + std::to_string(S)));
    }
  };
  PerSlot("exp", Exp);
  PerSlot("pend", Pend);
  PerSlot("par", Par);
  PerSlot("tx", Tx);
  for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K) {
    const InFlightKey &Key = TS.InFlightKeys[K];
    // Without fills, copies that differ only in the buffer they fill complete alike: one
    // count for them, and one completion move instead of one per buffer (the order in which
    // A's and B's copies complete no longer multiplies the schedules).
    FlyKey.push_back(K);
    if (!TracksFills)
      for (unsigned Same = 0; Same < K; ++Same) {
        const InFlightKey &O = TS.InFlightKeys[Same];
        if (FlyKey[Same] == Same && O.IsLoad == Key.IsLoad && O.Array == Key.Array &&
            O.Bytes == Key.Bytes) {
          FlyKey[K] = Same;
          break;
        }
      }
    if (FlyKey[K] != K) {
      Fly.push_back(Fly[FlyKey[K]]);
      continue;
    }
    Fly.emplace_back();
    for (unsigned S = 0; S < TS.Arrays[Key.Array].Slots; ++S)
      Fly.back().push_back(var("fly." + std::to_string(K) + "." + std::to_string(S)));
  }
  for (const Buffer &B : TS.Buffers) {
    Fill.emplace_back();
    for (unsigned S = 0; S < B.Slots; ++S)
      Fill.back().push_back(var("fill." + B.Name + "." + std::to_string(S)));
  }
  for (const NamedBarrier &N : TS.NamedBarriers) {
    NArr.push_back(var("narr." + std::to_string(N.Id)));
    NGen.push_back(var("ngen." + std::to_string(N.Id)));
  }
}

z3::expr Encoding::param(const Expr *Leaf) {
  std::string Name = Leaf->name().str();
  auto It = ParamVars.find(Name);
  if (It != ParamVars.end())
    return It->second;
  z3::expr V = C.int_const(("param." + Name).c_str());
  ParamVars.emplace(Name, V);
  return V;
}

z3::expr Encoding::paramValue(const Expr *Leaf) {
  // A fixed parameter is its value in every formula, not a variable that the initial state
  // pins (that too, for the schedule's report): the incremental solver does not propagate
  // the pinned value, and `K / 64 * t` would stay a division and a product of variables.
  z3::expr V = param(Leaf);
  std::string Name = Leaf->name().str();
  for (const auto &[Given, Value] : Options.Params)
    for (const auto &[Symbol, Display] : TS.Params)
      if (Symbol == Name && (Given == Symbol || Given == Display))
        return C.int_val(static_cast<uint64_t>(Value));
  return V;
}

z3::expr Encoding::boolOf(const Expr *E, unsigned Agent) {
  switch (E->kind()) {
  case ExprKind::Constant:
    if (E->width() == 1)
      return C.bool_val(E->payload() != 0);
    break;
  case ExprKind::Not:
    if (E->width() == 1)
      return !boolOf(E->op(0), Agent);
    break;
  case ExprKind::And:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) && boolOf(E->op(1), Agent);
    break;
  case ExprKind::Or:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) || boolOf(E->op(1), Agent);
    break;
  case ExprKind::Xor:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) != boolOf(E->op(1), Agent);
    break;
  case ExprKind::Eq:
    if (E->op(0)->width() == 1)
      return boolOf(E->op(0), Agent) == boolOf(E->op(1), Agent);
    return intOf(E->op(0), Agent) == intOf(E->op(1), Agent);
  case ExprKind::ULt:
  case ExprKind::SLt:
    return intOf(E->op(0), Agent) < intOf(E->op(1), Agent);
  case ExprKind::ULe:
  case ExprKind::SLe:
    return intOf(E->op(0), Agent) <= intOf(E->op(1), Agent);
  case ExprKind::Select:
    return z3::ite(boolOf(E->op(0), Agent), boolOf(E->op(1), Agent), boolOf(E->op(2), Agent));
  default:
    break;
  }
  if (E->width() == 1)
    return intOf(E, Agent) != 0;
  throw EncodeError{"a condition of width " + std::to_string(E->width()) + ": " +
                    P.exprString(E)};
}

z3::expr Encoding::intOf(const Expr *E, unsigned Agent) {
  auto Op = [&](unsigned I) { return intOf(E->op(I), Agent); };
  auto ConstOp = [&](unsigned I) -> std::optional<uint64_t> {
    return E->op(I)->isConstant() ? std::optional<uint64_t>(E->op(I)->payload()) : std::nullopt;
  };
  switch (E->kind()) {
  case ExprKind::Constant: {
    // Values are integers without wraparound (the analyzer assumes counters do not wrap);
    // a constant with its top bit set is a negative addend (`x - 4` is `x + 0xfffffffc`).
    unsigned W = E->width();
    if (W == 1)
      return C.int_val(static_cast<int64_t>(E->payload()));
    int64_t S = E->signedValue();
    return C.int_val(S);
  }
  case ExprKind::Param:
    return paramValue(E);
  case ExprKind::IterationVar: {
    if (Agent != NoIndex)
      for (unsigned I = 0; I < TS.Agents[Agent].Counters.size(); ++I)
        if (TS.Agents[Agent].Counters[I] == E->payload())
          return v(Ctr[Agent][I]);
    throw EncodeError{"iteration number " + P.loopVar(E->payload()) +
                      " used outside its loop"};
  }
  case ExprKind::ZExt:
  case ExprKind::SExt:
  case ExprKind::Trunc:
    return Op(0);
  case ExprKind::Add:
    return Op(0) + Op(1);
  case ExprKind::Mul: {
    // Linear only: one side constant, in the expression or once fixed parameters are in.
    z3::expr A = Op(0).simplify(), B = Op(1).simplify();
    if (!A.is_numeral() && !B.is_numeral())
      throw EncodeError{"a product of two variables: " + P.exprString(E)};
    return A * B;
  }
  case ExprKind::UDiv:
  case ExprKind::SDiv:
  case ExprKind::URem:
  case ExprKind::SRem: {
    bool Div = E->is(ExprKind::UDiv) || E->is(ExprKind::SDiv);
    z3::expr A = Op(0).simplify(), B = Op(1).simplify();
    int64_t By = 0;
    if (!B.is_numeral_i64(By) || By <= 0)
      throw EncodeError{std::string(Div ? "a division" : "a remainder") + " by a variable: " +
                        P.exprString(E)};
    if (int64_t Value = 0; A.is_numeral_i64(Value) && Value >= 0)
      return C.int_val(Div ? Value / By : Value % By);
    return Div ? A / B : z3::mod(A, B);
  }
  case ExprKind::And: {
    if (E->width() == 1)
      return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
    unsigned MaskAt = ConstOp(1) ? 1 : ConstOp(0) ? 0 : 2;
    if (MaskAt == 2)
      throw EncodeError{"a bitwise and of two variables: " + P.exprString(E)};
    uint64_t Mask = *ConstOp(MaskAt);
    z3::expr Value = Op(1 - MaskAt);
    uint64_t WidthMask = E->width() == 64 ? ~0ull : (1ull << E->width()) - 1;
    if ((Mask & (Mask + 1)) == 0) // 2^n - 1: the low n bits
      return z3::mod(Value, C.int_val(static_cast<uint64_t>(Mask + 1)));
    uint64_t Low = ~Mask & WidthMask;
    if ((Low & (Low + 1)) == 0) // all but the low n bits: round down
      return Value - z3::mod(Value, C.int_val(static_cast<uint64_t>(Low + 1)));
    // Contiguous bits 2^a .. 2^b - 1 (a stage times 8 masked to the ring): x mod 2^b minus
    // x mod 2^a.
    uint64_t LowBit = Mask & (~Mask + 1);
    uint64_t Top = Mask + LowBit;
    if (Mask && (Top & (Top - 1)) == 0 && Top != 0)
      return z3::mod(Value, C.int_val(static_cast<uint64_t>(Top))) -
             z3::mod(Value, C.int_val(static_cast<uint64_t>(LowBit)));
    throw EncodeError{"a bitwise and with mask " + std::to_string(Mask)};
  }
  case ExprKind::Xor: {
    if (E->width() == 1)
      return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
    // x ^ 1 on a value that is 0 or 1 (a phase parity) is 1 - x.
    for (unsigned I = 0; I < 2; ++I)
      if (E->op(I)->isConstant(1) && E->op(1 - I)->range().Hi <= 1)
        return 1 - Op(1 - I);
    throw EncodeError{"a bitwise xor: " + P.exprString(E)};
  }
  case ExprKind::UMin:
  case ExprKind::SMin:
    return z3::ite(Op(0) <= Op(1), Op(0), Op(1));
  case ExprKind::UMax:
  case ExprKind::SMax:
    return z3::ite(Op(0) >= Op(1), Op(0), Op(1));
  case ExprKind::Select:
    return z3::ite(boolOf(E->op(0), Agent), Op(1), Op(2));
  case ExprKind::Eq:
  case ExprKind::ULt:
  case ExprKind::ULe:
  case ExprKind::SLt:
  case ExprKind::SLe:
  case ExprKind::Not:
  case ExprKind::Or:
    return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
  default:
    break;
  }
  throw EncodeError{std::string("cannot encode ") + toString(E->kind()) + " in " +
                    P.exprString(E)};
}

z3::expr Encoding::slotSelect(const std::vector<unsigned> &Vars, const z3::expr &Slot) {
  z3::expr R = v(Vars.back());
  for (unsigned S = Vars.size() - 1; S-- > 0;)
    R = z3::ite(Slot == static_cast<int>(S), v(Vars[S]), R);
  return R;
}

/// Arrivals and tx on one slot (chosen by Slot), completing the phase when both reach zero.
void Encoding::phaseStep(Move &M, unsigned Array, const z3::expr &Slot,
                         const z3::expr &Arrivals, const z3::expr &TxDelta) {
  for (unsigned S = 0; S < TS.Arrays[Array].Slots; ++S) {
    z3::expr Here = Slot == static_cast<int>(S);
    z3::expr NewTx = v(Tx[Array][S]) + TxDelta;
    z3::expr NewPend = v(Pend[Array][S]) - Arrivals;
    z3::expr Done = NewTx == 0 && NewPend == 0;
    M.Updates.push_back({Tx[Array][S], z3::ite(Here, NewTx, v(Tx[Array][S]))});
    M.Updates.push_back(
        {Pend[Array][S], z3::ite(Here, z3::ite(Done, v(Exp[Array][S]), NewPend),
                                 v(Pend[Array][S]))});
    M.Updates.push_back(
        {Par[Array][S], z3::ite(Here && Done, 1 - v(Par[Array][S]), v(Par[Array][S]))});
  }
}

void Encoding::agentMoves(unsigned A) {
  const Agent &Ag = TS.Agents[A];
  unsigned End = Ag.Ops.size();
  z3::expr Started = C.bool_val(true);
  for (unsigned B = 0; B < TS.Agents.size(); ++B) {
    const Agent &Other = TS.Agents[B];
    bool Before = (Ag.Starts == Agent::Start::AfterPrologue &&
                   Other.Starts == Agent::Start::AtLaunch) ||
                  (Ag.Starts == Agent::Start::AfterRoles &&
                   Other.Starts != Agent::Start::AfterRoles);
    if (Before)
      Started = Started && v(Pc[B]) == static_cast<int>(Other.Ops.size());
  }
  // A run of reads and no-ops (an MMA's operand reads, fences) is one move: they change
  // nothing but the agent's pc, which no other agent reads while it runs, so any schedule
  // that has another agent's step between two of them can run that step before the first
  // one. A read that would find its buffer unfilled makes the run's first op a bad state.
  // A run ends where a jump lands (its op needs its own pc value).
  auto Private = [&](unsigned I) {
    return I < End && (Ag.Ops[I].Kind == OpKind::Read || Ag.Ops[I].Kind == OpKind::Nop);
  };
  std::vector<bool> Landing(End + 1, false);
  for (const Op &O : Ag.Ops)
    if (O.Kind == OpKind::LoopEnter || O.Kind == OpKind::LoopLatch || O.Kind == OpKind::Guard)
      Landing[O.Target] = true;
  auto InRun = [&](unsigned I) { return I > 0 && Private(I) && Private(I - 1) && !Landing[I]; };
  // Inside a loop its counter is below its trip count: true in every state a run reaches,
  // and said to Z3 with a read's bad state. A read's condition that repeated its loop's own
  // test (`i < param_1`, which the guards leave out where the trip count covers it) was
  // the solver's shortcut there: without it, ring2's bounded search for stage safety ran
  // past its budget at one trip. (With every op's condition, the search for h2's divergent
  // barrier did: only the reads get it.)
  std::vector<z3::expr> InLoops(End, C.bool_val(true));
  for (unsigned I = 0; I < End; ++I) {
    const Op &O = Ag.Ops[I];
    if (O.Kind != OpKind::LoopEnter || O.Target > End)
      continue;
    z3::expr Below = v(Ctr[A][O.Loop]) < (O.Trip ? intOf(O.Trip, A) : C.int_val(0));
    for (unsigned J = I + 1; J < O.Target; ++J)
      InLoops[J] = InLoops[J] && Below;
  }
  // The bad state of a read (its condition included) where the agent is About to run it.
  auto ReadBad = [&](const Op &O, unsigned I, const z3::expr &About) {
    z3::expr When = (O.When ? boolOf(O.When, A) : C.bool_val(true)) && InLoops[I];
    StageWhy.push_back({About && When && slotSelect(Fill[O.Buffer], intOf(O.BufferSlot, A)) == 0,
                        Ag.Name + " reads " + TS.Buffers[O.Buffer].Name +
                            " before a copy into it has completed"});
  };
  unsigned Head = 0;
  for (unsigned I = 0; I < End; ++I) {
    const Op &O = Ag.Ops[I];
    if (!InRun(I))
      Head = I;
    z3::expr At = v(Pc[A]) == static_cast<int>(Head);
    if (Head != I) {
      // Inside a run: no move of its own, only its bad states, at the run's first op.
      if (O.Kind == OpKind::Read)
        ReadBad(O, I, Started && At);
      continue;
    }
    Move M(C);
    M.Agent = A;
    M.OpIndex = I;
    z3::expr When = O.When ? boolOf(O.When, A) : C.bool_val(true);
    z3::expr NextPc = C.int_val(static_cast<int>(I + 1));
    z3::expr Enabled = C.bool_val(true);
    auto Ctrv = [&]() { return v(Ctr[A][O.Loop]); };
    switch (O.Kind) {
    case OpKind::LoopEnter: {
      z3::expr Trip = O.Trip ? intOf(O.Trip, A) : C.int_val(0);
      NextPc = z3::ite(When && 0 < Trip, NextPc, C.int_val(static_cast<int>(O.Target)));
      M.Updates.push_back({Ctr[A][O.Loop], C.int_val(0)});
      When = C.bool_val(true);
      break;
    }
    case OpKind::LoopLatch: {
      z3::expr Trip = O.Trip ? intOf(O.Trip, A) : C.int_val(0);
      NextPc = z3::ite(Ctrv() + 1 < Trip, C.int_val(static_cast<int>(O.Target)), NextPc);
      M.Updates.push_back({Ctr[A][O.Loop], Ctrv() + 1});
      break;
    }
    case OpKind::Guard:
      NextPc = z3::ite(When, NextPc, C.int_val(static_cast<int>(O.Target)));
      When = C.bool_val(true);
      break;
    case OpKind::Init:
      for (unsigned S = 0; S < TS.Arrays[O.Array].Slots; ++S) {
        z3::expr Here = intOf(O.Slot, A) == static_cast<int>(S);
        z3::expr Count = intOf(O.Count, A);
        M.Updates.push_back({Exp[O.Array][S], z3::ite(Here, Count, v(Exp[O.Array][S]))});
        M.Updates.push_back({Pend[O.Array][S], z3::ite(Here, Count, v(Pend[O.Array][S]))});
        M.Updates.push_back({Par[O.Array][S], z3::ite(Here, C.int_val(0), v(Par[O.Array][S]))});
        M.Updates.push_back({Tx[O.Array][S], z3::ite(Here, C.int_val(0), v(Tx[O.Array][S]))});
      }
      break;
    case OpKind::Arrive: {
      z3::expr Count = (O.Count ? intOf(O.Count, A) : C.int_val(1)) *
                       C.int_val(static_cast<int64_t>(O.Times));
      phaseStep(M, O.Array, intOf(O.Slot, A), Count, O.Tx ? intOf(O.Tx, A) : C.int_val(0));
      break;
    }
    case OpKind::ExpectTx:
      phaseStep(M, O.Array, intOf(O.Slot, A), C.int_val(0),
                intOf(O.Tx, A) * C.int_val(static_cast<int64_t>(O.Times)));
      break;
    case OpKind::Wait:
      // try_wait.parity P passes once the phase with parity P has completed: while the
      // current parity differs from P (PTX ISA, mbarrier.test_wait/try_wait).
      Enabled = !When || slotSelect(Par[O.Array], intOf(O.Slot, A)) != intOf(O.Parity, A);
      break;
    case OpKind::AsyncLoad:
    case OpKind::AsyncArrive: {
      z3::expr Slot = intOf(O.Slot, A);
      for (unsigned S = 0; S < Fly[O.InFlightKey].size(); ++S) {
        unsigned F = Fly[O.InFlightKey][S];
        M.Updates.push_back(
            {F, z3::ite(When && Slot == static_cast<int>(S),
                        v(F) + static_cast<int>(O.Times), v(F))});
        if (O.Kind == OpKind::AsyncLoad && O.Buffer != NoIndex && TracksFills)
          M.Updates.push_back({Fill[O.Buffer][S],
                               z3::ite(When && Slot == static_cast<int>(S), C.int_val(0),
                                       v(Fill[O.Buffer][S]))});
      }
      break;
    }
    case OpKind::NamedArrive: {
      const NamedBarrier &N = TS.NamedBarriers[O.Named];
      z3::expr Sum = v(NArr[O.Named]) + static_cast<int>(O.Times);
      z3::expr Full = Sum >= static_cast<int>(N.Threads);
      M.Updates.push_back({NArr[O.Named], z3::ite(When, z3::ite(Full, C.int_val(0), Sum),
                                                  v(NArr[O.Named]))});
      M.Updates.push_back({NGen[O.Named], z3::ite(When && Full, 1 - v(NGen[O.Named]),
                                                  v(NGen[O.Named]))});
      M.Updates.push_back({Saved[A], v(NGen[O.Named])});
      break;
    }
    case OpKind::NamedWait:
      Enabled = !When || v(NGen[O.Named]) != v(Saved[A]);
      break;
    case OpKind::Exit:
      NextPc = z3::ite(When, C.int_val(static_cast<int>(End)), NextPc);
      break;
    case OpKind::Read:
    case OpKind::Nop: {
      // A run with reads has bad states only where fills are tracked (stage safety).
      bool Reads = O.Kind == OpKind::Read;
      unsigned Next = I + 1;
      for (; InRun(Next); ++Next)
        Reads |= Ag.Ops[Next].Kind == OpKind::Read;
      NextPc = C.int_val(static_cast<int>(Next));
      M.Foldable = !Reads || !TracksFills;
      break;
    }
    }
    if (O.Kind == OpKind::LoopEnter || O.Kind == OpKind::LoopLatch ||
        O.Kind == OpKind::Guard || O.Kind == OpKind::Exit)
      M.Foldable = true;
    if (O.When && (O.Kind == OpKind::Init || O.Kind == OpKind::Arrive ||
                   O.Kind == OpKind::ExpectTx)) {
      // A skipped event changes nothing.
      for (auto &[Var, Value] : M.Updates)
        Value = z3::ite(When, Value, v(Var));
    }
    if (O.Slot)
      M.SlotE = intOf(O.Slot, A);
    if (O.Parity)
      M.ParityE = intOf(O.Parity, A);
    if (O.Tx)
      M.TxE = intOf(O.Tx, A);
    M.WhenE = When;
    M.Updates.push_back({Pc[A], NextPc});
    M.Guard = Started && At && Enabled;
    Moves.push_back(std::move(M));

    // Bad states at this op.
    z3::expr Here = Started && At && When;
    if (O.Kind == OpKind::Read)
      ReadBad(O, I, Started && At);
    if (O.Array != NoIndex && O.Kind != OpKind::Init) {
      z3::expr Slot = intOf(O.Slot, A);
      unsigned Slots = TS.Arrays[O.Array].Slots;
      std::string Name = TS.Arrays[O.Array].Name;
      HygieneWhy.push_back({Here && (Slot < 0 || Slot >= static_cast<int>(Slots)),
                            Ag.Name + " names a slot of " + Name + " outside its " +
                                std::to_string(Slots)});
      HygieneWhy.push_back({Here && slotSelect(Exp[O.Array], Slot) == 0,
                            Ag.Name + " uses " + Name + " before its mbarrier.init"});
      if (O.Kind == OpKind::Arrive) {
        z3::expr Count = (O.Count ? intOf(O.Count, A) : C.int_val(1)) *
                         C.int_val(static_cast<int64_t>(O.Times));
        HygieneWhy.push_back({Here && slotSelect(Exp[O.Array], Slot) != 0 &&
                                  Count > slotSelect(Pend[O.Array], Slot),
                              Ag.Name + " arrives on " + Name +
                                  " more times than the phase has pending arrivals"});
      }
    }
    if (O.Kind == OpKind::NamedArrive)
      HygieneWhy.push_back(
          {Here && v(NArr[O.Named]) + static_cast<int>(O.Times) >
                       static_cast<int>(TS.NamedBarriers[O.Named].Threads),
           Ag.Name + " arrives on named barrier " +
               std::to_string(TS.NamedBarriers[O.Named].Id) + " beyond its thread count"});
  }
}

/// Folds into each of agent A's moves the foldable moves that follow it at a pc known once
/// it has run: their updates, applied to the state after it. The states between are gone;
/// none of them is a bad state (a foldable op has none, and an agent at one is never
/// blocked), and no other agent reads this one's pc or counters on the way (only whether it
/// has finished), so the bounded search reaches the same bad states in fewer steps. Moves
/// of the folded ops stay for the jumps that land on them.
void Encoding::foldMoves(unsigned A, unsigned FirstMove) {
  std::map<unsigned, unsigned> ByOp;
  for (unsigned M = FirstMove; M < Moves.size(); ++M)
    ByOp[Moves[M].OpIndex] = M;
  // A bound on the chain: loop bookkeeping nests as deep as the loops, and a pc that comes
  // back to where the chain started (a loop of bookkeeping alone) stops it.
  const unsigned MaxFolds = 8;
  for (unsigned M = FirstMove; M < Moves.size(); ++M) {
    std::set<unsigned> Seen = {Moves[M].OpIndex};
    for (unsigned Fold = 0; Fold < MaxFolds; ++Fold) {
      Move &Mv = Moves[M];
      std::optional<z3::expr> NextPc;
      for (const auto &[Var, Value] : Mv.Updates)
        if (Var == Pc[A])
          NextPc = Value.simplify();
      int64_t Next = 0;
      if (!NextPc || !NextPc->is_numeral_i64(Next) || !Seen.insert(Next).second)
        break;
      auto It = ByOp.find(static_cast<unsigned>(Next));
      if (It == ByOp.end() || !Moves[It->second].Foldable)
        break;
      const Move &J = Moves[It->second];
      z3::expr_vector From(C), To(C);
      for (const auto &[Var, Value] : Mv.Updates) {
        From.push_back(v(Var));
        To.push_back(Value);
      }
      std::vector<std::pair<unsigned, z3::expr>> After;
      for (const auto &[Var, Value] : J.Updates) {
        z3::expr E = Value;
        After.push_back({Var, E.substitute(From, To)});
      }
      for (auto &[Var, Value] : After) {
        auto Same = llvm::find_if(Mv.Updates, [&](const auto &U) { return U.first == Var; });
        if (Same != Mv.Updates.end())
          Same->second = Value;
        else
          Mv.Updates.push_back({Var, Value});
      }
    }
  }
}

void Encoding::buildMoves() {
  for (unsigned A = 0; A < TS.Agents.size(); ++A) {
    unsigned First = Moves.size();
    agentMoves(A);
    foldMoves(A, First);
  }
  for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K) {
    const InFlightKey &Key = TS.InFlightKeys[K];
    if (FlyKey[K] != K)
      continue; // completed by its representative's moves
    for (unsigned S = 0; S < Fly[K].size(); ++S) {
      Move M(C);
      M.Key = K;
      M.Slot = S;
      M.Guard = v(Fly[K][S]) > 0;
      M.Updates.push_back({Fly[K][S], v(Fly[K][S]) - 1});
      z3::expr Slot = C.int_val(static_cast<int>(S));
      if (Key.IsLoad) {
        phaseStep(M, Key.Array, Slot, C.int_val(0),
                  C.int_val(-static_cast<int64_t>(Key.Bytes)));
        if (Key.Buffer != NoIndex && TracksFills)
          M.Updates.push_back({Fill[Key.Buffer][S], C.int_val(1)});
      } else {
        HygieneWhy.push_back({M.Guard && v(Exp[Key.Array][S]) != 0 && v(Pend[Key.Array][S]) < 1,
                              "a commit arrives on " + TS.Arrays[Key.Array].Name +
                                  " with no pending arrival left"});
        phaseStep(M, Key.Array, Slot, C.int_val(1), C.int_val(0));
      }
      Moves.push_back(std::move(M));
    }
  }
}

void Encoding::buildProperties() {
  Finished = C.bool_val(true);
  for (unsigned A = 0; A < TS.Agents.size(); ++A)
    Finished = Finished && v(Pc[A]) == static_cast<int>(TS.Agents[A].Ops.size());
  z3::expr AnyEnabled = C.bool_val(false);
  for (const Move &M : Moves)
    AnyEnabled = AnyEnabled || M.Guard;
  Deadlock = !Finished && !AnyEnabled;
  Stage = C.bool_val(false);
  for (auto &[Cond, Why] : StageWhy)
    Stage = Stage || Cond;
  Hygiene = C.bool_val(false);
  for (auto &[Cond, Why] : HygieneWhy)
    Hygiene = Hygiene || Cond;

  // The initial state: every agent at its first op, barriers not initialized, nothing in
  // flight, no buffer filled; parameters in their 32-bit range and any fixed values.
  InitState = C.bool_val(true);
  for (unsigned I = 0; I < X.size(); ++I)
    InitState = InitState && v(I) == 0;
  for (auto &[Name, Var] : ParamVars)
    InitState = InitState && Var >= 0 && Var <= C.int_val(static_cast<uint64_t>(0xffffffffu));
  for (const Expr *A : TS.ParamAssumptions)
    InitState = InitState && boolOf(A, NoIndex);
  for (const auto &[Name, Value] : Options.Params)
    for (const auto &[Symbol, Display] : TS.Params)
      if (Name == Symbol || Name == Display) {
        auto It = ParamVars.find(Symbol);
        if (It != ParamVars.end())
          InitState = InitState && It->second == C.int_val(static_cast<uint64_t>(Value));
      }
}

z3::expr Encoding::next(const z3::expr &MoveVar, unsigned VarIndex,
                        const std::vector<std::vector<std::pair<unsigned, z3::expr>>> &ByVar) {
  z3::expr R = v(VarIndex);
  for (const auto &[MoveIndex, Value] : ByVar[VarIndex])
    R = z3::ite(MoveVar == static_cast<int>(MoveIndex), Value, R);
  return R;
}

std::string Encoding::forParameters() const {
  std::string S;
  for (const auto &[Symbol, Display] : TS.Params) {
    if (!ParamVars.count(Symbol))
      continue;
    bool Fixed = false;
    for (const auto &[Name, Value] : Options.Params)
      if (Name == Symbol || Name == Display) {
        S += (S.empty() ? "" : ", ") + Display + " = " + std::to_string(Value);
        Fixed = true;
      }
    if (!Fixed)
      S += (S.empty() ? "every " : ", every ") + Display + " < 2^32";
  }
  for (const Expr *A : TS.ParamAssumptions)
    S += (S.empty() ? "" : ", ") + P.exprString(A);
  return S.empty() ? "the kernel has no parameters the protocol depends on" : S;
}

std::string Encoding::moveText(const Move &M) const {
  if (M.Agent == NoIndex)
    return TS.InFlightKeys[M.Key].Text + "[" + std::to_string(M.Slot) + "]";
  return TS.Agents[M.Agent].Ops[M.OpIndex].Text;
}

} // namespace detail
} // namespace ts
} // namespace analyzer
} // namespace wsv
