// A try_wait tried once before a blocking wait on the same phase (a checked build's fast
// path): the wait runs always, so instances can evaluate it; any other use of the probe's
// result keeps the wait's condition opaque. A peek carried to the next k-tile's wait
// (CUTLASS, CuTeDSL) is run as it is: the probe sets a flag the wait reads.
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

/// Thread 0 waits on bars[0] (phase 0) after a probe, then arrives on bars[1]. Fast is what
/// runs when the probe succeeded, Slow before the wait when it failed.
std::string kernel(const char *Fast, const char *Slow, const char *WaitOn = "%r1") {
  return std::string(R"(
.visible .entry k()
.maxntid 128
{
  .reg .pred %p<6>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .shared .align 8 .b8 bars[16];
  .shared .align 8 .b8 notes[64];
  mov.u32 %r1, bars;
  add.s32 %r2, %r1, 8;
  mov.u32 %r3, %tid.x;
  mov.u32 %r5, 0;
  setp.ne.s32 %p5, %r3, 0;
  @%p5 bra END;
  {
  .reg .pred P1;
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r5;   // probe
  selp.b32 %r6, 1, 0, P1;
  }
  setp.ne.s32 %p1, %r6, 0;
  @%p1 bra FAST;
)") + Slow + R"(
  mov.u64 %rd1, %globaltimer;
WAIT:
  {
  .reg .pred P1;
  mbarrier.try_wait.parity.shared::cta.b64 P1, [)" +
         WaitOn + R"(], %r5;   // wait
  selp.b32 %r7, 1, 0, P1;
  }
  setp.ne.s32 %p2, %r7, 0;
  @%p2 bra JOIN;
  mov.u64 %rd2, %globaltimer;
  sub.s64 %rd3, %rd2, %rd1;
  setp.le.u64 %p3, %rd3, 2000000000;
  @%p3 bra WAIT;
  trap;
JOIN:
  mov.u32 %r8, notes;
  st.shared.u32 [%r8], 0;                                      // leave note
  bra.uni AFTER;
FAST:
)" + Fast + R"(
AFTER:
  mbarrier.arrive.shared::cta.b64 _, [%r2];                    // after
END:
  ret;
}
)";
}

struct Built {
  std::unique_ptr<Protocol> P;
  const Event *Probe = nullptr, *Wait = nullptr;
};

Built build(Analyzed &A) {
  Built B;
  B.P = buildProtocol(A.module(), *A.module().function("k"));
  for (const Event &E : B.P->Events) {
    if (E.Kind == EventKind::Probe)
      B.Probe = &E;
    if (E.Kind == EventKind::Wait)
      B.Wait = &E;
  }
  return B;
}

const char *const Note = R"(
  mov.u32 %r9, notes;
  st.shared.u32 [%r9+4], 1;                                    // note
  membar.cta;
)";

TEST(ProbedWaitTest, ACheckedWaitRunsTheWaitAlways) {
  Analyzed A(kernel("", Note));
  Built B = build(A);
  ASSERT_NE(B.Probe, nullptr);
  ASSERT_NE(B.Wait, nullptr);
  EXPECT_TRUE(B.Probe->FastPath);
  EXPECT_TRUE(B.Wait->When.absent()) << B.P->exprString(B.Wait->When.E);
  EXPECT_TRUE(B.Wait->Parity.known());
}

TEST(ProbedWaitTest, AFastPathThatDoesMoreKeepsTheResult) {
  // When the probe succeeds the thread arrives on bars[1] twice: the paths differ.
  Analyzed A(kernel("  mbarrier.arrive.shared::cta.b64 _, [%r2];   // fast arrive\n", Note));
  Built B = build(A);
  ASSERT_NE(B.Wait, nullptr);
  EXPECT_FALSE(B.Probe->FastPath);
  ASSERT_TRUE(B.Wait->When.known());
  EXPECT_TRUE(B.Wait->When.E->mentions([](const Expr *L) { return L->is(ExprKind::Opaque); }));
}

TEST(ProbedWaitTest, ASynchronizationBetweenProbeAndWaitKeepsTheResult) {
  // An arrival on the slow path before the wait may move the barrier on: not the same wait.
  Analyzed A(kernel("", "  mbarrier.arrive.shared::cta.b64 _, [%r2];   // slow arrive\n"));
  Built B = build(A);
  ASSERT_NE(B.Wait, nullptr);
  EXPECT_FALSE(B.Probe->FastPath);
  EXPECT_TRUE(B.Wait->When.known());
}

TEST(ProbedWaitTest, AWaitOnAnotherBarrierKeepsTheResult) {
  Analyzed A(kernel("", Note, "%r2"));
  Built B = build(A);
  ASSERT_NE(B.Wait, nullptr);
  EXPECT_FALSE(B.Probe->FastPath);
  EXPECT_TRUE(B.Wait->When.known());
}

} // namespace

// B6 (CuTeDSL) peeks at the barrier of its next k-tile at the end of each k-tile, and before
// the loop at the first: the wait runs only where that peek failed. The lowering keeps the
// probes whose result a wait reads, and each concrete wait names the flag of the probe that
// decides it: the first probe's at k = 0, the in-loop probe's afterwards.
namespace {

TEST(ProbedWaitTest, APeekCarriedIntoTheNextKTileDecidesItsWait) {
  auto Parsed = ptx::parseFile(std::string(WSV_PTX_DIR) + "/b6.ptx",
                               [](const ptx::Diagnostic &) {});
  if (!Parsed)
    GTEST_SKIP() << llvm::toString(Parsed.takeError()) << " (build wsv_ptx)";
  const ptx::Function *Entry = nullptr;
  for (const ptx::Function *F : Parsed->M->functions())
    if (F->isDefinition() && F->isEntry() && !Entry)
      Entry = F;
  ASSERT_NE(Entry, nullptr);
  auto P = buildProtocol(*Parsed->M, *Entry);
  RolePrograms RP = lowerRolePrograms(*P);
  const RoleProgram *Mma = nullptr;
  for (const RoleProgram &R : RP.Programs)
    if (R.Name == "mma")
      Mma = &R;
  ASSERT_NE(Mma, nullptr);
  unsigned Probes = 0, Skippable = 0;
  for (const RoleStep &S : Mma->Steps) {
    Probes += S.Kind == StepKind::Probe;
    Skippable += S.Kind == StepKind::Wait && S.SkipEntry && S.SkipLatch;
  }
  EXPECT_EQ(Probes, 2u);
  EXPECT_EQ(Skippable, 1u);

  std::optional<Instance> I = chooseInstance(RP, 64, 3, 1);
  ASSERT_TRUE(I);
  ConcreteSystem S = instantiate(RP, *I);
  ASSERT_EQ(S.Unknown, "");
  const ConcreteAgent *Agent = nullptr;
  for (const ConcreteAgent &A : S.Agents)
    if (A.Name == "mma@cta0")
      Agent = &A;
  ASSERT_NE(Agent, nullptr);
  std::vector<int> WaitFlags, ProbeFlags;
  for (const ConcreteStep &C : Agent->Steps) {
    if (C.Kind == StepKind::Probe)
      ProbeFlags.push_back(C.Flag);
    if (C.Kind == StepKind::Wait && C.Flag >= 0)
      WaitFlags.push_back(C.Flag);
  }
  // Three k-tiles: the probe before the loop, then one after each k-tile but the last.
  EXPECT_EQ(ProbeFlags, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(WaitFlags, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(explore(S).Verdict, ExploreVerdict::Clean);
}

} // namespace
