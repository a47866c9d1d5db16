// Inputs meant to break a parser: deep nesting, enormous lines, binary garbage, NUL bytes,
// truncation at every byte, oversized files. Each is generated here. The parser must report
// errors, never crash, hang or recurse without bound, and keep its diagnostics short.
#include "TestSupport.h"

#include "wsv/ptx_parser/Equality.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

/// Diagnostics printed as `wsv parse` prints them.
std::string printedDiagnostics(const Parsed &P) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  for (const Diagnostic &D : P.Diags)
    DiagnosticEngine::print(D, P.module().sourceMgr(), OS, /*Colors=*/false);
  return Out;
}

TEST(Adversarial, MillionNestedScopes) {
  const unsigned Depth = 1000000;
  std::string Body(Depth, '{');
  Body += "\nret;\n";
  Body.append(Depth, '}');
  {
    Parsed P = parseBody(Body);
    ASSERT_TRUE(P.ok()) << P.messages();
    const Scope *S = P.module().function("k")->body();
    unsigned Levels = 0;
    while (S->body().size() == 1 && llvm::isa<Scope>(S->body()[0])) {
      S = llvm::cast<Scope>(S->body()[0]);
      ++Levels;
    }
    EXPECT_EQ(Levels, Depth);
    EXPECT_EQ(S->depth(), Depth);
    ASSERT_EQ(S->body().size(), 1u);
    EXPECT_TRUE(llvm::isa<Instruction>(S->body()[0]));

    // Printing, reparsing and comparing are iterative too.
    std::string Printed = print(P.module());
    Parsed Again = parse(Printed);
    ASSERT_TRUE(Again.ok());
    EXPECT_TRUE(structurallyEqual(P.module(), Again.module()));
  } // and destroying a million scopes is freeing slabs
}

TEST(Adversarial, MillionUnclosedScopes) {
  Parsed P = parseBody(std::string(1000000, '{'));
  EXPECT_FALSE(P.ok());
  ASSERT_GE(P.Diags.size(), 1u);
  EXPECT_EQ(P.Diags[0].Message, "expected '}' at end of the body of 'k'");
}

TEST(Adversarial, MillionBracesOutsideAFunction) {
  Parsed P = parseItems(std::string(1000000, '{') + std::string(1000000, '}'));
  ASSERT_EQ(P.Diags.size(), 1u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "unexpected '{' outside a function");
}

TEST(Adversarial, TenMegabyteLineGivesAShortDiagnostic) {
  std::string Line;
  while (Line.size() < 10u * 1000 * 1000)
    Line += "add.s32 %r1, %r2, %r3; ";
  size_t ErrorColumn = Line.size() + 1 + 14; // the '%r3' after the missing comma below
  Line += "add.s32 %r1, %r2 %r3;";
  Parsed P = parseBody(Line);
  ASSERT_EQ(P.Diags.size(), 1u);
  EXPECT_EQ(P.Diags[0].Column, ErrorColumn + 3);
  std::string Printed = printedDiagnostics(P);
  EXPECT_LT(Printed.size(), 600u) << "the shown line is cut around the caret";
  EXPECT_NE(Printed.find("\n..."), std::string::npos) << "the cut is marked: " << Printed;
  EXPECT_NE(Printed.find("add.s32 %r1, %r2 %r3;\n"), std::string::npos) << Printed;
  EXPECT_GT(instructions(*P.module().function("k")).size(), 400000u);
}

TEST(Adversarial, TenMegabyteNameIsRefusedNotStored) {
  std::string Name(17u * 1024 * 1024, 'x');
  Parsed Operand = parseBody("mov.u32 %r1, " + Name + ";");
  ASSERT_EQ(Operand.Diags.size(), 1u) << Operand.messages();
  EXPECT_EQ(Operand.Diags[0].Message, "name is too long");
  EXPECT_LT(printedDiagnostics(Operand).size(), 600u);

  Parsed Opcode = parseBody(std::string(70000, 'y') + " %r1;");
  ASSERT_EQ(Opcode.Diags.size(), 1u) << Opcode.messages();
  EXPECT_EQ(Opcode.Diags[0].Message, "opcode is too long");
}

TEST(Adversarial, BinaryGarbage) {
  std::mt19937 Random(42);
  for (int Round = 0; Round < 20; ++Round) {
    std::string Bytes(1 << 16, '\0');
    for (char &C : Bytes)
      C = static_cast<char>(Random());
    Parsed P = parse(Bytes);
    EXPECT_FALSE(P.ok());
    EXPECT_LE(P.Diags.size(), DiagnosticEngine::DefaultErrorLimit + 1u);
    EXPECT_LT(printedDiagnostics(P).size(), 50000u);
  }
}

TEST(Adversarial, GarbageInsideAValidModule) {
  std::mt19937 Random(7);
  std::string Junk(4096, '\0');
  for (char &C : Junk)
    C = static_cast<char>(Random());
  Parsed P = parseBody("\tmov.u32 %r1, 1;\n" + Junk + "\n}\n.visible .entry after()\n{\n\tret;");
  EXPECT_FALSE(P.ok());
  // Whatever the junk did, the function after it is found.
  EXPECT_TRUE(P.module().function("after") || P.Result.Errors >= DiagnosticEngine::DefaultErrorLimit);
}

TEST(Adversarial, NulBytesAreInvalidCharacters) {
  std::string Body = "\tmov.u32 %r1, 1;";
  Body.push_back('\0');
  Body += "\n\tret;";
  Parsed P = parseBody(Body);
  ASSERT_EQ(P.Diags.size(), 1u) << P.messages();
  EXPECT_EQ(P.Diags[0].Message, "invalid character");
  EXPECT_EQ(instructions(*P.module().function("k")).size(), 2u);
  std::string Printed = printedDiagnostics(P);
  EXPECT_EQ(Printed.find('\0'), std::string::npos) << "control bytes are not echoed";
}

/// A module with most constructs, cut at every byte.
TEST(Adversarial, TruncatedAtEveryByte) {
  const std::string Full =
      std::string(ModuleHeader) +
      ".global .align 4 .b8 t[4] = {1, 2, 3, 4};\n"
      ".visible .entry k(.param .u64 p)\n.maxntid 128, 1, 1\n{\n"
      "\t.reg .b32 %r<4>;\n\t.loc 1 2 3, function_name $L__s0, inlined_at 1 1 1\n"
      "\t@%p1 add.s32 %r1, %r2, (3 + 1);\n"
      "\t{\n\t.reg .pred P1;\n\tL:\n\t@P1 bra L;\n\t}\n"
      "\tcp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
      "\tcall.uni (retval0), f, (param0);\n\t.pragma \"nounroll\";\n}\n"
      ".section .debug_str\n{\n$L__s0:\n.b8 1,2\n.b64 $L__s0+8\n}\n"
      ".file 1 \"k.cu\", 1, 2\n";
  ASSERT_TRUE(parse(Full).ok()) << parse(Full).messages();
  unsigned Clean = 0;
  for (size_t N = 0; N < Full.size(); ++N) {
    Parsed P = parse(llvm::StringRef(Full.data(), N));
    if (P.ok()) {
      ++Clean;
      // Whatever parsed cleanly must print and reparse to itself.
      Parsed Again = parse(print(P.module()));
      EXPECT_TRUE(structurallyEqual(P.module(), Again.module())) << "prefix of " << N;
    }
  }
  EXPECT_GT(Clean, 0u);
  EXPECT_LT(Clean, Full.size());
}

TEST(Adversarial, DeepInitializersAndExpressionsAreCapped) {
  Parsed Init = parseItems(".global .u32 x[1] = " + std::string(100000, '{') + "1" +
                           std::string(100000, '}') + ";\n");
  EXPECT_FALSE(Init.ok());
  ASSERT_GE(Init.Diags.size(), 1u);
  EXPECT_EQ(Init.Diags[0].Message, "initializer braces nest deeper than 64 levels");

  Parsed Expr = parseBody("mov.u32 %r1, " + std::string(1000000, '(') + "1" +
                          std::string(1000000, ')') + ";");
  EXPECT_FALSE(Expr.ok());
  ASSERT_GE(Expr.Diags.size(), 1u);
  EXPECT_EQ(Expr.Diags[0].Message, "constant expression nests too deeply");

  Parsed Unary = parseBody("mov.u32 %r1, " + std::string(1000000, '-') + "1;");
  EXPECT_FALSE(Unary.ok());
}

TEST(Adversarial, FilesOverFourGigabytesAreRefusedBeforeReading) {
  llvm::SmallString<128> Path;
  int FD = -1;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("wsv-huge", "ptx", FD, Path));
  // A sparse file: the size is recorded, no data is written or read.
  ASSERT_FALSE(llvm::sys::fs::resize_file(FD, MaxSourceBytes + 1));
  llvm::sys::Process::SafelyCloseFileDescriptor(FD);
  llvm::Expected<ParseResult> R = parseFile(Path);
  ASSERT_FALSE(R);
  std::string Message = llvm::toString(R.takeError());
  EXPECT_NE(Message.find("at most 4 GiB"), std::string::npos) << Message;
  llvm::sys::fs::remove(Path);
}

TEST(Adversarial, UnreadableFileIsAnEnvironmentError) {
  llvm::Expected<ParseResult> R = parseFile("/nonexistent/dir/kernel.ptx");
  ASSERT_FALSE(R);
  std::string Message = llvm::toString(R.takeError());
  EXPECT_NE(Message.find("cannot read '/nonexistent/dir/kernel.ptx'"), std::string::npos)
      << Message;
}

} // namespace
