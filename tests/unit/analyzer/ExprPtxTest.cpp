// PTX that computes an expression again: the statements emitPtx writes, analyzed as PTX,
// must give the value of the expression they came from on every launch tried (and ptxas must
// accept them: tests/lit/verify/warp-dispatch.test assembles a kernel rewritten with them).
#include "AnalyzerTestSupport.h"

#include "wsv/analyzer/ExprPtx.h"

#include "gtest/gtest.h"

#include <vector>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

struct Launch {
  uint64_t X, Y, Ctaid;
};

/// Values of Leaf (x, y, %ctaid.x, %nctaid.x = 132) on launch L.
std::optional<uint64_t> leafValue(const Expr *Leaf, const Launch &L) {
  if (Leaf->is(ExprKind::Param))
    return Leaf->name() == "k_x" ? L.X : L.Y;
  if (Leaf->is(ExprKind::SpecialReg) && Leaf->specialRegister() == SpecialRegister::CtaidX)
    return L.Ctaid;
  if (Leaf->is(ExprKind::SpecialReg) && Leaf->specialRegister() == SpecialRegister::NctaidX)
    return 132;
  return std::nullopt;
}

TEST(ExprPtxTest, TheStatementsComputeTheExpressionOnEveryLaunchTried) {
  ExprContext C;
  const Expr *X = C.param("k_x", 0, 32), *Y = C.param("k_y", 0, 32);
  const Expr *Cta = C.specialRegister(SpecialRegister::CtaidX);
  const Expr *Grid = C.specialRegister(SpecialRegister::NctaidX);
  auto K = [&](uint64_t V) { return C.constant(V, 32); };
  // Triton's ceiling divisions of signed sizes, the tiles a CTA of a persistent grid takes,
  // and the operations whose PTX spelling differs from the node (predicates, widths, shifts).
  const Expr *Tiles = C.mul(C.ashr(C.add(X, K(127)), K(7)), C.ashr(C.add(Y, K(255)), K(8)));
  const Expr *Left = C.add(Tiles, C.neg(Cta));
  std::vector<const Expr *> Cases = {
      C.add(C.sdiv(Left, K(132)),
            C.select(C.logicalAnd(C.sle(K(0), Left), C.ne(C.srem(Left, Grid), K(0))), K(1), K(0))),
      C.smax(K(1), C.ashr(C.add(Y, K(63)), K(6))),
      C.add(C.srem(X, K(7)), C.sdiv(Y, K(0xfffffffd))),
      C.urem(C.udiv(C.mul(X, Y), C.umax(Y, K(1))), K(3)),
      C.trunc(C.mul(C.zext(X, 64), C.zext(Y, 64)), 32),
      C.trunc(C.lshr(C.sext(X, 64), C.zext(C.urem(Y, K(64)), 64)), 32),
      C.shl(X, C.urem(Y, K(33))),
      C.mulhiu(X, K(1041204193)),
      C.bitXor(C.bitAnd(X, K(0xff)), C.bitOr(Y, K(3))),
      C.umin(C.smin(X, Y), K(4096)),
      C.zext(C.ult(X, Y), 32),
      C.sext(C.eq(C.slt(X, Y), C.ule(Y, X)), 32),
      C.select(C.select(C.ult(X, K(64)), C.slt(Y, K(0)), C.eq(Y, K(7))), X, Y),
      C.trunc(X, 16),
      C.zext(C.bitNot(C.trunc(Y, 16)), 32),
      C.zext(C.trunc(X, 1), 32),
  };
  std::vector<Launch> Launches;
  for (uint64_t XV : {0ull, 1ull, 63ull, 64ull, 65ull, 4096ull, 0xffffffffull, 0x80000000ull})
    for (uint64_t YV : {0ull, 7ull, 256ull, 8191ull, 0xfffffff0ull})
      for (uint64_t CV : {0ull, 5ull, 131ull})
        Launches.push_back({XV, YV, CV});

  for (size_t N = 0; N < Cases.size(); ++N) {
    SCOPED_TRACE("case " + std::to_string(N) + ": " + Cases[N]->str());
    std::string Why;
    std::optional<PtxValue> P = emitPtx(Cases[N], "t" + std::to_string(N), Why);
    ASSERT_TRUE(P) << Why;
    std::string Width = std::to_string(Cases[N]->width());
    std::string Text = ".visible .entry k(.param .u32 k_x, .param .u32 k_y)\n{\n  .reg .b" + Width +
                       " %out;\n  { " + P->Decls + P->Code + "mov.b" + Width + " %out, " + P->Reg +
                       "; }\n  ret;  // end\n}\n";
    Analyzed A(Text);
    const Expr *Got = A.before("// end", "%out");
    ASSERT_NE(Got, nullptr);
    for (const Launch &L : Launches) {
      std::optional<uint64_t> Want =
          ExprContext::evaluate(Cases[N], [&](const Expr *Leaf) { return leafValue(Leaf, L); });
      std::optional<uint64_t> Have =
          ExprContext::evaluate(Got, [&](const Expr *Leaf) { return leafValue(Leaf, L); });
      EXPECT_EQ(Want, Have) << "x = " << L.X << ", y = " << L.Y << ", ctaid = " << L.Ctaid
                            << "\n" << Text;
    }
  }
}

TEST(ExprPtxTest, ValuesOfOneThreadOrPlaceAreRefused) {
  ExprContext C;
  const Expr *X = C.param("k_x", 0, 32);
  struct Case {
    const Expr *E;
    const char *Why;
    bool OfTheLaunch;
  } Cases[] = {
      {C.add(X, C.specialRegister(SpecialRegister::TidX)), "%tid.x differs between the threads",
       false},
      {C.add(X, C.iterationVar(0)), "a loop's iteration number", false},
      {C.load(nullptr, X, 32, "ld.shared"), "a value loaded from memory", false},
      {C.phi("%r9", nullptr, 0, 32), "the value of %r9 at a join", false},
      {C.trunc(X, 8), "a value of 8 bits has no PTX register", true},
  };
  for (const Case &K : Cases) {
    std::string Why;
    EXPECT_FALSE(emitPtx(K.E, "t", Why)) << K.E->str();
    EXPECT_NE(Why.find(K.Why), std::string::npos) << Why;
    EXPECT_EQ(isLaunchValue(K.E), K.OfTheLaunch) << K.E->str();
  }
  EXPECT_TRUE(isLaunchValue(C.mul(X, C.specialRegister(SpecialRegister::NctaidX))));
}

} // namespace
