#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/LaunchSpec.h"

#include "gtest/gtest.h"

#include <fstream>
#include <set>

namespace wsv {
namespace analyzer {
namespace test {

std::unique_ptr<Explored> exploreEntry(const std::string &Text) {
  auto E = std::make_unique<Explored>();
  E->Parsed = ptx::parseString(Text, "test.ptx", [](const ptx::Diagnostic &D) {
    ADD_FAILURE() << D.Message;
  });
  EXPECT_TRUE(E->Parsed.ok());
  const ptx::Function *F = E->Parsed.M ? E->Parsed.M->function("k") : nullptr;
  EXPECT_TRUE(F) << "no entry k";
  if (!F)
    return E;
  E->P = buildProtocol(*E->Parsed.M, *F);
  E->RP = lowerRolePrograms(*E->P);
  E->S = instantiate(E->RP, Instance{});
  E->R = explore(E->S);
  return E;
}

const char ModuleHeader[] = ".version 8.7\n.target sm_100a\n.address_size 64\n";

Analyzed::Analyzed(llvm::StringRef Text, llvm::StringRef Function,
                   const AnalysisOptions &Options)
    : Source((llvm::Twine(ModuleHeader) + Text).str()) {
  std::string Diagnostics;
  Result = ptx::parseString(Source, "test.ptx", [&](const ptx::Diagnostic &D) {
    Diagnostics += std::to_string(D.Line) + ": " + D.Message + "\n";
  });
  EXPECT_TRUE(Result.ok()) << Diagnostics;
  const ptx::Function *F = nullptr;
  for (const ptx::Function *Candidate : Result.M->functions())
    if (Candidate->isDefinition() && (Function.empty() || Candidate->name() == Function)) {
      F = Candidate;
      break;
    }
  if (!F) {
    ADD_FAILURE() << "no function definition '" << Function.str() << "'";
    return;
  }
  FA = std::make_unique<FunctionAnalysis>(*Result.M, *F, Options);
}

InstId Analyzed::inst(llvm::StringRef Needle, unsigned Occurrence) {
  for (InstId I = 0; I < cfg().instructions().size(); ++I) {
    ptx::SourceLocation Loc = cfg().location(I);
    llvm::StringRef Line = module().source();
    // The text of the instruction's line.
    size_t Start = 0;
    for (unsigned L = 1; L < Loc.Line; ++L)
      Start = Line.find('\n', Start) + 1;
    llvm::StringRef Text = Line.substr(Start).take_until([](char C) { return C == '\n'; });
    if (Text.contains(Needle) && Occurrence-- == 0)
      return I;
  }
  ADD_FAILURE() << "no instruction on a line with '" << Needle.str() << "'";
  return 0;
}

const Expr *Analyzed::before(llvm::StringRef Needle, llvm::StringRef Name) {
  InstId I = inst(Needle);
  std::optional<RegId> R = values().registerAt(I, Name);
  if (!R) {
    ADD_FAILURE() << "no register " << Name.str();
    return nullptr;
  }
  return values().closedForm(values().valueBefore(I, *R));
}

const Expr *Analyzed::param(llvm::StringRef Name, unsigned Width) {
  return ctx().param(Name, 0, Width);
}

ThreadSet Analyzed::threads(llvm::StringRef Needle) {
  std::optional<LaunchShape> Launch = LaunchShape::fromFunction(cfg().function());
  if (!Launch) {
    ADD_FAILURE() << "the function has no .maxntid or .reqntid";
    return ThreadSet::unknown("no launch");
  }
  return guards().threadsAt(inst(Needle), *Launch);
}

std::string str(const Expr *E) { return E ? E->str() : std::string("null"); }

std::optional<ReferenceKernel> loadReferenceKernel(const std::string &File) {
  std::string Path = std::string(WSV_PTX_DIR) + "/" + File;
  if (!std::ifstream(Path))
    return std::nullopt;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed || !Parsed->ok()) {
    if (!Parsed)
      llvm::consumeError(Parsed.takeError());
    return std::nullopt;
  }
  ReferenceKernel K;
  K.Parsed = std::make_unique<ptx::ParseResult>(std::move(*Parsed));
  const ptx::Function *Entry = nullptr;
  for (const ptx::Function *F : K.Parsed->M->functions())
    if (F->isDefinition() && F->isEntry() && !Entry)
      Entry = F;
  if (!Entry)
    return std::nullopt;
  K.P = buildProtocol(*K.Parsed->M, *Entry);
  K.RP = lowerRolePrograms(*K.P);
  if (std::optional<LaunchSpec> Spec = readKernelInfo(*K.Parsed->M, *Entry)) {
    if (Spec->TileK)
      K.Options.TileK = *Spec->TileK;
    if (Spec->MinKTiles)
      K.Options.MinTiles = *Spec->MinKTiles;
  }
  K.Options.MaxStates = 150000;
  return K;
}

std::vector<std::pair<unsigned, unsigned>> streamKArrivals(const ReferenceKernel &K) {
  std::set<std::pair<unsigned, unsigned>> Ran;
  for (uint64_t J = 1; J <= 9; ++J) {
    Instance I;
    I.Params = K.Options.Params;
    I.Params["K"] = J * K.Options.TileK;
    I.GridCtas = K.RP.ClusterSize;
    ConcreteSystem S = instantiate(K.RP, I);
    EXPECT_EQ(S.Unknown, "");
    for (const ConcreteAgent &A : S.Agents)
      for (const ConcreteStep &C : A.Steps)
        Ran.insert({A.Program, C.RoleStep});
  }
  std::vector<std::pair<unsigned, unsigned>> Out;
  for (unsigned PI = 0; PI < K.RP.Programs.size(); ++PI) {
    const RoleProgram &Pr = K.RP.Programs[PI];
    if (Pr.Name.find("consumer") == std::string::npos)
      continue;
    for (unsigned SI = 0; SI < Pr.Steps.size(); ++SI)
      if (Pr.Steps[SI].Kind == StepKind::Arrive && !Ran.count({PI, SI}))
        Out.push_back({PI, SI});
  }
  return Out;
}

} // namespace test

void PrintTo(const Expr *E, std::ostream *OS) { *OS << test::str(E); }
std::ostream &operator<<(std::ostream &OS, const Expr &E) { return OS << E.str(); }
} // namespace analyzer
} // namespace wsv
