//===- ExploreCycles.cpp - passes of a periodic system's cycles -------------------===//
//
// A periodic system (Explore.h, ExploreParametric.cpp) lets each agent run its cycle again
// or leave it; every agent runs the same number of passes, fixed by the first to leave. A
// persistent kernel's tiles each have an inner cycle whose count their first leaver fixes.
// A merged system's agents leave the tile loop at the exit the first to leave fixes; at an
// exit inside the cycle of tiles, in the pass the first to leave was in.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreSimulator.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;
bool Simulator::atFreeLapEnd(const State &St, unsigned Agent) const {
  const ConcreteAgent &A = S.Agents[Agent];
  return St.ExitLaps < 0 && A.hasCycle() && St.Agents[Agent].Pc + 1 == A.CycleEnd;
}

bool Simulator::mayLeave(const State &St, unsigned Agent) const {
  // Every agent runs the same number of passes: one leaves only when none ran more.
  for (unsigned B = 0; B < S.Agents.size(); ++B)
    if (B != Agent && S.Agents[B].hasCycle() && St.Agents[B].Laps > St.Agents[Agent].Laps)
      return false;
  return true;
}

void Simulator::endOfPass(State &St, unsigned Agent, bool Leave) const {
  AgentState &AS = St.Agents[Agent];
  ++AS.Laps;
  if (St.ExitLaps < 0 && Leave)
    St.ExitLaps = AS.Laps;
  if (St.ExitLaps < 0 || AS.Laps < St.ExitLaps)
    AS.Pc = S.Agents[Agent].CycleBegin;
}

int Simulator::innerEnd(const State &St, unsigned Agent) const {
  uint32_t Pc = St.Agents[Agent].Pc;
  return Pc < InnerEndAt[Agent].size() ? InnerEndAt[Agent][Pc] : -1;
}

const std::pair<uint32_t, uint32_t> *Simulator::innerExit(const State &St,
                                                           uint32_t Occurrence) const {
  for (const auto &E : St.InnerExits)
    if (E.first == Occurrence)
      return &E;
  return nullptr;
}

bool Simulator::atFreeInnerEnd(const State &St, unsigned Agent) const {
  return innerEnd(St, Agent) >= 0 && !innerExit(St, St.Agents[Agent].Occurrence);
}

bool Simulator::mayLeaveInner(const State &St, unsigned Agent) const {
  // Every agent runs a tile's k-loop the same number of times: one leaves only when none in
  // the same tile ran more passes.
  const AgentState &AS = St.Agents[Agent];
  for (unsigned B : InnerAgents)
    if (B != Agent && St.Agents[B].Occurrence == AS.Occurrence &&
        St.Agents[B].InnerLaps > AS.InnerLaps)
      return false;
  return true;
}

bool Simulator::endOfInnerPass(State &St, unsigned Agent, int I, bool Leave) const {
  AgentState &AS = St.Agents[Agent];
  ++AS.InnerLaps;
  const std::pair<uint32_t, uint32_t> *Exit = innerExit(St, AS.Occurrence);
  if (!Exit && Leave) {
    St.InnerExits.push_back({AS.Occurrence, AS.InnerLaps});
    std::sort(St.InnerExits.begin(), St.InnerExits.end());
    Exit = innerExit(St, AS.Occurrence);
  }
  if (!Exit || AS.InnerLaps < Exit->second) {
    AS.Pc = S.Agents[Agent].InnerCycles[I].first;
    return true;
  }
  // Left: the tile's count is kept while some agent has not left it yet.
  uint32_t Left = AS.Occurrence++;
  AS.InnerLaps = 0;
  bool Behind = false;
  for (unsigned B : InnerAgents)
    Behind |= St.Agents[B].Occurrence <= Left;
  if (!Behind)
    St.InnerExits.erase(std::remove_if(St.InnerExits.begin(), St.InnerExits.end(),
                                       [&](const auto &E) { return E.first == Left; }),
                        St.InnerExits.end());
  return false;
}

int Simulator::firstOpenExit(const State &St) const {
  // None fixed yet: every agent is in its main steps; one that went past an exit (its next
  // step lies after it, or it finished) ran more tiles than leaving there gives, and going
  // past one never comes undone.
  // An agent that arrived at the barrier of the step an exit is at has begun that step:
  // it went on past the exit as much as one whose next step lies beyond (in a real launch
  // with the tiles that exit stands for, no thread reaches that barrier).
  int First = 0;
  for (unsigned B = 0; B < S.Agents.size(); ++B) {
    const ConcreteAgent &Ag = S.Agents[B];
    uint32_t Pc = St.Agents[B].Pc;
    bool Begun = begun(St.Agents[B]);
    while (First < int(Ag.Exits.size()) &&
           (Pc >= Ag.Steps.size() || Pc > Ag.Exits[First].At ||
            (Begun && Pc == Ag.Exits[First].At)))
      ++First;
  }
  return First;
}

bool Simulator::cycleExitOpen(const State &St, int I, uint32_t Laps) const {
  // Once an agent left at a cycle's end, every agent leaves there.
  if (St.ExitLaps >= 0)
    return false;
  for (unsigned B = 0; B < S.Agents.size(); ++B) {
    const ConcreteAgent &Ag = S.Agents[B];
    if (Ag.Exits.empty())
      continue;
    const AgentState &BS = St.Agents[B];
    // Steps from the cycle's end on are outside it (the main steps after the tile loop,
    // and the blocks after exits, which no agent is in while no exit is fixed).
    if (BS.Pc >= Ag.CycleEnd || BS.Laps > Laps ||
        (BS.Laps == Laps && (BS.Pc > Ag.Exits[I].At || (begun(BS) && BS.Pc == Ag.Exits[I].At))))
      return false;
  }
  return true;
}

std::pair<uint32_t, uint32_t> Simulator::exitBlock(unsigned Agent, int I, uint32_t Laps) const {
  const ConcreteAgent::Exit &E = S.Agents[Agent].Exits[I];
  if (E.InCycle && Laps > 0)
    return {E.LateBegin, E.LateEnd};
  return {E.Begin, E.End};
}

bool Simulator::exitOpen(const State &St, int I, uint32_t Laps, int FirstExit) const {
  if (St.TailExit >= 0)
    return St.TailExit == I && (!ExitInCycle[I] || St.TailLaps == Laps);
  return ExitInCycle[I] ? cycleExitOpen(St, I, Laps) : I >= FirstExit;
}

int Simulator::exitNow(const State &St, unsigned Agent) const {
  int I = ExitAt[Agent][St.Agents[Agent].Pc];
  if (I < 0 || begun(St.Agents[Agent]))
    return -1;
  int FirstExit = St.TailExit < 0 && !ExitInCycle[I] ? firstOpenExit(St) : 0;
  return exitOpen(St, I, St.Agents[Agent].Laps, FirstExit) ? I : -1;
}

void Simulator::leaveTiles(State &St, unsigned Agent, int I) const {
  uint32_t Laps = St.Agents[Agent].Laps;
  St.TailExit = I;
  St.TailLaps = S.Agents[Agent].Exits[I].InCycle ? Laps : 0;
  auto [Begin, End] = exitBlock(Agent, I, Laps);
  St.Agents[Agent].Pc = Begin < End ? Begin : S.Agents[Agent].Steps.size();
}

std::vector<unsigned> Simulator::choices(const State &St, unsigned Agent) const {
  const AgentState &AS = St.Agents[Agent];
  const ConcreteAgent &A = S.Agents[Agent];
  int I = innerEnd(St, Agent);
  // Where the step leaves the inner cycle (or has none), does it end an outer pass too?
  // (Not once an exit inside the cycle is fixed: every agent leaves there.)
  auto OuterFree = [&](uint32_t After) {
    return St.ExitLaps < 0 && St.TailExit < 0 && A.hasCycle() && After == A.CycleEnd;
  };
  std::vector<unsigned> Out;
  auto Outer = [&](unsigned Base, uint32_t After) {
    Out.push_back(Base);
    if (OuterFree(After) && mayLeave(St, Agent))
      Out.push_back(Base | 1);
  };
  if (I < 0) {
    Outer(0, AS.Pc + 1);
    return Out;
  }
  uint32_t After = A.InnerCycles[I].second;
  const std::pair<uint32_t, uint32_t> *Exit = innerExit(St, AS.Occurrence);
  if (Exit) {
    if (AS.InnerLaps + 1 >= Exit->second)
      Outer(0, After); // it leaves the inner cycle now
    else
      Out.push_back(0);
    return Out;
  }
  Out.push_back(0); // once more
  if (mayLeaveInner(St, Agent))
    Outer(2, After);
  return Out;
}
