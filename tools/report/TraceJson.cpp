//===- TraceJson.cpp - explorer schedules as wsv-trace/1 documents ----------------===//
#include "TraceJson.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;
using nlohmann::json;

namespace {

std::string programName(const ConcreteSystem &S, const ConcreteAgent &A) {
  return S.Programs->Programs[A.Program].Name;
}

/// The `wait` object of a stuck agent, in the hardware capture's shape.
json waitOf(const ConcreteSystem &S, const ConcreteStep &C) {
  if (C.Kind == StepKind::Wait) {
    const BarrierInstance &B = S.Barriers[C.Barrier];
    return {{"op", "mbarrier.try_wait.parity"},
            {"barrier", S.P->Barriers[B.Array].Name},
            {"index", B.Slot},
            {"parity", C.Parity}};
  }
  if (C.Kind == StepKind::NamedSync)
    return {{"op", "bar.sync"}, {"id", C.NamedId}, {"threads", C.Count}};
  return {{"op", toString(C.Kind)}};
}

json stepJson(const ConcreteSystem &S, const ScheduleStep &T) {
  const ConcreteAgent &A = S.Agents[T.Agent];
  const ConcreteStep &C = A.Steps[T.Step];
  const Event &E = S.P->Events[C.Event];
  json J = {{"kind", T.K == ScheduleStep::Kind::Execute ? "execute" : "complete"},
            {"agent", A.Name},
            {"agent_step", T.Step},
            {"role", programName(S, A)},
            {"cta", {A.Cta, 0, 0}},
            {"cluster_rank", A.Cta},
            {"warp", A.FirstThread / WarpSize},
            {"op", E.Opcode},
            {"ptx_line", E.Where.PtxLine},
            {"text", describe(S, T)}};
  if (T.Copy)
    J["copy"] = T.Copy;
  if (const CudaFrame *F = E.Where.kernelFrame())
    J["source"] = F->File + ":" + std::to_string(F->Line);
  if (C.Barrier != NoIndex) {
    const BarrierInstance &B = S.Barriers[C.Barrier];
    J["barrier"] = S.P->Barriers[B.Array].Name;
    J["index"] = B.Slot;
    if (B.Cta != A.Cta)
      J["barrier_cta"] = B.Cta;
  }
  if (C.Kind == StepKind::Wait || C.Kind == StepKind::Probe)
    J["parity"] = C.Parity;
  if (C.Kind == StepKind::Probe)
    J["probe"] = true;
  if (C.TxBytes)
    J["tx_bytes"] = C.TxBytes;
  if (!C.Iterations.empty()) {
    json It = json::object();
    for (const auto &[L, V] : C.Iterations)
      It[S.P->loopVar(L)] = V;
    J["iterations"] = It;
  }
  return J;
}

} // namespace

json report::traceToJson(const ConcreteSystem &S, const ExploreResult &R,
                         const TraceOrigin &Origin) {
  const Protocol &P = *S.P;
  json Roles = json::array(), Barriers = json::array();
  for (const RoleProgram &Pr : S.Programs->Programs)
    Roles.push_back(Pr.Name);
  for (const BarrierArray &B : P.Barriers)
    Barriers.push_back(B.Name);

  json Steps = json::array();
  for (const ScheduleStep &T : R.Schedule)
    Steps.push_back(stepJson(S, T));

  // The agents stuck at the end, shaped like a hardware capture's records.
  json Stuck = json::array();
  std::map<std::string, json> Summary;
  std::vector<bool> Busy(S.Programs->Programs.size(), false);
  for (const BlockedAgent &B : R.Blocked) {
    const ConcreteAgent &A = S.Agents[B.Agent];
    const ConcreteStep &C = A.Steps[B.Step];
    Busy[A.Program] = true;
    uint64_t Iteration = C.Iterations.empty() ? 0 : C.Iterations.back().second;
    json W = waitOf(S, C);
    Stuck.push_back({{"role", programName(S, A)},
                     {"agent", A.Name},
                     {"cta", {A.Cta, 0, 0}},
                     {"cluster_rank", A.Cta},
                     {"warp", A.FirstThread / WarpSize},
                     {"sm", 0},
                     {"wait", W},
                     {"reason", B.Reason},
                     {"iteration", Iteration},
                     {"ptx_line", P.Events[C.Event].Where.PtxLine},
                     {"since_ns", 0},
                     {"captured_ns", 0},
                     {"reporter", false}});
    if (A.After != NoIndex) { // threads of one agent that parted at a loop
      const std::string &Of = S.Agents[A.After].Name;
      Stuck.back()["part_of"] = Of.substr(0, Of.find('@'));
      Stuck.back()["threads"] = threadList(A.Mask);
    }
    std::string Key = programName(S, A) + "\n" + W.dump();
    json &G = Summary[Key];
    if (G.is_null())
      G = {{"role", programName(S, A)}, {"wait", W}, {"ctas", 0}, {"warps", json::array()},
           {"iterations", {Iteration, Iteration}}};
    G["ctas"] = G["ctas"].get<unsigned>() + 1;
    G["warps"].push_back(A.FirstThread / WarpSize);
    G["iterations"][0] = std::min(G["iterations"][0].get<uint64_t>(), Iteration);
    G["iterations"][1] = std::max(G["iterations"][1].get<uint64_t>(), Iteration);
  }
  json SummaryList = json::array(), Silent = json::array();
  for (auto &[Key, G] : Summary)
    SummaryList.push_back(G);
  for (size_t I = 0; I < Busy.size(); ++I)
    if (!Busy[I])
      Silent.push_back(S.Programs->Programs[I].Name);

  json BarrierStates = json::array();
  for (size_t I = 0; I < R.Barriers.size() && I < S.Barriers.size(); ++I) {
    const models::Mbarrier &M = R.Barriers[I];
    const BarrierInstance &B = S.Barriers[I];
    BarrierStates.push_back({{"barrier", P.Barriers[B.Array].Name},
                             {"index", B.Slot},
                             {"cta", B.Cta},
                             {"initialized", M.initialized()},
                             {"phase", M.completedPhases()},
                             {"parity", M.currentParity()},
                             {"pending", M.pending()},
                             {"expected", M.expected()},
                             {"tx_count", M.txCount()}});
  }

  json Doc = {
      {"schema", "wsv-trace/1"},
      {"source", "solver"},
      {"kernel", Origin.Kernel.empty() ? P.Kernel : Origin.Kernel},
      {"entry", Origin.Entry.empty() ? P.Kernel : Origin.Entry},
      {"variant", Origin.Variant.empty() ? json(nullptr) : json(Origin.Variant)},
      {"ptx", Origin.Ptx.empty() ? P.File : Origin.Ptx},
      {"launch",
       {{"grid", {std::max<uint64_t>(S.GridCtas, S.ClusterSize), 1, 1}},
        {"first_cta", S.FirstCta},
        {"block", {P.Launch.BlockX, P.Launch.BlockY, P.Launch.BlockZ}},
        {"cluster", {S.ClusterSize, 1, 1}},
        {"smem_bytes", 0}}},
      {"roles", Roles},
      {"barriers", Barriers},
      {"timeout_ns", 0},
      {"time_origin_ns", 0},
      {"stuck", Stuck},
      {"summary", SummaryList},
      {"silent_roles", Silent},
      {"dropped", 0},
      {"steps", Steps},
      {"verdict", toString(R.Verdict)},
      {"message", R.Message},
      {"barrier_states", BarrierStates},
      {"assumptions", S.Assumptions},
      {"states", R.States}};
  if (R.Verdict == ExploreVerdict::Race && R.RaceBuffer != NoIndex)
    Doc["race"] = {{"buffer", S.bufferName(R.RaceBuffer)}, {"with", stepJson(S, R.RaceWith)}};
  return Doc;
}

std::optional<std::vector<ScheduleStep>>
report::scheduleFromTrace(const json &Trace, const ConcreteSystem &S, std::string &Error) {
  if (!Trace.is_object() || Trace.value("schema", "") != "wsv-trace/1") {
    Error = "not a wsv-trace/1 document";
    return std::nullopt;
  }
  if (Trace.value("source", "") != "solver" || !Trace.contains("steps")) {
    Error = "only solver traces have steps to replay";
    return std::nullopt;
  }
  std::map<std::string, unsigned> Agents;
  for (unsigned A = 0; A < S.Agents.size(); ++A)
    Agents[S.Agents[A].Name] = A;
  std::vector<ScheduleStep> Out;
  for (const json &J : Trace["steps"]) {
    // `wsv verify`'s traces name a completion's agent `async` and its issuer apart.
    std::string Name = J.value("issuer", J.value("agent", ""));
    auto It = Agents.find(Name);
    if (It == Agents.end()) {
      Error = "step " + std::to_string(Out.size()) + " names agent '" + Name +
              "' that this kernel and instance do not have";
      return std::nullopt;
    }
    ScheduleStep T;
    T.K = J.value("kind", "") == "complete" ? ScheduleStep::Kind::Complete
                                            : ScheduleStep::Kind::Execute;
    T.Agent = It->second;
    T.Step = J.value("agent_step", 0u);
    T.Copy = J.value("copy", 0u);
    if (T.Step >= S.Agents[T.Agent].Steps.size()) {
      Error = "step " + std::to_string(Out.size()) + " is past the end of " + It->first;
      return std::nullopt;
    }
    Out.push_back(T);
  }
  return Out;
}

std::map<std::string, uint64_t> report::parametersFromAssumptions(const nlohmann::json &Trace) {
  std::map<std::string, uint64_t> Params;
  if (!Trace.is_object() || !Trace.contains("assumptions") || !Trace["assumptions"].is_array())
    return Params;
  for (const nlohmann::json &A : Trace["assumptions"]) {
    if (!A.is_string())
      continue;
    // The split views into the string: it lives in Trace.
    const std::string &Text = A.get_ref<const std::string &>();
    auto [Name, Value] = llvm::StringRef(Text).split(" = ");
    uint64_t V = 0;
    if (!Name.empty() && !Name.contains(' ') && !Value.getAsInteger(10, V))
      Params.emplace(Name.str(), V);
  }
  return Params;
}
