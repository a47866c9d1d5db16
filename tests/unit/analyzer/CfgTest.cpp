// The control-flow graph: blocks over nested scopes, labels resolved innermost first, guarded
// branches, jump tables, exits, calls kept or inlined, unreachable code, bad targets.
#include "AnalyzerTestSupport.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

// Two inline-asm scopes that both declare WAIT and DONE, as nvcc writes every wait.
const char SiblingWaits[] = R"(
.visible .entry k(.param .u32 n)
.maxntid 128
{
  .reg .b32 %r<4>;
  .shared .align 8 .b8 bars[16];
  mov.u32 %r1, bars;
  mov.u32 %r2, 0;
  {
  .reg .pred P1;
  WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;   // first wait
  @P1 bra DONE;
  bra.uni WAIT;
  DONE:
  }
  add.s32 %r3, %r1, 8;
  {
  .reg .pred P1;
  WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%r3], %r2;   // second wait
  @P1 bra DONE;
  bra.uni WAIT;
  DONE:
  }
  ret;
}
)";

TEST(CfgTest, SiblingScopesReusingALabelGetTheirOwnTargets) {
  Analyzed A(SiblingWaits);
  const Cfg &G = A.cfg();
  BlockId First = A.blockOf("first wait"), Second = A.blockOf("second wait");
  ASSERT_NE(First, Second);
  // Each `bra.uni WAIT` goes back to the wait of its own scope.
  InstId Back1 = A.inst("bra.uni WAIT", 0), Back2 = A.inst("bra.uni WAIT", 1);
  EXPECT_EQ(G.block(G.inst(Back1).Block).Succs, (llvm::SmallVector<BlockId, 2>{First}));
  EXPECT_EQ(G.block(G.inst(Back2).Block).Succs, (llvm::SmallVector<BlockId, 2>{Second}));
  // Two loops, one per scope, each with its own header.
  ASSERT_EQ(A.loops().size(), 2u);
  EXPECT_EQ(A.loops().loop(0).Header, First);
  EXPECT_EQ(A.loops().loop(1).Header, Second);
  EXPECT_TRUE(G.issues().empty());
}

TEST(CfgTest, GuardedBranchHasTakenThenFallThrough) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra L_zero;
  add.s32 %r2, %r1, 1;          // fall-through arm
  bra.uni L_join;
L_zero:
  mov.u32 %r2, 7;               // taken arm
L_join:
  ret;                          // join
}
)");
  const Cfg &G = A.cfg();
  BlockId Entry = G.inst(A.inst("@%p1 bra")).Block;
  const BasicBlock &B = G.block(Entry);
  EXPECT_EQ(B.Terminator, TerminatorKind::CondBranch);
  ASSERT_EQ(B.Succs.size(), 2u);
  EXPECT_EQ(B.Succs[0], A.blockOf("taken arm"));
  EXPECT_EQ(B.Succs[1], A.blockOf("fall-through arm"));
  BlockId Join = A.blockOf("// join");
  EXPECT_EQ(G.block(Join).Preds.size(), 2u);
  EXPECT_EQ(G.block(Join).Terminator, TerminatorKind::Return);
  EXPECT_TRUE(G.block(Join).exits());
  // Reverse post-order starts at the entry and puts the join after both arms.
  EXPECT_EQ(G.reversePostOrder().front(), G.entry());
  EXPECT_GT(G.rpoNumber(Join), G.rpoNumber(A.blockOf("taken arm")));
  EXPECT_GT(G.rpoNumber(Join), G.rpoNumber(A.blockOf("fall-through arm")));
}

TEST(CfgTest, GuardedNonBranchInstructionsStayInTheirBlock) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 mov.u32 %r2, 5;          // predicated move
  @!%p1 add.s32 %r2, %r1, 1;    // negated guard
  ret;
}
)");
  EXPECT_EQ(A.cfg().size(), 1u);
  EXPECT_EQ(A.cfg().block(0).size(), 5u);
  EXPECT_TRUE(A.cfg().inst(A.inst("negated guard")).I->guard().isNegated());
}

TEST(CfgTest, JumpTableEdgesFollowTheBranchTargetsList) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  ts: .branchtargets L0, L1, L2, L1;
  brx.idx %r2, ts;
L0:
  mov.u32 %r3, 10;      // case 0
  bra.uni J;
L1:
  mov.u32 %r3, 20;      // case 1 and 3
  bra.uni J;
L2:
  mov.u32 %r3, 30;      // case 2
J:
  ret;
}
)");
  const Cfg &G = A.cfg();
  const BasicBlock &B = G.block(G.inst(A.inst("brx.idx")).Block);
  EXPECT_EQ(B.Terminator, TerminatorKind::Switch);
  EXPECT_EQ(B.SwitchTargets,
            (llvm::SmallVector<BlockId, 4>{A.blockOf("case 0"), A.blockOf("case 1"),
                                           A.blockOf("case 2"), A.blockOf("case 1")}));
  EXPECT_EQ(B.Succs.size(), 3u);
  // The edge to the block of cases 1 and 3 is taken for either index.
  const Expr *Cond = A.values().edgeCondition(B.Index, A.blockOf("case 1"));
  const Expr *Index = A.ctx().urem(A.tid(), A.ctx().constant(4, 32));
  EXPECT_EQ(Cond, A.ctx().bitOr(A.ctx().eq(Index, A.ctx().constant(1, 32)),
                                A.ctx().eq(Index, A.ctx().constant(3, 32))));
}

TEST(CfgTest, ExitsAndGuardedExits) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.gt.u32 %p1, %r1, 63;
  @%p1 exit;                    // guarded exit
  setp.eq.u32 %p2, %r1, 5;
  @%p2 bra L_trap;
  ret;                          // plain return
L_trap:
  trap;                         // trap
}
)");
  const Cfg &G = A.cfg();
  const BasicBlock &Guarded = G.block(A.blockOf("guarded exit"));
  EXPECT_EQ(Guarded.Terminator, TerminatorKind::CondExit);
  EXPECT_TRUE(Guarded.exits());
  ASSERT_EQ(Guarded.Succs.size(), 1u);
  EXPECT_EQ(G.block(A.blockOf("plain return")).Terminator, TerminatorKind::Return);
  EXPECT_EQ(G.block(A.blockOf("// trap")).Terminator, TerminatorKind::Trap);
  EXPECT_TRUE(G.block(A.blockOf("// trap")).Succs.empty());
}

TEST(CfgTest, UnreachableBlocksAreKnown) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<2>;
  bra.uni L_end;
  mov.u32 %r1, 1;               // dead code
L_end:
  ret;
}
)");
  BlockId Dead = A.blockOf("dead code");
  EXPECT_FALSE(A.cfg().block(Dead).Reachable);
  EXPECT_EQ(A.cfg().rpoNumber(Dead), NoIndex);
  EXPECT_EQ(A.cfg().unreachableBlocks(), (llvm::SmallVector<BlockId, 4>{Dead}));
  EXPECT_EQ(A.cfg().reversePostOrder().size(), A.cfg().size() - 1);
}

TEST(CfgTest, BranchToAMissingLabelIsAnIssueNotACrash) {
  // ptxas rejects this; the analyzer reports it and keeps going.
  std::string Text = std::string(ModuleHeader) + R"(
.visible .entry k()
{
  bra.uni NOWHERE;
  ret;
}
)";
  ptx::ParseResult R = ptx::parseString(Text, "bad.ptx", [](const ptx::Diagnostic &) {});
  const ptx::Function *F = R.M->function("k");
  ASSERT_NE(F, nullptr);
  std::vector<ptx::Diagnostic> Diags;
  ptx::DiagnosticEngine Engine(R.M->sourceMgr(),
                               [&](const ptx::Diagnostic &D) { Diags.push_back(D); });
  Cfg G(*R.M, *F, {}, &Engine);
  ASSERT_EQ(G.issues().size(), 1u);
  EXPECT_EQ(G.issues()[0].Message, "branch target 'NOWHERE' is not a label of this function");
  ASSERT_EQ(Diags.size(), 1u);
  EXPECT_EQ(Diags[0].Line, 7u); // after the three header lines and a blank one
  EXPECT_EQ(G.block(G.entry()).Terminator, TerminatorKind::Unresolved);
}

// A small function called twice, an extern, recursion, and an indirect call.
const char Calls[] = R"(
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.func (.param .b32 func_retval0) add_one(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, 1;
  st.param.b32 [func_retval0], %r2;
  ret;
}
.func recurse(.param .b32 x)
{
  .reg .b32 %r<2>;
  ld.param.b32 %r1, [x];
  {
  .param .b32 p;
  st.param.b32 [p], %r1;
  call.uni recurse, (p);
  }
  ret;
}
.visible .entry k()
.maxntid 32
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), add_one, (param0);      // first call
  ld.param.b32 %r2, [retval0];                // first result
  }
  {
  .param .b32 param0;
  st.param.b32 [param0], %r2;
  .param .b32 retval0;
  call.uni (retval0), add_one, (param0);      // second call
  ld.param.b32 %r3, [retval0];                // second result
  }
  {
  .param .b64 a;
  .param .b64 b;
  .param .b32 ret;
  st.param.b64 [a], 0;
  st.param.b64 [b], 0;
  call.uni (ret), vprintf, (a, b);            // extern call
  ld.param.b32 %r4, [ret];                    // extern result
  }
  {
  .param .b32 p;
  st.param.b32 [p], %r1;
  call.uni recurse, (p);                      // recursive callee
  }
  mov.u64 %rd1, add_one;
  {
  .param .b32 arg;
  .param .b32 ret;
  st.param.b32 [arg], %r1;
  targets: .calltargets add_one;
  call (ret), %rd1, (arg), targets;           // indirect call
  ld.param.b32 %r5, [ret];
  }
  ret;
}
)";

TEST(CfgTest, CallsAreInlinedWithParametersPassedThrough) {
  Analyzed A(Calls, "k");
  const Cfg &G = A.cfg();
  // Two inlined copies of add_one and one of recurse (whose own call to itself stays a call).
  ASSERT_EQ(G.frames().size(), 4u);
  EXPECT_EQ(G.frames()[1].Function->name(), "add_one");
  EXPECT_EQ(G.frames()[2].Function->name(), "add_one");
  EXPECT_EQ(G.frames()[3].Function->name(), "recurse");
  // The inlined body's instruction occurs once per frame.
  const ptx::Instruction &AddOne = *G.inst(A.inst("add.s32 %r2, %r1, 1")).I;
  EXPECT_TRUE(G.find(AddOne, 1).has_value());
  EXPECT_TRUE(G.find(AddOne, 2).has_value());
  EXPECT_FALSE(G.find(AddOne, 0).has_value());
  // Values flow through the .param cells: tid + 1, then tid + 2.
  ExprContext &C = A.ctx();
  EXPECT_EQ(A.before("extern call", "%r2"), C.add(A.tid(), C.constant(1, 32)));
  EXPECT_EQ(A.before("extern call", "%r3"), C.add(A.tid(), C.constant(2, 32)));
}

TEST(CfgTest, CallsThatStayCallsSayWhy) {
  Analyzed A(Calls, "k");
  const Cfg &G = A.cfg();
  auto StatusOf = [&](llvm::StringRef Needle) {
    const CallSite *C = G.callAt(A.inst(Needle));
    return C ? C->Status : CallStatus::Unknown;
  };
  EXPECT_EQ(StatusOf("first call"), CallStatus::Inlined);
  EXPECT_EQ(StatusOf("extern call"), CallStatus::Extern);
  EXPECT_EQ(StatusOf("indirect call"), CallStatus::Indirect);
  const CallSite *Indirect = G.callAt(A.inst("indirect call"));
  ASSERT_EQ(Indirect->Candidates.size(), 1u);
  EXPECT_EQ(Indirect->Candidates[0]->name(), "add_one");
  // recurse is inlined once; its call to itself is not.
  unsigned Recursive = 0;
  for (const CallSite &C : G.calls())
    Recursive += C.Status == CallStatus::Recursive;
  EXPECT_EQ(Recursive, 1u);
  // An extern's result is opaque and says where it came from.
  const Expr *R4 = A.before("call (ret), %rd1", "%r4");
  ASSERT_TRUE(R4->is(ExprKind::Opaque));
  EXPECT_EQ(R4->name(), "result of the call to vprintf");
}

TEST(CfgTest, InliningRespectsTheDepthLimitAndTheOption) {
  AnalysisOptions NoInline;
  NoInline.Graph.InlineCalls = false;
  Analyzed Off(Calls, "k", NoInline);
  EXPECT_EQ(Off.cfg().frames().size(), 1u);
  EXPECT_EQ(Off.cfg().callAt(Off.inst("first call"))->Status, CallStatus::NotRequested);
  // Not inlined: the result is the callee's, unknown here.
  EXPECT_TRUE(Off.before("extern call", "%r2")->is(ExprKind::Opaque));

  AnalysisOptions Shallow;
  Shallow.Graph.MaxInlineDepth = 0;
  Analyzed Zero(Calls, "k", Shallow);
  EXPECT_EQ(Zero.cfg().callAt(Zero.inst("first call"))->Status, CallStatus::TooDeep);
}

TEST(CfgTest, NoReturnCallsEndTheirBlock) {
  Analyzed A(R"(
.func halt() .noreturn
{
  trap;
}
.visible .entry k()
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 call.uni halt, ();        // guarded no-return call
  ret;
}
)",
             "k", [] {
               AnalysisOptions O;
               O.Graph.InlineCalls = false;
               return O;
             }());
  const BasicBlock &B = A.cfg().block(A.blockOf("guarded no-return call"));
  EXPECT_EQ(B.Terminator, TerminatorKind::CondExit);
  EXPECT_EQ(B.Succs.size(), 1u);
}

TEST(CfgTest, FallingOffTheEndReturns) {
  Analyzed A(R"(
.visible .entry k()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
}
)");
  ASSERT_EQ(A.cfg().size(), 1u);
  EXPECT_EQ(A.cfg().block(0).Terminator, TerminatorKind::Return);
}

} // namespace
