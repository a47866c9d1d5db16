// Diagnostics: where and what they say, recovery to the next statement so that one run
// reports several errors, and the cap on their number.
#include "TestSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

TEST(Recovery, MessageLocationAndStyle) {
  Parsed P = parseBody("\tld.shared.u32 %r1, [%r2+4;");
  ASSERT_EQ(P.Diags.size(), 1u) << P.messages();
  const Diagnostic &D = P.Diags[0];
  EXPECT_EQ(D.Kind, llvm::SourceMgr::DK_Error);
  EXPECT_EQ(D.File, "test.ptx");
  EXPECT_EQ(D.Line, 6u);
  EXPECT_EQ(D.Column, 27u);
  EXPECT_EQ(D.Message, "expected ']' after address");
  // The house style: lowercase start, no final period.
  EXPECT_TRUE(std::islower(static_cast<unsigned char>(D.Message[0])));
  EXPECT_NE(D.Message.back(), '.');
}

TEST(Recovery, PrintedDiagnosticHasTheLineAndACaret) {
  Parsed P = parseBody("\tadd.s32 %r1, %r2 %r3;");
  ASSERT_EQ(P.Diags.size(), 1u);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  DiagnosticEngine::print(P.Diags[0], P.module().sourceMgr(), OS, /*Colors=*/false);
  // SMDiagnostic shows the tab as spaces up to column 8; the caret is under '%r3'.
  EXPECT_EQ(Out, "test.ptx:6:19: error: expected ',' or ';' after the operand\n"
                 "        add.s32 %r1, %r2 %r3;\n" +
                     std::string(8 + 17, ' ') + "^\n");
}

TEST(Recovery, SeveralErrorsInOneRunAndTheRestStillParses) {
  Parsed P = parseBody("\tadd.s32 %r1, %r2 %r3;\n"      // line 6
                       "\tmov.u32 %r4, 1;\n"            // fine
                       "\tld.u32 %r5, [%r6;\n"          // line 8
                       "\t.reg .b32 ;\n"                // line 9
                       "\tmov.u32 %r7, 2;\n"            // fine
                       "\tst.u32 [%r8], %r9, ;\n"       // line 11
                       "\tret;");
  ASSERT_EQ(P.Diags.size(), 4u) << P.messages();
  EXPECT_EQ(P.Diags[0].Line, 6u);
  EXPECT_EQ(P.Diags[1].Line, 8u);
  EXPECT_EQ(P.Diags[2].Line, 9u);
  EXPECT_EQ(P.Diags[2].Message, "expected a register name");
  EXPECT_EQ(P.Diags[3].Line, 11u);
  EXPECT_EQ(P.Diags[3].Message, "expected an operand");
  std::vector<std::string> Opcodes;
  for (const Instruction *I : instructions(*P.module().function("k")))
    Opcodes.push_back(I->opcode().str());
  EXPECT_EQ(Opcodes, (std::vector<std::string>{"mov.u32", "mov.u32", "ret"}));
}

TEST(Recovery, MissingSemicolonAtEndOfLineIsReportedOnceWhereItBelongs) {
  Parsed P = parseBody("\tmov.u32 %r1, 1\n\tmov.u32 %r2, 2;\n\tret");
  ASSERT_EQ(P.Diags.size(), 2u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "expected ';' at end of the instruction");
  EXPECT_EQ(P.Diags[0].Line, 6u);
  EXPECT_EQ(P.Diags[0].Column, 16u) << "just after the last operand";
  EXPECT_EQ(P.Diags[1].Line, 8u);
  EXPECT_EQ(instructions(*P.module().function("k")).size(), 3u)
      << "all three instructions are kept";
}

TEST(Recovery, MissingClosingBraceBeforeTheNextFunction) {
  Parsed P = parseItems(".visible .entry a()\n{\n\tret;\n"
                        ".visible .entry b()\n{\n\tret;\n}\n");
  ASSERT_EQ(P.Diags.size(), 1u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "expected '}' at end of the body of 'a'");
  EXPECT_EQ(P.Diags[0].Line, 7u);
  ASSERT_TRUE(P.module().function("b"));
  EXPECT_EQ(instructions(*P.module().function("b")).size(), 1u);
}

TEST(Recovery, ErrorsOutsideFunctions) {
  Parsed P = parseItems("add.s32 %r1, %r1, 1;\n}\n.global .u32 x\n.global .u32 ok;\n");
  ASSERT_EQ(P.Diags.size(), 3u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "instructions must be inside a function body");
  EXPECT_EQ(P.Diags[1].Message, "unexpected '}' outside a function");
  EXPECT_EQ(P.Diags[2].Message, "expected ';' at end of the declaration");
  EXPECT_TRUE(P.module().globalVariable("ok"));
}

TEST(Recovery, ErrorLimitStopsTheParse) {
  std::string Body;
  for (int I = 0; I < 100; ++I)
    Body += "\tadd.s32 %r1 %r2;\n";
  ParseOptions Options;
  Options.ErrorLimit = 5;
  Parsed P = parseBody(Body, Options);
  ASSERT_EQ(P.Diags.size(), 6u) << P.messages();
  EXPECT_EQ(P.Result.Errors, 5u);
  EXPECT_EQ(P.Diags[5].Message, "too many errors (5), stopping");
  EXPECT_EQ(P.Diags[5].Line, 0u) << "the stop notice has no location";

  Options.ErrorLimit = 0; // no limit
  Parsed All = parseBody(Body, Options);
  EXPECT_EQ(All.Result.Errors, 100u);
}

TEST(Recovery, LexerErrorsAreReportedOnceByTheParser) {
  Parsed P = parseBody("\tmov.u32 %r1, #;\n\tmov.u32 %r2, 0f12;\n\tret;");
  ASSERT_EQ(P.Diags.size(), 2u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "invalid character");
  EXPECT_EQ(P.Diags[0].Column, 15u);
  EXPECT_EQ(P.Diags[1].Message, "invalid floating-point literal");
}

TEST(Recovery, MissingVersionIsAnError) {
  Parsed Empty = parse("");
  ASSERT_EQ(Empty.Diags.size(), 1u);
  EXPECT_EQ(Empty.Diags[0].Message, "empty input: a PTX module starts with a '.version' directive");
  Parsed NoVersion = parse(".target sm_90a\n");
  ASSERT_EQ(NoVersion.Diags.size(), 1u);
  EXPECT_EQ(NoVersion.Diags[0].Message, "missing '.version' directive");
}

} // namespace
