//===- ExploreReduction.cpp - the explorer's partial-order reduction --------------===//
//
// Footprints of steps and copies, what they bring toward completing barrier phases, and
// which transitions are taken alone: those that nothing that may run before them touches
// (ExploreWalk.cpp finds what may; Explore.h says why that preserves deadlocks and races).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;
Simulator::Footprint Simulator::footprint(unsigned Agent, const ConcreteStep &C) const {
  Footprint F(3 * Words, 0);
  unsigned Cta = S.Agents[Agent].Cta;
  // A wait only reads its barrier, an MMA or store only reads its source: reads commute.
  // Arrivals on a barrier that only ever gets one kind of arrival (ArrivalsAlike) are the
  // same function of its state whoever makes them, so they commute with each other.
  if (C.Barrier != NoIndex && (C.Kind == StepKind::Wait || C.Kind == StepKind::Probe))
    addRead(F, C.Barrier);
  else if (C.Barrier != NoIndex && C.Kind == StepKind::Arrive)
    addArrival(F, C.Barrier);
  else if (C.Barrier != NoIndex)
    add(F, C.Barrier);
  for (unsigned B : C.Targets)
    if (C.Kind == StepKind::MmaCommit)
      addArrival(F, B);
    else
      add(F, B);
  for (unsigned B : C.Reads)
    touchBuffer(F, B, Agent, C.PerCopy, Touch::Read);
  // TMA copies fill their own parts of a slot: fills commute with each other (each only
  // marks the slot filled when it lands), not with reads or generic writes.
  // A cp.async's copy is in flight until its wait: like a write there, not a landing.
  const bool Landing = C.Kind == StepKind::AsyncLoad && C.Queue != AsyncQueue::CpAsync;
  for (unsigned B : C.Writes) {
    touchBuffer(F, B, Agent, C.PerCopy, Landing ? Touch::Update : Touch::Write);
    // A generic write fills the instances its bytes overlap too (Aliases).
    if (C.Kind == StepKind::Write)
      for (unsigned X : Aliases[B])
        touchBuffer(F, X, Agent, false, Touch::Write);
  }
  // Reaching another CTA's barriers depends on whether it has exited.
  if (C.Barrier != NoIndex && S.Barriers[C.Barrier].Cta != Cta)
    addRead(F, AliveBase + S.Barriers[C.Barrier].Cta);
  for (unsigned B : C.Targets)
    if (S.Barriers[B].Cta != Cta)
      addRead(F, AliveBase + S.Barriers[B].Cta);
  switch (C.Kind) {
  case StepKind::NamedSync:
  case StepKind::NamedArrive:
    add(F, NamedBase + Cta * models::NamedBarrier::NumIds +
               std::min<uint32_t>(C.NamedId, models::NamedBarrier::NumIds - 1));
    break;
  case StepKind::ClusterArrive:
  case StepKind::ClusterWait:
    add(F, ClusterBit);
    break;
  case StepKind::Alloc:
  case StepKind::Dealloc:
    add(F, TmemBase + Cta);
    break;
  case StepKind::TmemRead:
    addRead(F, TmemBase + Cta);
    tmemFootprint(F, Agent, C);
    break;
  case StepKind::TmemWait:
  case StepKind::TmemWrite:
  case StepKind::TmemWriteWait:
    tmemFootprint(F, Agent, C); // ExploreTmem.cpp
    break;
  case StepKind::InitFence:
    // It decides whether the async proxy's use of what the agent initialized is undefined.
    for (unsigned B : Inits[Agent])
      add(F, B);
    break;
  case StepKind::ProxyFence:
    // It decides whether an async read of what the agent wrote races: like a write there.
    for (auto [B, Part] : Fenced[Agent])
      touchBuffer(F, B, Agent, Part, Touch::Write);
    break;
  case StepKind::AccumulatorRead:
    // It reads what the agent's own wgmma operations may still write: their queue.
    add(F, QueueBase + 3 * Agent);
    break;
  case StepKind::MmaIssue:
  case StepKind::MmaCommit:
  case StepKind::GroupCommit:
  case StepKind::GroupWait:
  case StepKind::AsyncStore: {
    // A tcgen05.mma writes TMEM from its issue to its completion (ExploreTmem.cpp).
    if (C.Kind == StepKind::MmaIssue && C.Queue == AsyncQueue::Tcgen05)
      tmemFootprint(F, Agent, C);
    unsigned Queue = C.Queue == AsyncQueue::Bulk ? 1 : C.Queue == AsyncQueue::Tcgen05 ? 2 : 0;
    if (C.Kind == StepKind::AsyncStore)
      Queue = 1;
    // A tcgen05 operation's completion makes only the commits pending then arrive: their
    // barriers are in the footprint of the work in flight (touchedFirst) and of each commit
    // step, not of every operation the agent issues.
    add(F, QueueBase + 3 * Agent + Queue);
    // The epilogue's wait_group waits for the groups the roles' threads left in flight.
    if (C.Kind == StepKind::GroupWait)
      for (unsigned R : Joined[Agent])
        add(F, QueueBase + 3 * R + Queue);
    // A cp.async wait lands the copies it retires: it writes what any of them writes.
    if (C.Kind == StepKind::GroupWait && C.Queue == AsyncQueue::CpAsync) {
      llvm::SmallVector<unsigned, 4> Whose(Joined[Agent].begin(), Joined[Agent].end());
      Whose.push_back(Agent);
      for (unsigned W : Whose)
        for (const ConcreteStep &Copy : S.Agents[W].Steps)
          if (Copy.Kind == StepKind::AsyncLoad && Copy.Queue == AsyncQueue::CpAsync)
            for (unsigned B : Copy.Writes)
              touchBuffer(F, B, W, Copy.PerCopy, Touch::Write);
    }
    break;
  }
  case StepKind::AsyncLoad:
    if (C.Queue == AsyncQueue::CpAsync)
      add(F, QueueBase + 3 * Agent); // joins the agent's cp.async groups
    break;
  default:
    break;
  }
  return F;
}

void Simulator::findPlainRuns() {
  RunOf.resize(S.Agents.size());
  RunEnd.resize(S.Agents.size());
  NextEnabling.resize(S.Agents.size());
  RunUnion.resize(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    const ConcreteAgent &Ag = S.Agents[A];
    size_t N = Ag.Steps.size();
    auto Plain = [&](size_t I) {
      const ConcreteStep &C = Ag.Steps[I];
      return C.Kind != StepKind::Wait && C.Kind != StepKind::ClusterWait &&
             C.Kind != StepKind::AsyncLoad && C.Kind != StepKind::ClusterArrive &&
             C.Kind != StepKind::Probe &&
             !(Ag.hasCycle() && I + 1 == Ag.CycleEnd) && InnerEndAt[A][I] < 0 &&
             ExitAt[A][I] < 0;
    };
    RunOf[A].assign(N, NoIndex);
    RunEnd[A].assign(N, 0);
    NextEnabling[A].assign(N, 0);
    RunUnion[A].assign(N, Footprint());
    for (size_t I = N; I-- > 0;) {
      if (!Plain(I))
        continue;
      bool Continues = I + 1 < N && RunOf[A][I + 1] != NoIndex && !FinishAt[A][I + 1];
      RunOf[A][I] = Continues ? RunOf[A][I + 1] : Runs++;
      RunEnd[A][I] = Continues ? RunEnd[A][I + 1] : static_cast<uint32_t>(I + 1);
      RunUnion[A][I] = StepFootprint[A][I];
      if (Continues)
        for (unsigned W = 0; W < 3 * Words; ++W)
          RunUnion[A][I][W] |= RunUnion[A][I + 1][W];
      const Enabling &E = StepEnabling[A][I];
      bool Brings = !E.Arrivals.empty() || !E.Bytes.empty() || !E.Expects.empty();
      NextEnabling[A][I] =
          Brings ? static_cast<uint32_t>(I) : Continues ? NextEnabling[A][I + 1] : RunEnd[A][I];
    }
  }
}

void Simulator::touchBuffer(Footprint &F, unsigned Buffer, unsigned Agent, bool Part,
                            Touch How) const {
  // Past a race nothing reads what a buffer holds (apply keeps none of it): buffer
  // accesses commute with everything.
  if (IgnoreRaces)
    return;
  unsigned Offset = static_cast<unsigned>(How) * Words;
  auto Set = [&](unsigned Bit) { F[Offset + Bit / 64] |= uint64_t(1) << (Bit % 64); };
  const llvm::SmallVector<unsigned, 4> &Agents = PartAgents[Buffer];
  if (!Part)
    Set(S.Barriers.size() + Buffer);
  const ConcreteAgent &Mine = S.Agents[Agent];
  for (unsigned I = 0; I < Agents.size(); ++I) {
    const ConcreteAgent &X = S.Agents[Agents[I]];
    bool Sibling = Agents[I] != Agent && X.Program == Mine.Program && X.Cta == Mine.Cta;
    if (!Part || !Sibling)
      Set(PartBase[Buffer] + I);
  }
}

void Simulator::findAlikeArrivals() {
  // The arrival function of each kind: (count, bytes) of an arrive, (1, 0) for each of a
  // tcgen05.commit's lanes (one unit arrival after another is one function too).
  constexpr std::pair<uint32_t, uint32_t> None{0, 0}, Mixed{UINT32_MAX, UINT32_MAX};
  std::vector<std::pair<uint32_t, uint32_t>> Kind(S.Barriers.size(), None);
  auto Note = [&](unsigned B, std::pair<uint32_t, uint32_t> K) {
    Kind[B] = Kind[B] == None || Kind[B] == K ? K : Mixed;
  };
  for (const ConcreteAgent &Ag : S.Agents)
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::Arrive && C.Barrier != NoIndex)
        Note(C.Barrier, {C.Count, C.TxBytes});
      else if (C.Kind == StepKind::MmaCommit)
        for (unsigned B : C.Targets)
          Note(B, {1, 0});
  ArrivalsAlike.assign(S.Barriers.size(), false);
  for (unsigned B = 0; B < S.Barriers.size(); ++B)
    ArrivalsAlike[B] = Kind[B] != None && Kind[B] != Mixed;
}

Simulator::Enabling Simulator::enables(const ConcreteStep &C) const {
  Enabling E;
  switch (C.Kind) {
  case StepKind::Init: // a new phase count: anything may follow
    if (C.Barrier != NoIndex)
      E.Arrivals.push_back({C.Barrier, UINT32_MAX});
    break;
  case StepKind::Arrive:
    if (C.Barrier != NoIndex) {
      E.Arrivals.push_back({C.Barrier, std::max(1u, C.Count)});
      if (C.TxBytes)
        E.Expects.push_back({C.Barrier, C.TxBytes});
      else
        E.Plain.push_back({C.Barrier, std::max(1u, C.Count)});
    }
    break;
  case StepKind::ExpectTx: // a negative tx count brought back to zero completes a phase
    if (C.Barrier != NoIndex)
      E.Expects.push_back({C.Barrier, C.TxBytes});
    break;
  case StepKind::AsyncLoad:
    for (unsigned B : C.Targets)
      E.Bytes.push_back({B, uint64_t(C.TxBytes) * std::max(1u, C.Count)});
    break;
  case StepKind::MmaCommit:
    for (unsigned B : C.Targets) {
      E.Arrivals.push_back({B, std::max(1u, C.Count)});
      E.Plain.push_back({B, std::max(1u, C.Count)});
    }
    break;
  default:
    break;
  }
  return E;
}

bool Simulator::finishMatters(const State &St, unsigned Agent) const {
  const AgentState &AS = St.Agents[Agent];
  if (!AS.Tcgen05.inFlight().empty() || AS.Wgmma.firstInFlight() || AS.Bulk.firstInFlight() ||
      AS.CpAsync.firstInFlight())
    return true;
  auto Done = [&](unsigned B) { return B == Agent || St.Agents[B].Pc >= S.Agents[B].Steps.size(); };
  bool CtaEnds = true;
  for (unsigned B = 0; B < S.Agents.size(); ++B) {
    if (S.Agents[B].Cta != S.Agents[Agent].Cta)
      continue;
    CtaEnds = CtaEnds && Done(B);
    // B starts once Agent finished, if everything else it follows has.
    if (follows(B, Agent)) {
      bool Starts = true;
      for (unsigned O = 0; O < S.Agents.size() && Starts; ++O)
        Starts = !follows(B, O) || Done(O);
      if (Starts)
        return true;
    }
  }
  return CtaEnds;
}

bool Simulator::commutes(const State &St, unsigned Agent, bool AtExit) const {
  const AgentState &AS = St.Agents[Agent];
  // Finishing an agent may start others (the roles after the prologue, the epilogue after
  // the roles), end its CTA, or let its work in flight complete: such a last step is never
  // taken alone (finishMatters). Nor is the end of a free pass of one agent
  // with a cycle (the anchor), so that every cycle of a periodic system's states holds a
  // state with every transition taken: passes count from the fewest any agent ran, so states
  // recur only after every agent with a cycle ran a pass more (or, inside a tile whose
  // k-loop has no pass count yet, every agent ran a pass of it more), the anchor included.
  if ((lastStep(Agent, AS.Pc) && finishMatters(St, Agent)) ||
      (Agent == LapAnchor && atFreeLapEnd(St, Agent)) ||
      (Agent == InnerAnchor && atFreeInnerEnd(St, Agent)))
    return false;
  if (AtExit && St.TailExit >= 0) {
    // Leaving at the exit every agent leaves at is all it may do: it touches nothing, but
    // when no block follows, it finishes the agent.
    auto [Begin, End] = exitBlock(Agent, St.TailExit, AS.Laps);
    return Begin < End || !finishMatters(St, Agent);
  }
  // A decision that binds every agent (how many passes all run, where all leave the tile
  // loop) goes alone with every choice: taking only one alone would lose the others
  // (before, a pass's end was taken alone into the next pass: the agent ran ahead, no agent
  // could leave any more, and H5's, B4's and B5's searches never reached what comes after
  // the cycle). Another agent may take the same decision first, but only one way or the
  // other, which this agent's same choice, taken first, reaches as well: another's leaving
  // after as many passes (or at this exit) leaves this one only that choice, and so does
  // another's running more passes (or going on past the exit); and its step, which the
  // choices share, commutes with theirs. Except where this agent's step waits: then it may
  // only leave the tile loop, and another agent going on past the exit first would leave
  // it waiting at a step it could not pass (so leaving goes alone only where no other
  // agent may go on past the exit first: ExitBit).
  if (AtExit) {
    auto [Begin, End] = exitBlock(Agent, ExitAt[Agent][AS.Pc], AS.Laps);
    if (Begin == End && finishMatters(St, Agent))
      return false; // leaving finishes it
  }
  Footprint &Mine = Scratch.Mine;
  Mine = StepFootprint[Agent][AS.Pc];
  const ConcreteStep &C = S.Agents[Agent].Steps[AS.Pc];
  if (C.Kind == StepKind::AsyncLoad) {
    // Issuing a copy only checks the slots' readers; its barriers see the copy land, which
    // is a transition of its own (loadCommutes).
    Mine.assign(3 * Words, 0);
    for (unsigned B : C.Writes)
      touchBuffer(Mine, B, Agent, C.PerCopy, Touch::Update);
  } else if (C.Queue == AsyncQueue::Tcgen05 &&
             (C.Kind == StepKind::MmaIssue ||
              (C.Kind == StepKind::MmaCommit && AS.Tcgen05.uncommittedInFlight()))) {
    // Issuing tcgen05 work, or committing work that no completion can finish first (some
    // of it was issued after the last commit), only queues it, in either order with the
    // completions of the agent's earlier commits: the commit's barriers see the work
    // complete, which is a transition of its own. A commit that the completions may
    // overtake arrives at once then, so it keeps its barriers.
    clear(Mine, QueueBase + 3 * Agent + 2, /*Every=*/true);
    if (C.Kind == StepKind::MmaCommit)
      for (unsigned B : C.Targets)
        clear(Mine, B, /*Every=*/true);
  }
  if (C.PerCopy && C.Kind != StepKind::AsyncLoad) {
    // A read of a slot nothing filled yet races, and a sibling's write fills it: until the
    // slot is filled (for good), their order matters.
    for (unsigned B : C.Reads)
      if (!St.Filled[B])
        touchBuffer(Mine, B, Agent, /*Part=*/false, Touch::Read);
    for (unsigned B : C.Writes)
      if (!St.Filled[B])
        touchBuffer(Mine, B, Agent, /*Part=*/false, Touch::Write);
  }
  if (C.Kind == StepKind::GroupWait) {
    // It ends the reads of the operations it waits for: the agent's own queue is nobody
    // else's, so what counts is what they read.
    const models::AsyncGroupQueue &Q = queue(AS, C.Queue);
    Q.forEachInFlight(
        [&](uint32_t Op) {
          for (unsigned W = 0; W < 3 * Words; ++W)
            Mine[W] |= StepFootprint[Agent][Op][W];
        },
        /*Reads=*/true);
  }
  if (AtExit && !stepEnabled(St, Agent))
    add(Mine, ExitBit);
  unsigned Landed = expectCommutesWithLandings(St, C) ? C.Barrier : NoIndex;
  return !touchedFirst(St, Agent, nullptr, Mine, Landed);
}

std::vector<uint64_t> Simulator::landingSizes(const State &St, unsigned Barrier) const {
  std::vector<uint64_t> Sizes;
  for (const LoadInFlight &O : St.Loads) {
    const ConcreteStep &OC = S.Agents[O.Agent].Steps[O.Step];
    if (std::find(OC.Targets.begin(), OC.Targets.end(), Barrier) != OC.Targets.end())
      Sizes.push_back(OC.TxBytes);
  }
  return Sizes;
}

bool Simulator::someLandingsSum(const std::vector<uint64_t> &Sizes, int64_t Tx) {
  // Some of the copies, not all and not none, bring the tx-count to zero (more than ten:
  // assume so rather than try every subset).
  if (Sizes.size() > 10)
    return true;
  for (uint32_t Subset = 1; Subset + 1 < (1u << Sizes.size()); ++Subset) {
    int64_t Sum = 0;
    for (size_t I = 0; I < Sizes.size(); ++I)
      if ((Subset >> I) & 1)
        Sum += static_cast<int64_t>(Sizes[I]);
    if (Sum == Tx)
      return true;
  }
  return false;
}

bool Simulator::loadCommutes(const State &St, const LoadInFlight &L) const {
  // The copy's complete_tx commutes with the other copies, arrivals and expect_tx that may
  // reach its barriers first unless a phase may complete before it or with only some of
  // them: then the order decides which phase a count lands in (landingOrderMatters, at the
  // end of touchedFirst's walk).
  const ConcreteStep &C = S.Agents[L.Agent].Steps[L.Step];
  for (unsigned X : C.Targets)
    if (!St.Barriers[X].initialized())
      return false; // a violation to report where it happens
  Footprint &Mine = Scratch.Mine;
  Mine.assign(3 * Words, 0);
  for (unsigned B : C.Targets) {
    add(Mine, B);
    addRead(Mine, AliveBase + S.Barriers[B].Cta);
  }
  for (unsigned B : C.Writes)
    touchBuffer(Mine, B, L.Agent, C.PerCopy, Touch::Update);
  return !touchedFirst(St, NoIndex, &L, Mine);
}

bool Simulator::landingOrderMatters(const State &St, const LoadInFlight &L,
                                    unsigned X) const {
  // Every arrival, expect_tx and landing that may reach X before L adds to the phase's
  // counts, in any order, as long as no phase completes before L lands: then L and all of
  // them reach the same state in either order. A phase completes when its pending arrivals
  // and its tx-count are both zero; with L's bytes it may complete only with all of them
  // (else what comes after the completion counts in the next phase).
  const TouchScratch &Xs = Scratch;
  struct Item {
    uint32_t Arrivals;
    int64_t Tx;
  };
  llvm::SmallVector<Item, 12> Items;
  bool Self = false;
  for (const LoadInFlight &O : St.Loads) {
    if (O == L) {
      Self = true;
      continue;
    }
    const ConcreteStep &OC = S.Agents[O.Agent].Steps[O.Step];
    if (llvm::is_contained(OC.Targets, X))
      Items.push_back({0, -static_cast<int64_t>(OC.TxBytes)});
  }
  for (const TouchScratch::Contribution &C : Xs.BeforeLanding)
    if (C.Barrier == X)
      Items.push_back({C.Arrivals, static_cast<int64_t>(C.Expected) -
                                       static_cast<int64_t>(C.Landing)});
  if (!Self || Items.size() > 12)
    return true;
  const models::Mbarrier &M = St.Barriers[X];
  int64_t Bytes = S.Agents[L.Agent].Steps[L.Step].TxBytes;
  uint32_t All = (1u << Items.size()) - 1;
  for (uint32_t Subset = 0; Subset <= All; ++Subset) {
    uint64_t Arrivals = 0;
    int64_t Tx = M.txCount();
    for (size_t I = 0; I < Items.size(); ++I)
      if ((Subset >> I) & 1) {
        Arrivals += Items[I].Arrivals;
        Tx += Items[I].Tx;
      }
    if (Arrivals != M.pending())
      continue;
    if (Tx == 0 || (Tx == Bytes && Subset != All))
      return true;
  }
  return false;
}

bool Simulator::tcgen05Commutes(const State &St, unsigned Agent) const {
  // What completing the oldest commit's operations touches: their reads end, and the
  // commits pending arrive (those it makes due; all of them, to be safe). The agent's own
  // later issues and commits only queue, in either order with it (commutes()), so its own
  // queue is left out.
  Footprint &Mine = Scratch.Mine;
  tcgen05InFlight(St, Agent, Mine);
  clear(Mine, QueueBase + 3 * Agent + 2, /*Every=*/true);
  // It must land before the barrier's CTA exits (the agent's own CTA too: every agent may
  // finish with the work still in flight).
  St.Agents[Agent].Tcgen05.forEachPendingCommit([&](uint32_t Commit) {
    for (unsigned B : S.Agents[Agent].Steps[Commit].Targets)
      addRead(Mine, AliveBase + S.Barriers[B].Cta);
  });
  return !touchedFirst(St, NoIndex, nullptr, Mine, NoIndex, Agent);
}

void Simulator::tcgen05InFlight(const State &St, unsigned Agent, Footprint &F) const {
  const models::Tcgen05CommitTracker &T = St.Agents[Agent].Tcgen05;
  F.assign(3 * Words, 0);
  for (uint32_t Op : T.inFlight())
    for (unsigned W = 0; W < 3 * Words; ++W)
      F[W] |= StepFootprint[Agent][Op][W];
  T.forEachPendingCommit([&](uint32_t Commit) {
    for (unsigned B : S.Agents[Agent].Steps[Commit].Targets)
      addArrival(F, B);
  });
}

bool Simulator::expectCommutesWithLandings(const State &St, const ConcreteStep &C) const {
  // arrive.expect_tx and the copies in flight to its barrier: while the phase has arrivals
  // pending besides this one, no landing completes it in either order; when this is the
  // last, the orders differ only if the arrival completes the phase by itself (tx-count plus
  // its bytes is zero) or some of the copies, not all, bring that sum to zero.
  if (C.Kind != StepKind::Arrive || !C.TxBytes || C.Barrier == NoIndex)
    return false;
  const models::Mbarrier &B = St.Barriers[C.Barrier];
  if (!B.initialized() || B.pending() < std::max(1u, C.Count))
    return false;
  if (B.pending() > std::max(1u, C.Count))
    return true;
  std::vector<uint64_t> Sizes = landingSizes(St, C.Barrier);
  int64_t Tx = B.txCount() + C.TxBytes;
  return Sizes.empty() || (Tx != 0 && !someLandingsSum(Sizes, Tx));
}

std::vector<bool> Simulator::privateTransitions(llvm::ArrayRef<ScheduleStep> Schedule) const {
  size_t N = S.Agents.size();
  // What each agent's steps touch, and what the completions of its work in flight touch: a
  // copy's landing the barrier and slot its issue names, tcgen05 work what its issue and
  // commit name (wgmma and bulk stores complete at their owner's wait_group, a step of its
  // own).
  std::vector<Footprint> Own(N, Footprint(3 * Words, 0)), Async(N, Footprint(3 * Words, 0));
  auto Or = [&](Footprint &Into, const Footprint &F) {
    for (unsigned W = 0; W < 3 * Words; ++W)
      Into[W] |= F[W];
  };
  for (unsigned A = 0; A < N; ++A)
    for (size_t I = 0; I < S.Agents[A].Steps.size(); ++I) {
      const ConcreteStep &C = S.Agents[A].Steps[I];
      Or(Own[A], StepFootprint[A][I]);
      if (C.Kind == StepKind::AsyncLoad || C.Kind == StepKind::MmaCommit ||
          (C.Kind == StepKind::MmaIssue && C.Queue == AsyncQueue::Tcgen05) ||
          (C.Kind == StepKind::GroupWait && C.Queue == AsyncQueue::Tcgen05))
        Or(Async[A], StepFootprint[A][I]);
    }
  // An agent that starts only once A finished, or that finished before A started (the roles
  // and the prologue of a CTA, the epilogue and everything before it), takes no transition
  // between two of A's; work it issued completes after it issued it, so only one that
  // starts after A finished has none landing then either (an agent's own work may land
  // between its transitions).
  std::vector<Footprint> Others(N, Footprint(3 * Words, 0));
  for (unsigned A = 0; A < N; ++A)
    for (unsigned B = 0; B < N; ++B) {
      if (B != A && !follows(B, A) && !follows(A, B))
        Or(Others[A], Own[B]);
      if (!follows(B, A))
        Or(Others[A], Async[B]);
    }
  // A cluster's prologues run alone until the first phase of the cluster barrier completes:
  // every other agent starts after its CTA's prologue, which ends with a wait for that phase,
  // and the phase needs each prologue's arrival (the others' threads fall short of its
  // count). So a prologue's steps before its barrier.cluster.arrive meet only the other
  // prologues and what they issued. Alone[A]: how many of A's first steps run so.
  std::vector<uint32_t> Alone(N, 0);
  std::vector<Footprint> Prologues(N, Footprint(3 * Words, 0));
  auto Place = [&](unsigned A) { return S.Agents[A].Place; };
  std::vector<bool> Late(N, false); // starts after a prologue that waits on the cluster
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned B = 0; B < N; ++B) {
      if (Late[B] || Place(B) == Placement::Prologue)
        continue;
      for (unsigned P = 0; P < N && !Late[B]; ++P)
        if (follows(B, P) && (Late[P] || Place(P) == Placement::Prologue))
          Changed = Late[B] = true;
    }
  }
  // Per prologue: its first barrier.cluster.arrive, and a wait after it.
  std::vector<uint32_t> ArriveAt(N, UINT32_MAX);
  std::vector<uint64_t> Arriving(N, 0);
  bool Cluster = S.ClusterSize > 1;
  for (unsigned A = 0; A < N && Cluster; ++A) {
    if (Place(A) != Placement::Prologue) {
      Cluster &= Late[A];
      continue;
    }
    const std::vector<ConcreteStep> &Steps = S.Agents[A].Steps;
    for (uint32_t I = 0; I < Steps.size() && ArriveAt[A] == UINT32_MAX; ++I)
      if (Steps[I].Kind == StepKind::ClusterArrive)
        ArriveAt[A] = I;
    Cluster &= ArriveAt[A] != UINT32_MAX &&
               std::any_of(Steps.begin() + ArriveAt[A], Steps.end(), [](const ConcreteStep &C) {
                 return C.Kind == StepKind::ClusterWait;
               });
    // Every arrival it makes counts (the barrier's warp granularity, as apply() rounds).
    for (const ConcreteStep &C : Steps)
      if (C.Kind == StepKind::ClusterArrive)
        Arriving[A] += (C.Arriving + 31) / 32 * 32;
  }
  for (unsigned A = 0; A < N && Cluster; ++A) {
    if (Place(A) != Placement::Prologue)
      continue;
    uint64_t OthersArriving = 0;
    Prologues[A] = Async[A];
    for (unsigned P = 0; P < N; ++P)
      if (P != A && Place(P) == Placement::Prologue) {
        OthersArriving += Arriving[P];
        Or(Prologues[A], Own[P]);
        Or(Prologues[A], Async[P]);
      }
    if (OthersArriving < S.Agents[A].Steps[ArriveAt[A]].Count)
      Alone[A] = ArriveAt[A];
  }

  std::vector<bool> Out(Schedule.size(), false);
  State St = initial();
  Footprint Mine;
  for (size_t I = 0; I < Schedule.size(); ++I) {
    const ScheduleStep &T = Schedule[I];
    if (T.Agent >= N || T.Step >= S.Agents[T.Agent].Steps.size() || !isEnabled(St, T))
      return std::vector<bool>(Schedule.size(), false); // not a schedule of S
    const ConcreteStep &C = S.Agents[T.Agent].Steps[T.Step];
    bool Blocks = C.Kind == StepKind::Wait || C.Kind == StepKind::Probe ||
                  C.Kind == StepKind::ClusterArrive || C.Kind == StepKind::ClusterWait ||
                  C.Kind == StepKind::Exit || C.Kind == StepKind::Diverge ||
                  C.Kind == StepKind::Unknown;
    if (T.K == ScheduleStep::Kind::Execute && !Blocks) {
      Mine = StepFootprint[T.Agent][T.Step];
      // A wait_group ends the reads of the wgmma or bulk stores it retires (their sources
      // stay in flight until then, and a fill or write of them races with them): it touches
      // what the operations in flight on its queue read.
      if (C.Kind == StepKind::GroupWait && C.Queue != AsyncQueue::Tcgen05) {
        const AgentState &AS = St.Agents[T.Agent];
        queue(AS, C.Queue).forEachInFlight([&](uint32_t Op) {
          Or(Mine, StepFootprint[T.Agent][Op]);
        });
      }
      Out[I] = !conflicts(Mine, T.Step < Alone[T.Agent] ? Prologues[T.Agent] : Others[T.Agent]);
    }
    apply(St, T);
  }
  return Out;
}
