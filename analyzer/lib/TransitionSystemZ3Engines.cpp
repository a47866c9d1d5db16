//===- TransitionSystemZ3Engines.cpp - bounded search, Spacer, schedules -----------===//
//
// The engines over the encoding of TransitionSystemZ3.cpp: bounded model checking (one
// incremental solver, one step of the transition relation per depth, a step being a set of
// independent moves), Spacer on one Horn
// clause per move, and the reading of a model back into a schedule. Z3 exceptions stop here.
//
//===----------------------------------------------------------------------------------===//

#include "TransitionSystemZ3Encoding.h"
#include "SolverZ3Deadline.h"

#include <algorithm>
#include <map>
#include <set>

namespace wsv {
namespace analyzer {
namespace ts {
namespace detail {

Verdict Encoding::schedule(Property Prop, const z3::model &M,
                           const std::vector<z3::expr_vector> &States,
                           const std::vector<z3::expr_vector> &StepMoves, const z3::expr &Bad) {
  Verdict V;
  V.K = Verdict::Kind::Counterexample;
  V.Prop = Prop;
  V.Engine = "bmc";
  auto At = [&](const z3::expr &E, unsigned Step) {
    z3::expr_vector From = X, To = States[Step];
    z3::expr Copy = E;
    return M.eval(Copy.substitute(From, To), true);
  };
  auto Int = [&](const z3::expr &E, unsigned Step) -> int64_t {
    int64_t R = 0;
    At(E, Step).is_numeral_i64(R);
    return R;
  };
  for (auto &[Symbol, Var] : ParamVars) {
    std::string Display = Symbol;
    for (const auto &[S, D] : TS.Params)
      if (S == Symbol)
        Display = D;
    int64_t Value = 0;
    M.eval(Var, true).is_numeral_i64(Value);
    V.Parameters[Display] = static_cast<uint64_t>(Value);
  }
  // The moves of one step are independent: any order of them is a schedule; they print in
  // the order of the moves, with the step's number.
  unsigned Shown = 0;
  for (unsigned I = 0; I < StepMoves.size(); ++I) {
    bool Printed = false;
    for (unsigned MoveIndex = 0; MoveIndex < Moves.size(); ++MoveIndex) {
      if (!M.eval(StepMoves[I][MoveIndex], true).is_true())
        continue;
      const Move &Mv = Moves[MoveIndex];
      VerifyStep Step;
      Step.What = moveText(Mv);
      if (Mv.Agent == NoIndex) {
        Step.Agent = "async";
        Step.Barrier = TS.Arrays[TS.InFlightKeys[Mv.Key].Array].Name;
        Step.Slot = Mv.Slot;
        if (TS.InFlightKeys[Mv.Key].IsLoad)
          Step.TxBytes = TS.InFlightKeys[Mv.Key].Bytes;
      } else {
        const Agent &Ag = TS.Agents[Mv.Agent];
        const Op &O = Ag.Ops[Mv.OpIndex];
        // Loop bookkeeping, skipped events and reads that find their data are not part of
        // the story.
        if (O.Kind == OpKind::LoopEnter || O.Kind == OpKind::LoopLatch ||
            O.Kind == OpKind::Guard || O.Kind == OpKind::Nop || O.Kind == OpKind::Read ||
            O.Kind == OpKind::NamedWait || (Mv.WhenE && At(*Mv.WhenE, I).is_false()))
          continue;
        Step.Agent = Ag.Name;
        Step.Event = O.Event;
        if (O.Event != NoIndex) {
          const Event &E = P.Events[O.Event];
          Step.PtxLine = E.Where.PtxLine;
          if (const CudaFrame *F = E.Where.kernelFrame())
            Step.Source = F->File + ":" + std::to_string(F->Line);
        }
        if (O.Array != NoIndex)
          Step.Barrier = TS.Arrays[O.Array].Name;
        if (Mv.SlotE)
          Step.Slot = static_cast<uint64_t>(Int(*Mv.SlotE, I));
        if (Mv.ParityE)
          Step.Parity = static_cast<uint64_t>(Int(*Mv.ParityE, I));
        if (Mv.TxE)
          Step.TxBytes = static_cast<uint64_t>(Int(*Mv.TxE, I));
        for (unsigned Cn = 0; Cn < Ag.Counters.size(); ++Cn)
          Step.Iterations += (Step.Iterations.empty() ? "" : " ") + P.loopVar(Ag.Counters[Cn]) +
                             "=" + std::to_string(Int(v(Ctr[Mv.Agent][Cn]), I));
      }
      Step.Step = Shown;
      Printed = true;
      V.Schedule.push_back(std::move(Step));
    }
    Shown += Printed;
  }
  unsigned Last = States.size() - 1;
  for (unsigned A = 0; A < TS.Agents.size(); ++A) {
    const Agent &Ag = TS.Agents[A];
    int64_t Pcv = Int(v(Pc[A]), Last);
    AgentState S;
    S.Agent = Ag.Name;
    if (Pcv >= static_cast<int64_t>(Ag.Ops.size())) {
      S.State = "finished";
    } else {
      const Op &O = Ag.Ops[Pcv];
      for (const Move &Mv : Moves)
        if (Mv.Agent == A && Mv.OpIndex == static_cast<unsigned>(Pcv)) {
          S.Blocked = At(Mv.Guard, Last).is_false();
          if (Mv.SlotE)
            S.Slot = static_cast<uint64_t>(Int(*Mv.SlotE, Last));
          if (Mv.ParityE)
            S.Parity = static_cast<uint64_t>(Int(*Mv.ParityE, Last));
        }
      if (O.Array != NoIndex)
        S.Barrier = TS.Arrays[O.Array].Name;
      if (O.Named != NoIndex)
        S.NamedId = TS.NamedBarriers[O.Named].Id;
      S.State = std::string(S.Blocked ? "blocked at " : "at ") + O.Text;
      if (O.Event != NoIndex)
        S.PtxLine = P.Events[O.Event].Where.PtxLine;
      for (unsigned Cn = 0; Cn < Ag.Counters.size(); ++Cn)
        S.Iterations += (S.Iterations.empty() ? "" : " ") + P.loopVar(Ag.Counters[Cn]) + "=" +
                        std::to_string(Int(v(Ctr[A][Cn]), Last));
    }
    V.FinalAgents.push_back(S);
  }
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (unsigned B = 0; B < TS.Arrays.size(); ++B)
      for (unsigned S = 0; S < TS.Arrays[B].Slots; ++S) {
        unsigned Ai = arr(Cta, B);
        BarrierState St;
        St.Name = TS.Arrays[B].Name +
                  (TS.Arrays[B].Slots > 1 ? "[" + std::to_string(S) + "]" : "") + at(Cta);
        St.Pending = Int(v(Pend[Ai][S]), Last);
        St.Phase = static_cast<uint64_t>(Int(v(Par[Ai][S]), Last));
        St.TxCount = Int(v(Tx[Ai][S]), Last);
        for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K)
          if (TS.InFlightKeys[K].Array == B && FlyKey[K] == K)
            St.InFlight += static_cast<uint64_t>(Int(v(Fly[key(Cta, K)][S]), Last));
        V.FinalBarriers.push_back(St);
      }
  if (Prop == Property::DeadlockFreedom) {
    V.Reason = "every unfinished agent is blocked and nothing is in flight:";
    for (const AgentState &S : V.FinalAgents)
      if (S.State != "finished")
        V.Reason += " " + S.Agent + " " + S.State + ";";
    V.Reason.pop_back();
  } else {
    for (const auto &[Cond, Why] : Prop == Property::StageSafety ? StageWhy : HygieneWhy)
      if (At(Cond, Last).is_true()) {
        V.Reason = Why;
        break;
      }
  }
  (void)Bad;
  return V;
}

namespace {

/// Z3's count of work done in S's context so far (the statistic its `rlimit` bounds):
/// unlike time, the same on any machine and under any load.
double resourceCount(const z3::solver &S) {
  z3::stats St = S.statistics();
  for (unsigned I = 0; I < St.size(); ++I)
    if (St.key(I) == "rlimit count")
      return St.is_uint(I) ? St.uint_value(I) : St.double_value(I);
  return 0;
}

} // namespace

z3::expr Encoding::next(const z3::expr_vector &Taken, unsigned VarIndex,
                        const std::vector<std::vector<std::pair<unsigned, z3::expr>>> &ByVar) {
  z3::expr R = v(VarIndex);
  for (const auto &[MoveIndex, Value] : ByVar[VarIndex])
    R = z3::ite(Taken[MoveIndex], Value, R);
  return R;
}

std::vector<std::pair<unsigned, unsigned>> Encoding::conflicts() const {
  std::map<unsigned, unsigned> VarOf; // Z3 AST id -> state variable
  for (unsigned I = 0; I < X.size(); ++I)
    VarOf[X[I].id()] = I;
  auto Collect = [&](const z3::expr &E, std::set<unsigned> &Out, std::set<unsigned> &Seen) {
    std::vector<z3::expr> Todo = {E};
    while (!Todo.empty()) {
      z3::expr T = Todo.back();
      Todo.pop_back();
      if (!T.is_app() || !Seen.insert(T.id()).second)
        continue;
      if (T.num_args() == 0) {
        if (auto It = VarOf.find(T.id()); It != VarOf.end())
          Out.insert(It->second);
        continue;
      }
      for (unsigned I = 0; I < T.num_args(); ++I)
        Todo.push_back(T.arg(I));
    }
  };
  std::vector<std::vector<unsigned>> Writers(X.size()), Touchers(X.size());
  for (unsigned M = 0; M < Moves.size(); ++M) {
    std::set<unsigned> Reads, Writes, Seen;
    Collect(Moves[M].Guard, Reads, Seen);
    for (const auto &[Var, Value] : Moves[M].Updates) {
      Writes.insert(Var);
      Collect(Value, Reads, Seen);
    }
    for (unsigned Var : Writes)
      Writers[Var].push_back(M);
    Reads.insert(Writes.begin(), Writes.end());
    for (unsigned Var : Reads)
      Touchers[Var].push_back(M);
  }
  std::set<std::pair<unsigned, unsigned>> Pairs;
  for (unsigned Var = 0; Var < X.size(); ++Var)
    for (unsigned W : Writers[Var])
      for (unsigned T : Touchers[Var])
        if (T != W)
          Pairs.insert({std::min(W, T), std::max(W, T)});
  return {Pairs.begin(), Pairs.end()};
}

Verdict Encoding::bmc(Property Prop, const z3::expr &Bad, unsigned &Bound, bool &Exhausted,
                      std::chrono::steady_clock::time_point Deadline) {
  Exhausted = false;
  BmcStop.clear();
  z3::expr_vector Xn(C);
  for (unsigned I = 0; I < X.size(); ++I)
    Xn.push_back(C.int_const(("next." + Names[I]).c_str()));
  // A step takes one or more enabled moves that are independent (none writes what another
  // reads or writes), each computed from the state before the step: the same as taking them
  // one after the other in any order. Every state the moves reach one at a time is still
  // reached (a step of one move is a step), so nothing is lost, but the search reaches it at
  // a smaller depth: two CTAs, or a producer and a consumer on different slots, go together.
  z3::expr_vector Taken(C);
  for (unsigned M = 0; M < Moves.size(); ++M)
    Taken.push_back(C.bool_const(("take." + std::to_string(M)).c_str()));
  std::vector<std::vector<std::pair<unsigned, z3::expr>>> ByVar(X.size());
  // One flat conjunction, not a chain of binary ones, which Z3 4.8 is slow to free with its
  // context (balanced() in TransitionSystemZ3.cpp).
  z3::expr_vector Parts(C);
  for (unsigned M = 0; M < Moves.size(); ++M) {
    Parts.push_back(z3::implies(Taken[M], Moves[M].Guard));
    for (const auto &[Var, Value] : Moves[M].Updates)
      ByVar[Var].push_back({M, Value});
  }
  for (const auto &[A, B] : conflicts())
    Parts.push_back(!(Taken[A] && Taken[B]));
  Parts.push_back(z3::mk_or(Taken));
  for (unsigned I = 0; I < X.size(); ++I)
    Parts.push_back(Xn[I] == next(Taken, I, ByVar));
  z3::expr Trans = z3::mk_and(Parts);

  z3::solver S(C, "QF_LIA");
  std::vector<z3::expr_vector> States;
  std::vector<z3::expr_vector> StepMoves;
  auto Fresh = [&](unsigned Step) {
    z3::expr_vector V(C);
    for (unsigned I = 0; I < X.size(); ++I)
      V.push_back(C.int_const(("s" + std::to_string(Step) + "." + Names[I]).c_str()));
    return V;
  };
  auto Subst = [&](z3::expr E, unsigned Step) { return E.substitute(X, States[Step]); };
  // One deadline for the whole search (Z3Deadline, not Z3's own timer, which corrupted the
  // heap in our runs when re-armed at every depth). It is also checked between depths.
  Z3Deadline Late(C, Deadline);
  // The resource budget bounds each check (Z3's rlimit counts from the check's start) and,
  // read between depths, the whole search; set once.
  z3::params Ps(C);
  if (Options.ResourceLimit)
    Ps.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(Options.ResourceLimit, ~0u)));
  S.set(Ps);
  const std::string OutOfTime = "the time limit ran out in the bounded search";
  const std::string OutOfWork = "the resource limit (" + std::to_string(Options.ResourceLimit) +
                                " units of Z3's rlimit) ran out in the bounded search";
  double Start = Options.ResourceLimit ? resourceCount(S) : 0;
  States.push_back(Fresh(0));
  S.add(Subst(InitState, 0));
  for (unsigned Step = 0;; ++Step) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    Deadline - std::chrono::steady_clock::now())
                    .count();
    Bound = Step;
    if (Left <= 0) {
      BmcStop = OutOfTime;
      break;
    }
    if (Options.ResourceLimit && resourceCount(S) - Start >= Options.ResourceLimit) {
      BmcStop = OutOfWork;
      break;
    }
    S.push();
    S.add(Subst(Bad, Step));
    z3::check_result R = S.check();
    if (R == z3::sat) {
      z3::model M = S.get_model();
      Verdict V = schedule(Prop, M, States, StepMoves, Bad);
      V.BoundReached = Step; // the depth of the counterexample
      return V;
    }
    if (R == z3::unknown) {
      std::string Why = S.reason_unknown();
      BmcStop = Late.timedOut()                         ? OutOfTime
                : Why.find("resource") != std::string::npos ? OutOfWork
                                                            : "Z3 gave up in the bounded search: " + Why;
      S.pop();
      break;
    }
    S.pop();
    if (Step == Options.MaxBmcSteps) {
      BmcStop = "no counterexample within the bound";
      break;
    }
    States.push_back(Fresh(Step + 1));
    StepMoves.push_back(z3::expr_vector(C));
    for (unsigned M = 0; M < Moves.size(); ++M)
      StepMoves.back().push_back(
          C.bool_const(("take" + std::to_string(Step) + "." + std::to_string(M)).c_str()));
    z3::expr_vector From(C), To(C);
    for (unsigned I = 0; I < X.size(); ++I) {
      From.push_back(X[I]);
      To.push_back(States[Step][I]);
      From.push_back(Xn[I]);
      To.push_back(States[Step + 1][I]);
    }
    for (unsigned M = 0; M < Moves.size(); ++M) {
      From.push_back(Taken[M]);
      To.push_back(StepMoves.back()[M]);
    }
    z3::expr T = Trans;
    S.add(T.substitute(From, To));
    // Once no path (for any parameter value) is as long as this one, every reachable state
    // has been checked.
    if (S.check() == z3::unsat) {
      Exhausted = true;
      Bound = Step;
      break;
    }
  }
  Verdict V;
  V.Prop = Prop;
  V.Engine = "bmc";
  return V;
}

Verdict Encoding::spacer(Property Prop, const z3::expr &Bad, unsigned TimeoutMs) {
  z3::fixedpoint Fp(C);
  z3::params Ps(C);
  Ps.set("engine", "spacer");
  Fp.set(Ps);
  // One Horn clause per move, Inv(X) & guard(X) -> Inv(update(X)): the form Spacer
  // generalizes best from (no next-state variables, no move number).
  z3::sort_vector Sorts(C);
  z3::expr_vector Args(C);
  for (unsigned I = 0; I < X.size(); ++I) {
    Sorts.push_back(C.int_sort());
    Args.push_back(X[I]);
  }
  for (auto &[Name, Var] : ParamVars) {
    Sorts.push_back(C.int_sort());
    Args.push_back(Var);
  }
  z3::func_decl Inv = C.function("inv", Sorts, C.bool_sort());
  z3::func_decl Err = C.function("err", 0, nullptr, C.bool_sort());
  Fp.register_relation(Inv);
  Fp.register_relation(Err);
  auto Rule = [&](const z3::expr &Body, const z3::expr &Head, const std::string &Name) {
    z3::expr R = z3::forall(Args, z3::implies(Body, Head));
    z3::symbol S = C.str_symbol(Name.c_str());
    Fp.add_rule(R, S);
  };
  Rule(InitState, Inv(Args), "init");
  for (unsigned M = 0; M < Moves.size(); ++M) {
    std::vector<z3::expr> Values;
    for (unsigned I = 0; I < X.size(); ++I)
      Values.push_back(X[I]);
    for (const auto &[Var, Value] : Moves[M].Updates)
      Values[Var] = Value;
    z3::expr_vector Next(C);
    for (const z3::expr &E : Values)
      Next.push_back(E);
    for (auto &[Name, Var] : ParamVars)
      Next.push_back(Var);
    Rule(Inv(Args) && Moves[M].Guard, Inv(Next), "move" + std::to_string(M));
  }
  Rule(Inv(Args) && Bad, Err(), "bad");
  z3::func_decl_vector Query(C);
  Query.push_back(Err);
  Z3Deadline Late(C, TimeoutMs);
  z3::check_result R = z3::unknown;
  try {
    R = Fp.query(Query);
  } catch (const z3::exception &) {
    if (!Late.timedOut())
      throw;
  }
  // Interrupted, the engine answers unknown or throws; check() words "canceled" as the time
  // running out.
  if (R == z3::unknown && Late.timedOut())
    throw z3::exception("canceled");
  Verdict V;
  V.Prop = Prop;
  V.Engine = "spacer";
  if (R == z3::unsat) {
    V.K = Verdict::Kind::Proved;
  } else if (R == z3::sat) {
    V.K = Verdict::Kind::Counterexample;
    V.Reason = "the fixed-point engine reaches a bad state beyond the bounded search";
  } else {
    V.Reason = "the fixed-point engine gave up: " + Fp.reason_unknown();
  }
  return V;
}

Verdict Encoding::check(Property Prop) {
  auto Start = std::chrono::steady_clock::now();
  auto Deadline = Start + std::chrono::milliseconds(Options.TimeoutMs);
  Verdict V;
  V.Prop = Prop;
  TracksFills = Prop == Property::StageSafety;
  try {
    layout();
    buildMoves();
    buildProperties();
  } catch (const EncodeError &E) {
    V.Reason = "the protocol needs what the encoding cannot express: " + E.Reason;
    return V;
  }
  z3::expr Bad = Prop == Property::DeadlockFreedom ? Deadlock
                 : Prop == Property::StageSafety   ? Stage
                                                   : Hygiene;
  // Fixed parameter values that contradict what the model assumes (a do-while loop's
  // closed-form trip count, exact only when K != 0, with K = 0 given) leave no initial
  // state: every search would end at once and "prove" the property for no launch at all.
  {
    z3::solver Init(C);
    Init.add(InitState);
    Z3Deadline Late(C, Deadline);
    z3::check_result R = z3::unknown;
    try {
      R = Init.check();
    } catch (const z3::exception &) {
      if (!Late.timedOut())
        throw;
    }
    if (R == z3::unsat) {
      V.Reason = "no launch meets the fixed parameter values and the conditions the model "
                 "assumes together (" + forParameters() + "): nothing to prove for it";
      return V;
    }
  }
  unsigned Bound = 0;
  bool Exhausted = false;
  V = bmc(Prop, Bad, Bound, Exhausted, Deadline);
  V.Prop = Prop;
  if (V.refuted())
    return V;
  if (Exhausted) {
    V.K = Verdict::Kind::Proved;
    V.Engine = "bmc";
    V.ForParameters = forParameters();
    V.Assumptions.push_back("every execution ends within " + std::to_string(Bound) +
                            " steps, all of them checked");
    return V;
  }
  long Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  Deadline - std::chrono::steady_clock::now())
                  .count();
  if (!Options.Unbounded || Left <= 0) {
    V.K = Verdict::Kind::Unknown;
    V.BoundReached = Bound;
    V.Reason = BmcStop;
    if (Left > 0 && BmcStop == "no counterexample within the bound")
      V.Reason += "; the unbounded engine is off";
    return V;
  }
  Verdict U;
  try {
    U = spacer(Prop, Bad, static_cast<unsigned>(Left));
  } catch (const z3::exception &Ex) {
    U.Prop = Prop;
    U.Engine = "spacer";
    std::string Msg = Ex.msg();
    U.Reason = Msg == "canceled" ? "the fixed-point engine ran out of time (" +
                                       std::to_string(Left) + " ms) without a proof"
                                 : "the fixed-point engine stopped: " + Msg;
  }
  U.BoundReached = Bound;
  if (U.proved())
    U.ForParameters = forParameters();
  return U;
}

} // namespace detail

Verdict checkProperty(const Protocol &P, const TransitionSystem &TS, Property Prop,
                      const VerifyOptions &Options) {
  try {
    z3::context C;
    detail::Encoding E(C, P, TS, Options);
    return E.check(Prop);
  } catch (const z3::exception &Ex) {
    Verdict V;
    V.Prop = Prop;
    V.Reason = std::string("z3: ") + Ex.msg();
    return V;
  }
}

} // namespace ts
} // namespace analyzer
} // namespace wsv
