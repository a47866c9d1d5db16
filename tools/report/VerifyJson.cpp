//===- VerifyJson.cpp - verdicts as JSON, SARIF and wsv-trace/1 --------------------===//

#include "VerifyJson.h"

#include "wsv/analyzer/Checks.h"

namespace wsv {
namespace report {

using analyzer::Verdict;
using nlohmann::json;

namespace {

json stepToJson(const analyzer::VerifyStep &S) {
  json J = {{"agent", S.Agent}, {"op", S.What}, {"step", S.Step}};
  if (S.PtxLine)
    J["ptx_line"] = S.PtxLine;
  if (!S.Source.empty())
    J["source"] = S.Source;
  if (S.Barrier)
    J["barrier"] = *S.Barrier;
  if (S.Slot)
    J["index"] = *S.Slot;
  if (S.Parity)
    J["parity"] = *S.Parity;
  if (S.TxBytes)
    J["tx_bytes"] = *S.TxBytes;
  if (!S.Iterations.empty())
    J["iterations"] = S.Iterations;
  return J;
}

} // namespace

json verdictToJson(const Verdict &V) {
  json J = {{"property", analyzer::toString(V.Prop)},
            {"result", analyzer::toString(V.K)},
            {"engine", V.Engine},
            {"assumptions", V.Assumptions},
            {"ms", V.Milliseconds}};
  if (V.proved()) {
    J["for"] = V.ForParameters;
    J["launch_only"] = V.LaunchOnly;
  }
  if (!V.Reason.empty())
    J["reason"] = V.Reason;
  if (V.unknown())
    J["bound"] = V.BoundReached;
  if (V.unknown() && !V.ProvedWhere.empty())
    J["proved_where"] = {{"condition", V.ProvedWhere}, {"for", V.ProvedWhereFor}};
  if (V.unknown() && !V.Unreached.empty())
    J["unreached_ptx_lines"] = V.Unreached;
  if (V.refuted() && !V.Check.empty())
    J["check"] = V.Check;
  if (V.refuted() && V.CertainAfter)
    J["certain_after_step"] = *V.CertainAfter; // 0: every schedule of the launch deadlocks
  if (V.refuted()) {
    J["parameters"] = V.Parameters;
    if (V.GridCtas)
      J["grid"] = {{"ctas", V.GridCtas}, {"first_cta", V.FirstCta}};
    json Steps = json::array();
    for (const analyzer::VerifyStep &S : V.Schedule)
      Steps.push_back(stepToJson(S));
    J["schedule"] = std::move(Steps);
    J["steps"] = V.steps(); // atomic steps; "schedule" has every transition
    json Agents = json::array();
    for (const analyzer::AgentState &A : V.FinalAgents) {
      json AJ = {{"agent", A.Agent},
                 {"state", A.State},
                 {"ptx_line", A.PtxLine},
                 {"blocked", A.Blocked}};
      // What it waits for, for tools that compare counterexamples with hardware captures.
      if (A.Barrier)
        AJ["barrier"] = *A.Barrier;
      if (A.Slot)
        AJ["slot"] = *A.Slot;
      if (A.Parity)
        AJ["parity"] = *A.Parity;
      if (A.NamedId)
        AJ["named_barrier"] = *A.NamedId;
      if (!A.Iterations.empty())
        AJ["iterations"] = A.Iterations;
      Agents.push_back(std::move(AJ));
    }
    J["agents"] = std::move(Agents);
    json Barriers = json::array();
    for (const analyzer::BarrierState &B : V.FinalBarriers)
      Barriers.push_back({{"barrier", B.Name},
                          {"pending", B.Pending},
                          {"phase", B.Phase},
                          {"parity", B.Phase % 2},
                          {"tx_count", B.TxCount},
                          {"in_flight", B.InFlight}});
    J["barriers"] = std::move(Barriers);
  }
  return J;
}

json findingToJson(const analyzer::Finding &F) {
  json Notes = json::array();
  for (const analyzer::FindingNote &N : F.Notes)
    Notes.push_back({{"message", N.Message}, {"ptx_line", N.Where.PtxLine}});
  return {{"check", F.Check},
          {"severity", analyzer::toString(F.Level)},
          {"message", F.Message},
          {"ptx_line", F.Where.PtxLine},
          {"column", F.Where.PtxColumn},
          {"notes", std::move(Notes)}};
}

std::vector<StepRun> verdictRuns(const Verdict &V, size_t First, size_t Last) {
  std::vector<TraceStep> Steps;
  for (size_t I = First; I < Last && I < V.Schedule.size(); ++I) {
    const analyzer::VerifyStep &S = V.Schedule[I];
    TraceStep T;
    T.Role = S.Agent;
    T.Op = S.What;
    T.Barrier = S.Barrier;
    if (S.Slot)
      T.Index = static_cast<unsigned>(*S.Slot);
    if (S.Parity)
      T.Parity = static_cast<unsigned>(*S.Parity);
    T.PtxLine = S.PtxLine;
    T.Iterations = S.Iterations;
    Steps.push_back(std::move(T));
  }
  return stepRuns(Steps, {});
}

std::string verdictStepLine(const Verdict &V, size_t First, size_t &End) {
  const analyzer::VerifyStep &S = V.Schedule[First];
  End = First + 1;
  while (End < V.Schedule.size() && V.Schedule[End].Step == S.Step)
    ++End;
  std::string Out;
  if (End > First + 1) { // a role's private transitions and the one they fold into
    for (const StepRun &R : verdictRuns(V, First, End))
      Out += (Out.empty() ? "" : "; ") + runLine(R);
    return Out;
  }
  Out = S.Agent + ": " + S.What;
  // The explorer's steps (those with an issuer) name their barrier instance, parity and
  // loop counters in What already; the solver's moves name the operation alone.
  if (S.Issuer.empty()) {
    if (S.Slot && S.Barrier)
      Out += " -> " + *S.Barrier + '[' + std::to_string(*S.Slot) + ']';
    if (S.Parity)
      Out += " parity " + std::to_string(*S.Parity);
    if (!S.Iterations.empty())
      Out += " (" + S.Iterations + ')';
  }
  if (S.PtxLine)
    Out += "  # ptx " + std::to_string(S.PtxLine);
  if (!S.Source.empty())
    Out += ", " + S.Source;
  return Out;
}

json verdictTrace(const analyzer::Protocol &P, const Verdict &V) {
  json Roles = json::array(), Barriers = json::array();
  for (const analyzer::Role &R : P.Roles)
    Roles.push_back(R.Name);
  for (const analyzer::BarrierArray &B : P.Barriers)
    Barriers.push_back(B.Name);
  json Stuck = json::array();
  for (const analyzer::AgentState &A : V.FinalAgents) {
    if (!A.Blocked)
      continue;
    json Wait;
    if (A.Barrier)
      Wait = {{"op", "mbarrier.try_wait.parity"},
              {"barrier", *A.Barrier},
              {"index", A.Slot.value_or(0)},
              {"parity", A.Parity.value_or(0)}};
    else if (A.NamedId)
      Wait = {{"op", "bar.sync"}, {"id", *A.NamedId}, {"threads", A.NamedThreads.value_or(0)}};
    else // a loop that never ends, a role waiting for others to finish: what it says
      Wait = {{"op", A.Reason}};
    Stuck.push_back({{"role", A.Agent},
                     {"cta", {0, 0, 0}},
                     {"cluster_rank", 0},
                     {"wait", std::move(Wait)},
                     {"iteration", A.Iterations},
                     {"ptx_line", A.PtxLine}});
    if (!A.PartOf.empty()) { // threads of one agent that parted at a loop
      Stuck.back()["part_of"] = A.PartOf;
      Stuck.back()["threads"] = A.PartThreads;
    }
  }
  json Steps = json::array();
  for (const analyzer::VerifyStep &S : V.Schedule) {
    json J = stepToJson(S);
    J["role"] = S.Agent;
    // What `wsv explore --replay` takes the transition from (as the explorer's own traces).
    J["kind"] = S.Completion ? "complete" : "execute";
    J["issuer"] = S.Issuer;
    J["agent_step"] = S.AgentStep;
    if (S.Copy)
      J["copy"] = S.Copy;
    Steps.push_back(std::move(J));
  }
  json Launch = {{"block", {P.Launch.BlockX, P.Launch.BlockY, P.Launch.BlockZ}},
                 {"cluster", {P.Launch.ClusterSize, 1, 1}},
                 {"parameters", V.Parameters}};
  if (V.GridCtas) {
    Launch["grid"] = {V.GridCtas, 1, 1};
    Launch["first_cta"] = V.FirstCta;
  }
  // As `wsv explain` reads them (EXPLAIN_JSON.md).
  json FinalBarriers = json::array();
  for (const analyzer::BarrierState &B : V.FinalBarriers)
    FinalBarriers.push_back({{"name", B.Name},
                             {"pending", B.Pending},
                             {"phase", B.Phase},
                             {"tx_count", B.TxCount},
                             {"in_flight", B.InFlight}});
  json Doc = {{"schema", "wsv-trace/1"},
              {"source", "solver"},
              {"kernel", P.Kernel},
              {"entry", P.Kernel},
              {"variant", nullptr},
              {"ptx", P.File},
              {"launch", std::move(Launch)},
              {"roles", std::move(Roles)},
              {"barriers", std::move(Barriers)},
              {"verdict", V.Prop == analyzer::Property::DeadlockFreedom ? "deadlock" : "race"},
              {"property", analyzer::toString(V.Prop)},
              {"reason", V.Reason},
              {"check", V.Check.empty() ? json(nullptr) : json(V.Check)},
              {"stuck", std::move(Stuck)},
              {"steps", std::move(Steps)},
              {"final_barriers", FinalBarriers}};
  if (V.PastRaces)
    Doc["races_go_on"] = true; // found past a race: a replay lets racing steps go on
  if (V.CertainAfter)
    Doc["certain_after_step"] = *V.CertainAfter;
  return Doc;
}

} // namespace report
} // namespace wsv
