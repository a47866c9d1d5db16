// Trip counts: do-while loops over K/64 tiles guarded by a skip, ceil-div counts, persistent
// tile loops, while loops, count-down loops, and the reasons given when there is no count.
#include "AnalyzerTestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

const TripCount &tripOf(Analyzed &A, llvm::StringRef Needle) {
  return A.values().loopSummary(A.loopOf(Needle)).Trip;
}

/// Evaluates E with each parameter given.
std::optional<uint64_t> evalWith(const Expr *E,
                                 std::initializer_list<std::pair<const Expr *, uint64_t>> Values) {
  return ExprContext::evaluate(E, [&](const Expr *L) -> std::optional<uint64_t> {
    for (auto &[Leaf, V] : Values)
      if (Leaf == L)
        return V;
    return std::nullopt;
  });
}

/// A persistent tile loop: First sets the first tile (%r2) and the step (%r3); the loop runs
/// while the tile is below the parameter `tiles`, tested before entry and at the latch.
std::string tileLoop(const char *Header, const char *First) {
  return std::string(".visible .entry k(.param .u32 tiles)\n") + Header + R"(
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [tiles];
)" + First + R"(
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
LOOP:
  add.s32 %r2, %r2, %r3;          // body
  setp.lt.u32 %p2, %r2, %r1;
  @%p2 bra LOOP;
DONE:
  ret;
}
)";
}

TEST(TripCountTest, NvccDoWhileOverKTilesWithItsGuard) {
  // nvcc: k_tiles = K >> 6; if (K >= 64) { n = -k_tiles; do { ... } while (++n != 0); }
  Analyzed A(R"(
.visible .entry k(.param .u32 k_param_6)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [k_param_6];
  shr.u32 %r2, %r1, 6;
  setp.lt.u32 %p1, %r1, 64;
  @%p1 bra DONE;
  neg.s32 %r3, %r2;
LOOP:
  add.s32 %r3, %r3, 1;          // body
  setp.eq.s32 %p2, %r3, 0;
  @%p2 bra DONE;
  bra.uni LOOP;
DONE:
  ret;
}
)");
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  ExprContext &C = A.ctx();
  const Expr *K = A.param("k_param_6");
  EXPECT_EQ(T.Iterations, C.udiv(K, C.constant(64, 32)));
  EXPECT_EQ(T.HeaderRuns, T.Iterations);
  // The formula needs at least one tile, which the branch around the loop establishes.
  ASSERT_EQ(T.Conditions.size(), 1u);
  EXPECT_EQ(T.Conditions[0].Condition, C.ule(C.constant(64, 32), K));
  EXPECT_TRUE(T.Conditions[0].Discharged);
  // The test ends the header; what follows only branches back: a do-while, not a while.
  EXPECT_TRUE(T.ExitTestInHeader);
}

TEST(TripCountTest, CeilDivisionAsTritonWritesIt) {
  // Triton: n = (K + 63) >> 6 in 64 bits; if (K + 63 >= 64) for (i = 0; i != n; ++i).
  Analyzed A(R"(
.visible .entry k(.param .u32 kdim)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.b32 %r1, [kdim];
  add.s32 %r2, %r1, 63;
  cvt.u64.u32 %rd1, %r2;
  shr.u64 %rd2, %rd1, 6;
  setp.lt.s32 %p1, %r2, 64;
  @%p1 bra DONE;
  mov.b64 %rd3, 0;
LOOP:
  add.s64 %rd3, %rd3, 1;          // body
  setp.ne.b64 %p2, %rd2, %rd3;
  @%p2 bra LOOP;
DONE:
  ret;
}
)");
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  EXPECT_EQ(T.Iterations->str(), "(kdim + 63) / 64");
  const Expr *K = A.param("kdim");
  for (uint64_t KV : {1u, 64u, 65u, 1000u, 4096u})
    EXPECT_EQ(evalWith(T.Iterations, {{K, KV}}), (KV + 63) / 64) << KV;
  for (const TripCondition &Cond : T.Conditions)
    EXPECT_TRUE(Cond.Discharged) << *Cond.Condition;
}

TEST(TripCountTest, PersistentTileLoop) {
  // for (tile = blockIdx.x; tile < tiles; tile += gridDim.x), rotated by the compiler.
  Analyzed A(tileLoop("", R"(
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %nctaid.x;
)"));
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  ExprContext &C = A.ctx();
  const Expr *Tiles = A.param("tiles"), *Cta = C.specialRegister(SpecialRegister::CtaidX),
             *Grid = C.specialRegister(SpecialRegister::NctaidX);
  // (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x
  EXPECT_EQ(T.Iterations,
            C.udiv(C.sub(C.add(C.sub(Tiles, Cta), Grid), C.constant(1, 32)), Grid));
  ASSERT_EQ(T.Conditions.size(), 1u);
  EXPECT_EQ(T.Conditions[0].Condition, C.ult(Cta, Tiles));
  EXPECT_TRUE(T.Conditions[0].Discharged);
  // Count the tiles a CTA visits by brute force and compare.
  for (uint64_t Tv : {1u, 7u, 132u, 1000u})
    for (uint64_t Gv : {1u, 3u, 132u})
      for (uint64_t Cv = 0; Cv < std::min<uint64_t>(Gv, Tv); ++Cv) {
        uint64_t Count = 0;
        for (uint64_t X = Cv; X < Tv; X += Gv)
          ++Count;
        EXPECT_EQ(evalWith(T.Iterations, {{Tiles, Tv}, {Cta, Cv}, {Grid, Gv}}), Count);
      }
}

TEST(TripCountTest, PersistentTileLoopWithAConstantStep) {
  // Triton's persistent kernels step by NUM_SMS, a constant: the test reads %ctaid.x + 132,
  // whose start %ctaid.x has as many terms. The loop's form is exact once %ctaid.x < tiles,
  // which the guard establishes (`%ctaid.x + 132 <= tiles` would hold only for CTAs with a
  // second tile).
  Analyzed A(tileLoop("", R"(
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, 132;
)"));
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  ExprContext &C = A.ctx();
  const Expr *Tiles = A.param("tiles"), *Cta = C.specialRegister(SpecialRegister::CtaidX);
  ASSERT_EQ(T.Conditions.size(), 1u);
  EXPECT_EQ(T.Conditions[0].Condition, C.ult(Cta, Tiles));
  EXPECT_TRUE(T.Conditions[0].Discharged);
  for (uint64_t Tv : {1u, 7u, 132u, 133u, 1000u})
    for (uint64_t Cv = 0; Cv < std::min<uint64_t>(132, Tv); ++Cv) {
      uint64_t Count = 0;
      for (uint64_t X = Cv; X < Tv; X += 132)
        ++Count;
      EXPECT_EQ(evalWith(T.Iterations, {{Tiles, Tv}, {Cta, Cv}}), Count) << Tv << " " << Cv;
    }
}

TEST(TripCountTest, AClusterLaunchHasAtLeastOneWholeCluster) {
  // for (tile = blockIdx.x / 2; tile < tiles; tile += gridDim.x / 2) in a cluster of two:
  // the count needs gridDim.x / 2 != 0, which `.reqnctapercluster 2, 1, 1` guarantees (CUDA
  // launches whole clusters only) and nothing guarantees without it.
  const char *PerCluster = R"(
  mov.u32 %r4, %ctaid.x;
  shr.u32 %r2, %r4, 1;
  mov.u32 %r5, %nctaid.x;
  shr.u32 %r3, %r5, 1;
)";
  auto GridCondition = [](const TripCount &T) -> const TripCondition * {
    for (const TripCondition &C : T.Conditions)
      if (C.Condition->mentions([](const Expr *L) {
            return L->is(ExprKind::SpecialReg) &&
                   L->specialRegister() == SpecialRegister::NctaidX;
          }) &&
          !C.Condition->mentions([](const Expr *L) { return L->is(ExprKind::Param); }))
        return &C;
    return nullptr;
  };
  for (bool Cluster : {true, false}) {
    Analyzed A(tileLoop(Cluster ? ".reqnctapercluster 2, 1, 1" : "", PerCluster));
    const TripCount &T = tripOf(A, "// body");
    ASSERT_TRUE(T.isCounted()) << T.Reason;
    const TripCondition *C = GridCondition(T);
    ASSERT_TRUE(C) << "no condition on the grid";
    EXPECT_EQ(C->Discharged, Cluster) << *C->Condition;
  }
}

TEST(TripCountTest, AStepThatMayBeZeroSaysWhereTheLoopNeverEnds) {
  // for (tile = blockIdx.x; tile < tiles; tile += (threadIdx.x == 0 ? gridDim.x : 0)): only
  // thread 0 advances (B5's trip-count variant). Forever holds exactly where the step is 0
  // and the loop is entered; everywhere else the count is the closed form.
  Analyzed A(tileLoop("", R"(
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r4, %tid.x;
  mov.u32 %r5, %nctaid.x;
  setp.eq.u32 %p3, %r4, 0;
  selp.u32 %r3, %r5, 0, %p3;
)"));
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  ASSERT_TRUE(T.Forever);
  ExprContext &C = A.ctx();
  const Expr *Tiles = A.param("tiles"), *Cta = C.specialRegister(SpecialRegister::CtaidX),
             *Grid = C.specialRegister(SpecialRegister::NctaidX),
             *Tid = C.specialRegister(SpecialRegister::TidX);
  for (uint64_t Tv : {1u, 7u, 132u})
    for (uint64_t Gv : {1u, 3u, 132u})
      for (uint64_t Cv = 0; Cv < std::min<uint64_t>(Gv, Tv); ++Cv)
        for (uint64_t Thread : {0u, 1u, 127u}) {
          auto At = [&](const Expr *E) {
            return evalWith(E, {{Tiles, Tv}, {Cta, Cv}, {Grid, Gv}, {Tid, Thread}});
          };
          uint64_t Step = Thread == 0 ? Gv : 0;
          EXPECT_EQ(At(T.Forever), Step == 0 ? 1u : 0u) << Tv << " " << Gv << " " << Thread;
          if (Step == 0)
            continue;
          uint64_t Count = 0;
          for (uint64_t X = Cv; X < Tv; X += Step)
            ++Count;
          EXPECT_EQ(At(T.Iterations), Count);
        }
  // A step that cannot be 0 never loops forever.
  Analyzed Plain(tileLoop("", R"(
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %nctaid.x;
)"));
  EXPECT_EQ(tripOf(Plain, "// body").Forever, nullptr);
}

TEST(TripCountTest, WhileLoopTestsInTheHeader) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
HEAD:
  setp.ge.u32 %p1, %r2, %r1;      // header test
  @%p1 bra DONE;
  add.s32 %r2, %r2, 1;            // body
  bra.uni HEAD;
DONE:
  ret;
}
)");
  const TripCount &T = tripOf(A, "// header test");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  EXPECT_TRUE(T.ExitTestInHeader);
  const Expr *N = A.param("n");
  for (uint64_t NV : {0u, 1u, 5u, 100u}) {
    EXPECT_EQ(evalWith(T.HeaderRuns, {{N, NV}}), NV + 1);
    EXPECT_EQ(evalWith(T.Iterations, {{N, NV}}), NV);
  }
}

TEST(TripCountTest, CountDownAndStrides) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %r1;
  setp.eq.s32 %p3, %r1, 0;
  @%p3 bra SECOND;
DOWN:
  add.s32 %r2, %r2, -1;           // down
  setp.gt.u32 %p1, %r2, 0;
  @%p1 bra DOWN;
SECOND:
  mov.u32 %r3, 0;
STRIDE:
  add.s32 %r3, %r3, 128;          // stride
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra STRIDE;
  ret;
}
)");
  const TripCount &Down = tripOf(A, "// down");
  ASSERT_TRUE(Down.isCounted()) << Down.Reason;
  const TripCount &Stride = tripOf(A, "// stride");
  ASSERT_TRUE(Stride.isCounted()) << Stride.Reason;
  const Expr *N = A.param("n");
  for (uint64_t NV : {1u, 2u, 9u, 128u, 129u, 1000u}) {
    EXPECT_EQ(evalWith(Down.Iterations, {{N, NV}}), NV);
    // A do-while runs once even when n <= 128.
    EXPECT_EQ(evalWith(Stride.Iterations, {{N, NV}}), std::max<uint64_t>(1, (NV + 127) / 128));
  }
}

TEST(TripCountTest, ACounterClimbingToTheTopOfItsRange) {
  // clang's unrolled loop over a thread's words (tests/corpus/nvcc/ws_cluster.cu):
  // c = w - 2048; do { ...; c += 2048; } while (c >u -1793): it runs until c passes 0.
  Analyzed A(R"(
.visible .entry k(.param .u32 w)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [w];
  add.s32 %r2, %r1, -2048;
CLIMB:
  add.s32 %r2, %r2, 2048;         // climb
  setp.gt.u32 %p1, %r2, -1793;
  @%p1 bra CLIMB;
  ret;
}
)");
  const TripCount &T = tripOf(A, "// climb");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  const Expr *W = A.param("w");
  // Simulated: where the count starts above the bound (w - 2048 + 2048 = w in the first
  // test), the counts the closed form gives.
  for (uint64_t WV : {0xfffff900ull, 0xfffff901ull, 0xffffff00ull, 0xffffffffull, 0xfffffa00ull}) {
    uint32_t C = uint32_t(WV) - 2048;
    uint64_t Runs = 0;
    do {
      C += 2048;
      ++Runs;
    } while (C > 0xfffff8ffu);
    EXPECT_EQ(evalWith(T.Iterations, {{W, WV}}), Runs) << std::hex << WV;
    bool Exact = true;
    for (const TripCondition &Cond : T.Conditions)
      Exact &= evalWith(Cond.Condition, {{W, WV}}) == std::optional<uint64_t>(1);
    EXPECT_TRUE(Exact) << std::hex << WV;
  }
  // Starting at or below the bound it runs once: exact where the form gives 1 (a thread
  // whose words start inside the first pass, w < 2048), and said not to be elsewhere.
  for (uint64_t WV : {0ull, 5ull, 2047ull, 2048ull, 5000ull, 0x80000000ull}) {
    bool Exact = true;
    for (const TripCondition &Cond : T.Conditions)
      Exact &= evalWith(Cond.Condition, {{W, WV}}) == std::optional<uint64_t>(1);
    EXPECT_EQ(Exact, WV < 2048) << WV;
    if (Exact) {
      EXPECT_EQ(evalWith(T.Iterations, {{W, WV}}), 1u) << WV;
    }
  }
}

TEST(TripCountTest, ACounterThatStaysOnlyWhileEqualRunsOnceOrTwice) {
  // clang -O1's init loop over two stages: s = 0; do { s += 8; } while (s == 8) runs twice;
  // with 16 in the test, once. The step need not be 1.
  for (auto [Test, Runs] : {std::pair{8u, 2u}, std::pair{16u, 1u}}) {
    Analyzed A(R"(
.visible .entry k()
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  mov.u32 %r1, 0;
INIT:
  add.s32 %r1, %r1, 8;            // init
  setp.eq.s32 %p1, %r1, )" + std::to_string(Test) + R"(;
  @%p1 bra INIT;
  ret;
}
)");
    const TripCount &T = tripOf(A, "// init");
    ASSERT_TRUE(T.isCounted()) << T.Reason;
    EXPECT_EQ(evalWith(T.Iterations, {}), Runs) << Test;
  }
}

TEST(TripCountTest, AWhileLoopWhoseHeaderALabelSplitsRunsItsBodyOnceLessThanItsTest) {
  // nvcc -G: `for (i = 0; i < n; ++i)` as a while loop, with a line label between the header's
  // moves and its test (nothing branches there, but it starts a block). The body runs n times,
  // the test n + 1; events in the body are counted n times.
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  ld.param.u32 %r5, [n];
  mov.u32 %r1, 0;
  mov.u32 %r3, 0;
HEAD:
  mov.u32 %r2, %r1;
$L__tmp1:
  setp.lt.s32 %p1, %r2, %r5;
  not.pred %p2, %p1;
  @%p2 bra DONE;
  bra.uni BODY;
BODY:
  add.s32 %r3, %r3, 7;            // body
  add.s32 %r1, %r2, 1;
  bra.uni HEAD;
DONE:
  ret;
}
)");
  const TripCount &T = tripOf(A, "// body");
  ASSERT_TRUE(T.isCounted()) << T.Reason;
  EXPECT_TRUE(T.ExitTestInHeader);
  const Expr *N = A.param("n");
  for (uint64_t NV : {1u, 2u, 5u, 64u})
    EXPECT_EQ(evalWith(T.Iterations, {{N, NV}}), NV) << NV;
}

TEST(TripCountTest, LoopsWithoutACountSayWhy) {
  Analyzed A(R"(
.visible .entry k(.param .u64 flag)
{
  .reg .pred %p<6>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 state;
  ld.param.u64 %rd1, [flag];
POLL:
  ld.shared.u32 %r1, [state];       // polls memory
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra POLL;
  mov.u32 %r2, 0;
TWO:
  add.s32 %r2, %r2, 1;              // two exits
  setp.eq.s32 %p2, %r2, 10;
  @%p2 bra OUT;
  ld.shared.u32 %r3, [state];
  setp.eq.s32 %p3, %r3, 5;
  @%p3 bra OUT;
  bra.uni TWO;
OUT:
  mov.u32 %r4, 1;
MUL:
  shl.b32 %r4, %r4, 1;              // doubles
  setp.lt.u32 %p4, %r4, 4096;
  @%p4 bra MUL;
  ret;
}
)");
  const TripCount &Poll = tripOf(A, "// polls memory");
  EXPECT_EQ(Poll.K, TripCount::Kind::Unknown);
  EXPECT_NE(Poll.Reason.find("a value loaded by ld.shared.u32"), std::string::npos) << Poll.Reason;
  const TripCount &Two = tripOf(A, "// two exits");
  EXPECT_EQ(Two.K, TripCount::Kind::Unknown);
  EXPECT_NE(Two.Reason.find("the loop has 2 exits"), std::string::npos) << Two.Reason;
  const TripCount &Mul = tripOf(A, "// doubles");
  EXPECT_EQ(Mul.K, TripCount::Kind::Unknown);
  EXPECT_NE(Mul.Reason.find("%r4"), std::string::npos) << Mul.Reason;
}

TEST(TripCountTest, ValuesAfterALoopAreClosedFormsAtTheTripCount) {
  Analyzed A(R"(
.visible .entry k(.param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .shared .align 4 .b32 state;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
LOOP:
  add.s32 %r3, %r3, 8;
  ld.shared.u32 %r5, [state];
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  ret;                               // after
}
)");
  ExprContext &C = A.ctx();
  const Expr *N = A.param("n");
  const Expr *R3 = A.before("// after", "%r3");
  for (uint64_t NV : {1u, 4u, 77u})
    EXPECT_EQ(evalWith(R3, {{N, NV}}), 8 * NV);
  // The load of the last iteration is not a value the analysis can name after the loop.
  const Expr *R5 = A.before("// after", "%r5");
  ASSERT_TRUE(R5->is(ExprKind::Opaque));
  EXPECT_NE(R5->name().find("after the loop"), llvm::StringRef::npos);
  (void)C;
}

} // namespace
