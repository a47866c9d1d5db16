// Every synchronization instruction of the committed corpus, mutated: each modifier dropped,
// doubled or replaced by an unknown word, an operand dropped or added. Whatever a mutant is,
// decoding it must not crash (this test runs under WSV_SANITIZE too), a record must name only
// operands that exist, and two forms no PTX has must never decode: an unknown modifier, and a
// modifier written twice.
#include "SyncOpTestSupport.h"

#include "wsv/ptx_parser/Parser.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::models;
using namespace wsv::models::test;

namespace {

/// An instruction taken apart into the pieces the mutations change.
struct Parts {
  std::string Guard; ///< `@%p1 ` or empty
  std::string Base;
  std::vector<std::string> Modifiers;
  std::vector<std::string> Operands;

  std::string text() const {
    std::string S = Guard + Base;
    for (const std::string &M : Modifiers)
      S += "." + M;
    for (size_t I = 0; I < Operands.size(); ++I)
      S += (I ? ", " : " ") + Operands[I];
    return S + ";";
  }
};

Parts partsOf(const ptx::Instruction &I) {
  Parts P;
  if (ptx::Operand G = I.guard())
    P.Guard = "@" + text(G) + " ";
  P.Base = I.baseName().str();
  for (llvm::StringRef M : I.modifiers())
    P.Modifiers.push_back(M.str());
  for (ptx::Operand Op : I.operands())
    P.Operands.push_back(text(Op));
  return P;
}

/// The synchronization instructions of the committed corpus, one of each distinct text.
std::vector<Parts> corpusSyncInstructions() {
  std::vector<Parts> Out;
  std::set<std::string> Seen;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(WSV_CORPUS_DIR, EC), End;
       It != End && !EC; It.increment(EC)) {
    if (llvm::sys::path::extension(It->path()) != ".ptx")
      continue;
    auto Result = ptx::parseFile(It->path(), [](const ptx::Diagnostic &) {});
    if (!Result) {
      llvm::consumeError(Result.takeError());
      continue;
    }
    for (const ptx::Function *F : Result->M->functions()) {
      if (!F->body())
        continue;
      ptx::forEachStatement(*F->body(), [&](const ptx::Statement &S, const ptx::Scope &) {
        const auto *I = llvm::dyn_cast<ptx::Instruction>(&S);
        if (!I || !decodeSyncOp(*I).isSyncRelevant())
          return;
        Parts P = partsOf(*I);
        if (Seen.insert(P.text()).second)
          Out.push_back(P);
      });
    }
  }
  return Out;
}

/// The invariants every result must keep. Returns whether the mutant parsed.
bool checkResult(const Line &L, const std::string &Text) {
  if (!L.parsed())
    return false; // a mutant the parser rejects is the parser's business
  const SyncDecodeResult &R = L.result();
  if (R.isUnrecognized()) {
    EXPECT_FALSE(R.reason().empty()) << Text;
    return true;
  }
  if (!R.isDecoded())
    return true;
  const SyncOp &Op = R.op();
  std::set<OperandRole> Roles;
  for (unsigned I = 0; I < Op.numRoles(); ++I) {
    EXPECT_TRUE(Op.operandAt(I).isValid()) << Text;
    EXPECT_TRUE(Roles.insert(Op.roleAt(I)).second)
        << Text << ": role " << toString(Op.roleAt(I)) << " named twice";
  }
  EXPECT_LE(Op.numRoles(), L.instruction().operands().size() + 1) << Text;
  std::string Printed;
  llvm::raw_string_ostream OS(Printed);
  Op.print(OS);
  EXPECT_FALSE(OS.str().empty());
  for (const ModelStep &S : modelSteps(Op)) {
    if (S.Amount == AmountSource::Operand) {
      EXPECT_TRUE(Op.has(S.AmountRole))
          << Text << ": model step reads " << toString(S.AmountRole) << ", which is absent";
    }
  }
  return true;
}

TEST(SyncOpMutation, MutantsNeverCrashAndUnknownOrDoubledModifiersNeverDecode) {
  std::vector<Parts> Instructions = corpusSyncInstructions();
  ASSERT_GE(Instructions.size(), 50u) << "too few synchronization instructions in the corpus";
  unsigned Mutants = 0, Parsed = 0;
  for (const Parts &Original : Instructions) {
    for (size_t M = 0; M < Original.Modifiers.size(); ++M) {
      Parts Dropped = Original;
      Dropped.Modifiers.erase(Dropped.Modifiers.begin() + M);
      Line DroppedLine(Dropped.text());
      Parsed += checkResult(DroppedLine, Dropped.text());

      Parts Doubled = Original;
      Doubled.Modifiers.insert(Doubled.Modifiers.begin() + M, Original.Modifiers[M]);
      Line DoubledLine(Doubled.text());
      Parsed += checkResult(DoubledLine, Doubled.text());
      if (DoubledLine.parsed()) {
        EXPECT_FALSE(DoubledLine.result().isDecoded())
            << Doubled.text() << " decoded: " << DoubledLine.describe();
      }

      Parts Unknown = Original;
      Unknown.Modifiers[M] = "frobnicate";
      Line UnknownLine(Unknown.text());
      Parsed += checkResult(UnknownLine, Unknown.text());
      if (UnknownLine.parsed()) {
        EXPECT_FALSE(UnknownLine.result().isDecoded())
            << Unknown.text() << " decoded: " << UnknownLine.describe();
      }
      Mutants += 3;
    }
    if (!Original.Operands.empty()) {
      Parts Fewer = Original;
      Fewer.Operands.pop_back();
      Line FewerLine(Fewer.text());
      Parsed += checkResult(FewerLine, Fewer.text());
      ++Mutants;
    }
    Parts More = Original;
    More.Operands.push_back("%r1");
    Line MoreLine(More.text());
    Parsed += checkResult(MoreLine, More.text());
    ++Mutants;
  }
  EXPECT_GE(Mutants, 500u);
  // Mutants keep the PTX grammar, so nearly all of them must reach the decoder.
  EXPECT_GE(Parsed * 10, Mutants * 9) << Parsed << " of " << Mutants << " mutants parsed";
}

} // namespace
