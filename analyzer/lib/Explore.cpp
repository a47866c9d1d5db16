//===- Explore.cpp - breadth-first search over schedules, and replay --------------===//
//
// Breadth first, so that the first bad state is reached by a shortest schedule. Only keys of
// visited states are kept (with the parent and the transition that reached them); the states
// themselves live in the frontier. The schedule found is then replayed from the initial
// state, which rebuilds the final state (barriers, blocked agents) and checks the search and
// the replay agree. A race's or violation's schedule is then cut to the steps it needs
// (shorten): the reduced search's shortest schedule may run agents that play no part. Last,
// each agent's steps are brought together where they commute (gather, ExploreGather.cpp),
// and the new order is kept only where it replays to the same bug.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/Explore.h"

#include "ExploreSimulator.h"
#include "ExploreVisited.h"

#include <deque>
#include <memory>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

const char *wsv::analyzer::toString(ExploreVerdict V) {
  switch (V) {
  case ExploreVerdict::Clean: return "clean";
  case ExploreVerdict::Deadlock: return "deadlock";
  case ExploreVerdict::Race: return "race";
  case ExploreVerdict::Violation: return "violation";
  case ExploreVerdict::Unknown: return "unknown";
  }
  return "unknown";
}

namespace {

std::string deadlockMessage(const ConcreteSystem &S, const std::vector<BlockedAgent> &B) {
  std::string M = "every unfinished agent is blocked:";
  for (const BlockedAgent &A : B)
    M += " " + S.Agents[A.Agent].Name + " " + A.Reason + ";";
  M.pop_back();
  return M;
}

/// Whether a blocked agent stands at a step the model cannot run (StepKind::Unknown).
bool atUnknown(const ConcreteSystem &S, const BlockedAgent &B) {
  return S.Agents[B.Agent].Steps[B.Step].Kind == StepKind::Unknown;
}

/// Fills the verdict for a state reached without a race or violation.
void judgeEnd(const ConcreteSystem &S, const Simulator &Sim, const State &St,
              ExploreResult &R) {
  if (!Sim.enabled(St, false).empty())
    return;
  if (Sim.finished(St)) {
    R.Verdict = ExploreVerdict::Clean;
    return;
  }
  R.Blocked = Sim.blocked(St);
  // An agent stopped where the model ends (a part of a warp at a named barrier) might have
  // gone on: no deadlock can be claimed.
  for (const BlockedAgent &B : R.Blocked)
    if (atUnknown(S, B)) {
      R.Verdict = ExploreVerdict::Unknown;
      R.Message = S.Agents[B.Agent].Name + " " + B.Reason;
      return;
    }
  R.Verdict = ExploreVerdict::Deadlock;
  R.Message = deadlockMessage(S, R.Blocked);
}

/// A race or violation needs only the steps that lead to it: stops agents early, one
/// last step at a time (with the completions of what that step issued), while the shorter
/// schedule still replays to the same race or violation. The search's order puts steps of
/// agents that play no part in the bug before it (the peer CTA's roles running ahead); a
/// deadlock needs every agent blocked, so its schedule stays as found.
std::vector<ScheduleStep> shorten(const ConcreteSystem &S, std::vector<ScheduleStep> Schedule,
                                  const ExploreResult &Found, bool StopAtRace) {
  if (Found.Verdict != ExploreVerdict::Race && Found.Verdict != ExploreVerdict::Violation)
    return Schedule;
  auto Same = [&](const std::vector<ScheduleStep> &Candidate) {
    ExploreResult Again = replay(S, Candidate, StopAtRace);
    return Again.Verdict == Found.Verdict && Again.Message == Found.Message;
  };
  // Each pass tries to drop every agent's last step before the final (bad) one.
  for (bool Changed = true; Changed && Schedule.size() > 1;) {
    Changed = false;
    for (unsigned A = 0; A < S.Agents.size(); ++A) {
      for (;;) {
        size_t Last = Schedule.size() - 1; // the bad step stays
        size_t At = Last;
        for (size_t I = 0; I < Last; ++I)
          if (Schedule[I].K == ScheduleStep::Kind::Execute && Schedule[I].Agent == A)
            At = I;
        if (At == Last)
          break;
        const ScheduleStep Drop = Schedule[At];
        std::vector<ScheduleStep> Candidate;
        for (size_t I = 0; I < Schedule.size(); ++I)
          if (I != At && !(I < Last && Schedule[I].K == ScheduleStep::Kind::Complete &&
                           Schedule[I].Agent == A && Schedule[I].Step == Drop.Step))
            Candidate.push_back(Schedule[I]);
        if (!Same(Candidate))
          break;
        Schedule = std::move(Candidate);
        Changed = true;
      }
    }
  }
  return Schedule;
}

/// Found with each agent's steps brought together where they commute (gatherAgents), kept
/// only where the new order replays to the same bug.
ExploreResult gather(const ConcreteSystem &S, ExploreResult Found, bool StopAtRace) {
  if (Found.Verdict == ExploreVerdict::Clean || Found.Verdict == ExploreVerdict::Unknown)
    return Found;
  std::vector<ScheduleStep> Gathered =
      gatherAgents(S, Found.Schedule, Found.Verdict != ExploreVerdict::Deadlock);
  if (Gathered == Found.Schedule)
    return Found;
  ExploreResult Again = replay(S, Gathered, StopAtRace);
  if (Again.Verdict != Found.Verdict || Again.Message != Found.Message ||
      !sameBlocked(Again.Blocked, Found.Blocked))
    return Found;
  return Again;
}

} // namespace

bool exploration::sameBlocked(const std::vector<BlockedAgent> &A,
                              const std::vector<BlockedAgent> &B) {
  return std::equal(A.begin(), A.end(), B.begin(), B.end(),
                    [](const BlockedAgent &X, const BlockedAgent &Y) {
                      return X.Agent == Y.Agent && X.Step == Y.Step && X.Reason == Y.Reason;
                    });
}

ExploreResult wsv::analyzer::replay(const ConcreteSystem &S,
                                    llvm::ArrayRef<ScheduleStep> Schedule, bool StopAtRace) {
  ExploreResult R;
  if (!S.Unknown.empty()) {
    R.Message = S.Unknown;
    return R;
  }
  Simulator Sim(S, /*IgnoreRaces=*/!StopAtRace);
  State St = Sim.initial();
  R.Verdict = ExploreVerdict::Clean;
  // What a misuse is the symptom of can need the steps before it (ExploreMisuse.cpp).
  MisuseHistory History(S);
  for (size_t I = 0; I < Schedule.size(); ++I) {
    const ScheduleStep &T = Schedule[I];
    R.Schedule.push_back(T);
    if (T.Agent >= S.Agents.size() || !Sim.isEnabled(St, T)) {
      R.Verdict = ExploreVerdict::Unknown;
      R.Message = "step " + std::to_string(I) + " (" + describe(S, T) +
                  ") is not enabled where the schedule takes it";
      R.Barriers = St.Barriers;
      return R;
    }
    Outcome O = Sim.apply(St, T);
    ++R.Transitions;
    History.classify(O, Schedule.take_front(I), T);
    History.observe(St, T);
    if (O.K != Outcome::Kind::Ok) {
      R.Verdict = O.K == Outcome::Kind::Race ? ExploreVerdict::Race : ExploreVerdict::Violation;
      R.Message = O.Message;
      R.UnpublishedInit = O.UnpublishedInit;
      R.LateLanding = O.LateLanding;
      R.LateLanding = O.LateLanding;
      R.RaceBuffer = O.Buffer;
      R.RaceWith = O.With;
      R.Check = O.Check;
      R.Barriers = St.Barriers;
      if (I + 1 != Schedule.size()) {
        R.Verdict = ExploreVerdict::Unknown;
        R.Message = "the schedule goes on after step " + std::to_string(I) + ": " + O.Message;
      }
      return R;
    }
  }
  R.Barriers = St.Barriers;
  R.Verdict = ExploreVerdict::Unknown;
  R.Message = "the schedule ends where steps can still be taken";
  judgeEnd(S, Sim, St, R);
  return R;
}

ExploreResult wsv::analyzer::explore(const ConcreteSystem &S, const ExploreOptions &Options) {
  ExploreResult R;
  if (!S.Unknown.empty()) {
    R.Message = S.Unknown;
    return R;
  }
  Simulator Sim(S, /*IgnoreRaces=*/!Options.StopAtRace);
  unsigned Groups = Options.PartialOrder && Options.Symmetry ? Sim.useSymmetry() : 0;
  R.SymmetryGroups = Groups;
  struct Node {
    uint32_t Parent;
    ScheduleStep Via;
  };
  std::vector<Node> Nodes;
  VisitedSet Seen; // ids are indices into Nodes
  // States waiting to be expanded, with their node. Once there are many, they are kept
  // packed (State::save): a few hundred bytes instead of kilobytes each; while they are few,
  // packing would only cost time.
  struct Waiting {
    std::unique_ptr<State> Unpacked; // a pointer: a packed entry must not carry a State
    std::string Packed;
    uint32_t Id;
    // Landings its parent did not take alone, when a step taken alone led here (the
    // reduction's hint: Simulator::enabled).
    std::vector<LoadInFlight> Late;
  };
  std::deque<Waiting> Frontier;
  KeyWriter Packer, Key;
  // States taken from the frontier, kept for the next ones it receives: a state swapped
  // into one keeps the storage of its vectors, so that copying the next successor into it
  // allocates nothing (a fresh State did a few dozen allocations).
  std::vector<std::unique_ptr<State>> Spare;
  auto Push = [&](State &St, uint32_t Id, std::vector<LoadInFlight> Late) {
    if (Frontier.size() < Options.PackBeyond) {
      std::unique_ptr<State> Box;
      if (Spare.empty()) {
        Box = std::make_unique<State>();
      } else {
        Box = std::move(Spare.back());
        Spare.pop_back();
      }
      std::swap(*Box, St);
      Frontier.push_back({std::move(Box), {}, Id, std::move(Late)});
      return;
    }
    Packer.clear();
    St.save(Packer);
    Frontier.push_back({nullptr, Packer.bytes().str(), Id, std::move(Late)});
  };
  State Init = Sim.initial();
  Sim.key(Init, Key);
  Seen.insert(Key.bytes());
  Nodes.push_back({UINT32_MAX, {}});
  Push(Init, 0, {});

  auto Path = [&](uint32_t N, const ScheduleStep *Last) {
    std::vector<ScheduleStep> P;
    if (Last)
      P.push_back(*Last);
    for (; N != 0; N = Nodes[N].Parent)
      P.push_back(Nodes[N].Via);
    std::reverse(P.begin(), P.end());
    return P;
  };
  auto Finish = [&](std::vector<ScheduleStep> Schedule) {
    ExploreResult Replayed = replay(S, Schedule, Options.StopAtRace);
    if (Options.Shorten) {
      std::vector<ScheduleStep> Shorter = shorten(S, Schedule, Replayed, Options.StopAtRace);
      if (Shorter.size() < Schedule.size())
        Replayed = replay(S, Shorter, Options.StopAtRace);
    }
    if (Options.Gather)
      Replayed = gather(S, std::move(Replayed), Options.StopAtRace);
    Replayed.States = Nodes.size();
    Replayed.SymmetryGroups = Groups;
    Replayed.Transitions = R.Transitions;
    return Replayed;
  };

  // Why a schedule ended with an agent where the model ends (StepKind::Unknown).
  std::string Incomplete;
  // Next is assigned or swapped, never built, for each transition: its vectors keep their
  // storage from one transition to the next (and Push swaps in a spare's).
  State St, Next;
  std::vector<LoadInFlight> Stale;
  while (!Frontier.empty()) {
    Waiting &Front = Options.DepthFirst ? Frontier.back() : Frontier.front();
    if (Front.Unpacked) {
      std::swap(St, *Front.Unpacked);
      // Pops and pushes take turns: a few spares are all that is ever waiting (more pile up
      // only while the frontier shrinks, or grows packed).
      if (Spare.size() < 256)
        Spare.push_back(std::move(Front.Unpacked));
    } else {
      St.load(Front.Packed);
    }
    uint32_t Id = Front.Id;
    std::vector<LoadInFlight> Late = std::move(Front.Late);
    if (Options.DepthFirst)
      Frontier.pop_back();
    else
      Frontier.pop_front();
    std::vector<ScheduleStep> Moves = Sim.enabled(St, Options.PartialOrder, Late, Stale);
    // A step taken alone passes on the landings that were not.
    bool Alone = Moves.size() == 1 && Moves[0].K == ScheduleStep::Kind::Execute;
    if (Moves.empty()) {
      if (Sim.finished(St))
        continue;
      if (llvm::any_of(Sim.blocked(St),
                       [&](const BlockedAgent &B) { return atUnknown(S, B); })) {
        // Not a deadlock, perhaps: other states may still show a real one.
        if (Incomplete.empty())
          Incomplete = Finish(Path(Id, nullptr)).Message;
        continue;
      }
      if (!Options.StopAtDeadlock)
        continue; // a dead end, as a finished state is
      return Finish(Path(Id, nullptr));
    }
    for (size_t M = 0; M < Moves.size(); ++M) {
      const ScheduleStep &T = Moves[M];
      // The last move takes St itself (the reduction leaves one move in most states): St
      // is not read again before the next one is taken from the frontier.
      if (M + 1 == Moves.size())
        std::swap(Next, St);
      else
        Next = St;
      Outcome O = Sim.apply(Next, T);
      ++R.Transitions;
      if (O.K != Outcome::Kind::Ok)
        return Finish(Path(Id, &T));
      Sim.key(Next, Key);
      auto [NextId, New] = Seen.insert(Key.bytes());
      if (!New)
        continue;
      if (Sim.lag(Next) > Options.MaxLag) {
        R.Verdict = ExploreVerdict::Unknown;
        R.Message = "agents drift apart by more than " + std::to_string(Options.MaxLag) +
                    " passes of the loop: the periodic search would not end";
        R.States = Nodes.size();
        return R;
      }
      Nodes.push_back({Id, T});
      if (Nodes.size() > Options.MaxStates) {
        R.Verdict = ExploreVerdict::Unknown;
        R.Message = "state bound of " + std::to_string(Options.MaxStates) +
                    " reached before every schedule was explored (--max-states raises it)";
        R.States = Nodes.size();
        return R;
      }
      // (Alone: the only move, so Stale is not read again before the next state's.)
      Push(Next, NextId, Alone ? std::move(Stale) : std::vector<LoadInFlight>());
    }
  }
  R.Verdict = ExploreVerdict::Clean;
  R.States = Nodes.size();
  if (!Incomplete.empty()) {
    R.Verdict = ExploreVerdict::Unknown;
    R.Message = "a schedule reaches what the model cannot run: " + Incomplete;
  }
  return R;
}

std::string wsv::analyzer::describe(const ConcreteSystem &S, const ScheduleStep &T) {
  if (T.Agent >= S.Agents.size() || T.Step >= S.Agents[T.Agent].Steps.size())
    return "step out of range";
  const ConcreteAgent &A = S.Agents[T.Agent];
  const ConcreteStep &C = A.Steps[T.Step];
  std::string D;
  if (T.K == ScheduleStep::Kind::Execute && T.Copy == ScheduleStep::LeaveTiles)
    return A.Name + " leaves the tile loop before its next step";
  if (T.K == ScheduleStep::Kind::Complete)
    D = "complete ";
  D += A.Name + " " + toString(C.Kind);
  if (C.Queue != AsyncQueue::None)
    D += std::string(" ") + toString(C.Queue);
  if (C.Barrier != NoIndex)
    D += " " + S.barrierName(C.Barrier);
  switch (C.Kind) {
  case StepKind::Wait:
  case StepKind::Probe: D += " parity " + std::to_string(C.Parity); break;
  case StepKind::Arrive:
    D += " count " + std::to_string(C.Count);
    if (C.TxBytes)
      D += " tx " + std::to_string(C.TxBytes);
    break;
  case StepKind::AsyncLoad: D += " " + std::to_string(C.TxBytes) + " B"; break;
  case StepKind::NamedSync:
  case StepKind::NamedArrive:
    D += " " + std::to_string(C.NamedId) + ", " + std::to_string(C.Count);
    break;
  case StepKind::GroupWait: D += " " + std::to_string(C.WaitN); break;
  case StepKind::TmemRead:
    if (C.TmemEnd - C.TmemFirst < (1u << 16))
      D += " of columns " + std::to_string(C.TmemFirst) + " to " + std::to_string(C.TmemEnd - 1);
    break;
  default: break;
  }
  for (unsigned B : C.Reads)
    D += " reads " + S.bufferName(B);
  for (unsigned B : C.Writes)
    D += " writes " + S.bufferName(B);
  if (!C.Iterations.empty()) {
    D += " (";
    for (size_t I = 0; I < C.Iterations.size(); ++I)
      D += (I ? ", " : "") + S.P->loopVar(C.Iterations[I].first) + "=" +
           std::to_string(C.Iterations[I].second);
    D += ")";
  }
  return D;
}
