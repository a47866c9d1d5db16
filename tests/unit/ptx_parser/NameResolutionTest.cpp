// Names resolve to the innermost scope that declares them, as in nvcc's inline-asm blocks
// where the same labels and registers come back in hundreds of sibling scopes.
#include "TestSupport.h"

#include "wsv/ptx_parser/NameResolution.h"

#include <gtest/gtest.h>

using namespace wsv::ptx;
using namespace wsv::ptx::test;

namespace {

/// One inline-asm wait loop as nvcc leaves it: own predicate, own WAIT and DONE labels.
std::string waitBlock(unsigned Stage) {
  return "\t{\n\t.reg .pred P1;\n\tWAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%r" +
         std::to_string(Stage) + "], %r9;\n\t@P1 bra DONE;\n\tbra.uni WAIT;\n\tDONE:\n\t}\n";
}

TEST(NameResolution, SiblingScopesWithTheSameLabelsStayApart) {
  std::string Body = "\t.reg .b32 %r<10>;\n";
  const unsigned Blocks = 300;
  for (unsigned I = 0; I < Blocks; ++I)
    Body += waitBlock(I % 9);
  Parsed P = parseBody(Body);
  ASSERT_TRUE(P.ok()) << P.messages();
  const Function &K = *P.module().function("k");
  NameResolver R(K);
  EXPECT_TRUE(R.redeclarations().empty()) << "sibling scopes do not clash";

  auto Scopes = statementsOf<Scope>(K);
  ASSERT_EQ(Scopes.size(), Blocks);
  unsigned Checked = 0;
  for (const Instruction *I : instructions(K)) {
    if (I->baseName() != "bra")
      continue;
    const Scope *S = R.scopeOf(*I);
    ASSERT_TRUE(S);
    const Label *Target = R.branchTarget(*I);
    ASSERT_TRUE(Target) << "branch to " << I->operands()[0].text().str();
    EXPECT_EQ(R.scopeOf(*Target), S) << "each branch lands in its own block";
    EXPECT_EQ(Target->name(), I->operands()[0].text());
    ++Checked;
  }
  EXPECT_EQ(Checked, 2 * Blocks);

  // P1 in a try_wait resolves to the .reg of its own block; %r3 to the body's range.
  for (const Instruction *I : instructions(K)) {
    if (I->baseName() != "mbarrier")
      continue;
    RegisterRef P1 = R.resolveRegister(*I, I->operands()[0]);
    ASSERT_TRUE(P1);
    EXPECT_EQ(P1.Decl->type(), ".pred");
    bool DeclaredInOwnScope = false;
    for (const Statement *S : R.scopeOf(*I)->body())
      DeclaredInOwnScope |= S == P1.Decl;
    EXPECT_TRUE(DeclaredInOwnScope);
    RegisterRef R9 = R.resolveRegister(*I, I->operands()[2]);
    ASSERT_TRUE(R9);
    EXPECT_EQ(R9.name().Name.str(), "%r");
    EXPECT_EQ(R9.name().Count, 10u);
  }
}

TEST(NameResolution, InnerDeclarationsShadowOuterOnes) {
  Parsed P = parseBody("\t.reg .b32 %rx;\n\t.reg .b32 %r<4>;\n"
                       "\tmov.u32 %rx, 1;\n"
                       "\t{\n\t.reg .b64 %rx;\n\tmov.u64 %rx, 2;\n\t@%p bra OUT;\n\t}\n"
                       "OUT:\n\tmov.u32 %r3, %r4;\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  const Function &K = *P.module().function("k");
  NameResolver R(K);
  std::vector<const Instruction *> Is = instructions(K);
  RegisterRef Outer = R.resolveRegister(*Is[0], Is[0]->operands()[0]);
  RegisterRef Inner = R.resolveRegister(*Is[1], Is[1]->operands()[0]);
  ASSERT_TRUE(Outer && Inner);
  EXPECT_EQ(Outer.Decl->type(), ".b32");
  EXPECT_EQ(Inner.Decl->type(), ".b64");
  // A branch inside a block reaches a label of the enclosing scope.
  const Label *Out = R.branchTarget(*Is[2]);
  ASSERT_TRUE(Out);
  EXPECT_EQ(Out->name(), "OUT");
  EXPECT_EQ(R.scopeOf(*Out), K.body());
  // %r3 is in %r<4>; %r4 is not; the guard %p is declared nowhere.
  EXPECT_TRUE(R.resolveRegister(*Is[3], Is[3]->operands()[0]));
  EXPECT_FALSE(R.resolveRegister(*Is[3], Is[3]->operands()[1]));
  EXPECT_FALSE(R.resolveRegister(*Is[2], Is[2]->guard()));
}

TEST(NameResolution, RegisterRangesUseCanonicalNumbers) {
  llvm::StringRef Prefix;
  uint64_t Index = 0;
  ASSERT_TRUE(splitRegisterName("%rd17", Prefix, Index));
  EXPECT_EQ(Prefix, "%rd");
  EXPECT_EQ(Index, 17u);
  ASSERT_TRUE(splitRegisterName("%r0", Prefix, Index));
  EXPECT_EQ(Index, 0u);
  EXPECT_FALSE(splitRegisterName("%r07", Prefix, Index)) << "%r<N> never declares %r07";
  EXPECT_FALSE(splitRegisterName("%rx", Prefix, Index));
  EXPECT_FALSE(splitRegisterName("17", Prefix, Index));
}

TEST(NameResolution, VariablesParametersAndPrototypes) {
  Parsed P = parseItems(".visible .entry k(.param .u64 k_param_0)\n{\n"
                        "\t.shared .align 8 .b8 bars[64];\n"
                        "\tld.param.u64 %rd1, [k_param_0];\n"
                        "\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0], %rd1;\n"
                        "\tproto: .callprototype _ (.param .b64 _);\n"
                        "\tcall %rd1, (param0), proto;\n\t}\n"
                        "\tmov.u32 %r1, bars;\n}\n");
  ASSERT_TRUE(P.ok()) << P.messages();
  const Function &K = *P.module().function("k");
  NameResolver R(K);
  std::vector<const Instruction *> Is = instructions(K);
  const Scope &Body = *K.body();
  ASSERT_TRUE(R.findVariable(Body, "k_param_0"));
  EXPECT_EQ(R.findVariable(Body, "k_param_0")->space(), ".param");
  EXPECT_TRUE(R.findVariable(Body, "bars"));
  EXPECT_FALSE(R.findVariable(Body, "param0")) << "declared only in the call block";
  const Scope *CallScope = R.scopeOf(*Is[2]);
  ASSERT_TRUE(CallScope);
  EXPECT_TRUE(R.findVariable(*CallScope, "param0"));
  const Statement *Proto = R.resolveLabel(*Is[2], Is[2]->operands()[2]);
  ASSERT_TRUE(Proto);
  EXPECT_TRUE(llvm::isa<CallPrototype>(Proto));
  EXPECT_FALSE(R.findLabel(Body, "proto")) << "the prototype label is local to its block";
}

TEST(NameResolution, RedeclarationsInOneScopeAreReported) {
  Parsed P = parseBody("\t.reg .b32 %r<4>;\n\t.reg .b32 %r<8>;\nL:\nL:\n\tret;");
  ASSERT_TRUE(P.ok()) << P.messages();
  NameResolver R(*P.module().function("k"));
  ASSERT_EQ(R.redeclarations().size(), 2u);
  EXPECT_EQ(R.redeclarations()[0].Name, "%r");
  EXPECT_EQ(R.redeclarations()[1].Name, "L");
  // The first declaration wins: %r5 is outside %r<4>.
  EXPECT_FALSE(R.findRegister(*P.module().function("k")->body(), "%r5"));
}

} // namespace
