// Source locations of statements, and the CUDA locations that `.loc` directives give
// instructions, including inlining chains.
#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

TEST(Location, StatementsKnowFileLineAndColumn) {
  Parsed P = parse(".version 8.7\n.target sm_90a\n.address_size 64\n"
                   ".visible .entry k()\n{\n"
                   "\t.reg .b32 %r<2>;\n"
                   "    @%p1 add.s32 %r1, %r1, 1;\n"
                   "L1:\n"
                   "\t{ ret; }\n"
                   "}\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  const Module &M = P.module();
  const Function &K = *M.function("k");
  SourceLocation FL = M.location(K);
  EXPECT_EQ(FL.File, "test.ptx");
  EXPECT_EQ(FL.Line, 4u);
  EXPECT_EQ(FL.Column, 1u);

  std::vector<const Instruction *> Is = instructions(K);
  ASSERT_EQ(Is.size(), 2u);
  SourceLocation Add = M.location(*Is[0]);
  EXPECT_EQ(Add.Line, 7u);
  EXPECT_EQ(Add.Column, 5u) << "an instruction starts at its guard";
  EXPECT_EQ(M.location(Is[0]->guard()).Column, 6u);
  EXPECT_EQ(M.location(*Is[1]).Line, 9u);
  EXPECT_EQ(M.location(*Is[1]).Column, 4u);
  EXPECT_EQ(M.location(*statementsOf<Label>(K)[0]).Line, 8u);
  EXPECT_EQ(M.location(*statementsOf<Scope>(K)[0]).Column, 2u);
  EXPECT_EQ(M.location(*statementsOf<RegisterDecl>(K)[0]).Line, 6u);
}

TEST(Location, EachInstructionKnowsTheLocThatGovernsIt) {
  Parsed P = parseItems(".visible .entry k()\n{\n"
                        "\tmov.u32 %r0, 0;\n"
                        "\t.loc 1 16 3\n"
                        "\tmov.u32 %r1, 1;\n"
                        "\t{\n\tmov.u32 %r2, 2;\n\t}\n"
                        "\t.loc 2 21 5\n"
                        "\tmov.u32 %r3, 3;\n"
                        "}\n"
                        ".visible .entry k2()\n{\n\tret;\n}\n"
                        ".file 1 \"/src/kernel.cu\"\n.file 2 \"/src/ptx_sync.cuh\"\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  const Module &M = P.module();
  std::vector<const Instruction *> Is = instructions(*M.function("k"));
  ASSERT_EQ(Is.size(), 4u);
  EXPECT_EQ(Is[0]->debugLoc(), nullptr) << "nothing before the first .loc";
  EXPECT_FALSE(M.cudaLocation(*Is[0]));
  std::optional<CudaLocation> L1 = M.cudaLocation(*Is[1]);
  ASSERT_TRUE(L1);
  EXPECT_EQ(L1->File, "/src/kernel.cu");
  EXPECT_EQ(L1->Line, 16u);
  EXPECT_EQ(L1->Column, 3u);
  EXPECT_EQ(Is[2]->debugLoc(), Is[1]->debugLoc()) << "a nested scope keeps the .loc before it";
  std::optional<CudaLocation> L3 = M.cudaLocation(*Is[3]);
  ASSERT_TRUE(L3);
  EXPECT_EQ(L3->File, "/src/ptx_sync.cuh");
  EXPECT_EQ(L3->Line, 21u);
  EXPECT_EQ(instructions(*M.function("k2"))[0]->debugLoc(), nullptr)
      << "a function does not inherit the last .loc of the one before";
}

TEST(Location, InlinedAtWalksTheCallChain) {
  // nvcc's shape: the call site's .loc comes first, then the callee's with inlined_at.
  Parsed P = parseItems(".visible .entry k()\n{\n"
                        "\t.loc 1 21 7\n"
                        "\t.loc 2 81 11, function_name $L__info_string2, inlined_at 1 21 7\n"
                        "\t.loc 3 5 1, function_name $L__info_string3+4, inlined_at 2 81 11\n"
                        "\tmov.u32 %r1, 1;\n"
                        "\t.loc 1 27 7\n"
                        "\t.loc 2 81 11, function_name $L__info_string2, inlined_at 1 27 7\n"
                        "\tmov.u32 %r2, 2;\n"
                        "\t.loc 2 90 1, function_name $L__info_string2, inlined_at 1 99 9\n"
                        "\tmov.u32 %r3, 3;\n"
                        "}\n"
                        ".section .debug_str\n{\n$L__info_string2:\n"
                        ".b8 95,90,78,51,119,115,118,0\n$L__info_string3:\n.b8 97,98,99,100,120,0\n}\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  const Module &M = P.module();
  std::vector<const Instruction *> Is = instructions(*M.function("k"));

  const LocDirective *Inner = Is[0]->debugLoc();
  ASSERT_TRUE(Inner && Inner->hasInlineInfo());
  EXPECT_EQ(Inner->sourceLine(), 5u);
  EXPECT_EQ(Inner->functionNameLabel(), "$L__info_string3");
  EXPECT_TRUE(Inner->hasFunctionNameOffset());
  EXPECT_EQ(Inner->functionNameOffset(), 4);
  const LocDirective *Middle = Inner->inlinedAt();
  ASSERT_TRUE(Middle);
  EXPECT_EQ(Middle->fileIndex(), 2u);
  EXPECT_EQ(Middle->sourceLine(), 81u);
  const LocDirective *Outer = Middle->inlinedAt();
  ASSERT_TRUE(Outer);
  EXPECT_EQ(Outer->sourceLine(), 21u);
  EXPECT_FALSE(Outer->hasInlineInfo());
  EXPECT_EQ(Outer->inlinedAt(), nullptr);
  EXPECT_EQ(M.debugString(Middle->functionNameLabel()), "_ZN3wsv");

  std::vector<CudaLocation> Chain = M.cudaLocationChain(*Is[0]);
  ASSERT_EQ(Chain.size(), 3u);
  EXPECT_EQ(Chain[0].Line, 5u);
  EXPECT_EQ(Chain[0].InlinedFunction, "x") << "4 bytes into $L__info_string3 (\"abcdx\")";
  EXPECT_EQ(Chain[1].Line, 81u);
  EXPECT_EQ(Chain[1].InlinedFunction, "_ZN3wsv");
  EXPECT_EQ(Chain[2].Line, 21u);
  EXPECT_EQ(Chain[2].InlinedFunction, "") << "the outermost location is not inlined";

  // The same callee line inlined at another call site resolves to that site.
  const LocDirective *Second = Is[1]->debugLoc();
  ASSERT_TRUE(Second && Second->inlinedAt());
  EXPECT_EQ(Second->inlinedAt()->sourceLine(), 27u);

  // An inlined_at with no .loc of its own before it has no call-site directive.
  const LocDirective *Orphan = Is[2]->debugLoc();
  ASSERT_TRUE(Orphan && Orphan->hasInlineInfo());
  EXPECT_EQ(Orphan->inlinedAtLine(), 99u);
  EXPECT_EQ(Orphan->inlinedAt(), nullptr);
}

TEST(Location, LocationOfPointersOnLongLines) {
  std::string Line(100000, ' ');
  Parsed P = parseBody(Line + "ret;");
  ASSERT_TRUE(P.ok()) << P.messages();
  SourceLocation L = P.module().location(*firstInstruction(P.module()));
  EXPECT_EQ(L.Line, 6u);
  EXPECT_EQ(L.Column, 100001u);
}

} // namespace
