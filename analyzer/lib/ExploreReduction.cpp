//===- ExploreReduction.cpp - the explorer's partial-order reduction --------------===//
//
// Footprints of steps and copies, what they bring toward completing barrier phases, and the
// test that takes one transition alone: nothing that may run before it touches what it
// touches (Explore.h says why that preserves deadlocks and races).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;
Simulator::Footprint Simulator::footprint(unsigned Agent, const ConcreteStep &C) const {
  Footprint F(2 * Words, 0);
  unsigned Cta = S.Agents[Agent].Cta;
  // A wait only reads its barrier, an MMA or store only reads its source: reads commute.
  if (C.Barrier != NoIndex && C.Kind == StepKind::Wait)
    addRead(F, C.Barrier);
  else if (C.Barrier != NoIndex)
    add(F, C.Barrier);
  for (unsigned B : C.Targets)
    add(F, B);
  for (unsigned B : C.Reads)
    addRead(F, S.Barriers.size() + B);
  for (unsigned B : C.Writes)
    add(F, S.Barriers.size() + B);
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
  case StepKind::MmaIssue:
  case StepKind::MmaCommit:
  case StepKind::GroupCommit:
  case StepKind::GroupWait:
  case StepKind::AsyncStore: {
    unsigned Queue = C.Queue == AsyncQueue::Bulk ? 1 : C.Queue == AsyncQueue::Tcgen05 ? 2 : 0;
    if (C.Kind == StepKind::AsyncStore)
      Queue = 1;
    add(F, QueueBase + 3 * Agent + Queue);
    // A tcgen05 operation's completion is what makes the agent's commits arrive.
    if (Queue == 2)
      for (unsigned B : CommitTargets[Agent])
        add(F, B);
    break;
  }
  default:
    break;
  }
  return F;
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
        E.Expects.push_back(C.Barrier);
    }
    break;
  case StepKind::ExpectTx: // a negative tx count brought back to zero completes a phase
    if (C.Barrier != NoIndex)
      E.Expects.push_back(C.Barrier);
    break;
  case StepKind::AsyncLoad:
    for (unsigned B : C.Targets)
      E.Bytes.push_back({B, uint64_t(C.TxBytes) * std::max(1u, C.Count)});
    break;
  case StepKind::MmaCommit:
    for (unsigned B : C.Targets)
      E.Arrivals.push_back({B, std::max(1u, C.Count)});
    break;
  default:
    break;
  }
  return E;
}

bool Simulator::commutes(const State &St, unsigned Agent) const {
  const AgentState &AS = St.Agents[Agent];
  // Finishing an agent starts others (the roles after the prologue, the epilogue after the
  // roles): the last step is never taken alone; nor the end of a free pass, so that every
  // cycle of a periodic system's states holds a state with every transition taken.
  if (AS.Pc + 1 >= S.Agents[Agent].Steps.size() || atFreeLapEnd(St, Agent) ||
      atFreeInnerEnd(St, Agent))
    return false;
  Footprint Mine = StepFootprint[Agent][AS.Pc];
  const ConcreteStep &C = S.Agents[Agent].Steps[AS.Pc];
  if (C.Kind == StepKind::GroupWait) {
    // It ends the reads of the operations it waits for: the agent's own queue is nobody
    // else's, so what counts is what they read.
    const models::AsyncGroupQueue &Q = C.Queue == AsyncQueue::Bulk ? AS.Bulk : AS.Wgmma;
    for (uint32_t Op : Q.readsInFlight())
      for (unsigned W = 0; W < 2 * Words; ++W)
        Mine[W] |= StepFootprint[Agent][Op][W];
  }
  return !touchedFirst(St, Agent, nullptr, Mine);
}

bool Simulator::loadCommutes(const State &St, const LoadInFlight &L) const {
  // The copy's complete_tx and the other copies to the same barrier commute unless some of
  // them, not all, can complete its phase: then the order decides which phase a byte count
  // lands in.
  const ConcreteStep &C = S.Agents[L.Agent].Steps[L.Step];
  for (unsigned X : C.Targets) {
    const models::Mbarrier &B = St.Barriers[X];
    if (!B.initialized())
      return false; // a violation to report where it happens
    if (B.pending() > 0)
      continue;
    std::vector<uint64_t> Sizes;
    for (const LoadInFlight &O : St.Loads) {
      const ConcreteStep &OC = S.Agents[O.Agent].Steps[O.Step];
      if (std::find(OC.Targets.begin(), OC.Targets.end(), X) != OC.Targets.end())
        Sizes.push_back(OC.TxBytes);
    }
    if (Sizes.size() > 10)
      return false;
    for (uint32_t Subset = 1; Subset + 1 < (1u << Sizes.size()); ++Subset) {
      int64_t Sum = 0;
      for (size_t I = 0; I < Sizes.size(); ++I)
        if ((Subset >> I) & 1)
          Sum += static_cast<int64_t>(Sizes[I]);
      if (Sum == B.txCount())
        return false;
    }
  }
  Footprint Mine(2 * Words, 0);
  for (unsigned B : C.Targets)
    add(Mine, B);
  for (unsigned B : C.Writes)
    add(Mine, S.Barriers.size() + B);
  return !touchedFirst(St, NoIndex, &L, Mine);
}

bool Simulator::touchedFirst(const State &St, unsigned Agent, const LoadInFlight *Load,
                             const Footprint &Mine) const {
  // What may happen before the transition (a step of Agent, or the completion of Load): the
  // operations in flight, and each agent's steps up to a wait on an mbarrier whose phase
  // cannot complete first (it is not complete now, and what may run first brings fewer
  // arrivals than it lacks, or too few bytes when no expect_tx may come). The transition is
  // taken alone when it touches none of that: it then commutes with all of it.
  Footprint Others(2 * Words, 0);
  std::vector<uint32_t> Arrivals(S.Barriers.size(), 0);
  std::vector<uint64_t> Bytes(S.Barriers.size(), 0);
  std::vector<bool> Expect(S.Barriers.size(), false);
  auto Or = [&](const Footprint &F) {
    for (unsigned W = 0; W < 2 * Words; ++W)
      Others[W] |= F[W];
  };
  auto Add = [&](const Enabling &E) {
    for (auto [B, N] : E.Arrivals)
      Arrivals[B] = N > UINT32_MAX - Arrivals[B] ? UINT32_MAX : Arrivals[B] + N;
    for (auto [B, N] : E.Bytes)
      Bytes[B] = std::min<uint64_t>(Bytes[B] + N, uint64_t(1) << 40);
    for (unsigned B : E.Expects)
      Expect[B] = true;
  };
  auto Anything = [&](const Footprint &Barriers) {
    for (unsigned B = 0; B < S.Barriers.size(); ++B)
      if ((Barriers[B / 64] >> (B % 64)) & 1) {
        Arrivals[B] = UINT32_MAX;
        Bytes[B] = uint64_t(1) << 40;
        Expect[B] = true;
      }
  };
  auto MayComplete = [&](unsigned B) {
    const models::Mbarrier &M = St.Barriers[B];
    int64_t Tx = M.txCount();
    return Arrivals[B] >= M.pending() &&
           (Expect[B] || (Tx >= 0 && uint64_t(Tx) <= Bytes[B])) &&
           (M.pending() > 0 || Tx != 0 || Expect[B]);
  };
  for (unsigned B = 0; B < S.Agents.size(); ++B) {
    const AgentState &BS = St.Agents[B];
    const std::vector<ConcreteStep> &Steps = S.Agents[B].Steps;
    // An agent's own wgmma and bulk stores end only at its own wait_group (lazily), which
    // counts them in its footprint below.
    if (B != Agent)
      for (const models::AsyncGroupQueue *Q : {&BS.Wgmma, &BS.Bulk})
        for (uint32_t Op : Q->inFlight())
          Or(StepFootprint[B][Op]);
    for (uint32_t Op : BS.Tcgen05.inFlight())
      Or(StepFootprint[B][Op]);
    if (BS.Tcgen05.pendingCommits())
      for (unsigned T : CommitTargets[B])
        Arrivals[T] = UINT32_MAX;
  }
  for (const LoadInFlight &L : St.Loads) {
    if (Load && L == *Load)
      continue;
    Footprint F = StepFootprint[L.Agent][L.Step];
    if (Load) // copies to the same barrier: loadCommutes checked their order does not matter
      for (unsigned B : S.Agents[Load->Agent].Steps[Load->Step].Targets)
        F[B / 64] &= ~(uint64_t(1) << (B % 64));
    Or(F);
    Add(StepEnabling[L.Agent][L.Step]);
  }
  // Each other agent's walk: the wait it stopped at (NoIndex: it ran to its end).
  std::vector<uint32_t> Stop(S.Agents.size(), NoIndex);
  auto Walk = [&](unsigned B, uint32_t From) {
    const ConcreteAgent &Ag = S.Agents[B];
    for (uint32_t Pc = From; Pc < Ag.Steps.size(); ++Pc) {
      const ConcreteStep &C = Ag.Steps[Pc];
      int Inner = InnerEndAt[B][Pc];
      if ((Ag.hasCycle() && Pc + 1 == Ag.CycleEnd) || Inner >= 0) {
        // Passes may repeat: everything from the cycle on.
        uint32_t Begin = Inner >= 0 ? Ag.InnerCycles[Inner].first : Ag.CycleBegin;
        Or(Suffix[B][Begin]);
        Anything(EnablingSuffix[B][Begin]);
        return;
      }
      if (C.Kind == StepKind::Wait && C.Barrier != NoIndex &&
          St.Barriers[C.Barrier].initialized() &&
          !St.Barriers[C.Barrier].testWaitParity(C.Parity) && !MayComplete(C.Barrier)) {
        Stop[B] = Pc;
        return;
      }
      Or(StepFootprint[B][Pc]);
      Add(StepEnabling[B][Pc]);
    }
  };
  for (unsigned B = 0; B < S.Agents.size(); ++B)
    if (B != Agent)
      Walk(B, St.Agents[B].Pc);
  // A stopped agent goes on once what may run first may complete its phase.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned B = 0; B < S.Agents.size(); ++B)
      if (Stop[B] != NoIndex && MayComplete(S.Agents[B].Steps[Stop[B]].Barrier)) {
        uint32_t From = Stop[B];
        Stop[B] = NoIndex;
        Or(StepFootprint[B][From]);
        Walk(B, From + 1);
        Changed = true;
      }
  }
  // Writes conflict with everything, reads only with writes.
  for (unsigned W = 0; W < Words; ++W)
    if ((Mine[W] & (Others[W] | Others[Words + W])) || (Mine[Words + W] & Others[W]))
      return true;
  return false;
}
