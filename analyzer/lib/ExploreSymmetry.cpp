//===- ExploreSymmetry.cpp - copies of a role are interchangeable -----------------===//
//
// Two consumer warpgroups of one CTA run the same steps on the same barriers and buffers;
// what tells them apart is their own named barriers (bar.sync %tid.x / 128 + 1) and their
// own parts of per-thread buffer slots. Swapping two such agents, their states and their
// named barriers maps every state to one whose futures are the swapped futures: the same
// deadlocks, races and violations. The search therefore keys each state by its class: the
// members of a group are written sorted (Simulator::key), and of each class only the first
// state reached is expanded. Schedules stay real: the search still runs concrete states, it
// only skips a state whose swapped image it has seen.
//
// Next to the partial-order reduction: a state is expanded by a set of transitions that
// contains one shortening the way to a reachable bad state, or (for a race that a step
// independent of everything first taken keeps putting off) one on a cycle of states that
// holds a fully expanded state (the anchor's free pass end; Explore.h). With symmetry the
// cycles are closed up to a swap, s ... -> pi(s). Passes count from the fewest any agent ran,
// so a key recurs only when every agent moved on by the same number of passes (or none
// moved: members can trade places only by moving forward, and positions only grow, so with
// no pass gained nobody moved at all). The anchors are kept out of the groups, so such a
// cycle still runs the anchor through its free pass end, a fully expanded state.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>
#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

namespace {

bool isNamed(const ConcreteStep &C) {
  return C.Kind == StepKind::NamedSync || C.Kind == StepKind::NamedArrive;
}

/// The steps agree in everything but the named barrier they use, which Ids maps (the first
/// agent's id to the second's), consistently over all steps.
bool sameStep(const ConcreteStep &A, const ConcreteStep &B,
              std::map<uint32_t, uint32_t> &Ids) {
  if (A.Kind != B.Kind || A.RoleStep != B.RoleStep || A.Event != B.Event ||
      A.Barrier != B.Barrier || A.Targets != B.Targets || A.Count != B.Count ||
      A.TxBytes != B.TxBytes || A.Parity != B.Parity || A.Reads != B.Reads ||
      A.Writes != B.Writes || A.PerCopy != B.PerCopy || A.Queue != B.Queue ||
      A.WaitN != B.WaitN || A.ReadOnly != B.ReadOnly || A.Arriving != B.Arriving ||
      A.Columns != B.Columns || A.Iterations != B.Iterations ||
      A.Accumulators != B.Accumulators || A.TmemFirst != B.TmemFirst ||
      A.TmemEnd != B.TmemEnd || A.TmemPair != B.TmemPair)
    return false;
  if (!isNamed(A))
    return A.NamedId == B.NamedId;
  auto [It, New] = Ids.emplace(A.NamedId, B.NamedId);
  return It->second == B.NamedId;
}

} // namespace

unsigned Simulator::useSymmetry() {
  Groups.clear();
  GroupOf.assign(S.Agents.size(), NoIndex);
  Owned.assign(S.ClusterSize, std::vector<bool>(models::NamedBarrier::NumIds, false));
  // Per agent, the named barrier ids it uses, in the order of first use.
  std::vector<std::vector<uint32_t>> Uses(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (const ConcreteStep &C : S.Agents[A].Steps)
      if (isNamed(C) && !llvm::is_contained(Uses[A], C.NamedId))
        Uses[A].push_back(C.NamedId);
  auto Exclusive = [&](unsigned A) {
    for (unsigned B = 0; B < S.Agents.size(); ++B)
      if (B != A && S.Agents[B].Cta == S.Agents[A].Cta)
        for (uint32_t Id : Uses[A])
          if (llvm::is_contained(Uses[B], Id))
            return false;
    return true;
  };
  // A member: a role's agent, not an anchor (the cycle argument above needs the anchors to
  // stay where they are), issuing no copies (a copy in flight names its agent) and alone on
  // its named barriers.
  auto Eligible = [&](unsigned A) {
    const ConcreteAgent &Ag = S.Agents[A];
    // Parts of an agent (ConcreteAgent::After) start from their own shared run: swapping
    // one part with another's would not swap what they follow.
    if (Ag.Place != Placement::Role || A == LapAnchor || A == InnerAnchor || !Exclusive(A) ||
        Ag.Forked || Ag.After != NoIndex)
      return false;
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::AsyncLoad)
        return false;
    return true;
  };
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    if (GroupOf[A] != NoIndex || !Eligible(A))
      continue;
    const ConcreteAgent &First = S.Agents[A];
    SymmetryGroup G;
    G.Agents.push_back(A);
    G.Ids.push_back(Uses[A]);
    for (unsigned B = A + 1; B < S.Agents.size(); ++B) {
      const ConcreteAgent &Other = S.Agents[B];
      if (GroupOf[B] != NoIndex || Other.Program != First.Program || Other.Cta != First.Cta ||
          Other.Threads != First.Threads || Other.Steps.size() != First.Steps.size() ||
          Other.CycleBegin != First.CycleBegin || Other.CycleEnd != First.CycleEnd ||
          Other.InnerCycles != First.InnerCycles || Other.Exits != First.Exits ||
          Other.MainEnd != First.MainEnd || !Eligible(B))
        continue;
      std::map<uint32_t, uint32_t> Ids;
      bool Same = true;
      for (size_t I = 0; I < First.Steps.size() && Same; ++I)
        Same = sameStep(First.Steps[I], Other.Steps[I], Ids);
      if (!Same || Ids.size() != Uses[A].size())
        continue;
      std::vector<uint32_t> Mapped;
      for (uint32_t Id : Uses[A])
        Mapped.push_back(Ids.at(Id));
      G.Agents.push_back(B);
      G.Ids.push_back(std::move(Mapped));
    }
    if (G.Agents.size() < 2)
      continue;
    for (size_t I = 0; I < G.Agents.size(); ++I) {
      GroupOf[G.Agents[I]] = Groups.size();
      for (uint32_t Id : G.Ids[I])
        Owned[First.Cta][Id] = true;
    }
    Groups.push_back(std::move(G));
  }
  if (Groups.empty()) {
    GroupOf.clear();
    Owned.clear();
  }
  return Groups.size();
}

void Simulator::putGroups(KeyWriter &K, const State &St, const KeyShift &Shift) const {
  for (const SymmetryGroup &G : Groups) {
    llvm::SmallVector<KeyWriter, 4> Records(G.Agents.size());
    for (size_t I = 0; I < G.Agents.size(); ++I) {
      putAgent(Records[I], St, G.Agents[I], Shift);
      for (uint32_t Id : G.Ids[I]) {
        const models::NamedBarrier &B = St.Named[S.Agents[G.Agents[I]].Cta].get(Id);
        Records[I].put(B.arrived());
        Records[I].put(Periodic ? 0 : B.completedInstances());
      }
    }
    llvm::SmallVector<unsigned, 4> Order(G.Agents.size());
    for (unsigned I = 0; I < Order.size(); ++I)
      Order[I] = I;
    std::sort(Order.begin(), Order.end(), [&](unsigned X, unsigned Y) {
      return Records[X].bytes() < Records[Y].bytes();
    });
    for (unsigned I : Order)
      K.append(Records[I]);
  }
}
