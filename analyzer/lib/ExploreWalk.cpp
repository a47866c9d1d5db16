//===- ExploreWalk.cpp - what may run before a transition -------------------------===//
//
// The partial-order reduction's test (ExploreReduction.cpp has the footprints it compares):
// whether anything that may happen before a transition (operations in flight, and each
// other agent's steps up to a wait whose phase cannot complete first) touches what the
// transition touches. Explore.h says why taking the transition alone then preserves
// deadlocks and races.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

bool Simulator::touchesNoFuture(const State &St, unsigned Agent, const Footprint &Mine) const {
  // Suffix covers every step an agent may still take, so it covers what any walk of it
  // finds; the walks' other results (who may finish, what may arrive) only decide how far
  // they go.
  for (unsigned B = 0; B < S.Agents.size(); ++B)
    if (B != Agent && conflicts(Mine, Suffix[B][std::min<size_t>(St.Agents[B].Pc,
                                                                  S.Agents[B].Steps.size())]))
      return false;
  for (unsigned Cta = 0; Cta < S.ClusterSize; ++Cta) {
    if (Agent != NoIndex && S.Agents[Agent].Cta == Cta)
      continue; // it does not end before Agent's step
    unsigned Bit = AliveBase + Cta;
    if ((Mine[Bit / 64] | Mine[Words + Bit / 64] | Mine[2 * Words + Bit / 64]) >> (Bit % 64) & 1)
      return false;
  }
  return true;
}

bool Simulator::touchedFirst(const State &St, unsigned Agent, const LoadInFlight *Load,
                             const Footprint &Mine, unsigned Landed,
                             unsigned Completing) const {
  // What may happen before the transition (a step of Agent, or the completion of Load): the
  // operations in flight, and each agent's steps up to a wait on an mbarrier whose phase
  // cannot complete first (it is not complete now, and what may run first brings fewer
  // arrivals than it lacks, or too few bytes when no expect_tx may come). The transition is
  // taken alone when it touches none of that: it then commutes with all of it. The union of
  // those footprints only grows, so the first one the transition conflicts with decides.
  // Scratch space lives in the simulator: this runs for most states, and allocating it each
  // time cost more than the walk.
  TouchScratch &X = Scratch;
  unsigned NB = S.Barriers.size();
  X.Arrivals.assign(NB, 0);
  X.Plain.assign(NB, 0);
  X.Bytes.assign(NB, 0);
  X.LeastExpect.assign(NB, UINT64_MAX);
  X.Expect.assign(NB, false);
  std::vector<uint32_t> &Arrivals = X.Arrivals, &Plain = X.Plain;
  std::vector<uint64_t> &Bytes = X.Bytes, &LeastExpect = X.LeastExpect;
  std::vector<bool> &Expect = X.Expect;
  auto AddCount = [](uint32_t &To, uint32_t N) { To = N > UINT32_MAX - To ? UINT32_MAX : To + N; };
  auto Hits = [&](const Footprint &F) { return conflicts(Mine, F); };
  auto Add = [&](const Enabling &E) {
    for (auto [B, N] : E.Arrivals)
      AddCount(Arrivals[B], N);
    for (auto [B, N] : E.Plain)
      AddCount(Plain[B], N);
    for (auto [B, N] : E.Bytes)
      Bytes[B] = std::min<uint64_t>(Bytes[B] + N, uint64_t(1) << 40);
    for (auto [B, N] : E.Expects) {
      Expect[B] = true;
      LeastExpect[B] = std::min(LeastExpect[B], N);
    }
  };
  auto Anything = [&](const Footprint &Barriers) {
    for (unsigned B = 0; B < NB; ++B)
      if ((Barriers[B / 64] >> (B % 64)) & 1) {
        Arrivals[B] = Plain[B] = UINT32_MAX;
        Bytes[B] = uint64_t(1) << 40;
        Expect[B] = true;
        LeastExpect[B] = 0;
      }
  };
  // A copy's landing: what reaches its barriers first is collected (BeforeLanding) and
  // judged at the end (landingOrderMatters) instead of conflicting; waits on them stop the
  // walk until they may pass now, since none of their phases completes before the landing
  // unless the end says otherwise.
  llvm::ArrayRef<unsigned> LoadTargets;
  if (Load)
    LoadTargets = S.Agents[Load->Agent].Steps[Load->Step].Targets;
  X.BeforeLanding.clear();
  auto ReachesLoadTarget = [&](const ConcreteStep &C) {
    if ((C.Kind == StepKind::Arrive || C.Kind == StepKind::ExpectTx) && C.Barrier != NoIndex)
      return llvm::is_contained(LoadTargets, C.Barrier);
    if (C.Kind == StepKind::AsyncLoad)
      return llvm::any_of(C.Targets,
                          [&](unsigned B) { return llvm::is_contained(LoadTargets, B); });
    return false;
  };
  // Adds what step C brings to the load's barriers; false when its other effects conflict.
  auto BeforeLanding = [&](const Footprint &Step, const ConcreteStep &C) {
    Footprint &F = X.Copy;
    F = Step;
    for (unsigned B : LoadTargets)
      clear(F, B, /*Every=*/true);
    if (conflicts(Mine, F))
      return false;
    if (C.Kind == StepKind::AsyncLoad) {
      for (unsigned B : C.Targets)
        if (llvm::is_contained(LoadTargets, B))
          X.BeforeLanding.push_back({B, 0, 0, C.TxBytes});
    } else {
      X.BeforeLanding.push_back(
          {C.Barrier, C.Kind == StepKind::Arrive ? std::max(1u, C.Count) : 0, C.TxBytes, 0});
    }
    return true;
  };
  auto TouchesLoadTarget = [&](const Footprint &F) {
    for (unsigned B : LoadTargets)
      for (unsigned K = 0; K < 3; ++K)
        if ((F[K * Words + B / 64] >> (B % 64)) & 1)
          return true;
    return false;
  };
  // Threads that may arrive at the cluster barrier's current phase first.
  uint64_t ClusterThreads = St.Cluster.arrived();
  auto MayComplete = [&](unsigned B) {
    const models::Mbarrier &M = St.Barriers[B];
    int64_t Tx = M.txCount();
    if (Arrivals[B] < M.pending())
      return false;
    if (!Expect[B])
      return Tx >= 0 && uint64_t(Tx) <= Bytes[B] && (M.pending() > 0 || Tx != 0);
    // An expect_tx may come. Unless plain arrivals alone may fill the pending count, one
    // that completes the phase brings at least the fewest bytes any of them expects, and
    // those must land too (B4: a peer CTA's copies cannot complete a full barrier whose
    // own arrive.expect_tx waits for its copies as well).
    uint64_t Least = Plain[B] >= M.pending() ? 0 : std::min(LeastExpect[B], uint64_t(1) << 40);
    return Tx + static_cast<int64_t>(Least) <= static_cast<int64_t>(Bytes[B]);
  };
  for (unsigned B = 0; B < S.Agents.size(); ++B) {
    const AgentState &BS = St.Agents[B];
    bool Hit = false;
    auto Op = [&](uint32_t Op) { Hit = Hit || Hits(StepFootprint[B][Op]); };
    // An agent's own wgmma and bulk stores end only at its own wait_group (lazily), which
    // counts them in its footprint below.
    if (B != Agent) {
      BS.Wgmma.forEachInFlight(Op);
      BS.Bulk.forEachInFlight(Op);
    }
    // tcgen05 operations in flight arrive only through the commits pending now (a later
    // commit is a step of B, walked below): their footprint is what they read and those
    // commits' barriers.
    if (!BS.Tcgen05.inFlight().empty() && B != Completing) {
      tcgen05InFlight(St, B, X.Copy);
      // Each pending commit arrives once on each of its barriers (a commit's other lanes
      // arrived when it was issued).
      BS.Tcgen05.forEachPendingCommit([&](uint32_t Commit) {
        for (unsigned T : S.Agents[B].Steps[Commit].Targets) {
          AddCount(Arrivals[T], 1);
          AddCount(Plain[T], 1);
        }
      });
      Hit = Hit || Hits(X.Copy);
    }
    // Lone commits (AgentState::LoneCommits) land one by one, each an arrival on its
    // commit's barriers, in the CTAs that must still be there: nothing of the agent's own
    // tcgen05 queue, which they do not wait for.
    for (auto [Commit, Due] : BS.LoneCommits) {
      Footprint &F = X.Copy;
      F.assign(3 * Words, 0);
      for (unsigned T : S.Agents[B].Steps[Commit].Targets) {
        addArrival(F, T);
        AddCount(Arrivals[T], Due);
        AddCount(Plain[T], Due);
        addRead(F, AliveBase + S.Barriers[T].Cta);
      }
      Hit = Hit || Hits(F);
    }
    if (Hit)
      return true;
  }
  for (const LoadInFlight &L : St.Loads) {
    if (Load && L == *Load)
      continue;
    Footprint &F = X.Copy;
    F = StepFootprint[L.Agent][L.Step];
    // Copies to the same barrier, or to the one Agent's arrive.expect_tx raises:
    // loadCommutes or expectCommutesWithLandings checked that their order does not matter.
    if (Load)
      for (unsigned B : S.Agents[Load->Agent].Steps[Load->Step].Targets)
        clear(F, B);
    if (Landed != NoIndex)
      clear(F, Landed);
    if (Hits(F))
      return true;
    Add(StepEnabling[L.Agent][L.Step]);
  }
  unsigned NA = S.Agents.size();
  if (touchesNoFuture(St, Agent, Mine))
    return Load && llvm::any_of(LoadTargets,
                                [&](unsigned B) { return landingOrderMatters(St, *Load, B); });
  // Each other agent's walk: the waits it stopped at. At the end of a pass it goes both
  // ways, into the next pass and out of the cycle; reaching a step it already walked, it
  // may run passes without end: everything from there on may come. Walked marks steps with
  // this call's generation, so that nothing needs clearing between calls.
  X.Stops.resize(NA);
  for (auto &Stop : X.Stops)
    Stop.clear();
  std::vector<llvm::SmallVector<TouchScratch::Stop, 1>> &Stops = X.Stops;
  using WalkContext = TouchScratch::WalkContext;
  if (X.Walked.size() != NA) {
    X.Walked.resize(NA);
    for (unsigned B = 0; B < NA; ++B)
      X.Walked[B].assign(S.Agents[B].Steps.size(), 0);
  }
  if (X.RunWalked.size() != Runs) {
    X.RunWalked.assign(Runs, 0);
    X.RunEntry.assign(Runs, 0);
  }
  if (++X.Generation == 0) { // wrapped: old marks would read as this call's
    for (auto &W : X.Walked)
      std::fill(W.begin(), W.end(), 0);
    std::fill(X.RunWalked.begin(), X.RunWalked.end(), 0);
    X.Generation = 1;
  }
  uint32_t Gen = X.Generation;
  // The tx bytes of the copies to Landed that may be issued first.
  std::vector<uint64_t> &FutureLandings = X.FutureLandings;
  FutureLandings.clear();
  // A merged system's exits that an agent may still leave at, while none is fixed.
  int FirstExit = Merged && St.TailExit < 0 ? firstOpenExit(St) : 0;
  // Per agent: whether it may finish first (a CTA whose agents all may ends, and reaching
  // its barriers from elsewhere then fails).
  std::vector<bool> &Ends = X.Ends;
  Ends.assign(NA, false);
  // Whether N phases of barrier B may complete first. Past the first, each needs the
  // barrier's expected arrivals more (their bytes are not counted: that only lets more
  // pass).
  auto MayCompletePhases = [&](unsigned B, uint32_t N) {
    if (N == 0)
      return true;
    if (!MayComplete(B))
      return false;
    const models::Mbarrier &M = St.Barriers[B];
    return N == 1 || Arrivals[B] == UINT32_MAX ||
           Arrivals[B] >= M.pending() + uint64_t(N - 1) * std::max(1u, M.expected());
  };
  // Whether agent B's step at Pc may be passed by what may run first: an mbarrier wait
  // whose phase may complete; a barrier.cluster.wait B is at and may pass now, or whose
  // phase the threads that may arrive first fill (Agent's threads, not arrived yet, are
  // missing from every phase to come: it holds back the whole cluster). Walk holds the
  // phases B's walk needed so far (and gains what the wait needs when it passes), and the
  // probes it ran.
  auto MayPass = [&](unsigned B, uint32_t Pc, WalkContext &Walk) {
    const ConcreteStep &C = S.Agents[B].Steps[Pc];
    auto Phases = [&](unsigned Barrier) {
      auto It = llvm::find_if(Walk.Phases, [&](auto &D) { return D.first == Barrier; });
      return It == Walk.Phases.end() ? 0 : It->second;
    };
    if (C.Kind == StepKind::Probe && C.Flag >= 0 && C.Barrier != NoIndex) {
      // What it sees decides whether a wait reading its flag is skipped.
      llvm::erase_if(Walk.Probes, [&](auto &P) { return P.Flag == C.Flag; });
      Walk.Probes.push_back({C.Flag, Pc, Phases(C.Barrier)});
      return true;
    }
    if (C.Kind == StepKind::Wait && C.Barrier != NoIndex) {
      const models::Mbarrier &M = St.Barriers[C.Barrier];
      if (!M.initialized())
        return true;
      // A parity wait passes once the barrier's parity differs from its own. Reaching it,
      // the agent passed the waits its walk took before, so at least Least phases
      // completed by then (they never come undone, and an init that may come first lets
      // every wait pass): the wait needs Least of them, or one more. Without Least, the
      // wait for the phase after one the walk just waited for would pass on the stale
      // parity, and the walk would run around the ring for nothing.
      uint32_t Least = Phases(C.Barrier);
      if (C.Flag >= 0) {
        // A wait a probe may skip (CuTeDSL's peek at the next stage): skipped when the
        // probe saw the same barrier's phase with the same parity complete, so it passes
        // when that phase may complete by the probe or after, which is the wait's own
        // condition with the phases the walk had needed at the probe. Another probe, or
        // one before the walk whose flag is still set, may let it pass whatever comes.
        auto P = llvm::find_if(Walk.Probes, [&](auto &P) { return P.Flag == C.Flag; });
        bool Before = P == Walk.Probes.end();
        const ConcreteStep *Probe = Before ? nullptr : &S.Agents[B].Steps[P->Pc];
        if ((Before && !(Walk.Cleared >> C.Flag & 1) &&
             (St.Agents[B].Probed >> C.Flag & 1)) ||
            (Probe && (Probe->Barrier != C.Barrier || Probe->Parity != C.Parity)))
          return true;
        if (!Before)
          Least = std::min(Least, P->Phases);
      }
      uint32_t Need =
          ((M.completedPhases() + Least) & 1) != (C.Parity & 1) ? Least : Least + 1;
      // None of the landing's barriers' phases completes before it (the end checks that).
      bool Passes = Need == 0 || (!llvm::is_contained(LoadTargets, C.Barrier) &&
                                  MayCompletePhases(C.Barrier, Need));
      if (Passes && C.Flag >= 0) {
        // It read its flag and cleared it (a stop keeps the walk as it was before).
        llvm::erase_if(Walk.Probes, [&](auto &P) { return P.Flag == C.Flag; });
        Walk.Cleared |= uint32_t(1) << C.Flag;
      }
      if (Passes && Need > Phases(C.Barrier)) {
        auto It = llvm::find_if(Walk.Phases, [&](auto &D) { return D.first == C.Barrier; });
        if (It == Walk.Phases.end())
          Walk.Phases.push_back({C.Barrier, Need});
        else
          It->second = Need;
      }
      return Passes;
    }
    if (C.Kind == StepKind::ClusterWait && Agent != NoIndex &&
        !(Pc == St.Agents[B].Pc && stepEnabled(St, B)))
      return ClusterThreads >= ClusterCount;
    return true;
  };
  // Walks agent B from From; true as soon as a step it may take conflicts.
  auto Walk = [&](unsigned B, uint32_t From, WalkContext Done) {
    const ConcreteAgent &Ag = S.Agents[B];
    // B's tcgen05 work in flight completes with the transition: its later commits arrive
    // from the issuing lane only after it (CommitLate).
    const bool Late = B == Completing;
    const std::vector<Enabling> &Brings = Late ? CommitLate[B] : StepEnabling[B];
    std::vector<uint32_t> &Seen = X.Walked[B];
    // Where a pass ends the walk goes both ways, each with the phases needed up to there.
    llvm::SmallVector<std::pair<uint32_t, WalkContext>, 2> Work;
    Work.push_back({From, std::move(Done)});
    while (!Work.empty()) {
      uint32_t Pc = Work.back().first;
      Done = std::move(Work.back().second);
      Work.pop_back();
      // Reaching a step walked before: passes may run without end from there.
      auto Again = [&](uint32_t At) {
        if (Hits(Suffix[B][At]))
          return true;
        Anything(Late ? EnablingSuffixLate[B][At] : EnablingSuffix[B][At]);
        ClusterThreads = UINT64_MAX;
        Ends[B] = true;
        return false;
      };
      for (; Pc < Ag.Steps.size(); ++Pc) {
        if (Merged) {
          // The end of the main steps or of a block after an exit: the agent finishes. At an
          // exit it may leave the tile loop (the one fixed, or any while none is).
          if (FinishAt[B][Pc]) {
            Pc = Ag.Steps.size();
            break;
          }
          // An exit inside the cycle is open in the pass the walk is in while no agent
          // went past it now (going past never comes undone). The walk may go on past an
          // exit, except the one fixed outside the cycle, where the agent leaves.
          uint32_t Laps = St.Agents[B].Laps + Done.Laps;
          if (int E = ExitAt[B][Pc]; E >= 0 && exitOpen(St, E, Laps, FirstExit)) {
            auto [Begin, End] = exitBlock(B, E, Laps);
            if (Begin < End)
              Work.push_back({Begin, Done});
            else
              Ends[B] = true;
            if (St.TailExit == E && !ExitInCycle[E])
              break;
          }
        }
        if (unsigned Run = RunOf[B][Pc]; Run != NoIndex) {
          // A run of plain steps in one go: its footprints, what it brings, and where an
          // earlier walk entered it (from there on it was walked).
          bool Entered = X.RunWalked[Run] == Gen;
          uint32_t Earlier = X.RunEntry[Run];
          if (Entered && Pc >= Earlier) {
            if (Again(Pc))
              return true;
            break;
          }
          X.RunWalked[Run] = Gen;
          X.RunEntry[Run] = Pc;
          uint32_t End = RunEnd[B][Pc];
          if (Load && TouchesLoadTarget(RunUnion[B][Pc])) {
            for (uint32_t I = Pc; I < End; ++I)
              if (ReachesLoadTarget(Ag.Steps[I]) ? !BeforeLanding(StepFootprint[B][I], Ag.Steps[I])
                                                 : Hits(StepFootprint[B][I]))
                return true;
          } else if (Hits(RunUnion[B][Pc])) {
            return true;
          }
          for (uint32_t I = NextEnabling[B][Pc]; I < End;) {
            Add(Brings[I]);
            I = I + 1 < End ? NextEnabling[B][I + 1] : End;
          }
          if (Entered) {
            if (Again(Earlier))
              return true;
            break;
          }
          Pc = End - 1; // the loop's ++Pc goes on after the run
          continue;
        }
        if (Seen[Pc] == Gen) {
          if (Again(Pc))
            return true;
          break;
        }
        Seen[Pc] = Gen;
        const ConcreteStep &C = Ag.Steps[Pc];
        if (!MayPass(B, Pc, Done)) {
          Stops[B].push_back({Pc, std::move(Done)});
          break;
        }
        if (Landed != NoIndex && C.Kind == StepKind::AsyncLoad &&
            llvm::is_contained(C.Targets, Landed)) {
          // A copy issued first may land first: its landing joins those the arrive.expect_tx
          // must commute with (checked below with every size).
          Footprint &F = X.Copy;
          F = StepFootprint[B][Pc];
          clear(F, Landed);
          if (Hits(F))
            return true;
          FutureLandings.push_back(C.TxBytes);
        } else if (Load && ReachesLoadTarget(C)) {
          if (!BeforeLanding(StepFootprint[B][Pc], C))
            return true;
        } else if (Hits(StepFootprint[B][Pc])) {
          return true;
        }
        Add(Brings[Pc]);
        if (C.Kind == StepKind::ClusterArrive && ClusterThreads != UINT64_MAX)
          ClusterThreads += (C.Arriving + 31) / 32 * 32;
        if (Ag.hasCycle() && Pc + 1 == Ag.CycleEnd)
          Work.push_back({Ag.CycleBegin, Done}), ++Work.back().second.Laps;
        if (int Inner = InnerEndAt[B][Pc]; Inner >= 0)
          Work.push_back({Ag.InnerCycles[Inner].first, Done});
      }
      if (Pc >= Ag.Steps.size())
        Ends[B] = true;
    }
    return false;
  };
  // An agent not started yet starts once the agents it follows finished (the roles after
  // their CTA's prologue, the epilogue after the roles): only when each of those may finish
  // first does it run anything first. Those that follow Agent itself never do; nor do the
  // other CTA's roles while its prologue waits at the cluster barrier for Agent's CTA.
  auto Gated = [&](unsigned B) {
    for (unsigned O : Predecessors[B])
      if (St.Agents[O].Pc < S.Agents[O].Steps.size() && (O == Agent || !Ends[O]))
        return true;
    return false;
  };
  llvm::SmallVector<unsigned, 8> Waiting; // gated agents, walked once their gate opens
  for (unsigned B = 0; B < NA; ++B) {
    if (B == Agent)
      continue;
    if (!started(St, B)) {
      Waiting.push_back(B);
      continue;
    }
    if (Walk(B, St.Agents[B].Pc, {}))
      return true;
  }
  // A stopped agent goes on once what may run first may complete its phase; a gated one
  // starts once what it follows may finish.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (size_t I = 0; I < Waiting.size(); ++I) {
      unsigned B = Waiting[I];
      if (Gated(B))
        continue;
      Waiting.erase(Waiting.begin() + I--);
      if (Walk(B, St.Agents[B].Pc, {}))
        return true;
      Changed = true;
    }
    for (unsigned B = 0; B < NA; ++B)
      for (size_t I = 0; I < Stops[B].size(); ++I) {
        uint32_t From = Stops[B][I].Pc;
        WalkContext Done = Stops[B][I].Done;
        if (!MayPass(B, From, Done))
          continue;
        Stops[B].erase(Stops[B].begin() + I--);
        if (Hits(StepFootprint[B][From]))
          return true;
        Add(StepEnabling[B][From]);
        if (Walk(B, From + 1, std::move(Done)))
          return true;
        Changed = true;
      }
  }
  if (Load)
    for (unsigned B : LoadTargets)
      if (landingOrderMatters(St, *Load, B))
        return true;
  if (!FutureLandings.empty()) {
    // The arrival is the phase's last: no landings, in flight or to come, but not all of
    // them, may sum to what it leaves (expectCommutesWithLandings on every size).
    const ConcreteStep &C = S.Agents[Agent].Steps[St.Agents[Agent].Pc];
    const models::Mbarrier &M = St.Barriers[Landed];
    std::vector<uint64_t> Sizes = landingSizes(St, Landed);
    Sizes.insert(Sizes.end(), FutureLandings.begin(), FutureLandings.end());
    if (M.pending() == std::max(1u, C.Count) &&
        someLandingsSum(Sizes, M.txCount() + static_cast<int64_t>(C.TxBytes)))
      return true;
  }
  // A CTA whose agents all may finish first exits: reaching its barriers reads that.
  for (unsigned Cta = 0; Cta < S.ClusterSize; ++Cta) {
    bool Exits = true;
    for (unsigned B = 0; B < NA && Exits; ++B)
      if (S.Agents[B].Cta == Cta)
        Exits = B != Agent && Ends[B];
    if (Exits) {
      unsigned Bit = AliveBase + Cta;
      if ((Mine[Bit / 64] | Mine[Words + Bit / 64] | Mine[2 * Words + Bit / 64]) >> (Bit % 64) & 1)
        return true;
    }
  }
  return false;
}
