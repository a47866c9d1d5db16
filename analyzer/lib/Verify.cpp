//===- Verify.cpp - each property of a protocol: lower, then ask Z3 ---------------===//

#include "wsv/analyzer/Verify.h"

#include "TransitionSystem.h"
#include "TransitionSystemZ3.h"

#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/Explore.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>

namespace wsv {
namespace analyzer {

const char *toString(Property P) {
  switch (P) {
  case Property::DeadlockFreedom:
    return "deadlock-freedom";
  case Property::StageSafety:
    return "stage-safety";
  case Property::BarrierHygiene:
    return "barrier-hygiene";
  }
  return "?";
}

const char *toString(Verdict::Kind K) {
  switch (K) {
  case Verdict::Kind::Proved:
    return "proved";
  case Verdict::Kind::Counterexample:
    return "counterexample";
  case Verdict::Kind::Unknown:
    return "unknown";
  }
  return "?";
}

namespace {

/// The explorer's schedule as a counterexample: steps, the agents at the end, the barriers.
void fillCounterexample(const Protocol &P, const ConcreteSystem &S, const ExploreResult &E,
                        Verdict &V) {
  auto Iterations = [&](const ConcreteStep &C) {
    std::string Out;
    for (const auto &[L, I] : C.Iterations)
      Out += (Out.empty() ? "" : " ") + P.loopVar(L) + "=" + std::to_string(I);
    return Out;
  };
  // One CTA: agents are named by their role alone, as the solver's traces name them.
  auto AgentName = [&](unsigned A) {
    std::string N = S.Agents[A].Name;
    if (S.ClusterSize == 1 && llvm::StringRef(N).ends_with("@cta0"))
      N.resize(N.size() - 5);
    return N;
  };
  FoldedSchedule Folded =
      foldPrivateSteps(S, E.Schedule, /*StopAtRace=*/E.Verdict == ExploreVerdict::Race);
  for (size_t I = 0; I < Folded.Schedule.size(); ++I) {
    const ScheduleStep &T = Folded.Schedule[I];
    const ConcreteStep &C = S.Agents[T.Agent].Steps[T.Step];
    VerifyStep St;
    St.Step = Folded.Step[I];
    St.Agent = T.K == ScheduleStep::Kind::Complete ? "async" : AgentName(T.Agent);
    St.Issuer = S.Agents[T.Agent].Name;
    St.AgentStep = T.Step;
    St.Copy = T.Copy;
    St.Completion = T.K == ScheduleStep::Kind::Complete;
    St.What = describe(S, T);
    if (llvm::StringRef(St.What).starts_with(S.Agents[T.Agent].Name + " "))
      St.What.erase(0, S.Agents[T.Agent].Name.size() + 1);
    St.Event = C.Event;
    if (C.Event < P.Events.size()) {
      const SourceRef &W = P.Events[C.Event].Where;
      St.PtxLine = W.PtxLine;
      if (const CudaFrame *F = W.kernelFrame())
        St.Source = F->File.substr(F->File.find_last_of('/') + 1) + ":" + std::to_string(F->Line);
    }
    if (C.Barrier != NoIndex && C.Barrier < S.Barriers.size()) {
      St.Barrier = P.Barriers[S.Barriers[C.Barrier].Array].Name;
      St.Slot = S.Barriers[C.Barrier].Slot;
    }
    if (C.Kind == StepKind::Wait || C.Kind == StepKind::Probe)
      St.Parity = C.Parity;
    if (C.TxBytes)
      St.TxBytes = C.TxBytes;
    St.Iterations = Iterations(C);
    V.Schedule.push_back(std::move(St));
  }
  // Where the deadlock became certain, on the schedule as shown.
  if (E.Verdict == ExploreVerdict::Deadlock)
    if (std::optional<Inevitability> In = whereInevitable(S, Folded.Schedule)) {
      V.CertainAfter = In->Step ? Folded.Step[In->Step - 1] + 1 : 0;
      V.CertainStates = In->States;
    }
  for (const BlockedAgent &B : E.Blocked) {
    AgentState A;
    A.Agent = AgentName(B.Agent);
    A.State = "blocked: " + B.Reason;
    A.Reason = B.Reason;
    A.Blocked = true;
    if (const ConcreteAgent &Ag = S.Agents[B.Agent]; Ag.After != NoIndex) {
      const std::string &Of = S.Agents[Ag.After].Name;
      A.PartOf = Of.substr(0, Of.find('@')); // the agent, in any CTA
      A.PartThreads = threadList(Ag.Mask);
    }
    const ConcreteStep &C = S.Agents[B.Agent].Steps[B.Step];
    if (C.Event < P.Events.size())
      A.PtxLine = P.Events[C.Event].Where.PtxLine;
    if (C.Kind == StepKind::Wait && C.Barrier < S.Barriers.size()) {
      A.Barrier = P.Barriers[S.Barriers[C.Barrier].Array].Name;
      A.Slot = S.Barriers[C.Barrier].Slot;
      A.Parity = C.Parity;
    }
    if (C.Kind == StepKind::NamedSync) {
      A.NamedId = C.NamedId;
      A.NamedThreads = C.Count;
    }
    A.Iterations = Iterations(C);
    V.FinalAgents.push_back(std::move(A));
  }
  for (size_t I = 0; I < E.Barriers.size() && I < S.Barriers.size(); ++I) {
    const models::Mbarrier &B = E.Barriers[I];
    if (!B.initialized())
      continue;
    BarrierState BS;
    BS.Name = S.barrierName(static_cast<unsigned>(I));
    BS.Pending = B.pending();
    BS.Phase = B.completedPhases();
    BS.TxCount = B.txCount();
    V.FinalBarriers.push_back(std::move(BS));
  }
}

/// The explorer's verdicts for every value of the k-loop's parameter, or nothing where it
/// has none to give (then Z3 answers).
/// What an exploration that made no statement leaves the verdicts: why, the launches the
/// argument proved all the same, and the PTX lines no explored launch ran.
struct ExploreUnknown {
  std::string Reason;
  std::pair<std::string, std::string> ProvedWhere;
  std::vector<unsigned> Unreached;
};

/// What a later run of the argument went past (flags, as runs add up): the first run's
/// deadlock (its schedules end where they block), its race (its steps go on as if they did
/// not race), or its barrier init that no fence.mbarrier_init made visible (inits count as
/// visible).
enum Past : unsigned {
  Nothing = 0,
  PastDeadlock = 1,
  PastRace = 2,
  PastUnfencedInit = 4,
  PastLateLanding = 8
};

/// `deadlocks`, `races and unfenced inits`: what the runs after the first went past.
/// The first of Reasons, and how many more there are: `a (and 2 more)`.
std::string firstAndCount(const std::vector<std::string> &Reasons) {
  return Reasons.front() +
         (Reasons.size() > 1 ? " (and " + std::to_string(Reasons.size() - 1) + " more)"
                             : std::string());
}

std::string pastNames(unsigned Beyond) {
  std::vector<std::string> Names;
  if (Beyond & PastDeadlock)
    Names.push_back("deadlocks");
  if (Beyond & PastRace)
    Names.push_back("races");
  if (Beyond & PastUnfencedInit)
    Names.push_back("unfenced inits");
  if (Beyond & PastLateLanding)
    Names.push_back("late landings");
  std::string Out;
  for (size_t I = 0; I < Names.size(); ++I)
    Out += (I ? I + 1 == Names.size() ? " and " : ", " : "") + Names[I];
  return Out;
}

std::vector<std::optional<Verdict>> exploreVerdicts(const Protocol &P,
                                                    const VerifyOptions &Options,
                                                    ExploreUnknown &Unknown) {
  std::vector<std::optional<Verdict>> Out(Options.Properties.size());
  RolePrograms RP = lowerRolePrograms(P);
  const std::vector<std::string> Unplaced = unplacedAccesses(P);
  ParametricOptions PO;
  PO.TileK = Options.TileKGiven ? Options.TileK : inferKTile(RP, Options.TileK);
  PO.MaxStates = Options.MaxStates;
  PO.MaxTotalStates = Options.MaxTotalStates;
  PO.Threads = Options.Threads;
  PO.OnRun = Options.OnExploreRun;
  PO.MinTiles = Options.MinTiles;
  for (const auto &[Name, Value] : Options.Params)
    PO.Params[Name] = Value;
  // The values the user fixed are the launches asked about: a counterexample elsewhere is
  // not their verdict (ExploreFixed.cpp).
  PO.Fixed = Options.Params;
  if (Options.GridCtas) {
    // The user's values only: a parameter they did not give leaves the launch unknown
    // rather than taking the argument's default.
    PO.Launch.emplace();
    PO.Launch->Params = Options.Params;
    PO.Launch->GridCtas = Options.GridCtas;
    PO.Launch->CheckTripConditions = true;
  }
  ParametricResult E = exploreAllTrips(RP, PO);
  if (E.Verdict == ExploreVerdict::Unknown) {
    Unknown.Reason = E.Reason;
    Unknown.ProvedWhere = {E.Restricted, E.RestrictedFor};
    Unknown.Unreached = E.Unreached;
    // What the user can do about it: a launch stated in full is decided as it is.
    if (!Options.GridCtas)
      Unknown.Reason += "; a launch given in full would be explored cluster by cluster";
    return Out;
  }
  // A value fixed for the trip count's parameter must be one the statement covers (a
  // launch explored as it is covers itself).
  // (Under its display name or its PTX name, whichever the user gave.)
  if (!E.WholeLaunch && !E.Parameter.empty())
    for (size_t I = 0; I < P.ParamNames.size(); ++I) {
      if (P.ParamNames[I] != E.Parameter)
        continue;
      for (const std::string &Name : {P.ParamNames[I], I < P.ParamSymbols.size()
                                                            ? P.ParamSymbols[I]
                                                            : P.ParamNames[I]}) {
        auto It = Options.Params.find(Name);
        if (It == Options.Params.end())
          continue;
        uint64_t K = It->second;
        if (K % PO.TileK || K < PO.TileK * Options.MinTiles ||
            K >= (uint64_t(1) << 24))
          return Out;
      }
    }
  // Where the model starts an epilogue step after every role though no barrier makes it
  // so (ConcreteSystem::UnjoinedEpilogue): told by the launch the argument ran, or by the
  // smallest one, whose agents end the same way.
  std::optional<std::string> Unjoined;
  auto unjoinedEpilogue = [&](const ParametricResult &E) -> const std::string & {
    if (!Unjoined) {
      Instance I = E.Launch;
      if (I.Params.empty()) {
        I.Params = PO.Params;
        if (!E.Parameter.empty() && !I.Params.count(E.Parameter))
          I.Params[E.Parameter] = PO.TileK * std::max<uint64_t>(1, PO.MinTiles);
        I.GridCtas = RP.ClusterSize;
      }
      Unjoined = instantiate(RP, I).UnjoinedEpilogue;
    }
    return *Unjoined;
  };
  // The verdict of one property from a run of the argument; Safety: the run let schedules
  // that deadlock end there (ParametricOptions::StopAtDeadlock), after the first run's
  // deadlock.
  auto Fill = [&](const ParametricResult &E, Property Prop, unsigned Beyond) {
    Verdict V;
    V.Prop = Prop;
    V.Engine = "explore";
    V.Milliseconds = E.Milliseconds; // this run's, not the other's
    if (E.WholeLaunch) {
      V.Assumptions.push_back("these values only: no statement for other launches (" +
                              E.NotForEvery + ")");
      V.Reason = E.NotRun; // not an assumption: what the proof of this launch did not need
    } else if (E.Verdict == ExploreVerdict::Clean && (!E.Parameter.empty() || E.Tiles)) {
      // Without a parameter no k-loop varies: the periodicity is the tile loop's alone.
      const bool KLoop = !E.Parameter.empty();
      const std::string Tail = E.Tail ? " up to the last " + std::to_string(E.Tail) : "";
      const std::string Repeats =
          KLoop ? std::to_string(E.Period) + " k-tiles from k-tile " +
                      std::to_string(E.Threshold) + Tail +
                      (E.Tiles ? " and every " + std::to_string(E.Period) +
                                     " tiles from tile " + std::to_string(E.TileThreshold)
                               : std::string())
                : std::to_string(E.Period) +
                      " iteration(s) of the loop over the grid from iteration " +
                      std::to_string(E.TileThreshold) + Tail;
      const std::string For =
          !KLoop   ? "every trip count of it"
          : E.OnlyK ? E.Parameter + " = " + std::to_string(*E.OnlyK) + " and every tile count"
                    : "every " + E.Parameter + (E.Tiles ? " and tile count" : "");
      V.Assumptions.push_back("Z3 proved (" + std::to_string(E.SolverQueries) +
                              " queries) that the steps repeat every " + Repeats + ", so that " +
                              std::to_string(E.Runs.size()) + " explorations stand for " + For);
      if (!E.Elsewhere.empty())
        V.Assumptions.push_back("these values only: no statement for other launches (" +
                                E.Elsewhere + ")");
    }
    if ((Beyond & PastDeadlock) && E.Verdict != ExploreVerdict::Unknown)
      V.Assumptions.push_back("a schedule that deadlocks (deadlock-freedom's counterexample) "
                              "ends where every agent is blocked and nothing is in flight");
    if ((Beyond & PastRace) && E.Verdict != ExploreVerdict::Unknown)
      V.Assumptions.push_back("a step that races (stage-safety's counterexample) goes on as "
                              "if it did not: what the barriers do does not depend on the "
                              "data a race corrupts");
    if ((Beyond & PastUnfencedInit) && E.Verdict != ExploreVerdict::Unknown)
      V.Assumptions.push_back("every barrier init counts as visible to the async proxy and "
                              "the other roles, as if the fence.mbarrier_init that "
                              "barrier-hygiene's counterexample misses were there");
    if ((Beyond & PastLateLanding) && E.Verdict != ExploreVerdict::Unknown)
      V.Assumptions.push_back("a copy or tcgen05.commit that lands after its CTA exited "
                              "(barrier-hygiene's counterexample) lands nowhere");
    if (E.Verdict == ExploreVerdict::Clean && !unjoinedEpilogue(E).empty()) {
      // No bug among the schedules the model has, which are not all of them.
      V.Reason = "no counterexample (explore), but " + unjoinedEpilogue(E) +
                 ": the model runs it after them, so it has only some of the schedules";
      V.Assumptions.clear();
      return V;
    }
    if (E.Verdict == ExploreVerdict::Clean && Prop == Property::StageSafety &&
        !Unplaced.empty()) {
      // No race among what the model follows; the accesses it does not follow are unchecked.
      V.Reason = "no race found (explore), but the model does not follow " +
                 firstAndCount(Unplaced);
      V.Assumptions.clear();
      return V;
    }
    if (E.Verdict == ExploreVerdict::Clean) {
      V.K = Verdict::Kind::Proved;
      V.ForParameters = E.ForParameters;
      V.LaunchOnly = E.WholeLaunch;
      if (Prop == Property::StageSafety)
        V.Assumptions.push_back(
            "shared-memory stages, bulk-store staging (fence.proxy.async included), wgmma "
            "accumulators and tcgen05 accumulators in tensor memory, by column (an MMA writes "
            "the N columns of its instruction descriptor until its commit arrives, a tcgen05.ld "
            "or tcgen05.st reads or writes those of its shape until tcgen05.wait::ld or "
            "wait::st; columns not known count as all; lanes are not told apart, so tcgen05.ld "
            "and tcgen05.st are checked against MMAs, not against each other; tcgen05.cp and "
            "an MMA's operands in tensor memory are not modeled; a warpgroup's wgmma groups "
            "are the warpgroup's: once one of its warps returns from wgmma.wait_group, the "
            "wgmma it retires are done for every warp, as CUTLASS's consumer_release takes "
            "them to be)");
      if (Prop == Property::BarrierHygiene)
        V.Assumptions.push_back(
            "barrier hygiene here: barriers used after an init that fence.mbarrier_init "
            "published, no arrival beyond the count or after the CTA left, no plain store into "
            "a valid barrier, one thread count per named barrier, collectives run by whole "
            "warps and warpgroups; the lint checks judge the other rules");
      return V;
    }
    if (E.Verdict == ExploreVerdict::Unknown) { // the first run's unknown never gets here
      V.Reason = std::string("not examined: the search past the ") + pastNames(Beyond) + ": " +
                 E.Reason;
      return V;
    }
    if (brokenBy(E.Verdict) != Prop) {
      // The search stops at its first bad state: this property was not looked at further.
      V.Reason = std::string("not examined: the exploration stopped at the counterexample to ") +
                 toString(brokenBy(E.Verdict)) + " first";
      return V;
    }
    V.K = Verdict::Kind::Counterexample;
    V.Reason = E.Found.Message;
    V.Check = E.Found.Check;
    V.PastRaces = Beyond & PastRace;
    if (E.Reason.find("depth-first") != std::string::npos)
      V.Assumptions.push_back("the schedule comes from a depth-first search (the full search "
                              "of that launch ran out of states): a real one, not the "
                              "shortest");
    // The launch's values of the kernel's own parameters (the defaults for M and N are
    // there whether the kernel has them or not).
    for (const auto &[Name, Value] : E.Launch.Params)
      for (size_t PI = 0; PI < P.ParamNames.size(); ++PI)
        if (P.ParamNames[PI] == Name || (PI < P.ParamSymbols.size() && P.ParamSymbols[PI] == Name))
          V.Parameters[Name] = Value;
    if (E.Launch.GridCtas > P.Launch.ClusterSize) {
      V.GridCtas = E.Launch.GridCtas;
      V.FirstCta = E.Launch.FirstCta;
    }
    ConcreteSystem S = instantiate(RP, E.Launch);
    fillCounterexample(P, S, E.Found, V);
    return V;
  };
  // Properties a run did not look at: it stopped at another one's counterexample first.
  std::vector<bool> Open(Options.Properties.size());
  auto Stopped = [](const ParametricResult &Run, Property Prop) {
    return Run.Verdict != ExploreVerdict::Clean && Run.Verdict != ExploreVerdict::Unknown &&
           brokenBy(Run.Verdict) != Prop;
  };
  for (size_t I = 0; I < Options.Properties.size(); ++I) {
    Out[I] = Fill(E, Options.Properties[I], Nothing);
    Open[I] = Stopped(E, Options.Properties[I]);
  }
  // A deadlock ends the first run: the safety properties get a run of their own in which
  // deadlocked schedules end where they block, so that they are proved or refuted rather
  // than left unexamined. A race likewise: deadlock freedom and barrier hygiene get a run in
  // which racing steps go on. Each is bounded by SafetyStates. An unfenced init likewise:
  // the other properties get a run in which inits count as visible
  // (RolePrograms::InitsVisible), so that kernels whose compiler omits the fence (Triton's)
  // still get a verdict on deadlocks and races; that run may stop at one of those, and the
  // next goes past it too. A copy or commit landing after its CTA left likewise: the next
  // run drops such landings (RolePrograms::LateLandingsDropped; a whole warp's
  // tcgen05.commit arrives late long before its early releases deadlock or race).
  unsigned Beyond = Nothing;
  ParametricResult Last = std::move(E);
  for (unsigned Round = 0; Round < 4; ++Round) {
    unsigned Next = Last.Verdict == ExploreVerdict::Deadlock ? PastDeadlock
                    : Last.Verdict == ExploreVerdict::Race   ? PastRace
                    : Last.Verdict == ExploreVerdict::Violation && Last.Found.UnpublishedInit
                        ? PastUnfencedInit
                    : Last.Verdict == ExploreVerdict::Violation && Last.Found.LateLanding
                        ? PastLateLanding
                        : Nothing;
    if (Next == Nothing || (Beyond & Next) || llvm::none_of(Open, [](bool B) { return B; }))
      break;
    Beyond |= Next;
    if (Next == PastUnfencedInit)
      RP.InitsVisible = true;
    if (Next == PastLateLanding) {
      RP.LateLandingsDropped = true;
      // One exploration at a time: run ahead on several threads, each of the search's
      // launches may take the whole state bound, most of it past the budget (past B1's
      // tx-bytes race and late copy: 6.5 s on two threads, 1.6 s on one, the same verdicts).
      PO.Threads = 1;
    }
    if (Next == PastDeadlock)
      PO.StopAtDeadlock = false;
    if (Next == PastRace)
      PO.StopAtRace = false;
    if (Next != PastUnfencedInit) {
      uint64_t Cap = Next == PastRace          ? Options.PastRaceStates
                     : Next == PastLateLanding ? Options.PastLateLandingStates
                                               : Options.SafetyStates;
      PO.MaxTotalStates = std::min(PO.MaxTotalStates ? PO.MaxTotalStates : UINT64_MAX, Cap);
      PO.MaxStates = std::min(PO.MaxStates, Cap);
    }
    std::string Prefix = std::string("past ") + pastNames(Beyond) + ", ";
    if (Options.OnExploreRun)
      PO.OnRun = [&, Prefix](const std::string &Run, double Ms) {
        Options.OnExploreRun(Prefix + Run, Ms);
      };
    Last = exploreAllTrips(RP, PO);
    for (size_t I = 0; I < Options.Properties.size(); ++I)
      if (Open[I]) {
        Out[I] = Fill(Last, Options.Properties[I], Beyond);
        Open[I] = Stopped(Last, Options.Properties[I]);
      }
  }
  return Out;
}

} // namespace

std::vector<Verdict> verifyProtocol(const Protocol &P, const VerifyOptions &Options) {
  ts::TransitionSystem TS = ts::lower(P);
  std::vector<Verdict> Out;
  std::vector<std::optional<Verdict>> Explored(Options.Properties.size());
  // Why the exploration said unknown (Z3 answers then, and says so too when it cannot).
  ExploreUnknown Unexplored;
  if (Options.ExploreAllTrips)
    Explored = exploreVerdicts(P, Options, Unexplored);
  for (size_t PI = 0; PI < Options.Properties.size(); ++PI) {
    Property Prop = Options.Properties[PI];
    // A property the exploration did not get to (it stopped at another one's
    // counterexample): Z3's bounded search gets a short try, which settles it when every
    // execution ends early.
    bool NotExamined = Explored[PI] && Explored[PI]->unknown();
    if (Explored[PI] && !NotExamined) {
      Verdict V = std::move(*Explored[PI]);
      // A launch explored as it is had its trip counts' conditions checked at every loop
      // entry (Instance::CheckTripConditions): they are not assumed.
      std::vector<std::string> Assumed;
      for (const std::string &A : TS.Assumptions)
        if (!V.LaunchOnly || !llvm::is_contained(TS.TripAssumptions, A))
          Assumed.push_back(A);
      if (V.LaunchOnly && !TS.TripAssumptions.empty())
        Assumed.push_back("the conditions under which the closed-form trip counts are exact "
                          "hold at every loop entry of the launch (checked)");
      V.Assumptions.insert(V.Assumptions.begin(), Assumed.begin(), Assumed.end());
      if (!TS.ClusterAssumption.empty())
        V.Assumptions.insert(V.Assumptions.begin(), TS.ClusterAssumption);
      Out.push_back(std::move(V));
      continue;
    }
    VerifyOptions Short = Options;
    if (NotExamined)
      Short.TimeoutMs = std::min(Options.TimeoutMs, Options.NotExaminedTimeoutMs);
    auto Start = std::chrono::steady_clock::now();
    Verdict V;
    V.Prop = Prop;
    std::vector<std::string> Missing = TS.Unknowns;
    if (Prop == Property::StageSafety)
      Missing.insert(Missing.end(), TS.StageUnknowns.begin(), TS.StageUnknowns.end());

    if (!Missing.empty()) {
      // A part of the protocol the model lacks could hide a bug or fake one: neither a
      // proof nor a counterexample would mean anything.
      V.Reason = "the model of the protocol is incomplete: " + firstAndCount(Missing);
    } else {
      V = ts::checkProperty(P, TS, Prop, Short);
      static const std::vector<std::string> None;
      const std::vector<std::string> &Gaps = Prop == Property::StageSafety ? TS.StageProofGaps
                                             : Prop == Property::BarrierHygiene
                                                 ? TS.HygieneProofGaps
                                                 : None;
      if (V.proved() && !Gaps.empty()) {
        // What it found is real; that it found nothing is not a proof.
        V.K = Verdict::Kind::Unknown;
        V.Reason = "no counterexample (" + V.Engine + "), but the model lacks a hazard: " +
                   firstAndCount(Gaps);
        V.ForParameters.clear();
        V.Assumptions.clear();
      }
    }
    // The second half is Z3's: its model may lack what the exploration has (peer CTAs).
    if (NotExamined && V.unknown())
      V.Reason = Explored[PI]->Reason + "; Z3: " + V.Reason;
    else if (!Unexplored.Reason.empty() && V.unknown())
      V.Reason = "the exploration: " + Unexplored.Reason + "; Z3: " + V.Reason;
    if (V.unknown() && !NotExamined) {
      V.ProvedWhere = Unexplored.ProvedWhere.first;
      V.ProvedWhereFor = Unexplored.ProvedWhere.second;
      V.Unreached = Unexplored.Unreached;
    }
    std::vector<std::string> Model;
    for (const std::string &A : TS.Assumptions)
      if (Options.CommitsInOrder || A != TS.CommitOrder)
        Model.push_back(A);
    V.Assumptions.insert(V.Assumptions.begin(), Model.begin(), Model.end());
    if (!TS.ClusterAssumption.empty())
      V.Assumptions.insert(V.Assumptions.begin(), TS.ClusterAssumption);
    V.Milliseconds = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - Start)
                         .count();
    Out.push_back(std::move(V));
  }
  return Out;
}

Property brokenBy(ExploreVerdict V) {
  return V == ExploreVerdict::Deadlock ? Property::DeadlockFreedom
         : V == ExploreVerdict::Race   ? Property::StageSafety
                                       : Property::BarrierHygiene;
}

void yieldToRaceFindings(std::vector<Verdict> &Verdicts, const std::vector<Finding> &Findings) {
  const Finding *Race = nullptr;
  unsigned Races = 0;
  for (const Finding &F : Findings) {
    const CheckInfo *Info = findCheck(F.Check);
    if ((F.Level != Severity::Error && F.Level != Severity::Warning) || !Info ||
        Info->Category != CheckCategory::Race)
      continue;
    // An error is named before a warning; then the first in the file.
    if (!Race || std::make_pair(F.Level != Severity::Error, F.Where.PtxLine) <
                     std::make_pair(Race->Level != Severity::Error, Race->Where.PtxLine))
      Race = &F;
    ++Races;
  }
  if (!Race)
    return;
  for (Verdict &V : Verdicts) {
    if (V.Prop != Property::StageSafety || V.K != Verdict::Kind::Proved)
      continue;
    V.K = Verdict::Kind::Unknown;
    V.Reason = "no race in the model, which takes for granted an order between threads that "
               "the PTX may not give (a role's threads in step between its barriers, tcgen05 "
               "operations in program order around a synchronization), but the lint check " +
               Race->Check +
               (Race->Level == Severity::Error ? " found one" : " says one may happen") +
               (Race->Where.PtxLine ? " at ptx line " + std::to_string(Race->Where.PtxLine)
                                    : std::string()) +
               (Races > 1 ? " (and " + std::to_string(Races - 1) + " more)" : std::string()) +
               ": " + Race->Message;
    V.ForParameters.clear();
    V.LaunchOnly = false;
  }
}

} // namespace analyzer
} // namespace wsv
