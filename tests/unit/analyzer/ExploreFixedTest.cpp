// Values the user fixed (ParametricOptions::Fixed, ExploreFixed.cpp): a counterexample counts
// only on a launch with them. On H5 with a bug seeded in the model that only K = 64 has (the
// consumers' waits on the full barriers take the other parity, so they pass before the fill
// and read the stage under the copy): the argument finds it on the smallest launch, which is
// the verdict where nothing is fixed or K = 64 is, and a note where K = 128 is, which the
// argument for that K alone then proves for every grid and tile count.
#include "AnalyzerTestSupport.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// The leaf of parameter Name in an expression of the programs (nullptr: none).
const Expr *paramLeaf(const test::ReferenceKernel &K, const std::string &Name) {
  std::string Symbol = Name;
  for (size_t I = 0; I < K.P->ParamNames.size() && I < K.P->ParamSymbols.size(); ++I)
    if (K.P->ParamNames[I] == Name)
      Symbol = K.P->ParamSymbols[I];
  const Expr *Found = nullptr;
  for (const RoleProgram &Pr : K.RP.Programs)
    for (const RoleLoop &L : Pr.Loops)
      if (L.Trip)
        L.Trip->mentions([&](const Expr *X) {
          if (X->is(ExprKind::Param) && X->name() == Symbol)
            Found = X;
          return false;
        });
  return Found;
}

/// H5 with the seeded bug; nothing when h5.ptx is not built.
std::optional<test::ReferenceKernel> seededH5() {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h5.ptx");
  if (!K)
    return std::nullopt;
  ExprContext &Ctx = K->P->Analysis->context();
  const Expr *KLeaf = paramLeaf(*K, "K");
  EXPECT_NE(KLeaf, nullptr);
  if (!KLeaf)
    return std::nullopt;
  const Expr *Small = Ctx.eq(KLeaf, Ctx.constant(64, KLeaf->width()));
  unsigned Seeded = 0;
  for (RoleProgram &Pr : K->RP.Programs) {
    if (Pr.Name.find("consumer") == std::string::npos)
      continue;
    for (RoleStep &St : Pr.Steps)
      if (St.Kind == StepKind::Wait && St.Parity) {
        const Expr *Flipped =
            Ctx.bitXor(St.Parity, Ctx.constant(1, St.Parity->width()));
        St.Parity = Ctx.select(Small, Flipped, St.Parity);
        ++Seeded;
      }
  }
  EXPECT_GT(Seeded, 0u);
  return K;
}

TEST(ExploreFixedTest, ACounterexampleOnAnotherValueIsANoteNotTheVerdict) {
  std::optional<test::ReferenceKernel> K = seededH5();
  if (!K)
    GTEST_SKIP() << "no h5.ptx in " << WSV_PTX_DIR;

  // Nothing fixed: the smallest launch's bug is the verdict.
  ParametricResult Free = exploreAllTrips(K->RP, K->Options);
  ASSERT_NE(Free.Verdict, ExploreVerdict::Clean) << Free.Reason;
  ASSERT_NE(Free.Verdict, ExploreVerdict::Unknown) << Free.Reason;
  EXPECT_EQ(Free.Launch.Params.at("K"), 64u);

  // K = 64 fixed: the same bug, on a launch with the value.
  ParametricOptions At64 = K->Options;
  At64.Fixed = {{"K", 64}};
  At64.Params["K"] = 64;
  ParametricResult Bug = exploreAllTrips(K->RP, At64);
  EXPECT_EQ(Bug.Verdict, Free.Verdict) << Bug.Reason;
  EXPECT_EQ(Bug.Launch.Params.at("K"), 64u);

  // K = 128 fixed: the bug of K = 64 is named, and the argument for K = 128 alone (every
  // grid and tile count) proves it.
  ParametricOptions At128 = K->Options;
  At128.Fixed = {{"K", 128}};
  At128.Params["K"] = 128;
  ParametricResult Proof = exploreAllTrips(K->RP, At128);
  ASSERT_EQ(Proof.Verdict, ExploreVerdict::Clean) << Proof.Reason;
  EXPECT_FALSE(Proof.WholeLaunch);
  ASSERT_TRUE(Proof.OnlyK.has_value());
  EXPECT_EQ(*Proof.OnlyK, 128u);
  EXPECT_EQ(Proof.ForParameters.find("K = 128, and every grid and tile count"), 0u)
      << Proof.ForParameters;
  EXPECT_EQ(Proof.Elsewhere.find(std::string("a ") + toString(Free.Verdict) + " on K = 64"), 0u)
      << Proof.Elsewhere;
  EXPECT_NE(Proof.Elsewhere.find("a launch without the values fixed (K = 128)"),
            std::string::npos)
      << Proof.Elsewhere;
  // Every exploration after the first bug's is one of K = 128.
  bool After = false;
  for (const std::string &Run : Proof.Runs) {
    if (After) {
      EXPECT_EQ(Run.rfind("K = 128", 0), 0u) << Run;
    }
    After |= Run.find("race") != std::string::npos || Run.find("deadlock") != std::string::npos;
  }
  EXPECT_TRUE(After);
}

TEST(ExploreFixedTest, AValueTheProtocolDoesNotReadDoesNotSetLaunchesApart) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h2.bug-mbarrier-initial-phase.ptx");
  if (!K)
    GTEST_SKIP() << "no h2.bug-mbarrier-initial-phase.ptx in " << WSV_PTX_DIR;
  // H2 reads K, not M: M fixed at a value no small launch has, the bug of K = 64 stands.
  ParametricOptions O = K->Options;
  O.Fixed = {{"M", 4096}};
  O.Params["M"] = 4096;
  ParametricResult R = exploreAllTrips(K->RP, O);
  EXPECT_EQ(R.Verdict, ExploreVerdict::Deadlock) << R.Reason;
  EXPECT_EQ(R.Launch.Params.at("K"), 64u);
}

} // namespace
