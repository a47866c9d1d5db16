//===- ExploreInevitable.cpp - the step after which a deadlock is certain -----------===//
//
// A deadlock's schedule ends where every agent is blocked, and has to run every agent until
// it blocks: B5's arrival-count variant takes 98 steps, of which the last dozen only bring
// the other roles to their waits. The step that matters is the one after which no schedule
// lets every agent finish: before it the launch could still have ended well, after it
// every schedule deadlocks. Along the schedule that is monotone (a state no schedule leads
// out of leads only to such states), so a binary search over the schedule's prefixes finds
// it, each prefix's state asked whether some schedule from it finishes: a depth-first search
// with the explorer's partial-order reduction (a step taken alone commutes with what it
// skips, so the skipped schedules reach the same states, finished ones among them), which
// ends at the first finished state it reaches and otherwise visits all it can reach. Races go on as if they did not happen (synchronization does not read the
// data they corrupt); a barrier misuse ends a schedule, as the model cannot run past it.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/Explore.h"

#include "ExploreSimulator.h"
#include "ExploreVisited.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

namespace {

enum class Finishes : uint8_t { Yes, No, Unknown };

/// Whether some schedule from From lets every agent finish (Escape: one such, on Yes);
/// Unknown past MaxStates.
Finishes canFinish(const Simulator &Sim, const State &From, uint64_t MaxStates,
                   uint64_t &States, std::vector<ScheduleStep> &Escape) {
  VisitedSet Seen;
  KeyWriter Key;
  // Each visited state's parent and the transition from it, for the escape's schedule.
  std::vector<std::pair<uint32_t, ScheduleStep>> Via{{UINT32_MAX, {}}};
  std::vector<std::pair<State, uint32_t>> Stack;
  Stack.push_back({From, 0});
  Sim.key(From, Key);
  Seen.insert(Key.bytes());
  State Next;
  while (!Stack.empty()) {
    auto [St, Id] = std::move(Stack.back());
    Stack.pop_back();
    if (Sim.finished(St)) {
      for (uint32_t N = Id; N != 0; N = Via[N].first)
        Escape.push_back(Via[N].second);
      std::reverse(Escape.begin(), Escape.end());
      return Finishes::Yes;
    }
    for (const ScheduleStep &T : Sim.enabled(St, /*Reduce=*/true)) {
      Next = St;
      if (Sim.apply(Next, T).K != Outcome::Kind::Ok)
        continue;
      Sim.key(Next, Key);
      auto [NextId, New] = Seen.insert(Key.bytes());
      if (!New)
        continue;
      if (++States > MaxStates)
        return Finishes::Unknown;
      Via.push_back({Id, T});
      Stack.push_back({std::move(Next), NextId});
    }
  }
  return Finishes::No;
}

} // namespace

std::optional<Inevitability> wsv::analyzer::whereInevitable(const ConcreteSystem &S,
                                                            llvm::ArrayRef<ScheduleStep> Schedule,
                                                            uint64_t MaxStates) {
  if (!S.Unknown.empty())
    return std::nullopt;
  Simulator Sim(S, /*IgnoreRaces=*/true);
  // The state after each prefix of the schedule.
  std::vector<State> After{Sim.initial()};
  for (const ScheduleStep &T : Schedule) {
    State Next = After.back();
    if (!Sim.isEnabled(Next, T) || Sim.apply(Next, T).K != Outcome::Kind::Ok)
      return std::nullopt; // not a schedule of S that runs as far as a deadlock
    After.push_back(std::move(Next));
  }
  if (Sim.finished(After.back()) || !Sim.enabled(After.back(), false).empty())
    return std::nullopt; // it does not end in a deadlock
  Inevitability Out;
  uint64_t Budget = MaxStates;
  auto Doomed = [&](size_t Prefix) -> std::optional<bool> {
    uint64_t Used = 0;
    std::vector<ScheduleStep> Escape;
    Finishes F = canFinish(Sim, After[Prefix], Budget, Used, Escape);
    // The escape of the longest prefix not doomed is the one Out keeps: the search goes up.
    if (F == Finishes::Yes)
      Out.Escape = std::move(Escape);
    Out.States += Used;
    Budget -= std::min(Budget, Used);
    if (F == Finishes::Unknown)
      return std::nullopt;
    return F == Finishes::No;
  };
  std::optional<bool> AtStart = Doomed(0);
  if (!AtStart)
    return std::nullopt;
  if (*AtStart)
    return Out; // Step 0: every schedule of the launch deadlocks
  // Doomed after Hi steps (the whole schedule), not after Lo.
  size_t Lo = 0, Hi = Schedule.size();
  while (Hi - Lo > 1) {
    size_t Mid = Lo + (Hi - Lo) / 2;
    std::optional<bool> D = Doomed(Mid);
    if (!D)
      return std::nullopt;
    (*D ? Hi : Lo) = Mid;
  }
  Out.Step = Hi;
  return Out;
}
