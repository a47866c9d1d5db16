//===- Printer.cpp - a Module back to PTX text ------------------------------------===//
//
// Layout follows nvcc's: one statement per line, a tab of indentation per scope, a tab
// between opcode and operands. Nested scopes are printed with an explicit stack, and
// indentation stops growing at MaxIndent so that a million nested braces print in linear
// space.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/ptx_parser/Printer.h"
#include "wsv/ptx_parser/Lexer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"

using namespace wsv::ptx;
using llvm::raw_ostream;
using llvm::StringRef;

namespace {

constexpr unsigned MaxIndent = 16;
/// Values per line when printing packed section data.
constexpr uint64_t ValuesPerLine = 32;

void indent(raw_ostream &OS, unsigned Depth) {
  for (unsigned I = 0, E = Depth < MaxIndent ? Depth : MaxIndent; I < E; ++I)
    OS << '\t';
}

void printOperands(OperandRange Ops, raw_ostream &OS) {
  for (size_t I = 0; I < Ops.size(); ++I) {
    if (I)
      OS << ", ";
    printOperand(Ops[I], OS);
  }
}

void printLinkage(unsigned Linkage, raw_ostream &OS) {
  if (Linkage & LinkageExtern)
    OS << ".extern ";
  if (Linkage & LinkageVisible)
    OS << ".visible ";
  if (Linkage & LinkageWeak)
    OS << ".weak ";
  if (Linkage & LinkageCommon)
    OS << ".common ";
}

void printPackedValue(uint64_t Value, unsigned Width, bool Signed, bool FloatBits,
                      raw_ostream &OS) {
  if (FloatBits) {
    OS << (Width == 4 ? "0f" : "0d") << llvm::format_hex_no_prefix(Value, Width * 2, true);
    return;
  }
  if (Signed && Width < 8 && (Value >> (Width * 8 - 1)) & 1)
    OS << static_cast<int64_t>(Value | (~uint64_t(0) << (Width * 8)));
  else if (Signed)
    OS << static_cast<int64_t>(Value);
  else
    OS << Value;
}

void printInitializer(const Initializer &Init, raw_ostream &OS) {
  if (!Init.isPacked()) {
    printOperand(Init.value(), OS);
    return;
  }
  OS << '{';
  for (uint64_t I = 0; I < Init.size(); ++I) {
    if (I)
      OS << ", ";
    printPackedValue(Init.element(I), Init.elementWidth(), Init.isSigned(), Init.isFloatBits(),
                     OS);
  }
  OS << '}';
}

/// A declaration without its ';' (parameters have none).
void printDecl(const VariableDecl &V, raw_ostream &OS) {
  printLinkage(V.linkage(), OS);
  OS << V.space();
  if (!V.attribute().empty())
    OS << " .attribute(" << V.attribute() << ')';
  if (V.alignment())
    OS << " .align " << V.alignment();
  if (V.vectorWidth())
    OS << " .v" << V.vectorWidth();
  OS << ' ' << V.type();
  if (V.isPointer()) {
    OS << " .ptr" << V.pointerSpace();
    if (V.pointerAlignment())
      OS << ".align " << V.pointerAlignment();
  }
  OS << ' ' << V.name();
  for (int64_t D : V.dimensions()) {
    if (D < 0)
      OS << "[]";
    else
      OS << '[' << D << ']';
  }
  if (const Initializer *Init = V.initializer()) {
    OS << " = ";
    printInitializer(*Init, OS);
  }
}

void printParamList(llvm::ArrayRef<const VariableDecl *> Params, raw_ostream &OS,
                    bool OneLine) {
  OS << '(';
  for (size_t I = 0; I < Params.size(); ++I) {
    OS << (I ? "," : "") << (OneLine ? (I ? " " : "") : "\n\t");
    printDecl(*Params[I], OS);
  }
  OS << (OneLine || Params.empty() ? ")" : "\n)");
}

void printDirective(const Directive &D, raw_ostream &OS) {
  OS << D.name();
  if (!D.operands().empty()) {
    OS << ' ';
    printOperands(D.operands(), OS);
  }
  if (D.hasSemicolon())
    OS << ';';
}

void printSectionData(const SectionData &D, raw_ostream &OS) {
  if (!D.isPacked()) {
    OS << ".b" << D.width() * 8 << ' ';
    printOperands(D.operands(), OS);
    OS << '\n';
    return;
  }
  for (uint64_t I = 0; I < D.size(); ++I) {
    OS << (I % ValuesPerLine == 0 ? (I ? "\n.b" : ".b") : ",");
    if (I % ValuesPerLine == 0)
      OS << D.width() * 8 << ' ';
    OS << D.value(I);
  }
  OS << '\n';
}

/// Statements that are not scopes or functions, at the given depth.
void printSimple(const Statement &S, unsigned Depth, raw_ostream &OS) {
  switch (S.kind()) {
  case StmtKind::Instruction: {
    const auto &I = llvm::cast<Instruction>(S);
    indent(OS, Depth);
    if (Operand G = I.guard())
      OS << (G.isNegated() ? "@!" : "@") << G.text() << ' ';
    OS << I.opcode();
    if (!I.operands().empty()) {
      OS << '\t';
      printOperands(I.operands(), OS);
    }
    OS << ";\n";
    return;
  }
  case StmtKind::Label:
    OS << llvm::cast<Label>(S).name() << ":\n";
    return;
  case StmtKind::RegisterDecl: {
    const auto &R = llvm::cast<RegisterDecl>(S);
    indent(OS, Depth);
    OS << ".reg ";
    if (R.vectorWidth())
      OS << ".v" << R.vectorWidth() << ' ';
    OS << R.type() << ' ';
    for (size_t I = 0; I < R.names().size(); ++I) {
      const RegisterName &N = R.names()[I];
      OS << (I ? ", " : "") << N.Name.str();
      if (N.isRange())
        OS << '<' << N.Count << '>';
    }
    OS << ";\n";
    return;
  }
  case StmtKind::VariableDecl:
    indent(OS, Depth);
    printDecl(llvm::cast<VariableDecl>(S), OS);
    OS << ";\n";
    return;
  case StmtKind::Loc: {
    const auto &L = llvm::cast<LocDirective>(S);
    indent(OS, Depth);
    OS << ".loc\t" << L.fileIndex() << ' ' << L.sourceLine() << ' ' << L.sourceColumn();
    if (L.hasInlineInfo()) {
      OS << ", function_name " << L.functionNameLabel();
      if (L.hasFunctionNameOffset())
        OS << '+' << L.functionNameOffset();
      OS << ", inlined_at " << L.inlinedAtFile() << ' ' << L.inlinedAtLine() << ' '
         << L.inlinedAtColumn();
    }
    OS << '\n';
    return;
  }
  case StmtKind::Directive:
    indent(OS, Depth);
    printDirective(llvm::cast<Directive>(S), OS);
    OS << '\n';
    return;
  case StmtKind::TargetList: {
    const auto &T = llvm::cast<TargetList>(S);
    OS << T.label() << ": " << (T.isBranchTargets() ? ".branchtargets " : ".calltargets ");
    printOperands(T.targets(), OS);
    OS << ";\n";
    return;
  }
  case StmtKind::CallPrototype: {
    const auto &P = llvm::cast<CallPrototype>(S);
    OS << P.label() << ": .callprototype ";
    if (P.hasReturnList()) {
      printParamList(P.returns(), OS, /*OneLine=*/true);
      OS << ' ';
    }
    OS << "_ ";
    printParamList(P.params(), OS, /*OneLine=*/true);
    if (P.isNoReturn())
      OS << " .noreturn";
    OS << ";\n";
    return;
  }
  case StmtKind::Version:
    OS << ".version " << llvm::cast<VersionDirective>(S).text() << '\n';
    return;
  case StmtKind::Target:
    OS << ".target ";
    printOperands(llvm::cast<TargetDirective>(S).names(), OS);
    OS << '\n';
    return;
  case StmtKind::AddressSize:
    OS << ".address_size " << llvm::cast<AddressSizeDirective>(S).bits() << '\n';
    return;
  case StmtKind::File: {
    const auto &F = llvm::cast<FileDirective>(S);
    OS << ".file\t" << F.index() << " \"" << F.path() << '"';
    if (F.hasTimestampAndSize())
      OS << ", " << F.timestamp() << ", " << F.fileSize();
    OS << '\n';
    return;
  }
  case StmtKind::Section: {
    const auto &Sec = llvm::cast<Section>(S);
    OS << ".section\t" << Sec.name() << "\n{\n";
    for (const Statement *Item : Sec.items()) {
      if (const auto *D = llvm::dyn_cast<SectionData>(Item))
        printSectionData(*D, OS);
      else
        printSimple(*Item, 0, OS);
    }
    OS << "}\n";
    return;
  }
  case StmtKind::SectionData:
    printSectionData(llvm::cast<SectionData>(S), OS);
    return;
  case StmtKind::Scope:
  case StmtKind::Function:
    break;
  }
  llvm_unreachable("scopes and functions are printed by printBody and printFunction");
}

/// A scope and everything in it, iteratively.
void printBody(const Scope &Body, unsigned Depth, raw_ostream &OS) {
  struct Frame {
    const Scope *S;
    size_t Next;
    unsigned Depth;
  };
  llvm::SmallVector<Frame, 16> Stack;
  indent(OS, Depth);
  OS << "{\n";
  Stack.push_back({&Body, 0, Depth});
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    if (F.Next == F.S->body().size()) {
      indent(OS, F.Depth);
      OS << "}\n";
      Stack.pop_back();
      continue;
    }
    const Statement *S = F.S->body()[F.Next++];
    unsigned Inner = F.Depth + 1;
    if (const auto *Nested = llvm::dyn_cast<Scope>(S)) {
      indent(OS, Inner);
      OS << "{\n";
      Stack.push_back({Nested, 0, Inner});
      continue;
    }
    printSimple(*S, Inner, OS);
  }
}

void printFunction(const Function &F, raw_ostream &OS) {
  printLinkage(F.linkage(), OS);
  OS << (F.isEntry() ? ".entry " : ".func ");
  if (F.hasReturnList()) {
    printParamList(F.returns(), OS, /*OneLine=*/true);
    OS << ' ';
  }
  OS << F.name();
  if (F.hasParamList())
    printParamList(F.params(), OS, /*OneLine=*/false);
  OS << '\n';
  for (const Directive *D : F.headerDirectives()) {
    printDirective(*D, OS);
    OS << '\n';
  }
  if (const Scope *Body = F.body())
    printBody(*Body, 0, OS);
  else
    OS << ";\n";
}

} // namespace

void wsv::ptx::printOperand(Operand Op, raw_ostream &OS) {
  switch (Op.kind()) {
  case OperandKind::Name:
  case OperandKind::SpecialRegister:
  case OperandKind::Sink:
    if (Op.isNegated())
      OS << '!';
    if (Op.isGeneric())
      OS << "generic(" << Op.text() << ')';
    else
      OS << Op.text();
    return;
  case OperandKind::Integer:
  case OperandKind::Float:
    if (Op.isNegated())
      OS << '-';
    OS << Op.text();
    return;
  case OperandKind::String:
    OS << Op.text();
    return;
  case OperandKind::Expression: {
    // Token by token, so comments and line breaks inside the span do not travel along.
    Lexer Lex(Op.text());
    bool First = true;
    for (Token T = Lex.lex(); T.isNot(TokenKind::Eof); T = Lex.lex()) {
      OS << (First ? "" : " ") << T.text();
      First = false;
    }
    return;
  }
  case OperandKind::Address: {
    OS << '[';
    if (Op.isInlineAddress()) {
      OS << Op.addressBaseName();
      if (Op.hasAddressOffset())
        OS << '+' << *Op.addressOffset();
    } else {
      printOperand(Op.elements()[0], OS);
      if (Op.hasAddressOffset()) {
        Operand Offset = Op.elements()[1];
        OS << (Offset.isNegated() ? "+-" : "+") << Offset.text();
      }
      for (Operand Extra : Op.addressExtras()) {
        OS << ", ";
        printOperand(Extra, OS);
      }
    }
    OS << ']';
    return;
  }
  case OperandKind::Vector:
    OS << '{';
    printOperands(Op.elements(), OS);
    OS << '}';
    return;
  case OperandKind::Pair:
    printOperand(Op.first(), OS);
    OS << '|';
    printOperand(Op.second(), OS);
    return;
  case OperandKind::List:
    OS << '(';
    printOperands(Op.elements(), OS);
    OS << ')';
    return;
  case OperandKind::SymbolOffset: {
    printOperand(Op.elements()[0], OS);
    Operand Offset = Op.elements()[1];
    OS << (Offset.isNegated() ? '-' : '+') << Offset.text();
    return;
  }
  case OperandKind::SymbolDifference:
    printOperand(Op.elements()[0], OS);
    OS << '-';
    printOperand(Op.elements()[1], OS);
    return;
  case OperandKind::Assignment:
    printOperand(Op.elements()[0], OS);
    OS << " = ";
    printOperand(Op.elements()[1], OS);
    return;
  }
}

void wsv::ptx::printStatement(const Statement &S, raw_ostream &OS) {
  if (const auto *F = llvm::dyn_cast<Function>(&S))
    printFunction(*F, OS);
  else if (const auto *Sc = llvm::dyn_cast<Scope>(&S))
    printBody(*Sc, Sc->depth(), OS);
  else
    printSimple(S, 0, OS);
}

void wsv::ptx::printModule(const Module &M, raw_ostream &OS) {
  StmtKind Previous = StmtKind::Version;
  for (const Statement *S : M.items()) {
    // A blank line around functions and sections, as compilers lay modules out.
    bool Big = S->kind() == StmtKind::Function || S->kind() == StmtKind::Section;
    if (Big || Previous == StmtKind::Function || Previous == StmtKind::Section)
      OS << '\n';
    if (const auto *V = llvm::dyn_cast<VariableDecl>(S)) {
      printDecl(*V, OS);
      OS << ";\n";
    } else if (const auto *D = llvm::dyn_cast<Directive>(S)) {
      printDirective(*D, OS);
      OS << '\n';
    } else {
      printStatement(*S, OS);
    }
    Previous = S->kind();
  }
}
