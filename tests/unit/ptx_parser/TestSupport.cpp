#include "TestSupport.h"

#include "wsv/ptx_parser/Printer.h"

#include "llvm/Support/raw_ostream.h"

using namespace wsv::ptx;
using namespace wsv::ptx::test;

const char wsv::ptx::test::ModuleHeader[] = ".version 8.7\n.target sm_90a\n.address_size 64\n";

std::string Parsed::messages() const {
  std::string Out;
  for (const Diagnostic &D : Diags)
    Out += std::to_string(D.Line) + ":" + std::to_string(D.Column) + ": " + D.Message + "\n";
  return Out;
}

Parsed wsv::ptx::test::parse(llvm::StringRef Text, const ParseOptions &Options) {
  Parsed P;
  std::vector<Diagnostic> *Sink = &P.Diags;
  P.Result = parseString(Text, "test.ptx", [Sink](const Diagnostic &D) { Sink->push_back(D); },
                         Options);
  return P;
}

Parsed wsv::ptx::test::parseItems(llvm::StringRef Items, const ParseOptions &Options) {
  return parse((llvm::Twine(ModuleHeader) + Items).str(), Options);
}

Parsed wsv::ptx::test::parseBody(llvm::StringRef Body, const ParseOptions &Options) {
  return parseItems((llvm::Twine(".visible .entry k()\n{\n") + Body + "\n}\n").str(), Options);
}

const Function *wsv::ptx::test::findFunction(const Module &M, llvm::StringRef Name) {
  return M.function(Name);
}

std::vector<const Instruction *> wsv::ptx::test::instructions(const Function &F) {
  return statementsOf<Instruction>(F);
}

const Instruction *wsv::ptx::test::firstInstruction(const Module &M) {
  for (const Function *F : M.functions())
    if (F->body()) {
      std::vector<const Instruction *> Is = instructions(*F);
      return Is.empty() ? nullptr : Is.front();
    }
  return nullptr;
}

std::string wsv::ptx::test::print(const Module &M) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printModule(M, OS);
  return Out;
}
