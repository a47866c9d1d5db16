//===- ExplainJson.cpp - `wsv explain --format json` (wsv-explain/1) -----------------===//
//
// The same facts as the text, as data (EXPLAIN_JSON.md documents each field). Indices into
// `stuck` tie the wait-for edges and the cycle to the waits they connect.
//
//===----------------------------------------------------------------------------------===//
#include "Explain.h"

#include "wsv/analyzer/ProtocolPrinter.h"

namespace wsv {
namespace report {

namespace {

using nlohmann::json;

json waitJson(const analyzer::StuckWait &W) {
  if (W.Named)
    return {{"op", "bar.sync"}, {"id", W.NamedId}, {"threads", W.NamedThreads}};
  return {{"op", "mbarrier.try_wait.parity"},
          {"barrier", W.Barrier},
          {"index", W.Slot},
          {"parity", W.Parity}};
}

json siteJson(const analyzer::Protocol &P, const analyzer::EventSite &S) {
  const analyzer::Event &Ev = P.Events[S.Event];
  std::string Src = eventSource(P, S.Event);
  return {{"event", S.Event},
          {"kind", analyzer::toString(Ev.Kind)},
          {"opcode", Ev.Opcode},
          {"ptx_line", Ev.Where.PtxLine},
          {"source", Src.empty() ? json(nullptr) : json(Src)}};
}

json stuckJson(const Explanation &E) {
  json Out = json::array();
  for (unsigned G = 0; G < E.Snap.Stuck.size(); ++G) {
    const analyzer::StuckWait &W = E.Snap.Stuck[G];
    json J = {{"role", W.Role},
              {"warps", W.Warps},
              {"wait", waitJson(W)},
              {"iterations", {W.FirstIteration, W.LastIteration}},
              {"ctas", W.Ctas},
              {"waited_ns", E.Groups[G].WaitedNs}};
    if (E.P) {
      const analyzer::WaitMatch &M = E.WaitFor.Matches[G];
      json Roles = json::array(), Waits = json::array();
      for (unsigned R : M.Roles)
        Roles.push_back(E.P->Roles[R].Name);
      for (const analyzer::EventSite &S : M.Waits)
        Waits.push_back(siteJson(*E.P, S));
      J["protocol_roles"] = Roles;
      J["protocol_waits"] = Waits;
      J["check"] = M.Check;
      J["contradicts_protocol"] = M.Contradicts;
    }
    Out.push_back(std::move(J));
  }
  return Out;
}

json stepsJson(const Explanation &E) {
  json Out = json::array();
  for (size_t I = 0; I < E.T->Steps.size(); ++I) {
    const TraceStep &S = E.T->Steps[I];
    json J = {{"index", I},
              {"role", S.Role},
              {"op", S.Op},
              {"ptx_line", S.PtxLine},
              {"source", S.Source.empty() ? json(nullptr) : json(S.Source)}};
    if (S.Barrier)
      J["barrier"] = *S.Barrier;
    if (S.Index)
      J["index_in_array"] = *S.Index;
    if (I < E.Effects.size() && !E.Effects[I].Note.empty())
      J["effect"] = E.Effects[I].Note;
    if (S.Step)
      J["step"] = *S.Step;
    Out.push_back(std::move(J));
  }
  return Out;
}

json runsJson(const Explanation &E) {
  json Out = json::array();
  for (const StepRun &R : E.Runs)
    Out.push_back({{"first", R.First},
                   {"last", R.Last},
                   {"role", R.Role},
                   {"what", R.What},
                   {"iterations", {R.FirstIterations, R.LastIterations}},
                   {"ptx_lines", {R.LowLine, R.HighLine}},
                   {"effects", R.Effects}});
  return Out;
}

json barriersJson(const Explanation &E) {
  json States = json::array();
  for (const BarrierEndState &B : E.States)
    States.push_back({{"barrier", B.Barrier},
                      {"index", B.Slot},
                      {"initialized", B.Initialized},
                      {"expected", B.Expected},
                      {"pending", B.Pending},
                      {"tx_count", B.TxCount},
                      {"completed_phases", B.CompletedPhases},
                      {"parity", B.CompletedPhases & 1},
                      {"violations", B.Violations},
                      {"from_trace", B.FromTrace},
                      {"cta", B.InCta ? json(B.ClusterRank) : json(nullptr)},
                      {"in_flight", B.InFlight}});
  json J = {{"replayed", E.HaveStates}, {"states", States}};
  if (!E.HaveStates) {
    J["note"] = E.NoStates;
    // A blocked parity wait says that phase has not completed: the current parity is its.
    json Derived = json::array();
    for (const analyzer::StuckWait &W : E.Snap.Stuck)
      if (!W.Named)
        Derived.push_back({{"barrier", W.Barrier},
                           {"index", W.Slot},
                           {"parity", W.Parity},
                           {"waited_for_by", W.Role}});
    J["incomplete_phases"] = Derived;
  }
  return J;
}

json edgesJson(const Explanation &E) {
  json Out = json::array();
  if (!E.P)
    return Out;
  for (const analyzer::WaitEdge &Ed : E.WaitFor.Edges) {
    json Completions = json::array();
    for (const analyzer::EventSite &S : Ed.Completions)
      Completions.push_back(siteJson(*E.P, S));
    Out.push_back(
        {{"from", Ed.From},
         {"role", E.P->Roles[Ed.Role].Name},
         {"trace_role", Ed.TraceRole.empty() ? json(nullptr) : json(Ed.TraceRole)},
         {"state", analyzer::toString(Ed.State)},
         {"to", Ed.To},
         {"completions", Completions},
         {"completes_after_its_wait", Ed.CompletesAfterItsWait
                                          ? json(*Ed.CompletesAfterItsWait)
                                          : json(nullptr)}});
  }
  return Out;
}

} // namespace

json explanationToJson(const Explanation &E) {
  const Trace &T = *E.T;
  json Doc = {{"schema", ExplainJsonSchema},
              {"trace",
               {{"source", T.fromSolver() ? "solver" : "hardware"},
                {"kernel", T.Kernel},
                {"entry", T.Entry},
                {"variant", T.Variant.empty() ? json(nullptr) : json(T.Variant)},
                {"ptx", T.Ptx}}},
              {"ptx", E.PtxPath.empty() ? json(nullptr) : json(E.PtxPath)},
              {"protocol", E.P != nullptr},
              {"stuck", stuckJson(E)},
              {"silent_roles", E.Snap.Silent},
              {"steps", stepsJson(E)},
              {"runs", runsJson(E)},
              {"barriers", barriersJson(E)},
              {"wait_for", edgesJson(E)},
              {"cycle", E.WaitFor.Cycle}};
  if (T.CertainAfter)
    Doc["certain_after_step"] = *T.CertainAfter;
  if (T.isRace())
    Doc["race"] = {{"property", T.Property}, {"reason", T.Reason},
                   {"check", T.Check.empty() ? json(nullptr) : json(T.Check)}};
  if (!E.P) {
    Doc["no_protocol"] = E.NoProtocol;
    Doc["diagnosis"] = nullptr;
    return Doc;
  }
  const char *Check = analyzer::checkName(E.WaitFor.Why.Class);
  Doc["diagnosis"] = {{"class", *Check ? json(Check) : json("unclassified")},
                      {"evidence", E.WaitFor.Why.Evidence},
                      {"fix", fixText(E)}};
  return Doc;
}

} // namespace report
} // namespace wsv
