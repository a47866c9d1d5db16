//===- ExploreKey.cpp - what a state is, for the visited set ----------------------===//
//
// The initial state, the key two states share exactly when their futures are the same
// (periodic systems leave out what grows without bound), and how far a periodic system's
// agents drifted apart.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

void Simulator::key(const State &St, KeyWriter &K) const {
  // Equal keys, equal futures. Periodic systems leave out what grows without bound but
  // cannot change what happens next: completed mbarrier phases count only by parity, named
  // and cluster barriers only by the threads arrived (tickets become distances to the
  // instance they wait for), passes relative to the fewest any agent with a cycle ran.
  // With symmetry, each group of copies of a role comes sorted (ExploreSymmetry.cpp).
  K.clear();
  KeyShift Shift;
  if (Periodic) {
    Shift.Fewest = UINT32_MAX;
    for (unsigned A = 0; A < S.Agents.size(); ++A)
      if (S.Agents[A].hasCycle())
        Shift.Fewest = std::min(Shift.Fewest, St.Agents[A].Laps);
    K.putSigned(St.ExitLaps >= 0 ? St.ExitLaps - int64_t(Shift.Fewest) : -1);
    if (!InnerAgents.empty()) {
      // Tiles count from the earliest any agent is in; in that tile, passes count from the
      // fewest any agent in it ran (every agent has entered it: none is behind).
      Shift.First = Shift.Least = UINT32_MAX;
      for (unsigned A : InnerAgents)
        Shift.First = std::min(Shift.First, St.Agents[A].Occurrence);
      for (unsigned A : InnerAgents)
        if (St.Agents[A].Occurrence == Shift.First)
          Shift.Least = std::min(Shift.Least, St.Agents[A].InnerLaps);
    }
    unsigned Exits = 0;
    for (auto [Occurrence, Exit] : St.InnerExits)
      Exits += Occurrence >= Shift.First;
    K.put(Exits);
    for (auto [Occurrence, Exit] : St.InnerExits)
      if (Occurrence >= Shift.First) {
        K.put(Occurrence - Shift.First);
        K.put(Occurrence == Shift.First ? Exit - Shift.Least : Exit);
      }
  }
  K.putSigned(St.TailExit);
  if (St.TailExit >= 0 && ExitInCycle[St.TailExit])
    K.put(St.TailLaps - (Periodic ? Shift.Fewest : 0));
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (GroupOf.empty() || GroupOf[A] == NoIndex)
      putAgent(K, St, A, Shift);
  putGroups(K, St, Shift);
  for (unsigned Cta = 0; Cta < St.Named.size(); ++Cta) {
    for (uint32_t Id : NamedUsed[Cta]) { // the others never leave their initial state
      if (!Owned.empty() && Owned[Cta][Id])
        continue; // in its owner's record
      const models::NamedBarrier &B = St.Named[Cta].get(Id);
      uint64_t Done = Periodic ? 0 : B.completedInstances();
      if (Done || B.arrived())
        K.put(Id | uint64_t(B.arrived()) << 8 | Done << 24);
    }
    // Ends the CTA's list (no entry is the bare id NumIds), so that CTAs do not run together.
    K.put(models::NamedBarrier::NumIds);
  }
  for (const models::Mbarrier &B : St.Barriers) {
    K.put(B.initialized() | uint64_t(B.expected()) << 1 | uint64_t(B.pending()) << 22);
    K.putSigned(B.txCount());
    K.put(Periodic ? B.completedPhases() & 1 : B.completedPhases());
  }
  K.put(St.Cluster.arrived() | (Periodic ? 0 : St.Cluster.completedInstances()) << 24);
  for (const auto &Allocs : St.TmemAllocs) {
    K.put(Allocs.size());
    for (auto [Column, Columns] : Allocs)
      K.put(uint64_t(Column) << 32 | Columns);
  }
  K.put(St.Loads.size());
  for (const LoadInFlight &L : St.Loads)
    K.put(uint64_t(L.Agent) << 48 | uint64_t(L.Copy) << 32 | L.Step);
  for (uintptr_t W : St.Filled.getData())
    K.put(W);
}

void Simulator::putAgent(KeyWriter &K, const State &St, unsigned A,
                         const KeyShift &Shift) const {
  auto PutOps = [&](const models::AsyncGroupQueue &Q, bool Reads) {
    unsigned N = 0;
    Q.forEachInFlight([&](uint32_t) { ++N; }, Reads);
    K.put(N);
    Q.forEachInFlight([&](uint32_t Op) { K.put(Op); }, Reads);
  };
  const AgentState &AS = St.Agents[A];
  const ConcreteAgent &Ag = S.Agents[A];
  K.put(AS.Pc);
  uint64_t Ticket = AS.Ticket, ClusterTicket = AS.ClusterTicket;
  uint32_t Laps = 0, Occurrence = 0, InnerLaps = 0;
  bool Passes = false;
  if (Periodic) {
    if (AS.Arrived && AS.Pc < Ag.Steps.size())
      Ticket -= St.Named[Ag.Cta].get(Ag.Steps[AS.Pc].NamedId).completedInstances();
    if (AS.ClusterArrived)
      ClusterTicket -= St.Cluster.completedInstances();
    Occurrence = AS.Occurrence, InnerLaps = AS.InnerLaps;
    if (!Ag.InnerCycles.empty()) {
      if (Occurrence == Shift.First)
        InnerLaps -= Shift.Least;
      Occurrence -= Shift.First;
    }
    Laps = Ag.hasCycle() ? AS.Laps - Shift.Fewest : AS.Laps;
    Passes = Laps || Occurrence || InnerLaps;
  }
  // Most agents use few of the fields below (a producer no queue, a writeback no
  // tickets, most agents of a periodic system no passes beyond the fewest): a bit per group
  // says which groups are written, the others being all zero or empty. Still one key per
  // state: a group is left out exactly when it is in its initial state.
  const bool Tickets = AS.Arrived || AS.ClusterArrived || Ticket || ClusterTicket;
  const bool Lists =
      !AS.Unfenced.empty() || !AS.Unpublished.empty() || !AS.LoneCommits.empty();
  auto Busy = [](const models::AsyncGroupQueue &Q) {
    return Q.committedGroups() || Q.uncommitted(); // else no operation is in the queue
  };
  const bool Wgmma = Busy(AS.Wgmma), Bulk = Busy(AS.Bulk), CpAsync = Busy(AS.CpAsync);
  const bool Tcgen05 = !AS.Tcgen05.inFlight().empty() || AS.Tcgen05.pendingCommits();
  K.put(uint64_t(Tickets) | uint64_t(AS.Probed != 0) << 1 | uint64_t(Lists) << 2 |
        uint64_t(Wgmma) << 3 | uint64_t(Bulk) << 4 | uint64_t(Tcgen05) << 5 |
        uint64_t(Passes) << 6 | uint64_t(CpAsync) << 7 |
        uint64_t(AS.TmemLoading != 0 || AS.TmemStoring != 0) << 8);
  if (Passes) {
    K.put(Laps);
    K.put(Occurrence);
    K.put(InnerLaps);
  }
  if (Tickets) {
    K.put(AS.Arrived | AS.ClusterArrived << 1);
    K.put(Ticket);
    K.put(ClusterTicket);
  }
  if (AS.Probed)
    K.put(AS.Probed);
  if (AS.TmemLoading || AS.TmemStoring)
    K.put(uint64_t(AS.TmemLoading) | uint64_t(AS.TmemStoring) << 32);
  if (Lists) {
    K.putList(AS.Unfenced);
    K.putList(AS.Unpublished);
    K.put(AS.LoneCommits.size());
    for (auto [Commit, Due] : AS.LoneCommits)
      K.put(uint64_t(Due) << 32 | Commit);
  }
  if (Wgmma) {
    PutOps(AS.Wgmma, false);
    K.put(AS.Wgmma.committedGroups());
    K.put(AS.Wgmma.uncommitted());
  }
  if (Bulk) {
    PutOps(AS.Bulk, false);
    PutOps(AS.Bulk, true);
    K.put(AS.Bulk.committedGroups());
    K.put(AS.Bulk.uncommitted());
  }
  if (CpAsync)
    AS.CpAsync.save(K); // which copies are in which group: what a wait_group N retires
  if (Tcgen05) {
    K.put(AS.Tcgen05.inFlight().size());
    for (uint32_t Op : AS.Tcgen05.inFlight())
      K.put(Op);
    K.put(AS.Tcgen05.pendingCommits());
  }
}

uint32_t Simulator::lag(const State &St) const {
  uint32_t Lo = UINT32_MAX, Hi = 0;
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (S.Agents[A].hasCycle()) {
      Lo = std::min(Lo, St.Agents[A].Laps);
      Hi = std::max(Hi, St.Agents[A].Laps);
    }
  uint32_t Lag = Hi >= Lo ? Hi - Lo : 0;
  if (!InnerAgents.empty()) {
    uint32_t First = UINT32_MAX, Last = 0, Least = UINT32_MAX, Most = 0;
    for (unsigned A : InnerAgents) {
      First = std::min(First, St.Agents[A].Occurrence);
      Last = std::max(Last, St.Agents[A].Occurrence);
    }
    // Least first: an agent in a later tile counts from it (its passes there come on top of
    // the fewest in the earliest tile).
    for (unsigned A : InnerAgents)
      if (St.Agents[A].Occurrence == First)
        Least = std::min(Least, St.Agents[A].InnerLaps);
    for (unsigned A : InnerAgents)
      Most = std::max(Most, St.Agents[A].InnerLaps +
                                (St.Agents[A].Occurrence == First ? 0 : Least));
    Lag = std::max({Lag, Last - First, Most - Least});
  }
  return Lag;
}

State Simulator::initial() const {
  State St;
  St.Agents.resize(S.Agents.size());
  St.Barriers.resize(S.Barriers.size());
  St.Named.resize(S.ClusterSize);
  St.Tmem.resize(S.ClusterSize);
  St.TmemAllocs.resize(S.ClusterSize);
  St.Filled.resize(S.Buffers.size());
  return St;
}
