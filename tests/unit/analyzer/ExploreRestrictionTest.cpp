// The argument where a part of the schedule is off (ExploreRestriction.cpp): H6's count of
// stream-K tiles is a value of the launch alone; replaced by 0, the loops of the pieces are
// never entered and every role has one loop over tiles. The rewritten programs must run
// exactly the kernel's steps on every launch where the count is 0 (what makes their proof
// one of the kernel), and differ where it is not; the argument then proves them for every
// K and tile count.
#include "AnalyzerTestSupport.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// The term's value on a launch (nothing where it reads what the launch does not give).
std::optional<uint64_t> termAt(const Protocol &P, const Expr *Term, const Instance &I) {
  return ExprContext::evaluate(Term, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L->is(ExprKind::SpecialReg) && L->specialRegister() == SpecialRegister::NctaidX)
      return I.GridCtas;
    for (size_t K = 0; K < P.ParamSymbols.size() && K < P.ParamNames.size(); ++K)
      if (P.ParamSymbols[K] == L->name() && I.Params.count(P.ParamNames[K]))
        return I.Params.at(P.ParamNames[K]);
    return std::nullopt;
  });
}

Instance launch(uint64_t M, uint64_t N, uint64_t K, uint64_t Grid, uint64_t FirstCta) {
  Instance I;
  I.Params = {{"M", M}, {"N", N}, {"K", K}};
  I.GridCtas = Grid;
  I.FirstCta = FirstCta;
  return I;
}

TEST(ExploreRestrictionTest, H6WithoutStreamKRunsTheKernelsStepsWhereTheCountIsZero) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  std::optional<Restriction> Re = findRestriction(K->RP);
  ASSERT_TRUE(Re);
  EXPECT_NE(K->P->exprString(Re->Term).find("%nctaid.x < 133"), std::string::npos)
      << K->P->exprString(Re->Term);
  EXPECT_FALSE(Re->DeadLines.empty());
  EXPECT_TRUE(std::is_sorted(Re->DeadLines.begin(), Re->DeadLines.end()));
  // Launches without stream-K (4096^3 on 132 CTAs: the saving is under 32 k-tiles; one
  // cluster; a grid larger than the tiles): the same steps, cluster by cluster.
  for (const Instance &I : {launch(4096, 4096, 4096, 132, 0), launch(4096, 4096, 4096, 132, 130),
                            launch(256, 512, 192, 2, 0), launch(256, 256, 64, 8, 6)}) {
    std::optional<uint64_t> V = termAt(*K->P, Re->Term, I);
    ASSERT_TRUE(V);
    EXPECT_EQ(*V, 0u) << "M " << I.Params.at("M") << " grid " << I.GridCtas;
    ConcreteSystem Kernel = instantiate(K->RP, I), Rewritten = instantiate(Re->Programs, I);
    ASSERT_EQ(Kernel.Unknown, "");
    ASSERT_EQ(Rewritten.Unknown, "");
    EXPECT_EQ(systemKey(Kernel), systemKey(Rewritten))
        << "M " << I.Params.at("M") << " grid " << I.GridCtas << " CTA " << I.FirstCta;
  }
  // With stream-K (6 tiles on 4 clusters, 8192^3 on 132 CTAs): the count is not 0 and the
  // kernel runs pieces the rewritten programs do not.
  for (const Instance &I : {launch(768, 512, 4096, 8, 0), launch(8192, 8192, 8192, 132, 64)}) {
    std::optional<uint64_t> V = termAt(*K->P, Re->Term, I);
    ASSERT_TRUE(V);
    EXPECT_NE(*V, 0u);
    ConcreteSystem Kernel = instantiate(K->RP, I), Rewritten = instantiate(Re->Programs, I);
    ASSERT_EQ(Kernel.Unknown, "");
    EXPECT_NE(systemKey(Kernel), systemKey(Rewritten)) << "grid " << I.GridCtas;
  }
}

TEST(ExploreRestrictionTest, H6IsProvedForEveryLaunchWithoutStreamK) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  ParametricResult R = exploreAllTrips(K->RP, K->Options);
  // Not for every launch: the stream-K pieces stay outside the argument.
  EXPECT_EQ(R.Verdict, ExploreVerdict::Unknown);
  EXPECT_NE(R.Restricted.find("%nctaid.x < 133"), std::string::npos) << R.Reason;
  EXPECT_NE(R.Restricted.find(" : 0) == 0"), std::string::npos) << R.Restricted;
  EXPECT_EQ(R.RestrictedFor.rfind("every K = 64*j with j >= 1", 0), 0u) << R.RestrictedFor;
  EXPECT_NE(R.RestrictedFor.find("every grid and tile count"), std::string::npos)
      << R.RestrictedFor;
  EXPECT_NE(R.Reason.find(": proved for every K"), std::string::npos) << R.Reason;
  bool Marked = false;
  for (const std::string &Run : R.Runs)
    Marked |= Run.rfind("[where the term is 0] ", 0) == 0;
  EXPECT_TRUE(Marked);
}

TEST(ExploreRestrictionTest, KernelsOfTheArgumentsShapeNeedNone) {
  for (const char *File : {"h5.ptx", "b5.ptx", "h2.ptx"}) {
    std::optional<test::ReferenceKernel> K = test::loadReferenceKernel(File);
    if (!K)
      GTEST_SKIP() << "no " << File << " in " << WSV_PTX_DIR;
    EXPECT_FALSE(findRestriction(K->RP)) << File;
  }
}

} // namespace

namespace {

/// Steps of kind Kind anywhere in Items (loops included) of program Pr.
void stepsIn(const RoleProgram &Pr, const std::vector<RoleItem> &Items, StepKind Kind,
             std::vector<unsigned> &Out) {
  for (const RoleItem &It : Items) {
    if (It.IsLoop)
      stepsIn(Pr, Pr.Loops[It.Index].Body, Kind, Out);
    else if (Pr.Steps[It.Index].Kind == Kind)
      Out.push_back(It.Index);
  }
}

TEST(ExploreRestrictionTest, ABugOfTheWholeTilesIsFoundWhereTheSmallLaunchesMissIt) {
  std::optional<test::ReferenceKernel> K = test::loadReferenceKernel("h6.ptx");
  if (!K)
    GTEST_SKIP() << "no h6.ptx in " << WSV_PTX_DIR;
  // Seeded in the model: the consumers release no stage in every eighth whole tile from the
  // third (tile % 8 == 2). It repeats with the rings' period, so the argument's lemmas hold;
  // the small launches (one or two tiles per CTA) never run such a tile, and it adds no step
  // that the launches covering new steps would look for.
  ExprContext &Ctx = K->P->Analysis->context();
  unsigned Seeded = 0;
  for (RoleProgram &Pr : K->RP.Programs) {
    if (Pr.Name.find("consumer") == std::string::npos)
      continue;
    for (const RoleItem &It : Pr.Body) {
      if (!It.IsLoop)
        continue;
      const RoleLoop &L = Pr.Loops[It.Index];
      bool Tiles = L.Trip && L.Trip->mentions([](const Expr *E) {
        return E->is(ExprKind::SpecialReg) && E->specialRegister() == SpecialRegister::CtaidX;
      });
      if (!Tiles)
        continue;
      const Expr *T = Ctx.iterationVar(L.Loop);
      const Expr *Third = Ctx.ne(Ctx.urem(T, Ctx.constant(8, T->width())),
                                 Ctx.constant(2, T->width()));
      std::vector<unsigned> Arrives;
      stepsIn(Pr, L.Body, StepKind::Arrive, Arrives);
      for (unsigned S : Arrives) {
        RoleStep &St = Pr.Steps[S];
        St.When = St.When ? Ctx.logicalAnd(St.When, Third) : Third;
        ++Seeded;
      }
      break; // the first loop over tiles: the whole tiles
    }
  }
  ASSERT_GT(Seeded, 0u);
  ParametricResult R = exploreAllTrips(K->RP, K->Options);
  ASSERT_EQ(R.Verdict, ExploreVerdict::Deadlock) << R.Reason;
  EXPECT_EQ(R.Reason.rfind("where %nctaid.x < 133", 0), 0u) << R.Reason;
  // At least three tiles per cluster, more than any small launch has.
  uint64_t Tiles = (R.Launch.Params.at("M") / 256) * (R.Launch.Params.at("N") / 256);
  EXPECT_GE(Tiles, 3 * std::max<uint64_t>(1, R.Launch.GridCtas / 2)) << R.Reason;
  // A launch of the kernel's: the schedule replays on its own programs.
  ExploreResult Again = replay(instantiate(K->RP, R.Launch), R.Found.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Deadlock);
  EXPECT_EQ(Again.Message, R.Found.Message);
}

} // namespace
