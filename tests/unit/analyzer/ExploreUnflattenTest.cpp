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

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

struct Kernel {
  ptx::ParseResult Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
};

/// A corpus kernel as `wsv verify` lowers it: warp dispatch resolved, then its one entry.
std::unique_ptr<Kernel> load(const std::string &File, const std::string &Entry) {
  auto B = llvm::MemoryBuffer::getFile(std::string(WSV_CORPUS_DIR) + "/" + File);
  if (!B)
    return nullptr;
  auto K = std::make_unique<Kernel>();
  K->Parsed = ptx::parseString((*B)->getBuffer(), File, [](const ptx::Diagnostic &) {});
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
  unsigned Compared = 0;
  for (uint64_t KValue : {64u, 128u, 192u, 256u, 100u})
    for (const Instance &I :
         {launch(128, 256, KValue, 1, 0), launch(512, 512, KValue, 2, 1),
          launch(384, 768, KValue, 2, 0), launch(1024, 1024, KValue, 132, 5),
          launch(128, 256, KValue, 4, 3)}) {
      ConcreteSystem Kernel = instantiate(K->RP, I), Rewritten = instantiate(U->Programs, I);
      ASSERT_EQ(Kernel.Unknown, "") << "K " << KValue;
      ASSERT_EQ(Rewritten.Unknown, "") << "K " << KValue;
      EXPECT_EQ(stepsKey(Kernel), stepsKey(Rewritten))
          << "K " << KValue << " grid " << I.GridCtas << " CTA " << I.FirstCta;
      ++Compared;
    }
  EXPECT_EQ(Compared, 25u);
  // Every partition's steps in the tile loop read the tile and the k-tile, not i / T or
  // i % T: nothing in them divides by a value of the launch any more.
  unsigned Nested = 0;
  for (const RoleProgram &Pr : U->Programs.Programs)
    for (const RoleItem &It : Pr.Body) {
      if (!It.IsLoop || Pr.Loops[It.Index].Body.size() != 1 ||
          !Pr.Loops[It.Index].Body[0].IsLoop)
        continue;
      ++Nested;
      for (const RoleItem &In : Pr.Loops[Pr.Loops[It.Index].Body[0].Index].Body) {
        const RoleStep &St = Pr.Steps[In.Index];
        for (const Expr *E : {St.When, St.Parity, St.Barrier.Slot, St.TmemColumn})
          EXPECT_FALSE(dividesByValue(E)) << Pr.Name << ": " << K->P->exprString(E);
      }
    }
  EXPECT_EQ(Nested, 3u);
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
  auto B = llvm::MemoryBuffer::getFile(std::string(WSV_CORPUS_DIR) +
                                       "/triton/matmul_persistent_ws.sm_100a.ptx");
  ASSERT_TRUE(B);
  std::string Text = (*B)->getBuffer().str();
  const std::string From = "\txor.b32 \t%r860, %r860, %r74;";
  size_t At = Text.find(From);
  ASSERT_NE(At, std::string::npos);
  Text.replace(At, From.size(), "\txor.b32 \t%r860, %r860, 0;");
  ptx::ParseResult Parsed = ptx::parseString(Text, "phase.ptx", [](const ptx::Diagnostic &) {});
  ASSERT_TRUE(Parsed.ok());
  KernelNotes Notes;
  applyWarpDispatch(Parsed, Notes);
  std::unique_ptr<Protocol> P = buildProtocol(*Parsed.M, *Parsed.M->function("matmul_persistent"));
  RolePrograms RP = lowerRolePrograms(*P);
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
