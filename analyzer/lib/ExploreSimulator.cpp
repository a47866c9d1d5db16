//===- ExploreSimulator.cpp - transitions of a protocol instance on the models ----===//
#include "ExploreSimulator.h"

#include "llvm/ADT/Sequence.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::exploration;

Simulator::Simulator(const ConcreteSystem &S, bool IgnoreRaces)
    : IgnoreRaces(IgnoreRaces), S(S) {
  unsigned Bits = S.Barriers.size() + S.Buffers.size();
  NamedBase = Bits;
  Bits += models::NamedBarrier::NumIds * S.ClusterSize;
  ClusterBit = Bits++;
  TmemBase = Bits;
  Bits += S.ClusterSize;
  initTmem(Bits);
  QueueBase = Bits;
  Bits += 3 * S.Agents.size();
  AliveBase = Bits;
  Bits += S.ClusterSize;
  ExitBit = Bits++;
  PartAgents.resize(S.Buffers.size());
  PartBase.assign(S.Buffers.size(), NoIndex);
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (const ConcreteStep &C : S.Agents[A].Steps)
      if (C.PerCopy)
        for (const auto *List : {&C.Reads, &C.Writes})
          for (unsigned B : *List)
            if (!llvm::is_contained(PartAgents[B], A))
              PartAgents[B].push_back(A);
  for (unsigned B = 0; B < S.Buffers.size(); ++B)
    if (!PartAgents[B].empty()) {
      PartBase[B] = Bits;
      Bits += PartAgents[B].size();
    }
  Words = (Bits + 63) / 64;
  AsyncRead.assign(S.Buffers.size(), false);
  for (const ConcreteAgent &Ag : S.Agents)
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::AsyncStore || C.Kind == StepKind::MmaIssue)
        for (unsigned B : C.Reads)
          AsyncRead[B] = true;
  Fenced.resize(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (const ConcreteStep &C : S.Agents[A].Steps)
      if (C.Kind == StepKind::Write)
        for (unsigned B : C.Writes) {
          if (!AsyncRead[B])
            continue;
          auto It = llvm::find_if(Fenced[A], [&](auto &F) { return F.first == B; });
          if (It == Fenced[A].end())
            Fenced[A].push_back({B, C.PerCopy});
          else
            It->second &= C.PerCopy;
        }
  findAliases();
  Inits.resize(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (const ConcreteStep &C : S.Agents[A].Steps)
      if (C.Kind == StepKind::Init && C.Barrier != NoIndex &&
          !llvm::is_contained(Inits[A], C.Barrier))
        Inits[A].push_back(C.Barrier);
  findAlikeArrivals();
  NamedUsed.resize(S.ClusterSize);
  for (const ConcreteAgent &Ag : S.Agents)
    for (const ConcreteStep &C : Ag.Steps)
      if ((C.Kind == StepKind::NamedSync || C.Kind == StepKind::NamedArrive) &&
          C.NamedId < models::NamedBarrier::NumIds)
        insertSorted(NamedUsed[Ag.Cta], C.NamedId);
  Predecessors.resize(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (unsigned B = 0; B < S.Agents.size(); ++B)
      if (follows(A, B))
        Predecessors[A].push_back(B);
  for (const ConcreteAgent &Ag : S.Agents)
    for (const ConcreteStep &C : Ag.Steps)
      if (C.Kind == StepKind::ClusterArrive)
        ClusterCount = std::max<uint64_t>(ClusterCount, C.Count);
  Suffix.resize(S.Agents.size());
  EnablingSuffix.resize(S.Agents.size());
  EnablingSuffixLate.resize(S.Agents.size());
  CommitLate.resize(S.Agents.size());
  StepFootprint.resize(S.Agents.size());
  StepEnabling.resize(S.Agents.size());
  ExitAt.resize(S.Agents.size());
  FinishAt.resize(S.Agents.size());
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    const ConcreteAgent &Ag = S.Agents[A];
    const std::vector<ConcreteStep> &Steps = Ag.Steps;
    ExitAt[A].assign(Steps.size() + 1, -1);
    FinishAt[A].assign(Steps.size() + 1, false);
    for (size_t I = 0; I < Ag.Exits.size(); ++I) {
      ExitAt[A][Ag.Exits[I].At] = static_cast<int>(I);
      FinishAt[A][Ag.Exits[I].End] = true;
      if (Ag.Exits[I].InCycle)
        FinishAt[A][Ag.Exits[I].LateEnd] = true;
    }
    if (ExitInCycle.empty())
      for (const ConcreteAgent::Exit &E : Ag.Exits)
        ExitInCycle.push_back(E.InCycle);
    if (!Ag.Exits.empty()) {
      Merged = true;
      FinishAt[A][Ag.MainEnd] = true;
    }
    Suffix[A].assign(Steps.size() + 1, Footprint(3 * Words, 0));
    EnablingSuffix[A].assign(Steps.size() + 1, Footprint(3 * Words, 0));
    EnablingSuffixLate[A].assign(Steps.size() + 1, Footprint(3 * Words, 0));
    for (size_t I = 0; I < Steps.size(); ++I) {
      StepFootprint[A].push_back(footprint(A, Steps[I]));
      StepEnabling[A].push_back(enables(Steps[I]));
      CommitLate[A].push_back(StepEnabling[A].back());
      if (Steps[I].Kind == StepKind::MmaCommit) {
        Enabling &L = CommitLate[A].back();
        L.Arrivals.clear();
        L.Plain.clear();
        if (Steps[I].Count > 1)
          for (unsigned B : Steps[I].Targets) {
            L.Arrivals.push_back({B, Steps[I].Count - 1});
            L.Plain.push_back({B, Steps[I].Count - 1});
          }
      }
      // Going on past an exit decides that no agent leaves there (commutes(): a leaving
      // taken alone must not be overtaken by it).
      if (ExitAt[A][I] >= 0)
        addRead(StepFootprint[A][I], ExitBit);
    }
    // The three future tables: what the steps from a position on touch, and bring to
    // barriers (EnablingSuffixLate as where the agent's tcgen05 work completes next).
    std::vector<Footprint> *const Futures[] = {&Suffix[A], &EnablingSuffix[A],
                                               &EnablingSuffixLate[A]};
    // Step From's future becomes part of step I's too.
    auto Join = [&](size_t I, size_t From) {
      for (std::vector<Footprint> *T : Futures)
        for (unsigned W = 0; W < 3 * Words; ++W)
          (*T)[I][W] |= (*T)[From][W];
    };
    for (size_t I = Steps.size(); I-- > 0;) {
      // A block after an exit, and the main steps, end where the agent finishes: what
      // follows them is not its future.
      if (!FinishAt[A][I + 1])
        Join(I, I + 1);
      for (unsigned W = 0; W < 3 * Words; ++W)
        Suffix[A][I][W] |= StepFootprint[A][I][W];
      for (auto [Into, From] : {std::pair{&EnablingSuffix[A][I], &StepEnabling[A][I]},
                                std::pair{&EnablingSuffixLate[A][I], &CommitLate[A][I]}}) {
        for (auto [B, N] : From->Arrivals)
          add(*Into, B);
        for (auto [B, N] : From->Bytes)
          add(*Into, B);
        for (auto [B, N] : From->Expects)
          add(*Into, B);
      }
    }
    // Inside a cycle the whole cycle may still come.
    // Before an exit, the block after it is future too (the exits come before the cycles:
    // a tile loop's exits lie after its outer cycle).
    // An exit inside the cycle: either block.
    for (const ConcreteAgent::Exit &E : Ag.Exits) {
      const uint32_t Blocks[] = {E.Begin, E.LateBegin};
      for (uint32_t Block : llvm::ArrayRef<uint32_t>(Blocks, E.InCycle ? 2 : 1))
        for (uint32_t I = 0; I <= E.At; ++I)
          Join(I, Block);
    }
    std::vector<std::pair<uint32_t, uint32_t>> Cycles = Ag.InnerCycles;
    if (Ag.hasCycle())
      Cycles.push_back({Ag.CycleBegin, Ag.CycleEnd});
    for (auto [Begin, End] : Cycles) {
      Periodic = true;
      for (uint32_t I = Begin + 1; I < End; ++I)
        Join(I, Begin);
    }
    InnerEndAt.emplace_back(Steps.size(), -1);
    for (size_t I = 0; I < Ag.InnerCycles.size(); ++I)
      InnerEndAt[A][Ag.InnerCycles[I].second - 1] = static_cast<int>(I);
    if (!Ag.InnerCycles.empty())
      InnerAgents.push_back(A);
  }
  chooseAnchors();
  findPlainRuns();
}

void Simulator::chooseAnchors() {
  // Any agent with a cycle may be the anchor whose pass ends are never taken alone
  // (commutes() says why one is needed), and any agent with an inner cycle the inner one.
  // Which one changes only how many states the search keeps. Here the role of the first
  // agent with an inner cycle (else with a cycle) anchors, its last copy, in both cycles
  // where it has both. Measured over every reference kernel (states of `wsv verify
  // --progress`), that is never more than the first agent with a cycle and the first with
  // an inner one were: H5 312,256 states instead of 419,862, B5 621,715 instead of 704,350,
  // H4 6,418 instead of 7,026, B3 6,465 instead of 6,747, the others the same. It is a
  // measured choice, not a rule from the protocol: H5's first producer as both anchors took
  // 1.3 times the states of its last, a consumer over three times; B4's producer 1.5 times
  // its MMA agent.
  auto LastCopy = [&](unsigned A) {
    for (unsigned B = A + 1; B < S.Agents.size(); ++B)
      if (S.Agents[B].Program == S.Agents[A].Program &&
          S.Agents[B].InnerCycles.empty() == S.Agents[A].InnerCycles.empty() &&
          S.Agents[B].hasCycle() == S.Agents[A].hasCycle())
        A = B;
    return A;
  };
  if (!InnerAgents.empty()) {
    InnerAnchor = LastCopy(InnerAgents.front());
    if (S.Agents[InnerAnchor].hasCycle()) {
      LapAnchor = InnerAnchor;
      return;
    }
  }
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (S.Agents[A].hasCycle()) {
      LapAnchor = LastCopy(A);
      return;
    }
}

bool Simulator::exited(const State &St, unsigned Cta) const {
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (S.Agents[A].Cta == Cta && St.Agents[A].Pc < S.Agents[A].Steps.size())
      return false;
  return true;
}

bool Simulator::finished(const State &St) const {
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (St.Agents[A].Pc < S.Agents[A].Steps.size())
      return false;
  if (!St.Loads.empty())
    return false;
  for (const AgentState &A : St.Agents)
    if (A.Wgmma.firstInFlight() || A.Bulk.firstInFlight() || A.CpAsync.firstInFlight() ||
        !A.Tcgen05.inFlight().empty() || !A.LoneCommits.empty())
      return false;
  return true;
}

bool Simulator::follows(unsigned Agent, unsigned Before) const {
  const ConcreteAgent &A = S.Agents[Agent], &O = S.Agents[Before];
  return A.After == Before ||
         (O.Cta == A.Cta &&
          ((A.Place == Placement::Role && O.Place == Placement::Prologue) ||
           (A.Place == Placement::Epilogue && O.Place != Placement::Epilogue)));
}

bool Simulator::started(const State &St, unsigned Agent) const {
  for (unsigned B : Predecessors[Agent])
    if (St.Agents[B].Pc < S.Agents[B].Steps.size())
      return false;
  return true;
}

bool Simulator::stepEnabled(const State &St, unsigned Agent) const {
  const AgentState &AS = St.Agents[Agent];
  const ConcreteAgent &A = S.Agents[Agent];
  if (AS.Pc >= A.Steps.size() || !started(St, Agent))
    return false;
  if (Merged && St.TailExit >= 0 && exitNow(St, Agent) == St.TailExit)
    return false; // it leaves the tile loop here instead
  const ConcreteStep &C = A.Steps[AS.Pc];
  switch (C.Kind) {
  case StepKind::Wait: {
    if (C.Flag >= 0 && (AS.Probed >> C.Flag & 1))
      return true; // a probe saw the phase complete: skipped
    const models::Mbarrier &B = St.Barriers[C.Barrier];
    return !B.initialized() || B.testWaitParity(C.Parity);
  }
  case StepKind::NamedSync:
    return !AS.Arrived || St.Named[A.Cta].passed(C.NamedId, AS.Ticket);
  case StepKind::ClusterWait:
    return !AS.ClusterArrived || St.Cluster.passed(AS.ClusterTicket);
  case StepKind::GroupWait:
    return true; // it completes what it waits for (completions are lazy: see enabled)
  case StepKind::Alloc: {
    models::TmemAllocator Try = St.Tmem[A.Cta];
    uint32_t Column = 0;
    return Try.alloc(C.Columns, Column) != models::TmemResult::Blocked;
  }
  case StepKind::Diverge:
  case StepKind::Unknown:
    return false; // the agent stays here (RoleProgram.h)
  default:
    return true;
  }
}

std::vector<ScheduleStep> Simulator::enabled(const State &St, bool Reduce) const {
  std::vector<LoadInFlight> Stale;
  return enabled(St, Reduce, {}, Stale);
}

std::vector<ScheduleStep> Simulator::enabled(const State &St, bool Reduce,
                                             llvm::ArrayRef<LoadInFlight> Late,
                                             std::vector<LoadInFlight> &Stale) const {
  std::vector<ScheduleStep> Out;
  Stale.clear();
  if (Reduce)
    for (const LoadInFlight &L : St.Loads) {
      if (!llvm::is_contained(Late, L) && loadCommutes(St, L))
        return {{ScheduleStep::Kind::Complete, L.Agent, L.Step, L.Copy}};
      Stale.push_back(L);
    }
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    // Leaving the tile loop is never taken alone: it fixes where every agent leaves; nor is
    // going on past an exit some agent may still leave at, which rules it out.
    bool AtExit = Merged && started(St, A) && exitNow(St, A) >= 0;
    bool Enabled = stepEnabled(St, A);
    if (!AtExit && !Enabled)
      continue;
    // Taken alone, an agent's transitions go together: leaving the tile loop or not, and
    // each choice at the end of a pass (commutes() says when they may).
    std::vector<ScheduleStep> Alone;
    std::vector<ScheduleStep> &To = Reduce && commutes(St, A, AtExit) ? Alone : Out;
    if (AtExit)
      To.push_back({ScheduleStep::Kind::Execute, A, St.Agents[A].Pc, ScheduleStep::LeaveTiles});
    if (Enabled)
      for (unsigned Choice : choices(St, A))
        To.push_back({ScheduleStep::Kind::Execute, A, St.Agents[A].Pc, Choice});
    if (!Alone.empty())
      return Alone;
  }
  for (const LoadInFlight &L : St.Loads)
    if (Reduce && llvm::is_contained(Late, L) && loadCommutes(St, L))
      return {{ScheduleStep::Kind::Complete, L.Agent, L.Step, L.Copy}};
  for (const LoadInFlight &L : St.Loads)
    Out.push_back({ScheduleStep::Kind::Complete, L.Agent, L.Step, L.Copy});
  size_t Before = Out.size();
  completions(St, Out, /*Eager=*/false, /*Lazy=*/Reduce);
  if (Reduce)
    for (size_t I = Before; I < Out.size(); ++I) {
      const ScheduleStep &T = Out[I];
      const AgentState &AS = St.Agents[T.Agent];
      bool Tcgen05 = !AS.Tcgen05.inFlight().empty() && T.Step == AS.Tcgen05.inFlight().front();
      if (Tcgen05 && tcgen05Commutes(St, T.Agent))
        return {T};
    }
  return Out;
}

void Simulator::completions(const State &St, std::vector<ScheduleStep> &Out, bool Eager,
                            bool Lazy) const {
  // wgmma and bulk-store completions are seen by nothing but their owner's wait_group, which
  // completes them itself, and by the race checks, which only lose races when a read ends
  // sooner: so they complete lazily, at the wait_group, or in one batch (Copy 1) once the
  // owner finished. tcgen05 operations are seen through their commits' arrivals: they complete
  // a commit's worth at a time, oldest first (an operation ending before the rest of its
  // commit's only shortens a read). Every schedule of operations completing one by one, in
  // any order, reaches the same deadlocks and races. Replay (Eager) accepts both forms.
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    const AgentState &AS = St.Agents[A];
    bool Done = AS.Pc >= S.Agents[A].Steps.size();
    for (const models::AsyncGroupQueue *Q : {&AS.Wgmma, &AS.Bulk, &AS.CpAsync}) {
      if (Eager)
        Q->forEachInFlight(
            [&](uint32_t Op) { Out.push_back({ScheduleStep::Kind::Complete, A, Op, 0}); });
      if (std::optional<uint32_t> First = Q->firstInFlight(); First && (Done || Eager))
        Out.push_back({ScheduleStep::Kind::Complete, A, *First, 1});
    }
    const std::vector<uint32_t> &Ops = AS.Tcgen05.inFlight();
    if (Eager)
      for (uint32_t Op : Ops)
        Out.push_back({ScheduleStep::Kind::Complete, A, Op, 0});
    if (!Ops.empty() && (Done || Eager || AS.Tcgen05.pendingCommits()))
      Out.push_back({ScheduleStep::Kind::Complete, A, Ops.front(), 1});
  }
  // A lone commit's landing (AgentState::LoneCommits) touches only its barriers and reads
  // whether their CTA is there: it commutes with every step that touches neither, and any
  // schedule can take it just before the first step that does instead. So the search lands
  // lone commits only where such a step comes next (or, once every agent finished, the rest
  // of them), which keeps 31 lanes' arrivals from multiplying the states by the orders of
  // unrelated steps. Where agents are blocked and nothing else can move, the landings left
  // cannot unblock them (no step of theirs touches those barriers): a deadlock. Without the
  // reduction (Lazy false: `wsv explore --no-reduction`) every landing may come anywhere
  // else.
  const bool Others = !Out.empty();
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    for (auto [Commit, Due] : St.Agents[A].LoneCommits)
      if (Eager || (!Lazy && Others) || llvm::any_of(S.Agents[A].Steps[Commit].Targets,
                                [&](unsigned B) { return landingObserved(St, B); }))
        Out.push_back({ScheduleStep::Kind::Complete, A, Commit, 0});
  // Nothing moves: the rest land where every agent finished (asked only then: this runs for
  // every state of every search).
  if (Out.empty() &&
      llvm::any_of(St.Agents, [](const AgentState &A) { return !A.LoneCommits.empty(); }) &&
      llvm::all_of(llvm::seq(S.Agents.size()),
                   [&](size_t A) { return St.Agents[A].Pc >= S.Agents[A].Steps.size(); }))
    for (unsigned A = 0; A < S.Agents.size(); ++A)
      for (auto [Commit, Due] : St.Agents[A].LoneCommits)
        Out.push_back({ScheduleStep::Kind::Complete, A, Commit, 0});
}

bool Simulator::landingObserved(const State &St, unsigned Barrier) const {
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    const std::vector<ConcreteStep> &Steps = S.Agents[A].Steps;
    const AgentState &AS = St.Agents[A];
    if (AS.Pc >= Steps.size())
      continue;
    const ConcreteStep &C = Steps[AS.Pc];
    // Its step reads or changes the barrier (a wait, arrival, init or inval; a commit or
    // copy to it). Where every arrival on the barrier is the same function of its state
    // (ArrivalsAlike: one unit each), another arrival commutes with the landing. The step
    // that ends the barrier's CTA does not count: once it is gone, nothing reads the
    // barrier, and a landing after it is the bug either way (afterExit).
    const bool Arrival = C.Kind == StepKind::Arrive || C.Kind == StepKind::MmaCommit;
    if ((C.Barrier == Barrier || llvm::is_contained(C.Targets, Barrier)) &&
        !(Arrival && ArrivalsAlike[Barrier]))
      return true;
    if (ArrivalsAlike[Barrier])
      continue;
    // Its tcgen05 commits pending on the barrier land when an operation completes.
    bool Pending = false;
    AS.Tcgen05.forEachPendingCommit([&](uint32_t Commit) {
      Pending = Pending || llvm::is_contained(Steps[Commit].Targets, Barrier);
    });
    if (Pending)
      return true;
  }
  // A copy's complete_tx on it.
  return llvm::any_of(St.Loads, [&](const LoadInFlight &L) {
    return llvm::is_contained(S.Agents[L.Agent].Steps[L.Step].Targets, Barrier);
  });
}

bool Simulator::isEnabled(const State &St, const ScheduleStep &T) const {
  std::vector<ScheduleStep> All = enabled(St, /*Reduce=*/false);
  completions(St, All, /*Eager=*/true);
  for (const ScheduleStep &E : All)
    if (E == T)
      return true;
  return false;
}

Outcome Simulator::apply(State &St, const ScheduleStep &T) const {
  if (T.K == ScheduleStep::Kind::Execute)
    return execute(St, T.Agent, T.Copy);
  return complete(St, T);
}

Outcome Simulator::arrive(State &St, unsigned Barrier, uint32_t Count,
                          const ScheduleStep &T) const {
  if (Outcome O = unpublished(St, Barrier, "a tcgen05.commit", T); O.K != Outcome::Kind::Ok)
    return O;
  models::MbarrierViolation V = St.Barriers[Barrier].arrive(Count);
  if (V == models::MbarrierViolation::None)
    return {};
  Outcome O;
  O.K = Outcome::Kind::Violation;
  O.Message = "arrival on " + S.barrierName(Barrier) + ": " + models::toString(V);
  O.With = T;
  O.Check = barrierCheck(St, Barrier, V);
  return O;
}

Outcome Simulator::execute(State &St, unsigned Agent, unsigned Choice) const {
  AgentState &AS = St.Agents[Agent];
  const ConcreteAgent &A = S.Agents[Agent];
  if (Choice == ScheduleStep::LeaveTiles) {
    leaveTiles(St, Agent, ExitAt[Agent][AS.Pc]);
    return Outcome();
  }
  const ConcreteStep &C = A.Steps[AS.Pc];
  ScheduleStep T{ScheduleStep::Kind::Execute, Agent, AS.Pc, 0};
  Outcome O;
  // Check: the catalog's check, where the caller has not named one in O already.
  auto Violation = [&](std::string Message, const char *Check = "") {
    O.K = Outcome::Kind::Violation;
    O.Message = std::move(Message);
    if (*Check)
      O.Check = Check;
    return O;
  };
  auto Check = [&](models::MbarrierViolation V, const char *What) {
    if (V != models::MbarrierViolation::None)
      Violation(std::string(What) + " on " + S.barrierName(C.Barrier) + ": " +
                    models::toString(V),
                barrierCheck(St, C.Barrier, V));
  };
  if ((O = afterExit(St, C, T, /*Lands=*/false)).K != Outcome::Kind::Ok)
    return O;
  if (!C.Undefined.empty())
    return Violation(C.Undefined, C.UndefinedCheck);
  bool Advance = true;
  switch (C.Kind) {
  case StepKind::Init: {
    Check(St.Barriers[C.Barrier].init(C.Count), "init");
    if (!S.Programs || !S.Programs->InitsVisible)
      insertSorted(AS.Unpublished, C.Barrier);
    break;
  }
  case StepKind::InitFence:
    AS.Unpublished.clear();
    break;
  case StepKind::Setmaxnreg:
    break;
  case StepKind::Arrive:
    if (S.Barriers[C.Barrier].Cta != A.Cta)
      if ((O = unpublished(St, C.Barrier, "an arrival from CTA " + std::to_string(A.Cta), T))
              .K != Outcome::Kind::Ok)
        return O;
    if (C.TxBytes)
      Check(St.Barriers[C.Barrier].arriveExpectTx(C.TxBytes, C.Count), "arrive.expect_tx");
    else
      Check(St.Barriers[C.Barrier].arrive(C.Count), "arrive");
    break;
  case StepKind::ExpectTx:
    Check(St.Barriers[C.Barrier].expectTx(C.TxBytes), "expect_tx");
    break;
  case StepKind::Wait:
    if (C.Flag >= 0 && (AS.Probed >> C.Flag & 1)) {
      AS.Probed &= ~(uint32_t(1) << C.Flag);
      break;
    }
    if (C.Flag >= 0)
      AS.Probed &= ~(uint32_t(1) << C.Flag);
    if (!St.Barriers[C.Barrier].initialized())
      Violation("wait on " + S.barrierName(C.Barrier) + " before its init",
                "mbarrier-init-visibility");
    break;
  case StepKind::Probe: {
    const models::Mbarrier &B = St.Barriers[C.Barrier];
    if (!B.initialized()) {
      Violation("try_wait on " + S.barrierName(C.Barrier) + " before its init",
                "mbarrier-init-visibility");
      break;
    }
    if (B.testWaitParity(C.Parity))
      AS.Probed |= uint32_t(1) << C.Flag;
    else
      AS.Probed &= ~(uint32_t(1) << C.Flag);
    break;
  }
  case StepKind::AsyncLoad:
    for (unsigned B : C.Writes)
      if ((O = checkAccess(St, B, /*Write=*/true, /*Async=*/true, T)).K != Outcome::Kind::Ok)
        return O;
    if (C.Queue == AsyncQueue::CpAsync) {
      // Past a race it lands at once (nothing but its own wait observes it otherwise).
      if (!IgnoreRaces)
        AS.CpAsync.issue(AS.Pc);
      break;
    }
    for (unsigned Copy = 0; Copy < std::max(1u, C.Count); ++Copy)
      St.Loads.push_back({Agent, AS.Pc, Copy});
    std::sort(St.Loads.begin(), St.Loads.end());
    break;
  case StepKind::MmaIssue:
    for (unsigned B : C.Reads)
      if ((O = checkAccess(St, B, false, true, T)).K != Outcome::Kind::Ok)
        return O;
    if (C.Queue == AsyncQueue::Tcgen05 &&
        (O = tmemAccess(St, Agent, C)).K != Outcome::Kind::Ok)
      return O;
    if (C.Queue == AsyncQueue::Tcgen05) {
      // Past a race, operations issued since the last commit are seen only through the
      // next commit's arrival, which waits for all of them and for the first as much as
      // for the rest: the first stands for them. Kept one by one, a variant that commits
      // late piles them up without bound in a periodic system.
      if (!IgnoreRaces || !AS.Tcgen05.uncommittedInFlight())
        AS.Tcgen05.issue(AS.Pc);
    } else if (!IgnoreRaces) {
      AS.Wgmma.issue(AS.Pc); // else complete at once (see AsyncStore)
    }
    break;
  case StepKind::MmaCommit:
    // Lanes beyond the one that issued the MMAs commit empty groups: each arrives on its
    // own, some time later (AgentState::LoneCommits; a periodic system's later pass adds to
    // the same step's).
    if (C.Count > 1) {
      auto It = llvm::lower_bound(AS.LoneCommits, std::pair<uint32_t, uint32_t>{AS.Pc, 0});
      if (It != AS.LoneCommits.end() && It->first == AS.Pc)
        It->second += C.Count - 1;
      else
        AS.LoneCommits.insert(It, {AS.Pc, C.Count - 1});
    }
    if (O.K == Outcome::Kind::Ok && AS.Tcgen05.commit(AS.Pc))
      for (unsigned B : C.Targets)
        if (O.K == Outcome::Kind::Ok)
          O = arrive(St, B, 1, T);
    break;
  case StepKind::GroupCommit:
    queue(AS, C.Queue).commit();
    break;
  case StepKind::GroupWait:
    // Completes what it waits for, writes included, also for wait_group.read (only bulk
    // stores have it): a store's writes go to global memory, which only a wait_group of the
    // same thread observes, and that passes lazily. Kept in flight, they would grow without
    // bound in a periodic system (H5's epilogue: 32 more each pass).
    // Also the groups of the agents whose threads this one continues (Joined).
    retire(St, Agent, C);
    break;
  case StepKind::AsyncStore:
    for (unsigned B : C.Reads)
      if ((O = checkAccess(St, B, false, true, T)).K != Outcome::Kind::Ok)
        return O;
    // Past a race, what a bulk store (or a wgmma) has in flight is seen by nothing but its
    // owner's wait_group, which can always be let through by completing it: it completes at
    // once, which reaches the same deadlocks and violations. Kept in flight, a variant that
    // never waits for its stores piles them up without bound in a periodic system.
    if (!IgnoreRaces)
      AS.Bulk.issue(AS.Pc);
    break;
  case StepKind::NamedSync:
  case StepKind::NamedArrive: {
    if (AS.Arrived) {
      // The instance completed (stepEnabled said so); a stale ticket would tell otherwise
      // equal states apart.
      AS.Arrived = false;
      AS.Ticket = 0;
      break;
    }
    // Warps arrive one by one: agents that reach one named barrier together with more
    // threads than it counts may complete an instance with a mix of their warps, and some
    // of each go on while the rest still wait.
    uint64_t Together = C.Arriving + St.Named[A.Cta].get(C.NamedId).arrived();
    std::string Others;
    // Another role's warps, or copies of this role (B5's writeback warpgroups) each of
    // which fills the count alone: each means to sync on its own, and the id is shared,
    // not miscounted.
    bool OtherRole = false;
    bool EachAlone = C.Arriving == C.Count;
    for (unsigned B = 0; B < S.Agents.size(); ++B) {
      const AgentState &BS = St.Agents[B];
      const ConcreteAgent &Other = S.Agents[B];
      if (B == Agent || Other.Cta != A.Cta || BS.Arrived || BS.Pc >= Other.Steps.size() ||
          !started(St, B))
        continue;
      const ConcreteStep &OC = Other.Steps[BS.Pc];
      if ((OC.Kind == StepKind::NamedSync || OC.Kind == StepKind::NamedArrive) &&
          OC.NamedId == C.NamedId) {
        Together += OC.Arriving;
        Others += (Others.empty() ? "" : ", ") + Other.Name;
        OtherRole = OtherRole || Other.Program != A.Program;
        EachAlone = EachAlone && OC.Arriving == OC.Count;
      }
    }
    if (!Others.empty() && Together > C.Count) {
      O.Check = OtherRole || EachAlone ? "named-barrier-id-collision" : "named-barrier-count";
      return Violation("named barrier " + std::to_string(C.NamedId) + " (" +
                       std::to_string(C.Count) + " threads): " + A.Name + " and " + Others +
                       " reach it together with " + std::to_string(Together) +
                       " threads, so warps of both may complete one instance");
    }
    uint64_t Ticket = 0;
    models::NamedBarrierViolation V =
        St.Named[A.Cta].arrive(C.NamedId, C.Count, C.Arriving, Ticket);
    if (V != models::NamedBarrierViolation::None) {
      // Different counts for one id: groups that sync on their own share it.
      O.Check = V == models::NamedBarrierViolation::CountMismatch ? "named-barrier-id-collision"
                : V == models::NamedBarrierViolation::BadCount    ? "named-barrier-count"
                                                                  : "";
      return Violation("named barrier " + std::to_string(C.NamedId) + " (" +
                       std::to_string(C.Count) + " threads): " + models::toString(V));
    }
    if (C.Kind == StepKind::NamedSync && !St.Named[A.Cta].passed(C.NamedId, Ticket)) {
      AS.Arrived = true;
      AS.Ticket = Ticket;
      Advance = false;
    }
    break;
  }
  case StepKind::ClusterArrive: {
    uint32_t Arriving = (C.Arriving + 31) / 32 * 32;
    models::NamedBarrierViolation V = St.Cluster.arrive(C.Count, Arriving, AS.ClusterTicket);
    if (V != models::NamedBarrierViolation::None)
      return Violation(std::string("barrier.cluster.arrive: ") + models::toString(V));
    AS.ClusterArrived = true;
    break;
  }
  case StepKind::ClusterWait:
    if (!AS.ClusterArrived)
      return Violation("barrier.cluster.wait without a barrier.cluster.arrive before it");
    AS.ClusterArrived = false;
    AS.ClusterTicket = 0;
    break;
  case StepKind::Read:
    for (unsigned B : C.Reads)
      if ((O = checkAccess(St, B, false, false, T)).K != Outcome::Kind::Ok)
        return O;
    break;
  case StepKind::Write:
    // Past a race, what buffers hold is not kept: only races read it, and kept it would
    // tell apart states that lead to the same deadlocks.
    for (unsigned B : IgnoreRaces ? llvm::ArrayRef<unsigned>() : C.Writes) {
      if ((O = checkAccess(St, B, true, false, T)).K != Outcome::Kind::Ok)
        return O;
      St.Filled[B] = true;
      for (unsigned X : Aliases[B])
        St.Filled[X] = true;
      if (AsyncRead[B]) {
        uint32_t U = 2 * B + (C.PerCopy ? 1 : 0);
        insertSorted(AS.Unfenced, U);
      }
    }
    break;
  case StepKind::ProxyFence:
    AS.Unfenced.clear();
    break;
  case StepKind::Inval:
    Check(St.Barriers[C.Barrier].inval(), "mbarrier.inval");
    break;
  case StepKind::BarrierStore:
    if (St.Barriers[C.Barrier].initialized())
      return Violation("a plain store writes into the memory of " + S.barrierName(C.Barrier) +
                           " while it is a valid barrier (no mbarrier.inval since its init)",
                       "mbarrier-reuse");
    break;
  case StepKind::TmemRead:
    if (St.TmemAllocs[A.Cta].empty() && !IgnoreRaces) {
      O.K = Outcome::Kind::Race;
      O.Message = "tcgen05.ld of " + A.Name + " reads tensor memory while CTA " +
                  std::to_string(A.Cta) +
                  " has no columns allocated: a tcgen05.dealloc freed them before this read";
      O.With = T;
      O.Check = "tmem-dealloc-early";
      return O;
    }
    if ((O = tmemAccess(St, Agent, C)).K != Outcome::Kind::Ok)
      return O;
    break;
  case StepKind::TmemWait:
  case StepKind::TmemWrite:
  case StepKind::TmemWriteWait:
    if ((O = tmemAccess(St, Agent, C)).K != Outcome::Kind::Ok)
      return O;
    break;
  case StepKind::AccumulatorRead:
    // The agent's own wgmma operations write its accumulators until a wait_group retires
    // them (they complete no earlier in the model: the race shows whenever it can happen).
    if (std::optional<uint32_t> Op =
            IgnoreRaces ? std::nullopt : AS.Wgmma.findInFlight([&](uint32_t Op) {
              return (A.Steps[Op].Accumulators & C.Accumulators) != 0;
            })) {
      O.K = Outcome::Kind::Race;
      O.Message = "the wgmma accumulators of " + A.Name +
                  " are read while the wgmma that writes them may still run: no "
                  "wgmma.wait_group retired its group first";
      O.With = {ScheduleStep::Kind::Execute, Agent, *Op, 0};
      O.Check = "accumulator-early-read";
      return O;
    }
    break;
  case StepKind::Alloc: {
    uint32_t Column = 0;
    models::TmemResult R = St.Tmem[A.Cta].alloc(C.Columns, Column);
    if (R != models::TmemResult::Ok)
      return Violation("tcgen05.alloc of " + std::to_string(C.Columns) +
                           " columns: " + models::toString(R),
                       "tcgen05-alloc-exhaustion");
    St.TmemAllocs[A.Cta].push_back({Column, C.Columns});
    break;
  }
  case StepKind::Dealloc: {
    auto &Allocs = St.TmemAllocs[A.Cta];
    auto It = std::find_if(Allocs.begin(), Allocs.end(),
                           [&](auto &P) { return P.second == C.Columns; });
    if (It == Allocs.end())
      return Violation("tcgen05.dealloc of " + std::to_string(C.Columns) +
                       " columns that are not allocated");
    St.Tmem[A.Cta].dealloc(It->first, It->second);
    Allocs.erase(It);
    break;
  }
  case StepKind::Exit:
    AS.Pc = A.Steps.size();
    return O;
  case StepKind::Diverge:
  case StepKind::Unknown:
    return Violation("a step that is never enabled ran"); // stepEnabled rules them out
  }
  if (!Advance)
    return O;
  int Inner = InnerEndAt[Agent][AS.Pc++];
  if (Inner >= 0 && endOfInnerPass(St, Agent, Inner, Choice & 2))
    return O;
  if (AS.Pc == A.CycleEnd && A.hasCycle())
    endOfPass(St, Agent, Choice & 1);
  if (Merged && FinishAt[Agent][AS.Pc])
    AS.Pc = A.Steps.size();
  return O;
}

Outcome Simulator::complete(State &St, const ScheduleStep &T) const {
  AgentState &AS = St.Agents[T.Agent];
  const ConcreteStep &C = S.Agents[T.Agent].Steps[T.Step];
  Outcome O;
  switch (C.Kind) {
  case StepKind::AsyncLoad: {
    if (C.Queue == AsyncQueue::CpAsync) {
      // A finished agent's copies (or a replay's, one by one) land.
      std::vector<uint32_t> Before = AS.CpAsync.inFlight();
      if (T.Copy == 1)
        AS.CpAsync.completeAll();
      else
        AS.CpAsync.complete(T.Step);
      landCopies(St, T.Agent, Before);
      return O;
    }
    if ((O = afterExit(St, C, T, /*Lands=*/true)).K != Outcome::Kind::Ok)
      return O;
    auto It = std::find(St.Loads.begin(), St.Loads.end(),
                        LoadInFlight{T.Agent, T.Step, T.Copy});
    if (It != St.Loads.end())
      St.Loads.erase(It);
    for (unsigned B : IgnoreRaces ? llvm::ArrayRef<unsigned>() : C.Writes)
      St.Filled[B] = true;
    for (unsigned B : C.Targets) {
      if (!landsAt(St, B))
        continue;
      if (O.K == Outcome::Kind::Ok)
        O = unpublished(St, B, "a copy's complete_tx", T);
      models::MbarrierViolation V = St.Barriers[B].completeTx(C.TxBytes);
      if (V != models::MbarrierViolation::None && O.K == Outcome::Kind::Ok) {
        O.K = Outcome::Kind::Violation;
        O.Message = "complete_tx of " + std::to_string(C.TxBytes) + " bytes on " +
                    S.barrierName(B) + ": " + models::toString(V);
        O.Check = barrierCheck(St, B, V);
      }
    }
    return O;
  }
  case StepKind::AsyncStore:
    if (T.Copy == 1)
      AS.Bulk.completeAll();
    else
      AS.Bulk.complete(T.Step);
    return O;
  case StepKind::MmaCommit: {
    // One of the lone commits of this step lands (AgentState::LoneCommits).
    auto It = llvm::lower_bound(AS.LoneCommits, std::pair<uint32_t, uint32_t>{T.Step, 0});
    if (It == AS.LoneCommits.end() || It->first != T.Step)
      return O;
    // Where its CTA left and such landings are dropped, the rest of them land nowhere too.
    if (--It->second == 0 || llvm::none_of(C.Targets, [&](unsigned B) { return landsAt(St, B); }))
      AS.LoneCommits.erase(It);
    O = afterExit(St, C, T, /*Lands=*/true);
    for (unsigned B : C.Targets)
      if (O.K == Outcome::Kind::Ok && landsAt(St, B))
        O = arrive(St, B, 1, T);
    // Whatever it breaks, a lone commit's arrival is the symptom of the whole warp's commit.
    if (O.K != Outcome::Kind::Ok && !*O.Check)
      O.Check = "tcgen05-commit-multi-thread";
    return O;
  }
  case StepKind::MmaIssue:
    if (C.Queue != AsyncQueue::Tcgen05) {
      if (T.Copy == 1)
        AS.Wgmma.completeAll();
      else
        AS.Wgmma.complete(T.Step);
      return O;
    }
    for (uint32_t Commit :
         T.Copy == 1 ? AS.Tcgen05.completeOldest() : AS.Tcgen05.complete(T.Step)) {
      const ConcreteStep &Done = S.Agents[T.Agent].Steps[Commit];
      if (O.K == Outcome::Kind::Ok)
        O = afterExit(St, Done, T, /*Lands=*/true);
      for (unsigned B : Done.Targets)
        if (O.K == Outcome::Kind::Ok && landsAt(St, B))
          O = arrive(St, B, 1, T);
    }
    return O;
  default:
    return O;
  }
}

std::string Simulator::waitReason(const State &St, unsigned Agent) const {
  const ConcreteAgent &A = S.Agents[Agent];
  const AgentState &AS = St.Agents[Agent];
  if (!started(St, Agent)) {
    if (A.After != NoIndex)
      return "waits for " + S.Agents[A.After].Name + " to reach the loop where its threads part";
    return A.Place == Placement::Epilogue ? "waits for every role of its CTA to finish"
                                          : "waits for the prologue of its CTA to finish";
  }
  const ConcreteStep &C = A.Steps[AS.Pc];
  switch (C.Kind) {
  case StepKind::Wait: {
    const models::Mbarrier &B = St.Barriers[C.Barrier];
    return "waits for " + S.barrierName(C.Barrier) + " parity " + std::to_string(C.Parity) +
           " (phase " + std::to_string(B.completedPhases()) + ", " +
           std::to_string(B.pending()) + " of " + std::to_string(B.expected()) +
           " arrivals pending, tx " + std::to_string(B.txCount()) + ")";
  }
  case StepKind::NamedSync: {
    const models::NamedBarrier &B = St.Named[A.Cta].get(C.NamedId);
    return "waits at bar.sync " + std::to_string(C.NamedId) + " (" +
           std::to_string(B.arrived()) + " of " + std::to_string(C.Count) +
           " threads arrived)";
  }
  case StepKind::ClusterWait:
    return "waits at barrier.cluster.wait (" + std::to_string(St.Cluster.arrived()) + " of " +
           std::to_string(C.Count) + " threads arrived)";
  case StepKind::GroupWait:
    return std::string("waits at wait_group") + (C.ReadOnly ? ".read " : " ") +
           std::to_string(C.WaitN) + " of " + toString(C.Queue);
  case StepKind::Alloc:
    return "waits for " + std::to_string(C.Columns) + " free TMEM columns (" +
           std::to_string(St.Tmem[A.Cta].columnsInUse()) + " in use)";
  case StepKind::Diverge:
    return "loops forever: " + C.Reason;
  case StepKind::Unknown:
    return "stops where the model ends: " + C.Reason;
  default:
    return std::string("at ") + toString(C.Kind);
  }
}

std::vector<BlockedAgent> Simulator::blocked(const State &St) const {
  std::vector<BlockedAgent> Out;
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    if (St.Agents[A].Pc < S.Agents[A].Steps.size())
      Out.push_back({A, St.Agents[A].Pc, waitReason(St, A)});
  return Out;
}
