// Operand values decoded on demand: integers in every radix, floats, constant expressions,
// addresses in their inline and general forms.
#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

/// The operands of `mov.b64 %rd1, <Text>;` parsed in a kernel.
Operand secondOperand(const Parsed &P) {
  const Instruction *I = firstInstruction(P.module());
  return I ? I->operands()[1] : Operand();
}

std::optional<int64_t> valueOf(llvm::StringRef Text) {
  Parsed P = parseBody(("mov.b64 %rd1, " + Text + ";").str());
  EXPECT_TRUE(P.ok()) << Text.str() << ": " << P.messages();
  return P.ok() ? secondOperand(P).integerValue() : std::nullopt;
}

TEST(Operand, IntegerLiteralsInEveryRadix) {
  EXPECT_EQ(valueOf("42"), 42);
  EXPECT_EQ(valueOf("0x2A"), 42);
  EXPECT_EQ(valueOf("052"), 42);
  EXPECT_EQ(valueOf("0b101010"), 42);
  EXPECT_EQ(valueOf("42U"), 42);
  EXPECT_EQ(valueOf("-42"), -42);
  EXPECT_EQ(valueOf("-0x80000000"), -2147483648LL);
  EXPECT_EQ(valueOf("0xFFFFFFFFFFFFFFFF"), -1) << "64-bit two's complement";
  EXPECT_EQ(valueOf("18446744073709551615U"), -1);
  EXPECT_EQ(valueOf("0"), 0);
  EXPECT_EQ(valueOf("00"), 0);
}

TEST(Operand, LiteralTooLargeForSixtyFourBitsHasNoValue) {
  Parsed P = parseBody("mov.b64 %rd1, 18446744073709551616;");
  ASSERT_TRUE(P.ok()) << "the parser keeps the text; ptxas judges the value";
  EXPECT_EQ(secondOperand(P).integerValue(), std::nullopt);
}

TEST(Operand, ConstantExpressions) {
  EXPECT_EQ(valueOf("(1 << 4) + 3"), 19);
  EXPECT_EQ(valueOf("(0x100 - 1) & 0xF0"), 0xF0);
  EXPECT_EQ(valueOf("(7 * 6) % 5"), 2);
  EXPECT_EQ(valueOf("-1 + 2"), 1) << "unary minus binds tighter than +";
  EXPECT_EQ(valueOf("2 + 3 * 4"), 14);
  EXPECT_EQ(valueOf("1 ? 5 : 6"), 5);
  EXPECT_EQ(valueOf("(3 > 2) + (3 == 2) + (1 && 0) + (1 || 0)"), 2);
  EXPECT_EQ(valueOf("~0 ^ 0xF"), ~int64_t(0xF));
  EXPECT_EQ(valueOf("-8 >> 1"), -4) << "signed shifts are arithmetic";
  EXPECT_EQ(valueOf("(.u64) -8 >> 60"), 15) << "a .u64 cast makes the shift logical";
  EXPECT_EQ(valueOf("-7 / 2"), -3);
  EXPECT_EQ(valueOf("7U / 2"), 3);
}

TEST(Operand, BadConstantExpressionsAreDiagnosedWhereTheyAre) {
  Parsed Div = parseBody("mov.b32 %r1, 4 / (2 - 2);");
  ASSERT_EQ(Div.Diags.size(), 1u) << Div.messages();
  EXPECT_EQ(Div.Diags[0].Message, "division by zero in a constant expression");
  EXPECT_EQ(Div.Diags[0].Column, 16u);

  Parsed Shift = parseBody("mov.b32 %r1, 1 << 64;");
  ASSERT_EQ(Shift.Diags.size(), 1u) << Shift.messages();
  EXPECT_EQ(Shift.Diags[0].Message, "shift count must be less than 64");

  Parsed Open = parseBody("mov.b32 %r1, (1 + 2;");
  ASSERT_EQ(Open.Diags.size(), 1u) << Open.messages();
  EXPECT_EQ(Open.Diags[0].Message, "expected ')' in the constant expression");
}

TEST(Operand, FloatLiterals) {
  Parsed P = parseBody("mov.f32 %f1, 0f3F800000;\nmov.f64 %fd1, 0dC000000000000000;\n"
                       "mov.f32 %f2, 1.25e1;\nmov.f32 %f3, -0.5;");
  ASSERT_TRUE(P.ok()) << P.messages();
  std::vector<const Instruction *> Is = instructions(*P.module().function("k"));
  EXPECT_EQ(Is[0]->operands()[1].floatValue(), 1.0);
  EXPECT_EQ(Is[0]->operands()[1].floatBits(), 0x3F800000u);
  EXPECT_EQ(Is[1]->operands()[1].floatValue(), -2.0);
  EXPECT_EQ(Is[2]->operands()[1].floatValue(), 12.5);
  EXPECT_EQ(Is[2]->operands()[1].floatBits(), std::nullopt) << "decimal, not a bit pattern";
  EXPECT_EQ(Is[3]->operands()[1].floatValue(), -0.5);
  EXPECT_EQ(Is[0]->operands()[1].integerValue(), std::nullopt);
}

TEST(Operand, AddressForms) {
  Parsed P = parseBody("ld.u32 %r1, [%rd1];\nld.u32 %r1, [%rd1+8];\nld.u32 %r1, [%rd1+-8];\n"
                       "ld.u32 %r1, [%rd1-8];\nld.u32 %r1, [%rd1+0x10];\nld.u32 %r1, [smem+65536];\n"
                       "ld.u32 %r1, [param0+0];\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  std::vector<const Instruction *> Is = instructions(*P.module().function("k"));
  auto Addr = [&](size_t I) { return Is[I]->operands()[1]; };
  EXPECT_FALSE(Addr(0).hasAddressOffset());
  EXPECT_EQ(Addr(0).addressOffset(), 0);
  EXPECT_EQ(Addr(0).addressBaseName(), "%rd1");
  EXPECT_EQ(Addr(1).addressOffset(), 8);
  EXPECT_EQ(Addr(2).addressOffset(), -8);
  EXPECT_EQ(Addr(3).addressOffset(), -8);
  EXPECT_EQ(Addr(4).addressOffset(), 16);
  // Offsets beyond 16 bits are kept as an Integer element rather than inline.
  EXPECT_FALSE(Addr(5).isInlineAddress());
  EXPECT_EQ(Addr(5).addressOffset(), 65536);
  EXPECT_EQ(Addr(5).addressBaseName(), "smem");
  EXPECT_TRUE(Addr(6).hasAddressOffset()) << "`+0` is remembered";
  for (size_t I = 0; I < Is.size(); ++I)
    EXPECT_TRUE(Addr(I).addressExtras().empty());
}

TEST(Operand, SpecialRegisterNames) {
  for (const char *Name : {"%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%smid",
                           "%clusterid", "%cluster_ctarank", "%cluster_nctarank", "%globaltimer",
                           "%clock64", "%envreg0", "%envreg31", "%pm7", "%pm3_64",
                           "%dynamic_smem_size", "%lanemask_lt"})
    EXPECT_TRUE(isSpecialRegisterName(Name)) << Name;
  for (const char *Name : {"%r1", "%tidx", "%envreg32", "%pm8", "tid", "%clock65"})
    EXPECT_FALSE(isSpecialRegisterName(Name)) << Name;

  Parsed P = parseBody("mov.u32 %r1, %ntid.y;\nmov.u32 %r2, %envreg3;\nmov.u32 %r3, %rtid;");
  ASSERT_TRUE(P.ok()) << P.messages();
  std::vector<const Instruction *> Is = instructions(*P.module().function("k"));
  EXPECT_TRUE(Is[0]->operands()[1].is(OperandKind::SpecialRegister));
  EXPECT_TRUE(Is[1]->operands()[1].is(OperandKind::SpecialRegister));
  EXPECT_TRUE(Is[2]->operands()[1].is(OperandKind::Name));
}

TEST(Operand, LocationsPointAtTheText) {
  Parsed P = parseBody("add.s32 %r1, %r22, 7;");
  ASSERT_TRUE(P.ok());
  const Instruction *I = firstInstruction(P.module());
  SourceLocation L = P.module().location(I->operands()[1]);
  EXPECT_EQ(L.Line, 6u);
  EXPECT_EQ(L.Column, 14u);
  EXPECT_EQ(I->operands()[1].text(), "%r22");
}

} // namespace
