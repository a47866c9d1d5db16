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
//   fill[b][s]       whether a copy into buffer slot s has completed (set when one does); the
//                    slot holds whole data where that holds and none into it is in flight
//   narr/ngen[n]     per named barrier: threads arrived in this generation, generation parity
//   carr/cgen        barrier.cluster: threads of the cluster arrived, generation parity; and
//   csaved[a]        per agent, 0 or 1 + the parity of the generation it arrived in
//   params           the kernel parameters the expressions mention; never change
//
// In a cluster every CTA has its own barrier slots, in-flight counts, fills and named
// barriers (`exp.full.0@cta1`), and its own copy of each agent. An arrival through mapa
// steps the peer's slot; a multicast copy or commit is in flight towards each CTA of its
// mask and completes there on its own. A CTA has exited once all its agents have finished.
//
// A move is one transition: one agent executing its next op, or one in-flight operation
// completing. A step of the bounded search takes one or more moves that are independent (none
// writes what another reads or writes), so two CTAs' prologues, or a producer and a consumer
// on different slots, advance together. Every variable's next value is an if-then-else over
// the moves that change it, so a step is linear in the size of the program. An agent's private
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
//             pending count, name a slot outside its array, overfill a named barrier or
//             barrier.cluster, reach a CTA outside the cluster or one that has exited; or
//             a copy or commit lands in a CTA that has exited.
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

namespace {

/// Terms[Lo, Hi) joined by || (Or) or && as a balanced tree of binary terms. Z3 4.8 is slow
/// to free a long chain of binary terms with its context: H4's two CTAs, whose transition
/// and properties were built term by term, took 2 s per property to free after a search of
/// 300 ms. A flat n-ary term frees fast too, but Z3's search over these properties in that
/// form was a quarter slower on ClusterEncodingTest.
z3::expr balanced(const std::vector<z3::expr> &Terms, size_t Lo, size_t Hi, bool Or) {
  if (Hi - Lo == 1)
    return Terms[Lo];
  size_t Mid = Lo + (Hi - Lo) / 2;
  z3::expr L = balanced(Terms, Lo, Mid, Or), R = balanced(Terms, Mid, Hi, Or);
  return Or ? L || R : L && R;
}

z3::expr allOf(z3::context &C, const std::vector<z3::expr> &Terms) {
  return Terms.empty() ? C.bool_val(true) : balanced(Terms, 0, Terms.size(), false);
}

z3::expr anyOf(z3::context &C, const std::vector<z3::expr> &Terms) {
  return Terms.empty() ? C.bool_val(false) : balanced(Terms, 0, Terms.size(), true);
}

} // namespace

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
    for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
      for (const Array &Ar : TS.Arrays) {
        Out.emplace_back();
        for (unsigned S = 0; S < Ar.Slots; ++S)
          Out.back().push_back(
              var(std::string(What) + "." + Ar.Name + "." + std::to_string(S) + at(Cta)));
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
  }
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K) {
      if (FlyKey[K] != K) {
        Fly.push_back(Fly[key(Cta, FlyKey[K])]);
        continue;
      }
      Fly.emplace_back();
      for (unsigned S = 0; S < TS.Arrays[TS.InFlightKeys[K].Array].Slots; ++S)
        Fly.back().push_back(
            var("fly." + std::to_string(K) + "." + std::to_string(S) + at(Cta)));
    }
  // Commits in flight: their issuer and its sequence number (layout parallel to Fly; loads
  // get empty lists).
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K) {
      Stamp.emplace_back();
      Issuer.emplace_back();
      if (TS.InFlightKeys[K].IsLoad || FlyKey[K] != K)
        continue;
      for (unsigned S = 0; S < Fly[key(Cta, K)].size(); ++S) {
        std::string Where = std::to_string(K) + "." + std::to_string(S) + at(Cta);
        Stamp.back().push_back(var("stamp." + Where));
        Issuer.back().push_back(var("issuer." + Where));
      }
    }
  for (const Agent &Ag : TS.Agents)
    CommitSeq.push_back(
        llvm::any_of(Ag.Ops, [](const Op &O) { return O.Kind == OpKind::AsyncArrive; })
            ? var("commits." + Ag.Name)
            : NoIndex);
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (const Buffer &B : TS.Buffers) {
      Fill.emplace_back();
      for (unsigned S = 0; S < B.Slots; ++S)
        Fill.back().push_back(var("fill." + B.Name + "." + std::to_string(S) + at(Cta)));
    }
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (const NamedBarrier &N : TS.NamedBarriers) {
      NArr.push_back(var("narr." + std::to_string(N.Id) + at(Cta)));
      NGen.push_back(var("ngen." + std::to_string(N.Id) + at(Cta)));
    }
  bool Cluster = llvm::any_of(TS.Agents, [](const Agent &Ag) {
    return llvm::any_of(Ag.Ops, [](const Op &O) { return O.Kind == OpKind::ClusterArrive; });
  });
  if (Cluster) {
    CArr = var("carr");
    CGen = var("cgen");
    for (const Agent &Ag : TS.Agents)
      CSaved.push_back(var("csaved." + Ag.Name));
  }
}

z3::expr Encoding::inOrder(unsigned Cta, unsigned Kf, unsigned S) {
  if (!Options.CommitsInOrder)
    return C.bool_val(true);
  z3::expr Mine = v(Stamp[key(Cta, Kf)][S]), Who = v(Issuer[key(Cta, Kf)][S]);
  std::vector<z3::expr> NoneEarlier;
  for (unsigned T = 0; T < TS.Ctas; ++T)
    for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K)
      for (unsigned S2 = 0; S2 < Stamp[key(T, K)].size(); ++S2) {
        if (T == Cta && K == Kf && S2 == S)
          continue;
        z3::expr Other = v(Stamp[key(T, K)][S2]);
        NoneEarlier.push_back(!(v(Fly[key(T, K)][S2]) > 0 && Other >= 0 &&
                                v(Issuer[key(T, K)][S2]) == Who && Other < Mine));
      }
  return Mine < 0 || allOf(C, NoneEarlier);
}

z3::expr Encoding::exited(unsigned Cta) {
  z3::expr Done = C.bool_val(true);
  for (unsigned A = 0; A < TS.Agents.size(); ++A)
    if (TS.Agents[A].Cta == Cta)
      Done = Done && v(Pc[A]) == static_cast<int>(TS.Agents[A].Ops.size());
  return Done;
}

z3::expr Encoding::reaches(const Op &O, unsigned A, unsigned Cta) {
  unsigned Own = TS.Agents[A].Cta;
  if (O.Peer)
    return (intOf(O.Peer, A) == static_cast<int>(Cta)).simplify();
  if (!O.CtaMask)
    return C.bool_val(Cta == Own);
  z3::expr Mask = intOf(O.CtaMask, A).simplify();
  if (std::optional<int64_t> M = numeral(Mask))
    return C.bool_val(Cta < 63 && (*M >> Cta & 1));
  return z3::mod(Mask / C.int_val(int64_t(1) << Cta), 2) == 1;
}

z3::expr Encoding::slotSelect(const std::vector<unsigned> &Vars, const z3::expr &Slot) {
  z3::expr R = v(Vars.back());
  for (unsigned S = Vars.size() - 1; S-- > 0;)
    R = z3::ite(Slot == static_cast<int>(S), v(Vars[S]), R);
  return R;
}

/// Arrivals and tx on one slot (chosen by Slot), completing the phase when both reach zero.
void Encoding::phaseStep(Move &M, unsigned Cta, unsigned ArrayIndex, const z3::expr &Slot,
                         const z3::expr &Arrivals, const z3::expr &TxDelta) {
  unsigned Array = arr(Cta, ArrayIndex);
  for (unsigned S = 0; S < TS.Arrays[ArrayIndex].Slots; ++S) {
    // A slot the move cannot reach is not written: moves on other slots stay independent
    // (bmc's steps run independent moves together).
    z3::expr Here = (Slot == static_cast<int>(S)).simplify();
    if (Here.is_false())
      continue;
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
    if (Before && Other.Cta == Ag.Cta)
      Started = Started && v(Pc[B]) == static_cast<int>(Other.Ops.size());
  }
  const unsigned Own = Ag.Cta;
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
  // A run of inits of distinct constant slots (a prologue's) is one move too. Another
  // agent's step between two of them (a peer's arrival) either reaches a slot the run has
  // initialized, and commutes with the rest of it, or one it has not yet, and is a hygiene
  // violation already when taken before the whole run: the run loses no bad state.
  std::vector<bool> JoinsInits(End + 1, false);
  {
    std::set<std::pair<unsigned, int64_t>> RunSlots;
    for (unsigned I = 0; I < End; ++I) {
      const Op &O = Ag.Ops[I];
      std::optional<int64_t> Slot;
      if (O.Kind == OpKind::Init)
        Slot = numeral(intOf(O.Slot, A).simplify());
      if (!Slot) {
        RunSlots.clear();
        continue;
      }
      bool Joins = I > 0 && Ag.Ops[I - 1].Kind == OpKind::Init && !RunSlots.empty() &&
                   !Landing[I] && !RunSlots.count({O.Array, *Slot});
      if (!Joins)
        RunSlots.clear();
      RunSlots.insert({O.Array, *Slot});
      JoinsInits[I] = Joins;
    }
  }
  auto InRun = [&](unsigned I) {
    return (I > 0 && Private(I) && Private(I - 1) && !Landing[I]) || JoinsInits[I];
  };
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
  // A slot is ready once a copy into it has completed and none is in flight: two CTAs'
  // multicast copies fill one slot, and the first to land does not make it whole.
  auto ReadBad = [&](const Op &O, unsigned I, const z3::expr &About) {
    z3::expr When = (O.When ? boolOf(O.When, A) : C.bool_val(true)) && InLoops[I];
    z3::expr Slot = intOf(O.BufferSlot, A);
    z3::expr Unready = slotSelect(Fill[buf(Own, O.Buffer)], Slot) == 0;
    for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K)
      if (FlyKey[K] == K && TS.InFlightKeys[K].IsLoad && TS.InFlightKeys[K].Buffer == O.Buffer)
        Unready = Unready || slotSelect(Fly[key(Own, K)], Slot) > 0;
    StageWhy.push_back({About && When && Unready,
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
    // Per CTA, whether the op's barrier is there (its own, a peer's, its mask's): the move
    // and the bad states below both ask.
    std::vector<z3::expr> To;
    if (O.Array != NoIndex)
      for (unsigned T = 0; T < TS.Ctas; ++T)
        To.push_back(reaches(O, A, T));
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
    case OpKind::Init: {
      // This init and the run that joins it (each its own condition and slot).
      unsigned J = I;
      do {
        const Op &Oj = Ag.Ops[J];
        unsigned Ai = arr(Own, Oj.Array);
        z3::expr Slot = intOf(Oj.Slot, A);
        z3::expr Count = intOf(Oj.Count, A);
        z3::expr Wj = Oj.When ? boolOf(Oj.When, A) : C.bool_val(true);
        for (unsigned S = 0; S < TS.Arrays[Oj.Array].Slots; ++S) {
          z3::expr Here = (Wj && Slot == static_cast<int>(S)).simplify();
          if (Here.is_false())
            continue;
          M.Updates.push_back({Exp[Ai][S], z3::ite(Here, Count, v(Exp[Ai][S]))});
          M.Updates.push_back({Pend[Ai][S], z3::ite(Here, Count, v(Pend[Ai][S]))});
          M.Updates.push_back({Par[Ai][S], z3::ite(Here, C.int_val(0), v(Par[Ai][S]))});
          M.Updates.push_back({Tx[Ai][S], z3::ite(Here, C.int_val(0), v(Tx[Ai][S]))});
        }
        if (J > I)
          M.Text += (M.Text.empty() ? O.Text : "") + ", " + Oj.Text;
      } while (++J < End && JoinsInits[J]);
      NextPc = C.int_val(static_cast<int>(J));
      break;
    }
    case OpKind::Arrive:
    case OpKind::ExpectTx: {
      // On the agent's CTA's barrier, or on the peer's that mapa named.
      z3::expr Count = O.Kind == OpKind::ExpectTx
                           ? C.int_val(0)
                           : (O.Count ? intOf(O.Count, A) : C.int_val(1)) *
                                 C.int_val(static_cast<int64_t>(O.Times));
      z3::expr TxDelta = !O.Tx                        ? C.int_val(0)
                         : O.Kind == OpKind::ExpectTx ? intOf(O.Tx, A) *
                                                            C.int_val(static_cast<int64_t>(O.Times))
                                                      : intOf(O.Tx, A);
      z3::expr Slot = intOf(O.Slot, A);
      for (unsigned T = 0; T < TS.Ctas; ++T)
        if (!To[T].is_false())
          phaseStep(M, T, O.Array,
                    To[T].is_true() ? Slot : z3::ite(To[T], Slot, C.int_val(-1)), Count,
                    TxDelta);
      break;
    }
    case OpKind::Wait:
      // try_wait.parity P passes once the phase with parity P has completed: while the
      // current parity differs from P (PTX ISA, mbarrier.test_wait/try_wait).
      Enabled = !When || slotSelect(Par[arr(Own, O.Array)], intOf(O.Slot, A)) !=
                             intOf(O.Parity, A);
      break;
    case OpKind::AsyncLoad:
    case OpKind::AsyncArrive: {
      // In flight towards each CTA of its multicast mask (its own CTA without one). The
      // slot it fills is not whole until it lands: reads see it in flight (ReadBad).
      z3::expr Slot = intOf(O.Slot, A);
      // A commit by one thread gets its issuer's next sequence number; commits by several
      // threads, or onto a slot where one is already in flight, none (they land in any
      // order: the model then has more schedules than the kernel, none fewer).
      bool Commit = O.Kind == OpKind::AsyncArrive;
      for (unsigned T = 0; T < TS.Ctas; ++T) {
        if (To[T].is_false())
          continue;
        const std::vector<unsigned> &Flies = Fly[key(T, O.InFlightKey)];
        for (unsigned S = 0; S < Flies.size(); ++S) {
          unsigned F = Flies[S];
          z3::expr Here = When && To[T] && Slot == static_cast<int>(S);
          M.Updates.push_back({F, z3::ite(Here, v(F) + static_cast<int>(O.Times), v(F))});
          if (!Commit)
            continue;
          unsigned St = Stamp[key(T, O.InFlightKey)][S], Is = Issuer[key(T, O.InFlightKey)][S];
          z3::expr Unordered = C.bool_val(O.Times > 1) || v(F) > 0;
          M.Updates.push_back(
              {St, z3::ite(Here, z3::ite(Unordered, C.int_val(-1), v(CommitSeq[A])), v(St))});
          M.Updates.push_back({Is, z3::ite(Here, z3::ite(Unordered, C.int_val(-1),
                                                         C.int_val(static_cast<int>(A))),
                                           v(Is))});
        }
      }
      if (Commit)
        M.Updates.push_back({CommitSeq[A], z3::ite(When, v(CommitSeq[A]) + 1, v(CommitSeq[A]))});
      break;
    }
    case OpKind::NamedArrive: {
      const NamedBarrier &N = TS.NamedBarriers[O.Named];
      unsigned Ni = named(Own, O.Named);
      z3::expr Sum = v(NArr[Ni]) + static_cast<int>(O.Times);
      z3::expr Full = Sum >= static_cast<int>(N.Threads);
      M.Updates.push_back({NArr[Ni], z3::ite(When, z3::ite(Full, C.int_val(0), Sum),
                                             v(NArr[Ni]))});
      M.Updates.push_back({NGen[Ni], z3::ite(When && Full, 1 - v(NGen[Ni]), v(NGen[Ni]))});
      M.Updates.push_back({Saved[A], v(NGen[Ni])});
      break;
    }
    case OpKind::NamedWait:
      Enabled = !When || v(NGen[named(Own, O.Named)]) != v(Saved[A]);
      break;
    case OpKind::ClusterArrive: {
      // Every thread of every CTA completes a generation; the agent remembers which one it
      // arrived in (1 + its parity; 0: no arrival to wait for).
      z3::expr Sum = v(CArr) + static_cast<int>(O.Times);
      z3::expr Full = Sum >= C.int_val(static_cast<uint64_t>(TS.ClusterThreads));
      M.Updates.push_back({CArr, z3::ite(When, z3::ite(Full, C.int_val(0), Sum), v(CArr))});
      M.Updates.push_back({CGen, z3::ite(When && Full, 1 - v(CGen), v(CGen))});
      M.Updates.push_back({CSaved[A], z3::ite(When, v(CGen) + 1, v(CSaved[A]))});
      break;
    }
    case OpKind::ClusterWait:
      Enabled = !When || (v(CSaved[A]) != 0 && v(CGen) + 1 != v(CSaved[A]));
      M.Updates.push_back({CSaved[A], z3::ite(When, C.int_val(0), v(CSaved[A]))});
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
    if (O.When && (O.Kind == OpKind::Arrive || O.Kind == OpKind::ExpectTx)) {
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
      // The CTAs it reaches: a rank or a mask bit beyond the cluster reaches no barrier.
      if (O.Peer) {
        z3::expr Rank = intOf(O.Peer, A);
        HygieneWhy.push_back({Here && (Rank < 0 || Rank >= static_cast<int>(TS.Ctas)),
                              Ag.Name + " reaches " + Name +
                                  " in a CTA rank outside the cluster of " +
                                  std::to_string(TS.Ctas)});
      }
      if (O.CtaMask) {
        z3::expr Mask = intOf(O.CtaMask, A);
        HygieneWhy.push_back(
            {Here && (Mask < 0 || Mask >= C.int_val(int64_t(1) << std::min(TS.Ctas, 62u))),
             Ag.Name + "'s multicast mask names a CTA outside the cluster of " +
                 std::to_string(TS.Ctas)});
      }
      for (unsigned T = 0; T < TS.Ctas; ++T) {
        if (To[T].is_false())
          continue;
        z3::expr Reached = Here && To[T];
        std::string There = Name + at(T);
        unsigned Ai = arr(T, O.Array);
        HygieneWhy.push_back({Reached && slotSelect(Exp[Ai], Slot) == 0,
                              Ag.Name + " uses " + There + " before its mbarrier.init"});
        if (O.Kind == OpKind::Arrive) {
          z3::expr Count = (O.Count ? intOf(O.Count, A) : C.int_val(1)) *
                           C.int_val(static_cast<int64_t>(O.Times));
          HygieneWhy.push_back({Reached && slotSelect(Exp[Ai], Slot) != 0 &&
                                    Count > slotSelect(Pend[Ai], Slot),
                                Ag.Name + " arrives on " + There +
                                    " more times than the phase has pending arrivals"});
        }
        // A peer's barrier after the peer left (cluster-exit-early); its own CTA is still
        // running, with this agent in it.
        if (T != Own)
          HygieneWhy.push_back({Reached && exited(T),
                                Ag.Name + (O.Kind == OpKind::AsyncLoad ? " issues a copy to "
                                                                       : " arrives on ") +
                                    There + " after CTA " + std::to_string(T) + " exited"});
      }
    }
    if (O.Kind == OpKind::NamedArrive) {
      unsigned Ni = named(Own, O.Named);
      HygieneWhy.push_back(
          {Here && v(NArr[Ni]) + static_cast<int>(O.Times) >
                       static_cast<int>(TS.NamedBarriers[O.Named].Threads),
           Ag.Name + " arrives on named barrier " +
               std::to_string(TS.NamedBarriers[O.Named].Id) + " beyond its thread count"});
    }
    if (O.Kind == OpKind::ClusterArrive)
      HygieneWhy.push_back({Here && v(CArr) + static_cast<int>(O.Times) >
                                        C.int_val(static_cast<uint64_t>(TS.ClusterThreads)),
                            Ag.Name + " arrives on barrier.cluster beyond the cluster's " +
                                std::to_string(TS.ClusterThreads) + " threads"});
    if (O.Kind == OpKind::ClusterWait)
      HygieneWhy.push_back({Here && v(CSaved[A]) == 0,
                            Ag.Name + " waits at barrier.cluster.wait without a "
                                      "barrier.cluster.arrive before it"});
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
  for (unsigned Cta = 0; Cta < TS.Ctas; ++Cta)
    for (unsigned K = 0; K < TS.InFlightKeys.size(); ++K) {
      const InFlightKey &Key = TS.InFlightKeys[K];
      if (FlyKey[K] != K)
        continue; // completed by its representative's moves
      const std::vector<unsigned> &Flies = Fly[key(Cta, K)];
      unsigned Ai = arr(Cta, Key.Array);
      std::string Name = TS.Arrays[Key.Array].Name;
      for (unsigned S = 0; S < Flies.size(); ++S) {
        Move M(C);
        M.Key = K;
        M.Slot = S;
        M.Cta = Cta;
        M.Guard = v(Flies[S]) > 0;
        if (!Key.IsLoad)
          M.Guard = M.Guard && inOrder(Cta, K, S);
        M.Updates.push_back({Flies[S], v(Flies[S]) - 1});
        z3::expr Slot = C.int_val(static_cast<int>(S));
        std::string There = Name + "[" + std::to_string(S) + "]" + at(Cta);
        // Its CTA's barriers and memory are gone (the explorer calls it a violation too).
        HygieneWhy.push_back({M.Guard && exited(Cta),
                              (Key.IsLoad ? "a copy lands on " : "a commit arrives on ") +
                                  There + " after CTA " + std::to_string(Cta) + " exited"});
        if (Key.IsLoad) {
          phaseStep(M, Cta, Key.Array, Slot, C.int_val(0),
                    C.int_val(-static_cast<int64_t>(Key.Bytes)));
          if (Key.Buffer != NoIndex && TracksFills)
            M.Updates.push_back({Fill[buf(Cta, Key.Buffer)][S], C.int_val(1)});
        } else {
          HygieneWhy.push_back({M.Guard && v(Exp[Ai][S]) != 0 && v(Pend[Ai][S]) < 1,
                                "a commit arrives on " + There +
                                    " with no pending arrival left"});
          phaseStep(M, Cta, Key.Array, Slot, C.int_val(1), C.int_val(0));
        }
        Moves.push_back(std::move(M));
      }
    }
}

void Encoding::buildProperties() {
  std::vector<z3::expr> Done, Enabled, Stages, Misuses, Init;
  for (unsigned A = 0; A < TS.Agents.size(); ++A)
    Done.push_back(v(Pc[A]) == static_cast<int>(TS.Agents[A].Ops.size()));
  Finished = allOf(C, Done);
  for (const Move &M : Moves)
    Enabled.push_back(M.Guard);
  Deadlock = !Finished && !anyOf(C, Enabled);
  for (auto &[Cond, Why] : StageWhy)
    Stages.push_back(Cond);
  Stage = anyOf(C, Stages);
  for (auto &[Cond, Why] : HygieneWhy)
    Misuses.push_back(Cond);
  Hygiene = anyOf(C, Misuses);

  // The initial state: every agent at its first op, barriers not initialized, nothing in
  // flight, no buffer filled; parameters in their 32-bit range and any fixed values.
  for (unsigned I = 0; I < X.size(); ++I)
    Init.push_back(v(I) == 0);
  for (auto &[Name, Var] : ParamVars)
    Init.push_back(Var >= 0 && Var <= C.int_val(static_cast<uint64_t>(0xffffffffu)));
  for (const Expr *A : TS.ParamAssumptions)
    Init.push_back(boolOf(A, NoIndex));
  for (const auto &[Name, Value] : Options.Params)
    for (const auto &[Symbol, Display] : TS.Params)
      if (Name == Symbol || Name == Display) {
        auto It = ParamVars.find(Symbol);
        if (It != ParamVars.end())
          Init.push_back(It->second == C.int_val(static_cast<uint64_t>(Value)));
      }
  InitState = allOf(C, Init);
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
    return TS.InFlightKeys[M.Key].Text + "[" + std::to_string(M.Slot) + "]" + at(M.Cta);
  if (!M.Text.empty())
    return M.Text;
  return TS.Agents[M.Agent].Ops[M.OpIndex].Text;
}

} // namespace detail
} // namespace ts
} // namespace analyzer
} // namespace wsv
