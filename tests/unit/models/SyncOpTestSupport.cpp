//===- SyncOpTestSupport.cpp ------------------------------------------------------===//
#include "SyncOpTestSupport.h"

#include "wsv/ptx_parser/Printer.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::models;
using namespace wsv::models::test;

std::string wsv::models::test::wrapInKernel(llvm::StringRef Line, llvm::StringRef Target) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << ".version 9.0\n.target " << Target << "\n.address_size 64\n"
     << ".visible .entry k(.param .u64 tmap)\n{\n"
     << "  .reg .b32 %r<600>;\n  .reg .b64 %rd<100>;\n  .reg .pred %p<100>;\n"
     << "  .reg .b16 %rs<10>;\n  .reg .f32 %f<300>;\n"
     << "  .reg .pred P1, %px, %leader, p, complete;\n  .reg .b32 %rx, remAddr32;\n"
     << "  .reg .b64 %state, %desc_a, %desc_b;\n"
     << "  .shared .align 8 .b64 bars[8];\n"
     << "  " << Line << "\n  exit;\n}\n";
  return OS.str();
}

Line::Line(llvm::StringRef Text, llvm::StringRef Target)
    : Parsed(ptx::parseString(wrapInKernel(Text, Target), "line.ptx",
                              [](const ptx::Diagnostic &) {})) {
  if (!Parsed.ok() || Parsed.M->functions().size() != 1)
    return;
  const ptx::Function *F = Parsed.M->functions().front();
  llvm::ArrayRef<const ptx::Statement *> Body = F->body()->body();
  // The line is the statement before the final `exit`.
  const ptx::Instruction *Found = nullptr;
  unsigned Instructions = 0;
  for (const ptx::Statement *S : Body)
    if (auto *I = llvm::dyn_cast<ptx::Instruction>(S)) {
      ++Instructions;
      if (!Found)
        Found = I;
    }
  if (Instructions != 2)
    return;
  Inst = Found;
  Result = decodeSyncOp(*Inst);
}

std::string Line::describe() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  if (!parsed())
    OS << "the line did not parse";
  else if (Result.isDecoded())
    Result->print(OS);
  else if (Result.isUnrecognized())
    Result.printReason(OS);
  else
    OS << "not a synchronization instruction";
  return OS.str();
}

std::string wsv::models::test::text(ptx::Operand Op) {
  if (!Op)
    return "";
  std::string S;
  llvm::raw_string_ostream OS(S);
  ptx::printOperand(Op, OS);
  return OS.str();
}

std::string wsv::models::test::roleList(const SyncOp &Op) {
  std::string S;
  for (unsigned I = 0; I < Op.numRoles(); ++I) {
    if (I)
      S += ',';
    S += toString(Op.roleAt(I));
  }
  return S;
}
