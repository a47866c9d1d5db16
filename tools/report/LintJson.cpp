//===- LintJson.cpp - lint results as wsv-lint/1 JSON, and baselines ----------------===//
#include "LintJson.h"

#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/Path.h"

using namespace wsv;
using namespace wsv::report;
using analyzer::Finding;
using nlohmann::json;

namespace {

json frameToJson(const analyzer::CudaFrame &F) {
  json J = {{"file", F.File}, {"line", F.Line}, {"column", F.Column}};
  if (!F.Function.empty())
    J["function"] = F.Function;
  return J;
}

/// A location: PTX line and column (null when the finding is about no line) and the .loc
/// chain, innermost first.
void putLocation(json &J, const analyzer::SourceRef &Where) {
  J["line"] = Where.PtxLine ? json(Where.PtxLine) : json(nullptr);
  J["column"] = Where.PtxLine ? json(Where.PtxColumn ? Where.PtxColumn : 1) : json(nullptr);
  json Chain = json::array();
  for (const analyzer::CudaFrame &F : Where.Cuda)
    Chain.push_back(frameToJson(F));
  J["cuda"] = std::move(Chain);
}

json findingToJson(const Finding &F) {
  json J = {{"check", F.Check},
            {"severity", analyzer::toString(F.Level)},
            {"message", F.Message},
            {"kernel", F.Kernel},
            {"file", F.File}};
  putLocation(J, F.Where);
  json Notes = json::array();
  for (const analyzer::FindingNote &N : F.Notes) {
    json JN = {{"message", N.Message}};
    putLocation(JN, N.Where);
    Notes.push_back(std::move(JN));
  }
  J["notes"] = std::move(Notes);
  return J;
}

} // namespace

json wsv::report::lintToJson(const std::vector<LintInput> &Inputs, const LintTotals &Totals,
                             llvm::StringRef ToolVersion) {
  json JInputs = json::array(), JFindings = json::array();
  for (const LintInput &In : Inputs) {
    json J = {{"file", In.Name}, {"status", toString(In.Status)}, {"kernels", In.Kernels}};
    json Errors = json::array();
    if (In.Status == InputStatus::Unreadable)
      Errors.push_back({{"message", In.Error}, {"line", nullptr}, {"column", nullptr}});
    for (const ptx::Diagnostic &D : In.ParseDiagnostics)
      Errors.push_back({{"message", D.Message},
                        {"line", D.Line ? json(D.Line) : json(nullptr)},
                        {"column", D.Line ? json(D.Column) : json(nullptr)}});
    J["errors"] = std::move(Errors);
    JInputs.push_back(std::move(J));
    for (const Finding &F : In.Findings)
      JFindings.push_back(findingToJson(F));
  }
  return json{{"schema", LintJsonSchema},
              {"tool", {{"name", "wsv"}, {"version", ToolVersion.str()}}},
              {"inputs", std::move(JInputs)},
              {"findings", std::move(JFindings)},
              {"summary",
               {{"errors", Totals.Errors},
                {"warnings", Totals.Warnings},
                {"remarks", Totals.Remarks},
                {"files", Totals.Files},
                {"bad_inputs", Totals.BadInputs},
                {"baseline_suppressed", Totals.Suppressed}}}};
}

Baseline::Key Baseline::keyOf(llvm::StringRef Check, llvm::StringRef Kernel,
                              llvm::StringRef File, llvm::StringRef Message) {
  // The file's name only: a CI job and a developer name the same file through different
  // directories.
  return {Check.str(), Kernel.str(), llvm::sys::path::filename(File).str(), Message.str()};
}

llvm::Expected<Baseline> Baseline::load(llvm::StringRef Path) {
  auto Buffer = ptx::readSourceFile(Path);
  if (!Buffer)
    return Buffer.takeError();
  json Doc = json::parse((*Buffer)->getBuffer().begin(), (*Buffer)->getBuffer().end(),
                         /*cb=*/nullptr, /*allow_exceptions=*/false);
  auto Bad = [&](const std::string &Why) {
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   "baseline '" + Path.str() + "': " + Why);
  };
  if (Doc.is_discarded())
    return Bad("not JSON");
  if (!Doc.is_object() || !Doc.contains("schema") || Doc["schema"] != LintJsonSchema)
    return Bad(std::string("not a 'wsv lint --format json' output (schema ") + LintJsonSchema +
               ")");
  if (!Doc.contains("findings") || !Doc["findings"].is_array())
    return Bad("no 'findings' array");
  Baseline B;
  for (const json &F : Doc["findings"]) {
    auto Str = [&](const char *Field) -> std::optional<std::string> {
      if (!F.is_object() || !F.contains(Field) || !F[Field].is_string())
        return std::nullopt;
      return F[Field].get<std::string>();
    };
    auto Check = Str("check"), Kernel = Str("kernel"), File = Str("file"),
         Message = Str("message");
    if (!Check || !Kernel || !File || !Message)
      return Bad("a finding without check, kernel, file and message strings");
    ++B.Known[keyOf(*Check, *Kernel, *File, *Message)];
  }
  return B;
}

unsigned Baseline::apply(std::vector<LintInput> &Inputs) {
  unsigned Removed = 0;
  for (LintInput &In : Inputs) {
    std::vector<Finding> Kept;
    for (Finding &F : In.Findings) {
      auto It = Known.find(keyOf(F.Check, F.Kernel, F.File, F.Message));
      if (It != Known.end() && It->second > 0) {
        --It->second;
        ++Removed;
        continue;
      }
      Kept.push_back(std::move(F));
    }
    In.Findings = std::move(Kept);
  }
  return Removed;
}
