//===- Sarif.cpp - lint results as SARIF 2.1.0 -------------------------------------===//
#include "Sarif.h"
#include "Diagnostics.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

using namespace wsv;
using namespace wsv::report;
using analyzer::Finding;
using llvm::StringRef;
using nlohmann::json;

namespace {

constexpr const char *SarifSchemaUri = "https://json.schemastore.org/sarif-2.1.0.json";
constexpr const char *RootId = "SRCROOT";

std::string percentEncode(StringRef Path) {
  std::string Out;
  for (char C : Path) {
    if (llvm::isAlnum(C) || StringRef("/-._~()").contains(C))
      Out += C;
    else
      Out += "%" + llvm::utohexstr(static_cast<unsigned char>(C), /*LowerCase=*/false, 2);
  }
  return Out;
}

/// An artifactLocation: relative to the root (with uriBaseId) when the file is under it, a
/// file:// URI otherwise.
json artifactLocation(StringRef File, StringRef Root) {
  if (File == "<stdin>")
    return {{"uri", "stdin"}};
  llvm::SmallString<256> Abs(File);
  llvm::sys::fs::make_absolute(Abs);
  llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  llvm::SmallString<256> Base(Root);
  llvm::sys::path::remove_dots(Base, /*remove_dot_dot=*/true);
  StringRef AbsRef = Abs;
  if (!Base.empty() && AbsRef.consume_front(Base) &&
      (AbsRef.empty() || llvm::sys::path::is_separator(AbsRef.front()) ||
       llvm::sys::path::is_separator(Base.back()))) {
    AbsRef = AbsRef.ltrim("/");
    return {{"uri", percentEncode(AbsRef)}, {"uriBaseId", RootId}};
  }
  return {{"uri", "file://" + percentEncode(Abs)}};
}

json physicalLocation(StringRef File, unsigned Line, unsigned Column, StringRef Root) {
  json P = {{"artifactLocation", artifactLocation(File, Root)}};
  if (Line)
    P["region"] = {{"startLine", Line}, {"startColumn", Column ? Column : 1}};
  return P;
}

const char *level(analyzer::Severity S) {
  switch (S) {
  case analyzer::Severity::Error:
    return "error";
  case analyzer::Severity::Warning:
    return "warning";
  case analyzer::Severity::Remark:
    return "note";
  }
  return "error";
}

const char *categoryMeaning(analyzer::CheckCategory C) {
  switch (C) {
  case analyzer::CheckCategory::Deadlock:
    return "a deadlock check: when it fires, some role can wait forever (a hang on hardware)";
  case analyzer::CheckCategory::Race:
    return "a race check: when it fires, a buffer can be read or rewritten while another "
           "role or an async unit still uses it (a wrong result)";
  case analyzer::CheckCategory::Crash:
    return "a crash check: when it fires, the kernel executes undefined behaviour "
           "(an illegal instruction, a trap, or corrupted state)";
  }
  return "";
}

json ruleOf(const analyzer::CheckInfo &C) {
  std::string Help = std::string(C.Summary) + ".\n\n" + "This is " +
                     categoryMeaning(C.Category) +
                     ". The finding points at the PTX instruction and, through .loc, at the "
                     "CUDA source line; its notes name the related instructions.\n\n"
                     "Check only this: wsv lint --checks='-*," +
                     C.Name +
                     "' FILE.ptx\n"
                     "See the protocol the check read: wsv protocol FILE.ptx";
  std::string Markdown = std::string("**") + C.Summary + ".**\n\nThis is " +
                         categoryMeaning(C.Category) +
                         ". The finding points at the PTX instruction and, through `.loc`, at "
                         "the CUDA source line; its notes name the related instructions.\n\n"
                         "- check only this: `wsv lint --checks='-*," +
                         C.Name +
                         "' FILE.ptx`\n"
                         "- see the protocol the check read: `wsv protocol FILE.ptx`\n";
  return {{"id", C.Name},
          {"name", camelName(C.Name)},
          {"shortDescription", {{"text", C.Summary}}},
          {"fullDescription", {{"text", std::string(C.Summary) + " (" +
                                            analyzer::toString(C.Category) + ")"}}},
          {"help", {{"text", Help}, {"markdown", Markdown}}},
          {"defaultConfiguration", {{"level", "error"}}},
          {"properties",
           {{"tags", {analyzer::toString(C.Category), "warp-specialization", "ptx"}},
            {"precision", "high"},
            {"problem.severity", "error"}}}};
}

std::string fingerprint(const Finding &F) {
  return sarifFingerprint(
      {F.Check, F.Kernel, llvm::sys::path::filename(F.File).str(), F.Message});
}

json resultOf(const Finding &F, const SarifOptions &O,
              const llvm::StringMap<unsigned> &RuleIndex) {
  json R = {{"ruleId", F.Check},
            {"level", level(F.Level)},
            {"message", {{"text", F.Message}}}};
  if (auto It = RuleIndex.find(F.Check); It != RuleIndex.end())
    R["ruleIndex"] = It->second;
  json Loc = {{"physicalLocation",
               physicalLocation(F.File, F.Where.PtxLine, F.Where.PtxColumn, O.Root)},
              {"logicalLocations",
               json::array({{{"name", F.Kernel}, {"kind", "function"}}})}};
  R["locations"] = json::array({std::move(Loc)});
  json Related = json::array();
  unsigned Id = 0;
  for (const analyzer::FindingNote &N : F.Notes) {
    if (!N.Where.PtxLine)
      continue;
    Related.push_back(
        {{"id", ++Id},
         {"physicalLocation", physicalLocation(F.File, N.Where.PtxLine, N.Where.PtxColumn, O.Root)},
         {"message", {{"text", N.Message}}}});
  }
  if (const analyzer::CudaFrame *K = outerFrame(F.Where))
    Related.push_back({{"id", ++Id},
                       {"physicalLocation", physicalLocation(K->File, K->Line, K->Column, O.Root)},
                       {"message", {{"text", "from this CUDA source line"}}}});
  if (!Related.empty())
    R["relatedLocations"] = std::move(Related);
  R["partialFingerprints"] = {{"wsvFinding/v1", fingerprint(F)}};
  R["properties"] = {{"kernel", F.Kernel}};
  return R;
}

} // namespace

json wsv::report::sarifPhysicalLocation(StringRef File, unsigned Line, unsigned Column,
                                        StringRef Root) {
  return physicalLocation(File, Line, Column, Root);
}

std::string wsv::report::sarifFingerprint(llvm::ArrayRef<std::string> Parts) {
  std::string Key;
  for (size_t I = 0; I < Parts.size(); ++I)
    Key += (I ? std::string(1, '\0') : std::string()) + Parts[I];
  return llvm::utohexstr(llvm::xxh3_64bits(Key), /*LowerCase=*/true, 16);
}

std::string wsv::report::camelName(StringRef Check) {
  std::string Out;
  bool Upper = true;
  for (char C : Check) {
    if (C == '-') {
      Upper = true;
      continue;
    }
    Out += Upper ? llvm::toUpper(C) : C;
    Upper = false;
  }
  return Out;
}

json wsv::report::lintToSarif(const std::vector<LintInput> &Inputs, const SarifOptions &O) {
  json Rules = json::array();
  llvm::StringMap<unsigned> RuleIndex;
  for (const analyzer::CheckInfo &C : analyzer::allChecks()) {
    RuleIndex[C.Name] = Rules.size();
    Rules.push_back(ruleOf(C));
  }
  json Results = json::array(), Notifications = json::array();
  bool AllRead = true;
  for (const LintInput &In : Inputs) {
    for (const Finding &F : In.Findings)
      Results.push_back(resultOf(F, O, RuleIndex));
    if (In.Status == InputStatus::Unreadable) {
      AllRead = false;
      Notifications.push_back(
          {{"level", "error"},
           {"message", {{"text", In.Error}}},
           {"locations", json::array({{{"physicalLocation",
                                        physicalLocation(In.Name, 0, 0, O.Root)}}})}});
    }
    for (const ptx::Diagnostic &D : In.ParseDiagnostics) {
      AllRead = false;
      Notifications.push_back(
          {{"level", D.Kind == llvm::SourceMgr::DK_Error ? "error" : "warning"},
           {"message", {{"text", D.Message}}},
           {"locations", json::array({{{"physicalLocation",
                                        physicalLocation(In.Name, D.Line, D.Column, O.Root)}}})}});
    }
  }
  llvm::SmallString<256> RootUri("file://");
  RootUri += percentEncode(O.Root);
  if (!RootUri.ends_with("/"))
    RootUri += "/";
  json Invocation = {{"executionSuccessful", AllRead}};
  if (!Notifications.empty())
    Invocation["toolExecutionNotifications"] = std::move(Notifications);
  json Run = {{"tool",
               {{"driver",
                 {{"name", "wsv"},
                  {"version", O.ToolVersion},
                  {"semanticVersion", O.ToolVersion},
                  {"rules", std::move(Rules)}}}}},
              {"originalUriBaseIds", {{RootId, {{"uri", std::string(RootUri)}}}}},
              {"invocations", json::array({std::move(Invocation)})},
              {"results", std::move(Results)}};
  return {{"$schema", SarifSchemaUri}, {"version", "2.1.0"}, {"runs", json::array({std::move(Run)})}};
}
