//===- SarifVerify.cpp - `wsv verify --format sarif` for code scanning ---------------===//
//
// The lint log of the file's findings (Sarif.cpp: rules, relative locations, fingerprints),
// with a rule per property and a result per verdict that is not a proof: a counterexample
// as an error whose code flow is its schedule, a location per atomic step; an unknown as a
// note that says why. Fingerprints name the property, kernel, file and what went wrong, not
// the lines, so an alert stays one alert while the code around it moves.
//
//===----------------------------------------------------------------------------------===//
#include "Sarif.h"
#include "VerifyJson.h"

#include "llvm/Support/Path.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::report;
using analyzer::Verdict;
using nlohmann::json;

namespace {

const char *propertyMeaning(analyzer::Property P) {
  switch (P) {
  case analyzer::Property::DeadlockFreedom:
    return "every role of every CTA reaches its exit: no schedule leaves a role waiting on a "
           "barrier phase that nothing completes (a hang on hardware)";
  case analyzer::Property::StageSafety:
    return "no stage buffer, TMA-store staging buffer or accumulator is read before its fill "
           "completed or written while a read of it may be in flight (a wrong result)";
  case analyzer::Property::BarrierHygiene:
    return "no mbarrier or named barrier is used in a way the PTX ISA leaves undefined: more "
           "arrivals than pending, use before a published init, an arrival or copy reaching a "
           "CTA that exited";
  }
  return "";
}

json propertyRule(analyzer::Property P) {
  std::string Name = analyzer::toString(P);
  std::string What = propertyMeaning(P);
  std::string Help =
      "A property wsv verify proves for every parameter value where it can: " + What +
      ".\n\nA counterexample is an error; its code flow is the schedule that breaks the "
      "property, a location per atomic step (a role's private transitions folded into its "
      "next one). An unknown is a note that says why no proof was found.\n\n"
      "See the schedule: wsv verify --kernel KERNEL --steps FILE.ptx\n"
      "Explain it: wsv verify --trace-out DIR FILE.ptx; wsv explain DIR/KERNEL." + Name +
      ".trace.json";
  std::string Markdown =
      "**" + Name + "**: " + What +
      ".\n\nA counterexample is an error; its code flow is the schedule that breaks the "
      "property, a location per atomic step. An unknown is a note that says why no proof "
      "was found.\n\n- see the schedule: `wsv verify --kernel KERNEL --steps FILE.ptx`\n"
      "- explain it: `wsv verify --trace-out DIR FILE.ptx`, then `wsv explain "
      "DIR/KERNEL." + Name + ".trace.json`\n";
  return {{"id", Name},
          {"name", camelName(Name)},
          {"shortDescription", {{"text", "wsv verify: " + Name}}},
          {"fullDescription", {{"text", What}}},
          {"help", {{"text", Help}, {"markdown", Markdown}}},
          {"defaultConfiguration", {{"level", "error"}}},
          {"properties",
           {{"tags", {"verification", "warp-specialization", "ptx"}},
            {"precision", "very-high"},
            {"problem.severity", "error"}}}};
}

/// Where the verdict points: the first blocked agent's PTX line, else the last transition's,
/// else (an unknown) the kernel's first synchronization event.
unsigned verdictLine(const SarifVerdicts &K, const Verdict &V) {
  for (const analyzer::AgentState &A : V.FinalAgents)
    if (A.State != "finished" && A.PtxLine)
      return A.PtxLine;
  for (size_t I = V.Schedule.size(); I-- > 0;)
    if (V.Schedule[I].PtxLine)
      return V.Schedule[I].PtxLine;
  return std::max(1u, K.FirstLine);
}

json verdictResult(const SarifVerdicts &K, const Verdict &V, unsigned RuleIndex,
                   const SarifOptions &O) {
  std::string Property = analyzer::toString(V.Prop);
  std::string Text = Property + " of " + K.Kernel + ": " + analyzer::toString(V.K) +
                     (V.Reason.empty() ? "" : ", " + V.Reason);
  json Loc = {{"physicalLocation", sarifPhysicalLocation(K.File, verdictLine(K, V), 0, O.Root)},
              {"logicalLocations", json::array({{{"name", K.Kernel}, {"kind", "function"}}})}};
  json R = {{"ruleId", Property},
            {"ruleIndex", RuleIndex},
            {"level", V.refuted() ? "error" : "note"},
            {"message", {{"text", Text}}},
            {"locations", json::array({std::move(Loc)})}};
  if (V.refuted() && !V.Schedule.empty()) {
    json Flow = json::array();
    for (size_t I = 0, End = 0; I < V.Schedule.size(); I = End) {
      std::string Line = verdictStepLine(V, I, End);
      // At the PTX line of the step's last transition: the one its private ones fold into.
      json At = {{"physicalLocation",
                  sarifPhysicalLocation(K.File, V.Schedule[End - 1].PtxLine, 0, O.Root)},
                 {"message", {{"text", std::to_string(V.Schedule[I].Step + 1) + ". " + Line}}}};
      Flow.push_back({{"location", std::move(At)}, {"executionOrder", V.Schedule[I].Step + 1}});
    }
    R["codeFlows"] = {{{"threadFlows", {{{"locations", std::move(Flow)}}}}}};
  }
  std::string What = V.refuted() ? V.Reason : "unknown";
  R["partialFingerprints"] = {
      {"wsvVerdict/v1", sarifFingerprint({Property, K.Kernel,
                                          llvm::sys::path::filename(K.File).str(), What})}};
  json Props = {{"kernel", K.Kernel}};
  if (!V.Parameters.empty())
    Props["parameters"] = V.Parameters;
  if (V.refuted())
    Props["steps"] = V.steps();
  R["properties"] = std::move(Props);
  return R;
}

} // namespace

json wsv::report::verifyToSarif(const std::vector<LintInput> &Inputs,
                                const std::vector<SarifVerdicts> &Verdicts,
                                const SarifOptions &O) {
  json Doc = lintToSarif(Inputs, O);
  json &Run = Doc["runs"][0];
  json &Rules = Run["tool"]["driver"]["rules"];
  std::map<analyzer::Property, unsigned> RuleIndex;
  for (analyzer::Property P : {analyzer::Property::DeadlockFreedom,
                               analyzer::Property::StageSafety,
                               analyzer::Property::BarrierHygiene}) {
    RuleIndex[P] = static_cast<unsigned>(Rules.size());
    Rules.push_back(propertyRule(P));
  }
  for (const SarifVerdicts &K : Verdicts)
    for (const Verdict &V : *K.Verdicts)
      if (!V.proved())
        Run["results"].push_back(verdictResult(K, V, RuleIndex.at(V.Prop), O));
  return Doc;
}
