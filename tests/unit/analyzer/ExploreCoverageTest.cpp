// The launches that run what the small ones did not (ExploreCoverage.cpp), on H6: its
// stream-K pieces run only at K >= 4096 on two clusters or more, so a bug there is invisible
// to the small launches that exploreAllTrips explores where it makes no statement for every
// K. The bug is seeded in the model: each consumer release that the small launches never
// run (the end of a stream-K piece) is given a condition that never holds, so that stage is
// never released.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

struct Kernel {
  std::unique_ptr<ptx::ParseResult> Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
  ParametricOptions Options;
};

std::optional<Kernel> load(const std::string &File) {
  std::string Path = std::string(WSV_PTX_DIR) + "/" + File;
  if (!std::ifstream(Path))
    return std::nullopt;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed || !Parsed->ok()) {
    if (!Parsed)
      llvm::consumeError(Parsed.takeError());
    return std::nullopt;
  }
  Kernel K;
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

/// The consumer's arrivals that no launch of one cluster with K up to 576 runs.
std::vector<std::pair<unsigned, unsigned>> unreachedArrivals(const Kernel &K) {
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

TEST(ExploreCoverageTest, AStreamKPieceBugIsFoundByTheLaunchesThatRunIt) {
  std::optional<Kernel> K = load("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;

  // The kernel as it is: no statement for every K, no bug either, and the reason says that
  // larger launches ran.
  ParametricResult Clean = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(Clean.Verdict, ExploreVerdict::Unknown) << Clean.Reason;
  EXPECT_NE(Clean.Reason.find("larger one(s) that run steps those did not"), std::string::npos)
      << Clean.Reason;
  bool StreamK = false;
  for (const std::string &Run : Clean.Runs)
    StreamK |= Run.find("K = 4096") != std::string::npos &&
               Run.find("CTA 2 and its cluster") != std::string::npos;
  EXPECT_TRUE(StreamK) << "no launch ran the second cluster of a stream-K grid";

  // The seeded bug: the releases at the end of the stream-K pieces never happen.
  std::vector<std::pair<unsigned, unsigned>> Seeded = unreachedArrivals(*K);
  ASSERT_FALSE(Seeded.empty());
  for (auto [PI, SI] : Seeded)
    K->RP.Programs[PI].Steps[SI].When = K->P->Analysis->context().boolean(false);

  ParametricOptions NoCover = K->Options;
  NoCover.CoverSteps = false;
  ParametricResult Missed = exploreAllTrips(K->RP, NoCover);
  EXPECT_EQ(Missed.Verdict, ExploreVerdict::Unknown) << "the small launches run the pieces";

  ParametricResult Found = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(Found.Verdict, ExploreVerdict::Deadlock) << Found.Reason;
  EXPECT_GE(Found.Launch.Params.at("K"), 4096u);
  EXPECT_GT(Found.Launch.GridCtas, K->RP.ClusterSize);
  // A schedule of that launch: replayed from the start, it reaches the same deadlock.
  ConcreteSystem S = instantiate(K->RP, Found.Launch);
  ExploreResult Again = replay(S, Found.Found.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Deadlock);
  EXPECT_EQ(Again.Message, Found.Found.Message);
}

} // namespace
