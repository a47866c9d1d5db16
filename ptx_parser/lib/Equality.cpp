//===- Equality.cpp - structural equality of two modules --------------------------===//
#include "wsv/ptx_parser/Equality.h"
#include "wsv/ptx_parser/Lexer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv::ptx;
using llvm::ArrayRef;
using llvm::StringRef;

/// Expressions are equal when their tokens are, whatever the spacing and comments.
static bool sameTokens(StringRef A, StringRef B) {
  Lexer LA(A), LB(B);
  for (;;) {
    Token TA = LA.lex(), TB = LB.lex();
    if (TA.Kind != TB.Kind || TA.text() != TB.text())
      return false;
    if (TA.is(TokenKind::Eof))
      return true;
  }
}

bool wsv::ptx::operandsEqual(Operand A, Operand B) {
  if (A.kind() != B.kind() || A.isNegated() != B.isNegated() || A.isGeneric() != B.isGeneric())
    return false;
  if (A.is(OperandKind::Expression))
    return sameTokens(A.text(), B.text());
  if (A.isLeaf())
    return A.text() == B.text();
  if (A.is(OperandKind::Address)) {
    if (A.hasAddressOffset() != B.hasAddressOffset() ||
        A.isInlineAddress() != B.isInlineAddress())
      return false;
    if (A.isInlineAddress())
      return A.addressBaseName() == B.addressBaseName() && A.addressOffset() == B.addressOffset();
  }
  OperandRange EA = A.elements(), EB = B.elements();
  if (EA.size() != EB.size())
    return false;
  // Element trees are at most a few levels deep (initializer nesting is capped).
  for (size_t I = 0; I < EA.size(); ++I)
    if (!operandsEqual(EA[I], EB[I]))
      return false;
  return true;
}

namespace {

class Comparer {
public:
  Comparer(const Module &MA, std::string *Difference) : MA(MA), Difference(Difference) {}

  bool modules(const Module &A, const Module &B) {
    if (!list(A.items(), B.items(), nullptr))
      return false;
    return true;
  }

private:
  bool differ(const Statement *At, const llvm::Twine &What) {
    if (Difference) {
      Difference->clear();
      llvm::raw_string_ostream OS(*Difference);
      if (At) {
        SourceLocation L = MA.location(*At);
        OS << L.File << ':' << L.Line << ':' << L.Column << ": ";
      }
      OS << What;
    }
    return false;
  }

  bool operands(const Statement &At, OperandRange A, OperandRange B) {
    if (A.size() != B.size())
      return differ(&At, "operand count " + llvm::Twine(A.size()) + " differs from " +
                             llvm::Twine(B.size()));
    for (size_t I = 0; I < A.size(); ++I)
      if (!operandsEqual(A[I], B[I]))
        return differ(&At, "operand " + llvm::Twine(I + 1) + " differs");
    return true;
  }

  bool decl(const VariableDecl &A, const VariableDecl &B) {
    if (A.name() != B.name() || A.space() != B.space() || A.type() != B.type() ||
        A.linkage() != B.linkage() || A.alignment() != B.alignment() ||
        A.vectorWidth() != B.vectorWidth() || A.dimensions() != B.dimensions() ||
        A.isPointer() != B.isPointer() || A.pointerSpace() != B.pointerSpace() ||
        A.pointerAlignment() != B.pointerAlignment() || A.attribute() != B.attribute())
      return differ(&A, "declaration of '" + A.name() + "' differs");
    const Initializer *IA = A.initializer(), *IB = B.initializer();
    if (!IA || !IB) {
      if (IA != IB)
        return differ(&A, "initializer of '" + A.name() + "' is missing on one side");
      return true;
    }
    if (IA->isPacked() != IB->isPacked() || IA->size() != IB->size() ||
        IA->elementWidth() != IB->elementWidth() || IA->isSigned() != IB->isSigned() ||
        IA->isFloatBits() != IB->isFloatBits())
      return differ(&A, "initializer of '" + A.name() + "' differs");
    if (IA->isPacked()) {
      for (uint64_t I = 0; I < IA->size(); ++I)
        if (IA->element(I) != IB->element(I))
          return differ(&A, "initializer element " + llvm::Twine(I) + " of '" + A.name() +
                                "' differs");
      return true;
    }
    if (!operandsEqual(IA->value(), IB->value()))
      return differ(&A, "initializer of '" + A.name() + "' differs");
    return true;
  }

  bool decls(const Statement &At, ArrayRef<const VariableDecl *> A,
             ArrayRef<const VariableDecl *> B) {
    if (A.size() != B.size())
      return differ(&At, "parameter count differs");
    for (size_t I = 0; I < A.size(); ++I)
      if (!decl(*A[I], *B[I]))
        return false;
    return true;
  }

  bool directive(const Directive &A, const Directive &B) {
    if (A.name() != B.name() || A.hasSemicolon() != B.hasSemicolon())
      return differ(&A, "directive '" + A.name() + "' differs from '" + B.name() + "'");
    return operands(A, A.operands(), B.operands());
  }

  /// Everything but scopes' contents, which list() walks.
  bool simple(const Statement &SA, const Statement &SB) {
    if (SA.kind() != SB.kind())
      return differ(&SA, llvm::Twine(toString(SA.kind())) + " differs from " +
                             toString(SB.kind()));
    switch (SA.kind()) {
    case StmtKind::Instruction: {
      const auto &A = llvm::cast<Instruction>(SA), &B = llvm::cast<Instruction>(SB);
      if (A.opcode() != B.opcode())
        return differ(&SA, "opcode '" + A.opcode() + "' differs from '" + B.opcode() + "'");
      Operand GA = A.guard(), GB = B.guard();
      if (GA.isValid() != GB.isValid() || (GA && !operandsEqual(GA, GB)))
        return differ(&SA, "predicate guard differs");
      return operands(SA, A.operands(), B.operands());
    }
    case StmtKind::Label:
      if (llvm::cast<Label>(SA).name() != llvm::cast<Label>(SB).name())
        return differ(&SA, "label '" + llvm::cast<Label>(SA).name() + "' differs");
      return true;
    case StmtKind::Scope:
      return true;
    case StmtKind::RegisterDecl: {
      const auto &A = llvm::cast<RegisterDecl>(SA), &B = llvm::cast<RegisterDecl>(SB);
      if (A.type() != B.type() || A.vectorWidth() != B.vectorWidth() ||
          A.names().size() != B.names().size())
        return differ(&SA, "register declaration differs");
      for (size_t I = 0; I < A.names().size(); ++I) {
        const RegisterName &NA = A.names()[I], &NB = B.names()[I];
        if (NA.Name.str() != NB.Name.str() || NA.Count != NB.Count || NA.isRange() != NB.isRange())
          return differ(&SA, "register '" + NA.Name.str() + "' differs");
      }
      return true;
    }
    case StmtKind::VariableDecl:
      return decl(llvm::cast<VariableDecl>(SA), llvm::cast<VariableDecl>(SB));
    case StmtKind::Loc: {
      const auto &A = llvm::cast<LocDirective>(SA), &B = llvm::cast<LocDirective>(SB);
      if (A.fileIndex() != B.fileIndex() || A.sourceLine() != B.sourceLine() ||
          A.sourceColumn() != B.sourceColumn() || A.hasInlineInfo() != B.hasInlineInfo() ||
          A.functionNameLabel() != B.functionNameLabel() ||
          A.hasFunctionNameOffset() != B.hasFunctionNameOffset() ||
          A.functionNameOffset() != B.functionNameOffset() ||
          A.inlinedAtFile() != B.inlinedAtFile() || A.inlinedAtLine() != B.inlinedAtLine() ||
          A.inlinedAtColumn() != B.inlinedAtColumn())
        return differ(&SA, "'.loc' differs");
      return true;
    }
    case StmtKind::Directive:
      return directive(llvm::cast<Directive>(SA), llvm::cast<Directive>(SB));
    case StmtKind::TargetList: {
      const auto &A = llvm::cast<TargetList>(SA), &B = llvm::cast<TargetList>(SB);
      if (A.label() != B.label() || A.isBranchTargets() != B.isBranchTargets())
        return differ(&SA, "target list '" + A.label() + "' differs");
      return operands(SA, A.targets(), B.targets());
    }
    case StmtKind::CallPrototype: {
      const auto &A = llvm::cast<CallPrototype>(SA), &B = llvm::cast<CallPrototype>(SB);
      if (A.label() != B.label() || A.hasReturnList() != B.hasReturnList() ||
          A.isNoReturn() != B.isNoReturn())
        return differ(&SA, "'.callprototype' '" + A.label() + "' differs");
      return decls(SA, A.returns(), B.returns()) && decls(SA, A.params(), B.params());
    }
    case StmtKind::Version: {
      const auto &A = llvm::cast<VersionDirective>(SA), &B = llvm::cast<VersionDirective>(SB);
      if (A.text() != B.text())
        return differ(&SA, "'.version' differs");
      return true;
    }
    case StmtKind::Target:
      return operands(SA, llvm::cast<TargetDirective>(SA).names(),
                      llvm::cast<TargetDirective>(SB).names());
    case StmtKind::AddressSize:
      if (llvm::cast<AddressSizeDirective>(SA).bits() !=
          llvm::cast<AddressSizeDirective>(SB).bits())
        return differ(&SA, "'.address_size' differs");
      return true;
    case StmtKind::File: {
      const auto &A = llvm::cast<FileDirective>(SA), &B = llvm::cast<FileDirective>(SB);
      if (A.index() != B.index() || A.path() != B.path() ||
          A.hasTimestampAndSize() != B.hasTimestampAndSize() ||
          A.timestamp() != B.timestamp() || A.fileSize() != B.fileSize())
        return differ(&SA, "'.file' differs");
      return true;
    }
    case StmtKind::Function: {
      const auto &A = llvm::cast<Function>(SA), &B = llvm::cast<Function>(SB);
      if (A.name() != B.name() || A.isEntry() != B.isEntry() || A.linkage() != B.linkage() ||
          A.hasReturnList() != B.hasReturnList() || A.hasParamList() != B.hasParamList() ||
          A.isDefinition() != B.isDefinition() ||
          A.headerDirectives().size() != B.headerDirectives().size())
        return differ(&SA, "function '" + A.name() + "' differs");
      if (!decls(SA, A.returns(), B.returns()) || !decls(SA, A.params(), B.params()))
        return false;
      for (size_t I = 0; I < A.headerDirectives().size(); ++I)
        if (!directive(*A.headerDirectives()[I], *B.headerDirectives()[I]))
          return false;
      return true;
    }
    case StmtKind::Section: {
      const auto &A = llvm::cast<Section>(SA), &B = llvm::cast<Section>(SB);
      if (A.name() != B.name())
        return differ(&SA, "section name differs");
      return true;
    }
    case StmtKind::SectionData: {
      const auto &A = llvm::cast<SectionData>(SA), &B = llvm::cast<SectionData>(SB);
      if (A.width() != B.width() || A.isPacked() != B.isPacked() || A.size() != B.size())
        return differ(&SA, "section data differs");
      if (!A.isPacked())
        return operands(SA, A.operands(), B.operands());
      for (uint64_t I = 0; I < A.size(); ++I)
        if (A.value(I) != B.value(I))
          return differ(&SA, "section data value " + llvm::Twine(I) + " differs");
      return true;
    }
    }
    return true;
  }

  /// Children of a statement that holds a list: a function's body, a scope, a section.
  static ArrayRef<const Statement *> children(const Statement &S) {
    if (const auto *F = llvm::dyn_cast<Function>(&S))
      return F->body() ? F->body()->body() : ArrayRef<const Statement *>();
    if (const auto *Sc = llvm::dyn_cast<Scope>(&S))
      return Sc->body();
    if (const auto *Sec = llvm::dyn_cast<Section>(&S))
      return Sec->items();
    return {};
  }

  /// Compares two statement lists and everything nested in them, with an explicit stack.
  bool list(ArrayRef<const Statement *> A, ArrayRef<const Statement *> B, const Statement *Owner) {
    struct Frame {
      ArrayRef<const Statement *> A, B;
      const Statement *Owner;
      size_t Next;
    };
    llvm::SmallVector<Frame, 16> Stack;
    Stack.push_back({A, B, Owner, 0});
    while (!Stack.empty()) {
      Frame &F = Stack.back();
      if (F.Next == 0 && F.A.size() != F.B.size())
        return differ(F.Owner ? F.Owner : (F.A.empty() ? nullptr : F.A.front()),
                      "statement count " + llvm::Twine(F.A.size()) + " differs from " +
                          llvm::Twine(F.B.size()));
      if (F.Next == F.A.size()) {
        Stack.pop_back();
        continue;
      }
      const Statement &SA = *F.A[F.Next], &SB = *F.B[F.Next];
      ++F.Next;
      if (!simple(SA, SB))
        return false;
      ArrayRef<const Statement *> CA = children(SA), CB = children(SB);
      if (!CA.empty() || !CB.empty())
        Stack.push_back({CA, CB, &SA, 0});
    }
    return true;
  }

  const Module &MA;
  std::string *Difference;
};

} // namespace

bool wsv::ptx::structurallyEqual(const Module &A, const Module &B, std::string *Difference) {
  return Comparer(A, Difference).modules(A, B);
}
