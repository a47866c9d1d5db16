// Structural equality ignores layout, comments and locations, and notices any change in
// content.
#include "TestSupport.h"

#include "wsv/ptx_parser/Equality.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

const char Base[] = ".global .align 4 .b8 t[4] = {1, 2, 3, 4};\n"
                    ".visible .entry k(.param .u64 p)\n.maxntid 128, 1, 1\n{\n"
                    "\t.reg .b32 %r<4>;\n"
                    "\t.loc 1 2 3\n"
                    "\t@%p1 add.s32 %r1, %r2, 3;\n"
                    "\t{\n\t.reg .pred P1;\n\tL:\n\t@P1 bra L;\n\t}\n"
                    "\tld.global.u32 %r3, [%rd1+8];\n"
                    "\t.pragma \"nounroll\";\n"
                    "}\n"
                    ".section .debug_str\n{\nS:\n.b8 1,2\n}\n";

bool equalTo(llvm::StringRef Items, std::string *Why = nullptr) {
  Parsed A = parseItems(Base);
  Parsed B = parseItems(Items);
  EXPECT_TRUE(A.ok()) << A.messages();
  EXPECT_TRUE(B.ok()) << B.messages();
  return structurallyEqual(A.module(), B.module(), Why);
}

/// Base with the first occurrence of From replaced by To.
std::string mutate(llvm::StringRef From, llvm::StringRef To) {
  std::string S = Base;
  size_t Pos = S.find(From.str());
  EXPECT_NE(Pos, std::string::npos) << From.str();
  return S.replace(Pos, From.size(), To.str());
}

TEST(Equality, LayoutAndCommentsDoNotMatter) {
  std::string Reflowed = mutate("\t@%p1 add.s32 %r1, %r2, 3;\n",
                                "/* c */ @%p1   add.s32\n %r1 ,%r2,  // x\n 3 ;\n");
  std::string Why;
  EXPECT_TRUE(equalTo(Reflowed, &Why)) << Why;
  EXPECT_TRUE(equalTo(mutate(".b8 1,2", ".b8 1\n.b8 2"), &Why)) << Why;
  EXPECT_TRUE(equalTo(mutate("{1, 2, 3, 4}", "{ 1,2,\n3 , 4 }"), &Why)) << Why;
}

TEST(Equality, EveryKindOfChangeIsNoticed) {
  struct Change {
    const char *From, *To, *Why;
  } Changes[] = {
      {"add.s32", "sub.s32", "opcode"},
      {"%r2, 3;", "%r2, 4;", "immediate"},
      {"%r2, 3;", "%r3, 3;", "register"},
      {"@%p1 add", "@!%p1 add", "guard negation"},
      {"@%p1 add", "add", "guard presence"},
      {"[%rd1+8]", "[%rd1+16]", "address offset"},
      {"[%rd1+8]", "[%rd1]", "address offset presence"},
      {"\tL:\n\t@P1 bra L;", "\tM:\n\t@P1 bra M;", "label"},
      {"\t@P1 bra L;\n\t}\n\tld.global.u32 %r3, [%rd1+8];",
       "\t@P1 bra L;\n\tld.global.u32 %r3, [%rd1+8];\n\t}",
       "scope structure (a statement moved into the block)"},
      {".reg .b32 %r<4>", ".reg .b32 %r<5>", "register range"},
      {".reg .pred P1", ".reg .b32 P1", "register type"},
      {".loc 1 2 3", ".loc 1 2 4", ".loc column"},
      {"\"nounroll\"", "\"unroll\"", "pragma operand"},
      {".maxntid 128, 1, 1", ".maxntid 256, 1, 1", "header directive"},
      {".param .u64 p", ".param .u32 p", "parameter type"},
      {"{1, 2, 3, 4}", "{1, 2, 3, 5}", "packed initializer element"},
      {".align 4 .b8 t", ".align 8 .b8 t", "alignment"},
      {".visible .entry", ".entry", "linkage"},
      {".b8 1,2", ".b8 1,3", "section data"},
      {"S:", "T:", "section label"},
  };
  for (const Change &C : Changes) {
    std::string Why;
    EXPECT_FALSE(equalTo(mutate(C.From, C.To), &Why)) << "missed a change of " << C.Why;
    EXPECT_FALSE(Why.empty()) << C.Why;
  }
}

TEST(Equality, DifferenceNamesTheFirstOneWithItsLocation) {
  std::string Why;
  ASSERT_FALSE(equalTo(mutate("add.s32", "sub.s32"), &Why));
  // Line 10, column 2: the instruction starts at its guard, after the tab.
  EXPECT_EQ(Why, "test.ptx:10:2: opcode 'add.s32' differs from 'sub.s32'");
}

TEST(Equality, ModulesOfDifferentLength) {
  Parsed A = parseItems(".global .u32 a;\n");
  Parsed B = parseItems(".global .u32 a;\n.global .u32 b;\n");
  std::string Why;
  EXPECT_FALSE(structurallyEqual(A.module(), B.module(), &Why));
  EXPECT_NE(Why.find("statement count"), std::string::npos) << Why;
  EXPECT_FALSE(structurallyEqual(B.module(), A.module()));
}

TEST(Equality, ExpressionsCompareByTokens) {
  Parsed A = parseBody("add.s32 %r1, %r1, (2+3)*4;");
  Parsed B = parseBody("add.s32 %r1, %r1, ( 2 + 3 ) /* five */ * 4;");
  Parsed C = parseBody("add.s32 %r1, %r1, 20;");
  EXPECT_TRUE(structurallyEqual(A.module(), B.module()));
  EXPECT_FALSE(structurallyEqual(A.module(), C.module())) << "same value, different text";
}

} // namespace
