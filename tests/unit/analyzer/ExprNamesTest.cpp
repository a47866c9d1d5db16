// Naming the recurring parts of long expressions: which subterms get a name, in which order,
// and how they print.
#include "wsv/analyzer/ExprNames.h"

#include "gtest/gtest.h"

using namespace wsv::analyzer;

namespace {

class ExprNamesTest : public ::testing::Test {
protected:
  ExprContext C;
  const Expr *c(uint64_t V) { return C.constant(V, 32); }
  const Expr *k() { return C.param("K", 0, 32); }
  const Expr *n() { return C.param("N", 0, 32); }
  const Expr *m() { return C.param("M", 0, 32); }
  /// A term of 7 nodes: N * (K / 64) / (M / 2).
  const Expr *tiles() {
    // One statement each: operands sort by creation, which argument order would leave to
    // the compiler.
    const Expr *KTiles = C.udiv(k(), c(64));
    const Expr *Rows = C.mul(KTiles, n());
    const Expr *Half = C.udiv(m(), c(2));
    return C.udiv(Rows, Half);
  }

  static std::string text(const Expr *E, const ExprNames &Names, const Expr *Own = nullptr) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    E->print(OS, [&](const Expr *T, llvm::raw_ostream &Out) {
      llvm::StringRef Name = T == Own ? llvm::StringRef() : Names.nameOf(T);
      if (Name.empty())
        return false;
      Out << Name;
      return true;
    });
    return S;
  }
};

TEST_F(ExprNamesTest, ATermPrintedTwiceGetsANameAndStandsAsOneOperand) {
  k(), n(), m(); // leaves in reading order
  const Expr *T = tiles();
  const Expr *Left = C.ult(T, k());
  const Expr *E = C.bitAnd(Left, C.ult(C.udiv(T, c(2)), n()));
  ExprNames Names;
  Names.add(E);
  Names.choose();
  ASSERT_EQ(Names.named().size(), 1u);
  EXPECT_EQ(Names.named()[0], T);
  EXPECT_EQ(Names.nameOf(T), "$1");
  // No parentheses around a name, though the term it stands for is a division.
  EXPECT_EQ(text(E, Names), "$1 < K && $1 / 2 < N");
  EXPECT_EQ(text(T, Names, T), "N * (K / 64) / (M / 2)");
}

TEST_F(ExprNamesTest, OnceOrSmallStaysAsItIs) {
  k(), n(), m();
  // The big term once, a small one (K / 64) twice: nothing to name.
  const Expr *Small = C.udiv(k(), c(64));
  const Expr *E = C.bitAnd(C.ult(tiles(), Small), C.ult(Small, n()));
  ExprNames Names;
  Names.add(E);
  Names.choose();
  EXPECT_TRUE(Names.named().empty());
  EXPECT_EQ(text(E, Names), E->str());
}

TEST_F(ExprNamesTest, InnerTermsComeFirstAndCountOncePerDefinition) {
  k(), n(), m();
  const Expr *T = tiles();
  // Outer uses T twice; Outer itself is printed twice. T is printed four times plainly but
  // twice once Outer is named: named either way, numbered before Outer.
  const Expr *Outer = C.select(C.ult(T, n()), C.add(T, k()), c(0));
  const Expr *E = C.ult(C.add(Outer, m()), C.mul(Outer, c(3)));
  ExprNames Names;
  Names.add(E);
  Names.choose();
  ASSERT_EQ(Names.named().size(), 2u);
  EXPECT_EQ(Names.nameOf(T), "$1");
  EXPECT_EQ(Names.nameOf(Outer), "$2");
  EXPECT_EQ(text(Outer, Names, Outer), "$1 < N ? K + $1 : 0");
  EXPECT_EQ(text(E, Names), "M + $2 < $2 * 3");
}

TEST_F(ExprNamesTest, ANameForLittleMoreThanOtherNamesIsDropped) {
  k(), n(), m();
  const Expr *T = tiles();
  // T is printed on its own and in -T, which is printed twice: -T is 8 nodes but only a
  // minus around $1, so it prints as `-$1`, unnamed.
  const Expr *Minus = C.mul(T, c(static_cast<uint64_t>(-1)));
  const Expr *Left = C.ult(C.udiv(Minus, c(3)), C.udiv(Minus, c(5)));
  const Expr *E = C.bitAnd(Left, C.ult(T, k()));
  ExprNames Names;
  Names.add(E);
  Names.choose();
  ASSERT_EQ(Names.named().size(), 1u);
  EXPECT_EQ(Names.nameOf(T), "$1");
  EXPECT_TRUE(Names.nameOf(Minus).empty());
  EXPECT_EQ(text(E, Names), "-$1 / 3 < -$1 / 5 && $1 < K");
}

TEST_F(ExprNamesTest, CountsAddUpOverEveryExpressionOfAListing) {
  k(), n(), m();
  const Expr *T = tiles();
  ExprNames Names;
  Names.add(C.ult(T, k()));
  EXPECT_TRUE(Names.nameOf(T).empty()); // nothing chosen yet
  Names.add(C.ult(T, n()));
  Names.choose();
  EXPECT_EQ(Names.nameOf(T), "$1");
  // Width changes print as their operand: the name reaches through them.
  ExprNames Wide;
  Wide.add(C.ult(C.zext(T, 64), C.param("P", 0, 64)));
  Wide.add(C.ult(T, n()));
  Wide.choose();
  EXPECT_EQ(Wide.nameOf(T), "$1");
}

} // namespace
