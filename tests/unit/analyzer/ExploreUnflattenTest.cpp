// A loop over tiles x k-tiles made two loops (ExploreUnflatten.cpp): Triton's persistent
// Blackwell matmul runs one loop of NT * T iterations in each partition and finds the tile
// and the k-tile again as i / T and i % T. The programs rewritten as a loop over tiles around
// one over k-tiles must run exactly the kernel's steps on every launch within the bounds the
// statement names (what makes their proof the kernel's), with the divisions by T gone.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

struct Kernel {
  ptx::ParseResult Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
};

/// A corpus kernel as `wsv verify` lowers it: warp dispatch resolved, then its one entry;
/// with From, its first occurrence of that line replaced by To (a seeded bug).
std::unique_ptr<Kernel> load(const std::string &File, const std::string &Entry,
                             const std::string &From = "", const std::string &To = "") {
  auto B = llvm::MemoryBuffer::getFile(std::string(WSV_CORPUS_DIR) + "/" + File);
  if (!B)
    return nullptr;
  std::string Text = (*B)->getBuffer().str();
  if (!From.empty()) {
    size_t At = Text.find(From);
    if (At == std::string::npos)
      return nullptr;
    Text.replace(At, From.size(), To);
  }
  auto K = std::make_unique<Kernel>();
  K->Parsed = ptx::parseString(Text, File, [](const ptx::Diagnostic &) {});
  if (!K->Parsed.ok())
    return nullptr;
  KernelNotes Notes;
  applyWarpDispatch(K->Parsed, Notes);
  const ptx::Function *F = K->Parsed.M->function(Entry);
  if (!F)
    return nullptr;
  K->P = buildProtocol(*K->Parsed.M, *F);
  K->RP = lowerRolePrograms(*K->P);
  return K;
}

Instance launch(uint64_t M, uint64_t N, uint64_t K, uint64_t Grid, uint64_t FirstCta) {
  Instance I;
  I.Params = {{"param_15", M}, {"param_16", N}, {"param_17", K}};
  I.GridCtas = Grid;
  I.FirstCta = FirstCta;
  return I;
}

/// S's key without the loops each step is in: the rewritten programs number their loops
/// anew (a tile loop and a k-loop for one loop), and nothing an exploration does reads
/// which iteration of which loop a step is in but the periodic systems, which these are not.
std::string stepsKey(ConcreteSystem S) {
  for (ConcreteAgent &A : S.Agents)
    for (ConcreteStep &St : A.Steps)
      St.Iterations.clear();
  return systemKey(S);
}

/// Whether E divides or takes a remainder by a value that is not a constant.
bool dividesByValue(const Expr *E) {
  return E && E->mentions([](const Expr *N) {
    return (N->is(ExprKind::UDiv) || N->is(ExprKind::URem) || N->is(ExprKind::SDiv) ||
            N->is(ExprKind::SRem)) &&
           !N->op(1)->isConstant();
  });
}

/// Whether E multiplies an iteration number by a value that is not a constant.
bool multipliesIterations(const Expr *E) {
  llvm::SmallVector<const Expr *, 16> Work{E};
  llvm::SmallPtrSet<const Expr *, 16> Seen;
  while (!Work.empty()) {
    const Expr *N = Work.pop_back_val();
    if (!Seen.insert(N).second || N->isLeaf())
      continue;
    if (N->is(ExprKind::Mul) && !N->op(0)->isConstant() && !N->op(1)->isConstant() &&
        N->mentions([](const Expr *L) { return L->is(ExprKind::IterationVar); }))
      return true;
    Work.append(N->ops().begin(), N->ops().end());
  }
  return false;
}

/// Whether the rewritten programs run the kernel's steps, in the same order, on launches of
/// these k sizes and shapes; the count of launches compared.
unsigned compareSteps(const Kernel &K, const Unflattened &U, std::initializer_list<uint64_t> Ks,
                      const std::vector<std::array<uint64_t, 4>> &Shapes, const std::string &What) {
  unsigned Compared = 0;
  for (uint64_t KValue : Ks)
    for (const auto &[M, N, Grid, First] : Shapes) {
      Instance I = launch(M, N, KValue, Grid, First);
      ConcreteSystem Kernel = instantiate(K.RP, I), Rewritten = instantiate(U.Programs, I);
      EXPECT_EQ(Kernel.Unknown, "") << What << " K " << KValue;
      EXPECT_EQ(Rewritten.Unknown, "") << What << " K " << KValue;
      EXPECT_EQ(stepsKey(Kernel), stepsKey(Rewritten))
          << What << " K " << KValue << " grid " << I.GridCtas << " CTA " << I.FirstCta;
      ++Compared;
    }
  return Compared;
}

/// F for each step of a loop over tiles around one over k-tiles; the count of such loops.
unsigned forEachStepInTwoLoops(const Unflattened &U,
                               const std::function<void(const RoleProgram &, const RoleStep &)> &F) {
  unsigned Nested = 0;
  for (const RoleProgram &Pr : U.Programs.Programs)
    for (const RoleItem &It : Pr.Body) {
      if (!It.IsLoop || Pr.Loops[It.Index].Body.size() != 1 ||
          !Pr.Loops[It.Index].Body[0].IsLoop)
        continue;
      ++Nested;
      for (const RoleItem &In : Pr.Loops[Pr.Loops[It.Index].Body[0].Index].Body)
        if (!In.IsLoop)
          F(Pr, Pr.Steps[In.Index]);
    }
  return Nested;
}

TEST(ExploreUnflattenTest, TheTwoLoopsRunTheKernelsStepsOnEveryLaunch) {
  std::unique_ptr<Kernel> K = load("triton/matmul_persistent_ws.sm_100a.ptx", "matmul_persistent");
  ASSERT_TRUE(K);
  std::optional<Unflattened> U = unflatten(K->RP);
  ASSERT_TRUE(U);
  // The three partitions' loops (writeback, producer, MMA), each over tiles x k-tiles.
  ASSERT_EQ(U->Loops.size(), 3u);
  for (const UnflattenedLoop &L : U->Loops) {
    EXPECT_EQ(K->P->exprString(L.T), "(param_17 + 63) / 64");
    EXPECT_NE(K->P->exprString(L.NT).find("132"), std::string::npos);
  }
  // Launches of 1 to 4 k-tiles and 1 to 5 tiles per CTA (grids of 1, 2 and 132 CTAs, and
  // the last CTA of a grid larger than the tiles): the same steps, in the same order.
  EXPECT_EQ(compareSteps(*K, *U, {64u, 128u, 192u, 256u, 100u},
                         {{128, 256, 1, 0}, {512, 512, 2, 1}, {384, 768, 2, 0},
                          {1024, 1024, 132, 5}, {128, 256, 4, 3}},
                         "matmul_persistent_ws"),
            25u);
  // Every partition's steps in the tile loop read the tile and the k-tile, not i / T or
  // i % T: nothing in them divides by a value of the launch any more.
  unsigned Nested = forEachStepInTwoLoops(*U, [&](const RoleProgram &Pr, const RoleStep &St) {
    for (const Expr *E : {St.When, St.Parity, St.Barrier.Slot, St.TmemColumn})
      EXPECT_FALSE(dividesByValue(E)) << Pr.Name << ": " << K->P->exprString(E);
  });
  EXPECT_EQ(Nested, 3u);
}

TEST(ExploreUnflattenTest, HopperPrefetchGuardsAndPreviousKTilesAreExactOnEveryLaunch) {
  // Triton's Hopper persistent matmuls (one loop over tiles x k-tiles, a producer two
  // k-tiles ahead) test `i < NT * T - 2` before the next copy, `i == 0`, and the previous
  // k-tile as `(i + (T == 1 ? 0 : 1) - 1) % T`. Written for the two loops (`t + 2 < NT`,
  // or the last tiles' k-tiles against T and 2T; `t == 0 && k == 0`; `T == 1 ? 0 : k`),
  // they must give the kernel's steps on launches of 1 to 5 k-tiles, where the guard
  // reaches back into the tile before (T = 1), and of 1 to 6 tiles per CTA.
  for (auto [File, Entry] : {std::pair{"triton/matmul_persistent.sm_90a.ptx", "matmul_persistent"},
                             std::pair{"triton/matmul_subtile.sm_90a.ptx", "matmul_subtile"}}) {
    std::unique_ptr<Kernel> K = load(File, Entry);
    ASSERT_TRUE(K) << File;
    std::optional<Unflattened> U = unflatten(K->RP);
    ASSERT_TRUE(U) << File;
    EXPECT_EQ(compareSteps(*K, *U, {64u, 128u, 192u, 320u, 100u},
                           {{128, 128, 1, 0}, {256, 384, 2, 1}, {512, 512, 3, 0},
                            {1024, 768, 132, 7}, {128, 256, 4, 3}},
                           File),
              25u);
    // And they were rewritten: no step's condition in the two loops multiplies the tile by
    // a value of the launch (the guard's t * T + k against NT * T - 2 did).
    unsigned Conditions = 0;
    forEachStepInTwoLoops(*U, [&](const RoleProgram &Pr, const RoleStep &St) {
      if (!St.When || St.When->isConstant())
        return;
      ++Conditions;
      EXPECT_FALSE(multipliesIterations(St.When))
          << File << " " << Pr.Name << ": " << K->P->exprString(St.When);
    });
    EXPECT_GT(Conditions, 0u) << File;
  }
}

TEST(ExploreUnflattenTest, HopperPersistentMatmulIsProvedAndItsPhaseBugFound) {
  // The argument for every K and tile count over the two loops: the prefetch guard tells
  // the last two tiles apart (they come after the cycle of tiles), and the ring counted
  // across tiles starts at -1 (it repeats from the second iteration of all on).
  std::unique_ptr<Kernel> K = load("triton/matmul_persistent.sm_90a.ptx", "matmul_persistent");
  ASSERT_TRUE(K);
  K->RP.InitsVisible = true; // past the unfenced inits, as verify's later runs are
  ParametricResult R = exploreAllTrips(K->RP, ParametricOptions());
  EXPECT_EQ(R.Verdict, ExploreVerdict::Clean) << R.Reason;
  EXPECT_NE(R.ForParameters.find("count of tiles, as its loop computes it, is below 2^12"),
            std::string::npos)
      << R.ForParameters;
  // Its ring's phase never flipped: found by the same argument, and replayed on the
  // kernel's own programs.
  std::unique_ptr<Kernel> Seeded =
      load("triton/matmul_persistent.sm_90a.ptx", "matmul_persistent",
           "\txor.b32 \t%r201, %r201, %r97;", "\txor.b32 \t%r201, %r201, 0;");
  ASSERT_TRUE(Seeded);
  RolePrograms &RP = Seeded->RP;
  RP.InitsVisible = true;
  ParametricResult Bug = exploreAllTrips(RP, ParametricOptions());
  EXPECT_EQ(Bug.Verdict, ExploreVerdict::Deadlock) << Bug.Reason;
  ExploreResult Again = replay(instantiate(RP, Bug.Launch), Bug.Found.Schedule);
  EXPECT_EQ(Again.Verdict, Bug.Verdict) << Again.Message;
}

TEST(ExploreUnflattenTest, KernelsWithALoopOverTilesAroundOneOverKTilesNeedNone) {
  // nested persistent loops (Triton's matmul_persistent_nested) and a plain k-loop.
  std::unique_ptr<Kernel> Nested =
      load("triton/matmul_persistent_nested.sm_90a.ptx", "matmul_persistent");
  ASSERT_TRUE(Nested);
  std::optional<Unflattened> N = unflatten(Nested->RP);
  EXPECT_FALSE(N);
  if (N)
    for (const UnflattenedLoop &L : N->Loops)
      ADD_FAILURE() << Nested->P->Loops[L.ProtocolLoop].Where.PtxLine << " T "
                    << Nested->P->exprString(L.T) << " NT " << Nested->P->exprString(L.NT);
  std::unique_ptr<Kernel> Plain = load("triton/matmul_tma_ws.sm_100a.ptx", "matmul_tma");
  ASSERT_TRUE(Plain);
  EXPECT_FALSE(unflatten(Plain->RP));
}

TEST(ExploreUnflattenTest, ABugOfTheTwoLoopsIsOneOfTheKernel) {
  // The MMA partition's phase never flipped: the argument over the rewritten programs finds
  // the MMA reading a stage no copy filled, on a launch it picks, and the schedule replays
  // on the kernel's own programs.
  std::unique_ptr<Kernel> Seeded =
      load("triton/matmul_persistent_ws.sm_100a.ptx", "matmul_persistent",
           "\txor.b32 \t%r860, %r860, %r74;", "\txor.b32 \t%r860, %r860, 0;");
  ASSERT_TRUE(Seeded);
  RolePrograms &RP = Seeded->RP;
  RP.InitsVisible = true; // past the unfenced inits, as verify's later runs are
  ParametricOptions O;
  O.StopAtDeadlock = false; // the race, not the hang that follows it
  ParametricResult R = exploreAllTrips(RP, O);
  EXPECT_EQ(R.Verdict, ExploreVerdict::Race) << R.Reason;
  EXPECT_NE(R.Found.Message.find("is read before anything filled it"), std::string::npos)
      << R.Found.Message;
  bool Marked = false;
  for (const std::string &Run : R.Runs)
    Marked |= Run.rfind("[tiles and k-tiles as two loops] ", 0) == 0;
  EXPECT_TRUE(Marked);
  ExploreResult Again = replay(instantiate(RP, R.Launch), R.Found.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Race) << Again.Message;
}

} // namespace
