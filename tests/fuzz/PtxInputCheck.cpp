//===- PtxInputCheck.cpp - what the PTX front end promises for any input ----------===//
//
// The promises, for any bytes at all:
//  - the lexer ends, every token lies inside the input and each starts after the last;
//  - the parser ends (libFuzzer's -timeout), stays linear in memory, and reports its errors
//    as diagnostics that point into the input and print as a bounded amount of text, however
//    long the offending line or token;
//  - the accessors later layers call (statistics, locations, name resolution, `.loc` chains,
//    operand values) work on whatever AST came back, including one with errors;
//  - a module that parsed without errors prints to text that parses without errors, is
//    structurally equal to the module, and prints to the very same bytes again.
// Crashes, leaks, overflows and undefined behaviour on the way are the sanitizers' to catch.
//
//===----------------------------------------------------------------------------------===//
#include "PtxInputCheck.h"

#include "wsv/ptx_parser/Diagnostics.h"
#include "wsv/ptx_parser/Equality.h"
#include "wsv/ptx_parser/Lexer.h"
#include "wsv/ptx_parser/NameResolution.h"
#include "wsv/ptx_parser/Parser.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace wsv;
using llvm::StringRef;

namespace {

/// Text shown from the input or the printed module when a promise breaks.
constexpr size_t ShownBytes = 4096;
/// AST bytes allowed per input byte (plus a constant). Real PTX needs about one, but a
/// one-byte `{` is a 56-byte scope node, so a million unclosed braces take 56 MB; the bound
/// only catches growth that is quadratic or otherwise out of proportion to the input.
constexpr size_t AstBytesPerInputByte = 64;
constexpr size_t AstBytesSlack = 1 << 20;
/// Labels of `.loc ... function_name` looked up in debug sections per input: each lookup
/// scans the sections, and a handful exercises the code without making the check quadratic.
constexpr unsigned MaxDebugStringLookups = 16;
/// Operand nesting followed when reading operand values; deeper elements are left alone so
/// that the check itself never recurses without bound.
constexpr unsigned MaxOperandDepth = 64;

[[noreturn]] void fail(const llvm::Twine &What, StringRef Shown = {}) {
  llvm::errs() << "wsv fuzz check failed: " << What << '\n';
  if (!Shown.empty())
    llvm::errs() << "---- text (first " << ShownBytes << " bytes) ----\n"
                 << Shown.take_front(ShownBytes) << "\n----\n";
  llvm::errs().flush();
  std::abort();
}

bool within(StringRef Buffer, const char *Ptr) {
  // The end itself is a valid place: errors at end of input point there.
  return Ptr >= Buffer.begin() && Ptr <= Buffer.end();
}

void checkLexer(StringRef Input) {
  ptx::Lexer Lex(Input);
  const char *PrevStart = nullptr;
  const char *PrevEnd = Input.begin();
  for (;;) {
    ptx::Token Tok = Lex.lex();
    if (!within(Input, Tok.Ptr) || !within(Input, Tok.Ptr + Tok.Length))
      fail("lexer returned a token outside the input");
    if (Tok.Ptr < PrevEnd)
      fail("lexer returned a token that overlaps the previous one");
    if (Tok.is(ptx::TokenKind::Eof))
      return;
    // A token may be empty, but two in a row at one place mean the lexer stopped moving.
    if (Tok.Length == 0 && Tok.Ptr == PrevStart && PrevEnd == PrevStart)
      fail("lexer does not advance");
    PrevStart = Tok.Ptr;
    PrevEnd = Tok.Ptr + Tok.Length;
  }
}

std::string printToString(const ptx::Module &M) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  ptx::printModule(M, OS);
  OS.flush();
  return Text;
}

void checkDiagnostics(const ptx::ParseResult &Result,
                      const std::vector<ptx::Diagnostic> &Diags) {
  const ptx::Module &M = *Result.M;
  unsigned ErrorsSeen = 0;
  for (const ptx::Diagnostic &D : Diags) {
    if (D.Kind == llvm::SourceMgr::DK_Error)
      ++ErrorsSeen;
    if (D.Message.empty())
      fail("diagnostic without a message");
    if (D.Loc.isValid()) {
      if (!within(M.source(), D.Loc.getPointer()))
        fail("diagnostic '" + D.Message + "' points outside the input");
      if (D.Line == 0 || D.Column == 0)
        fail("diagnostic '" + D.Message + "' has a location but no line and column");
    }
    // Printing is the path users see; a ten-megabyte line or token must not come out whole.
    std::string Printed;
    llvm::raw_string_ostream OS(Printed);
    ptx::DiagnosticEngine::print(D, M.sourceMgr(), OS, /*Colors=*/false);
    OS.flush();
    // The shown line is a window of 2 x LineWindow bytes; tabs in it may widen to 8 columns
    // in both the line and the caret line.
    size_t Bound = D.File.size() + 40 * ptx::DiagnosticEngine::LineWindow + 256;
    if (Printed.size() > Bound)
      fail("diagnostic prints " + llvm::Twine(Printed.size()) + " bytes", Printed);
  }
  if ((Result.Errors != 0) != (ErrorsSeen != 0))
    fail("parse result counts " + llvm::Twine(Result.Errors) + " errors but " +
         llvm::Twine(ErrorsSeen) + " error diagnostics were reported");
}

/// Reads the values of an operand and of its elements; what matters is that the accessors
/// neither crash nor point outside the input.
template <typename OperandT>
void visitOperand(const ptx::Module &M, const OperandT &Op, unsigned Depth) {
  if (!within(M.source(), Op.ptr()))
    fail("operand points outside the input");
  (void)Op.text();
  (void)Op.integerValue();
  (void)Op.floatValue();
  (void)Op.floatBits();
  if (Op.is(ptx::OperandKind::Address)) {
    (void)Op.addressBaseName();
    (void)Op.addressBaseInteger();
    (void)Op.addressOffset();
    for (auto &&Extra : Op.addressExtras())
      (void)Extra.text();
  }
  if (Depth < MaxOperandDepth)
    for (auto &&Element : Op.elements())
      visitOperand(M, Element, Depth + 1);
}

void checkInstruction(const ptx::Module &M, const ptx::NameResolver &Names,
                      const ptx::Instruction &I) {
  (void)I.baseName();
  for (StringRef Modifier : I.modifiers())
    (void)Modifier;
  for (auto &&Op : I.operands()) {
    visitOperand(M, Op, 0);
    if (!Op.is(ptx::OperandKind::Name))
      continue;
    if (ptx::RegisterRef Reg = Names.resolveRegister(I, Op)) {
      StringRef Declared = Reg.name().Name.str();
      if (Reg.name().isRange() ? !Op.text().starts_with(Declared) : Op.text() != Declared)
        fail("'" + Op.text() + "' resolves to the declaration of '" + Declared + "'");
    }
    (void)Names.resolveLabel(I, Op);
  }
  if (const ptx::Label *Target = Names.branchTarget(I)) {
    auto Ops = I.operands();
    if (Ops.empty() || Target->name() != Ops[Ops.size() - 1].text())
      fail("a branch resolves to label '" + Target->name() + "', which it does not name");
  }
  if (std::optional<ptx::CudaLocation> Cuda = M.cudaLocation(I)) {
    // inlinedAt() is an earlier `.loc`, so the chain ends; a cycle would hang here.
    for (const ptx::LocDirective *L = Cuda->Directive; L; L = L->inlinedAt())
      if (L->inlinedAt() && L->inlinedAt()->ptr() >= L->ptr())
        fail("'.loc' at line " + llvm::Twine(M.location(*L).Line) +
             " is inlined at a later '.loc'");
  }
}

void walkFunction(const ptx::Module &M, const ptx::Function &F, unsigned &DebugLookups) {
  for (const ptx::VariableDecl *Param : F.params())
    (void)Param->name();
  for (const ptx::Directive *D : F.headerDirectives())
    for (auto &&Op : D->operands())
      visitOperand(M, Op, 0);
  if (!F.isDefinition())
    return;
  ptx::NameResolver Names(F);
  llvm::DenseSet<StringRef> LookedUp;
  ptx::forEachStatement(*F.body(), [&](const ptx::Statement &S, const ptx::Scope &Parent) {
    if (llvm::isa<ptx::Instruction>(S) || llvm::isa<ptx::Label>(S) || llvm::isa<ptx::Scope>(S))
      if (Names.scopeOf(S) != &Parent)
        fail("name resolution places the " + llvm::Twine(ptx::toString(S.kind())) +
             " at line " + llvm::Twine(M.location(S).Line) + " in another scope");
    if (!within(M.source(), S.ptr()))
      fail("statement points outside the input");
    if (const auto *I = llvm::dyn_cast<ptx::Instruction>(&S))
      checkInstruction(M, Names, *I);
    else if (const auto *L = llvm::dyn_cast<ptx::LocDirective>(&S)) {
      if (L->hasInlineInfo() && DebugLookups < MaxDebugStringLookups &&
          LookedUp.insert(L->functionNameLabel()).second) {
        ++DebugLookups;
        (void)M.debugString(L->functionNameLabel());
      }
    } else if (const auto *D = llvm::dyn_cast<ptx::Directive>(&S)) {
      for (auto &&Op : D->operands())
        visitOperand(M, Op, 0);
    }
  });
}

void walkModule(const ptx::Module &M) {
  ptx::ModuleStats Stats = M.stats();
  if (Stats.Bytes != M.source().size())
    fail("statistics count " + llvm::Twine(Stats.Bytes) + " bytes of " +
         llvm::Twine(M.source().size()));
  if (M.astBytes() > AstBytesPerInputByte * M.source().size() + AstBytesSlack)
    fail("the AST takes " + llvm::Twine(M.astBytes()) + " bytes for " +
         llvm::Twine(M.source().size()) + " bytes of input");
  for (const ptx::Statement *Item : M.items()) {
    ptx::SourceLocation Loc = M.location(*Item);
    if (Loc.Line == 0 || Loc.Column == 0)
      fail("a top-level statement has no line and column");
  }
  unsigned DebugLookups = 0;
  for (const ptx::Function *F : M.functions())
    walkFunction(M, *F, DebugLookups);
}

ptx::DiagnosticHandler collectInto(std::vector<ptx::Diagnostic> &Diags) {
  return [&Diags](const ptx::Diagnostic &D) { Diags.push_back(D); };
}

std::string describe(const std::vector<ptx::Diagnostic> &Diags) {
  std::string Text;
  for (const ptx::Diagnostic &D : Diags)
    Text += D.File + ":" + std::to_string(D.Line) + ":" + std::to_string(D.Column) + ": " +
            D.Message + "\n";
  return Text;
}

} // namespace

void fuzz::checkPtxInput(StringRef Input, const CheckOptions &Options) {
  if (Input.size() > ptx::MaxSourceBytes)
    return; // refused before parsing; nothing to check
  checkLexer(Input);

  // Odd-sized inputs parse without an error limit, so recovery runs to the end of every
  // input; even-sized ones stop at the default limit, as `wsv parse` does.
  ptx::ParseOptions Parse;
  if (Input.size() % 2)
    Parse.ErrorLimit = 0;
  std::vector<ptx::Diagnostic> Diags;
  ptx::ParseResult First = ptx::parseString(Input, Options.Name, collectInto(Diags), Parse);
  checkDiagnostics(First, Diags);
  if (Options.ExpectClean && !First.ok())
    fail("PTX that ptxas accepts did not parse", describe(Diags));
  walkModule(*First.M);
  if (!First.ok())
    return;

  std::string Printed = printToString(*First.M);
  std::vector<ptx::Diagnostic> ReparseDiags;
  ptx::ParseResult Second =
      ptx::parseString(Printed, "printed.ptx", collectInto(ReparseDiags), Parse);
  if (!Second.ok())
    fail("the printed module does not parse: " + describe(ReparseDiags), Printed);
  std::string Difference;
  if (!ptx::structurallyEqual(*First.M, *Second.M, &Difference))
    fail("the printed module differs from the parsed one: " + Difference, Printed);
  if (printToString(*Second.M) != Printed)
    fail("printing the reparsed module gives different text", Printed);
}
