//===- ExploreFold.cpp - a counterexample in steps: private work folded in --------------===//
//
// The explorer's transitions are single instructions of one role, and most of a GEMM's are
// the role's own work: the epilogue's stmatrix, fence.proxy.async, TMA store, commit_group
// and wait_group. None of them touches anything another agent touches, so none can change
// what another agent does or sees, and where a role's private work falls among the others'
// transitions is the reader's noise, not the bug.
//
// A transition is private when its footprint (ExploreReduction.cpp: the barrier and buffer
// instances, named barriers, TMEM and queues it reads or writes) meets nothing that a step of
// an agent that may run at the same time or the completion of work in flight (a copy
// landing, tcgen05 work arriving on its commits' barriers) touches, and it cannot block
// (Simulator::privateTransitions; a wait_group touches the sources of the wgmma or bulk
// stores in flight, whose reads it may end). Agents of which one starts only after the
// other finished (a CTA's roles and its prologue) never run at the same time, and the work
// an agent issues lands after it started. A cluster's prologues run alone until the first
// phase of the cluster barrier completes, which needs each one's arrival: before its
// barrier.cluster.arrive, a prologue meets only the others. Such a transition
// commutes with every transition that may come between it and its agent's next one: moved
// later, to right before that one, it is still enabled there and leaves every state the
// others see as it was. It and the transition it now precedes are one atomic step, as in
// Lipton's reduction (a run of both-movers followed by one transition is atomic).
//
// The schedule is reordered that way and each private transition folded into its agent's
// next one; an agent's last transition in the schedule closes its last step. The result is
// replayed: it must end as the original does (same verdict, message and blocked agents),
// else the original comes back unfolded, as does a schedule that is not one of the system.
// Periodic and merged systems are left as they are: their counterexamples are reproduced on
// concrete launches, which fold. H5's phase-skip violation folds 274 transitions into 64
// steps, B5's trip-count deadlock 163 into 39.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

FoldedSchedule wsv::analyzer::foldPrivateSteps(const ConcreteSystem &S,
                                               std::vector<ScheduleStep> Schedule,
                                               bool StopAtRace) {
  FoldedSchedule Unfolded;
  Unfolded.Step.resize(Schedule.size());
  for (size_t I = 0; I < Schedule.size(); ++I)
    Unfolded.Step[I] = static_cast<uint32_t>(I);
  Unfolded.Schedule = Schedule;
  if (!S.Unknown.empty() || Schedule.size() < 2 ||
      llvm::any_of(S.Agents, [](const ConcreteAgent &A) {
        return A.hasCycle() || !A.InnerCycles.empty() || !A.Exits.empty();
      }))
    return Unfolded;
  for (const ScheduleStep &T : Schedule)
    if (T.Agent >= S.Agents.size() || T.Step >= S.Agents[T.Agent].Steps.size())
      return Unfolded;
  Simulator Sim(S, /*IgnoreRaces=*/!StopAtRace);
  std::vector<bool> Private = Sim.privateTransitions(Schedule);
  // Each agent's last transition in the schedule: nothing of the agent follows to fold into.
  std::vector<size_t> Last(S.Agents.size(), SIZE_MAX);
  for (size_t I = 0; I < Schedule.size(); ++I)
    if (Schedule[I].K == ScheduleStep::Kind::Execute)
      Last[Schedule[I].Agent] = I;
  FoldedSchedule Out;
  std::vector<std::vector<ScheduleStep>> Held(S.Agents.size());
  uint32_t Step = 0;
  for (size_t I = 0; I < Schedule.size(); ++I) {
    const ScheduleStep &T = Schedule[I];
    if (T.K == ScheduleStep::Kind::Execute && I != Last[T.Agent] && Private[I]) {
      Held[T.Agent].push_back(T);
      continue;
    }
    if (T.K == ScheduleStep::Kind::Execute) { // the agent's private ones come right before
      for (const ScheduleStep &H : Held[T.Agent]) {
        Out.Schedule.push_back(H);
        Out.Step.push_back(Step);
      }
      Held[T.Agent].clear();
    }
    Out.Schedule.push_back(T);
    Out.Step.push_back(Step++);
  }
  if (Step == Schedule.size())
    return Unfolded; // nothing folded
  ExploreResult Before = replay(S, Schedule, StopAtRace);
  if (Before.Verdict == ExploreVerdict::Unknown)
    return Unfolded; // not a schedule of S
  ExploreResult After = replay(S, Out.Schedule, StopAtRace);
  if (Before.Verdict != After.Verdict || Before.Message != After.Message ||
      !sameBlocked(Before.Blocked, After.Blocked))
    return Unfolded;
  return Out;
}
