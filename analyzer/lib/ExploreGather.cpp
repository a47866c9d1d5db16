//===- ExploreGather.cpp - a schedule's steps of one agent brought together --------===//
//
// The breadth-first search interleaves agents in the order it happened to expand states:
// B5's trip-count deadlock came out as 163 steps that switch agents 38 times, H5's
// phase-skip violation as 274 steps with 35 switches, although most of those steps are one
// role's epilogue running on its own. A reader follows one role at a time, so the schedule
// is reordered to continue with the agent that moved last wherever that agent's next step
// in the schedule can be brought forward.
//
// Bringing a step forward swaps it with the transition before it, one at a time, and a
// swap is made only where both orders are enabled, neither raises a race or violation, and
// both end in the same state (State::save compared byte for byte, so nothing the key leaves
// out may differ). The schedule stays a permutation of the same steps in which every
// transition commutes with what it passed: it reaches the same state, so it has the same
// length (still the shortest the reduction keeps) and ends in the same bug. The race's or
// violation's last step stays last.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

namespace {

bool sameState(const State &A, const State &B, KeyWriter &Wa, KeyWriter &Wb) {
  Wa.clear();
  Wb.clear();
  A.save(Wa);
  B.save(Wb);
  return Wa.bytes() == Wb.bytes();
}

/// Applies T to St when it is enabled there and raises nothing.
bool applyClean(const Simulator &Sim, State &St, const ScheduleStep &T) {
  return Sim.isEnabled(St, T) && Sim.apply(St, T).K == Outcome::Kind::Ok;
}

} // namespace

std::vector<ScheduleStep> wsv::analyzer::gatherAgents(const ConcreteSystem &S,
                                       std::vector<ScheduleStep> Schedule, bool KeepLast) {
  size_t N = Schedule.size();
  size_t Movable = KeepLast && N ? N - 1 : N; // steps before Movable may move
  if (Movable < 3)
    return Schedule;
  Simulator Sim(S);
  // Before[I]: the state in which Schedule[I] is taken.
  std::vector<State> Before(N + 1);
  Before[0] = Sim.initial();
  for (size_t I = 0; I < N; ++I) {
    Before[I + 1] = Before[I];
    if (!Sim.isEnabled(Before[I + 1], Schedule[I]))
      return Schedule; // not a schedule of S: leave it as it is
    Sim.apply(Before[I + 1], Schedule[I]);
  }
  KeyWriter Wa, Wb;
  State Moved, Passed;
  for (size_t Pos = 1; Pos + 1 < Movable; ++Pos) {
    const ScheduleStep &Last = Schedule[Pos - 1];
    if (Last.K != ScheduleStep::Kind::Execute)
      continue;
    auto Continues = [&](size_t J) {
      return Schedule[J].K == ScheduleStep::Kind::Execute && Schedule[J].Agent == Last.Agent;
    };
    if (Continues(Pos))
      continue;
    size_t J = Pos + 1;
    while (J < Movable && !Continues(J))
      ++J;
    if (J == Movable)
      continue;
    // Swap Schedule[J] with each transition before it down to Pos. After is the state
    // the step leads to where it stands now (K); from Before[K - 1], taking it first and
    // Schedule[K - 1] second must lead there too.
    const ScheduleStep Step = Schedule[J];
    State After = Before[J + 1];
    size_t K = J;
    for (; K > Pos; --K) {
      Moved = Before[K - 1];
      if (!applyClean(Sim, Moved, Step))
        break;
      Passed = Moved;
      if (!applyClean(Sim, Passed, Schedule[K - 1]) || !sameState(Passed, After, Wa, Wb))
        break;
      After = std::move(Moved);
    }
    if (K > Pos)
      continue; // it does not commute with Schedule[K - 1]
    std::rotate(Schedule.begin() + Pos, Schedule.begin() + J, Schedule.begin() + J + 1);
    for (size_t I = Pos; I < J; ++I) {
      Before[I + 1] = Before[I];
      Sim.apply(Before[I + 1], Schedule[I]);
    }
  }
  return Schedule;
}
