//===- ParseFunctions.cpp - functions, bodies, scopes, labels, .loc ---------------===//
#include "ParserImpl.h"

using namespace wsv::ptx;
using llvm::StringRef;

static uint8_t linkageBit(StringRef D) {
  if (D == ".extern")
    return LinkageExtern;
  if (D == ".visible")
    return LinkageVisible;
  if (D == ".weak")
    return LinkageWeak;
  if (D == ".common")
    return LinkageCommon;
  return 0;
}

/// ::= {linkage} (function | variable)
bool Parser::parseLinkageItem() {
  const char *Start = Tok.Ptr;
  uint8_t Linkage = 0;
  while (Tok.is(TokenKind::Directive)) {
    uint8_t Bit = linkageBit(Tok.text());
    if (!Bit)
      break;
    Linkage |= Bit;
    next();
  }
  if (Tok.isDirective(".entry") || Tok.isDirective(".func"))
    return parseFunction(Start, Linkage);
  if (Tok.is(TokenKind::Directive) && isStateSpace(Tok.text())) {
    VariableDecl *V = parseVariableDecl(DeclContext::Module, Linkage, Start);
    if (!V)
      return true;
    Items.push_back(V);
    return false;
  }
  return expected("expected '.entry', '.func' or a state space after the linkage");
}

/// ::= (.entry | .func [(returns)]) name [(params)] {header-directive} ({ body } | ;)
bool Parser::parseFunction(const char *Start, uint8_t Linkage) {
  auto *F = create<Function>(Start);
  F->LinkageFlags = Linkage;
  bool Entry = Tok.isDirective(".entry");
  if (Entry)
    F->Flags |= Function::FlagEntry;
  next();
  llvm::SmallVector<const VariableDecl *, 8> Returns, Params;
  if (!Entry && Tok.is(TokenKind::LParen)) {
    if (parseParamList(Returns))
      return true;
    F->Flags |= Function::FlagReturnList;
  }
  if (Tok.isNot(TokenKind::Identifier))
    return expected(Entry ? "expected a kernel name after '.entry'"
                          : "expected a function name after '.func'");
  F->Name = Tok.text();
  next();
  if (Tok.is(TokenKind::LParen)) {
    if (parseParamList(Params))
      return true;
    F->Flags |= Function::FlagParamList;
  }
  F->Returns = copy<const VariableDecl *>(Returns);
  F->Params = copy<const VariableDecl *>(Params);

  llvm::SmallVector<const Directive *, 8> Header;
  while (Tok.is(TokenKind::Directive) && !startsModuleItem(Tok)) {
    Directive *D = parseDirective(/*Semicolon=*/Tok.isDirective(".pragma"));
    if (!D)
      return true;
    Header.push_back(D);
  }
  F->HeaderDirectives = copy<const Directive *>(Header);
  // Listed before the body is parsed, so that a function cut short still appears.
  Items.push_back(F);
  FunctionList.push_back(F);
  if (Tok.is(TokenKind::LBrace))
    return parseBody(*F);
  if (consumeIf(TokenKind::Semicolon))
    return false;
  return expected("expected '{' or ';' after the function header");
}

/// ::= ( [param {, param}] )
bool Parser::parseParamList(llvm::SmallVectorImpl<const VariableDecl *> &Params) {
  next(); // '('
  if (consumeIf(TokenKind::RParen))
    return false;
  do {
    if (!Tok.isDirective(".param") && !Tok.isDirective(".reg"))
      return expected("expected '.param' or '.reg' in a parameter list");
    VariableDecl *V = parseVariableDecl(DeclContext::Param, 0, Tok.Ptr);
    if (!V)
      return true;
    Params.push_back(V);
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RParen, "at the end of the parameter list");
}

void Parser::openScope(const Token &Brace) {
  Scope *Parent = ScopeStack.empty() ? nullptr : ScopeStack.back().Node;
  auto *S = create<Scope>(Brace.Ptr, Parent);
  if (Parent)
    addStatement(S);
  ScopeStack.push_back({S, StmtStack.size()});
}

void Parser::closeScope() {
  OpenScope Top = ScopeStack.back();
  ScopeStack.pop_back();
  Top.Node->Body = copy<const Statement *>(
      llvm::ArrayRef<const Statement *>(StmtStack).drop_front(Top.FirstStatement));
  StmtStack.resize(Top.FirstStatement);
}

/// ::= { {statement | scope} }
/// Scopes nest with an explicit stack: each open scope owns the tail of StmtStack from its
/// first statement on, and closing it moves that tail into the scope node.
bool Parser::parseBody(Function &F) {
  assert(ScopeStack.empty() && StmtStack.empty() && "bodies do not nest");
  CurrentLoc = nullptr;
  LocsSeen.clear();
  openScope(Tok);
  F.Body = ScopeStack.back().Node;
  next();
  while (!ScopeStack.empty()) {
    if (stop())
      break;
    if (Tok.is(TokenKind::Eof)) {
      Diags.error(llvm::SMLoc::getFromPointer(PrevEnd),
                  llvm::Twine("expected '}' at end of the body of '") + F.name() + "'");
      break;
    }
    if (Tok.is(TokenKind::RBrace)) {
      closeScope();
      next();
      continue;
    }
    if (Tok.is(TokenKind::LBrace)) {
      openScope(Tok);
      next();
      continue;
    }
    if (Tok.AtLineStart && startsModuleItem(Tok)) {
      expected(llvm::Twine("expected '}' at end of the body of '") + F.name() + "'");
      break;
    }
    const char *Before = Tok.Ptr;
    if (parseBodyStatement()) {
      recover(Before);
      if (Tok.Ptr == Before && Tok.isNot(TokenKind::Eof))
        next();
    }
  }
  // A body cut short (end of file, a new function, too many errors) still gets its scopes.
  while (!ScopeStack.empty())
    closeScope();
  return false;
}

bool Parser::parseBodyStatement() {
  switch (Tok.Kind) {
  case TokenKind::Identifier:
    if (peek().is(TokenKind::Colon))
      return parseLabelOrTargets();
    return parseInstruction();
  case TokenKind::At:
    return parseInstruction();
  case TokenKind::Directive: {
    StringRef D = Tok.text();
    if (D == ".reg")
      return parseRegisterDecl();
    if (D == ".loc")
      return parseLoc();
    if (isStateSpace(D)) {
      VariableDecl *V = parseVariableDecl(DeclContext::Body, 0, Tok.Ptr);
      if (!V)
        return true;
      addStatement(V);
      return false;
    }
    if (D == ".file" || D == ".section" || D == ".version" || D == ".target" ||
        D == ".address_size")
      return expected(llvm::Twine("'") + D + "' is not allowed inside a function body");
    // `.pragma`, and directives wsv does not know yet: kept as written.
    Directive *Dir = parseDirective(/*Semicolon=*/true);
    if (!Dir)
      return true;
    addStatement(Dir);
    return false;
  }
  case TokenKind::Semicolon:
    next();
    return false;
  case TokenKind::Error:
    return true;
  default:
    return expected("expected an instruction, a label or a directive");
  }
}

/// ::= label ':'
///   | label ':' .branchtargets name {, name} ';'
///   | label ':' .calltargets name {, name} ';'
///   | label ':' .callprototype ...
bool Parser::parseLabelOrTargets() {
  Token LabelTok = Tok;
  next(); // name
  next(); // ':'
  if (Tok.isDirective(".branchtargets") || Tok.isDirective(".calltargets"))
    return parseTargetList(LabelTok, Tok.isDirective(".calltargets"));
  if (Tok.isDirective(".callprototype"))
    return parseCallPrototype(LabelTok);
  addStatement(create<Label>(LabelTok.Ptr, LabelTok.Length));
  return false;
}

bool Parser::parseTargetList(const Token &LabelTok, bool CallTargets) {
  auto *T = create<TargetList>(LabelTok.Ptr, LabelTok.Length);
  if (CallTargets)
    T->Flags |= TargetList::FlagCallTargets;
  next();
  Ops.clear();
  do {
    if (Tok.isNot(TokenKind::Identifier))
      return expected(CallTargets ? "expected a function name in '.calltargets'"
                                  : "expected a label in '.branchtargets'");
    Ops.Top.push_back(leaf(Tok, OperandKind::Name));
    next();
  } while (consumeIf(TokenKind::Comma));
  if (materializeOperands(T->Ptr, T->Targets, T->NumTargets))
    return true;
  if (expectSemicolon(CallTargets ? "'.calltargets'" : "'.branchtargets'"))
    return true;
  addStatement(T);
  return false;
}

/// ::= label ':' .callprototype [(returns)] '_' (params) [.noreturn] ';'
bool Parser::parseCallPrototype(const Token &LabelTok) {
  auto *P = create<CallPrototype>(LabelTok.Ptr, LabelTok.Length);
  next();
  llvm::SmallVector<const VariableDecl *, 4> Returns, Params;
  if (Tok.is(TokenKind::LParen)) {
    if (parseParamList(Returns))
      return true;
    P->Flags |= CallPrototype::FlagReturnList;
  }
  if (Tok.isNot(TokenKind::Identifier) || Tok.text() != "_")
    return expected("expected '_' in place of the function name in '.callprototype'");
  next();
  if (Tok.isNot(TokenKind::LParen))
    return expected("expected '(' before the parameters of '.callprototype'");
  if (parseParamList(Params))
    return true;
  if (Tok.isDirective(".noreturn")) {
    P->Flags |= CallPrototype::FlagNoReturn;
    next();
  }
  P->Returns = copy<const VariableDecl *>(Returns);
  P->Params = copy<const VariableDecl *>(Params);
  if (expectSemicolon("'.callprototype'"))
    return true;
  addStatement(P);
  return false;
}

/// ::= .loc file line column [, function_name label [+ offset], inlined_at file line column]
bool Parser::parseLoc() {
  auto *L = create<LocDirective>(Tok.Ptr);
  next();
  uint64_t Values[3];
  static const char *const What[3] = {"a file index", "a line number", "a column number"};
  for (unsigned I = 0; I < 3; ++I) {
    const char *At = Tok.Ptr;
    if (parseIntegerToken(Values[I], What[I]))
      return true;
    if (Values[I] > UINT32_MAX)
      return error(At, llvm::Twine(What[I]) + " is too large");
  }
  L->FileIndex = static_cast<uint32_t>(Values[0]);
  L->SourceLine = static_cast<uint32_t>(Values[1]);
  L->SourceColumn = static_cast<uint32_t>(Values[2]);
  if (Tok.is(TokenKind::Comma) && !Tok.AtLineStart) {
    auto *Extra = create<LocDirective::InlineInfo>();
    L->Extra = Extra;
    next();
    if (Tok.isNot(TokenKind::Identifier) || Tok.text() != "function_name")
      return expected("expected 'function_name' after ',' in '.loc'");
    next();
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected a label after 'function_name'");
    Extra->FunctionName = {Tok.Ptr, Tok.Length};
    next();
    if (Tok.is(TokenKind::Plus)) {
      next();
      uint64_t Offset = 0;
      if (parseIntegerToken(Offset, "an offset after '+'"))
        return true;
      Extra->FunctionNameOffset = static_cast<int64_t>(Offset);
      Extra->HasOffset = true;
    }
    if (expect(TokenKind::Comma, "before 'inlined_at'"))
      return true;
    if (Tok.isNot(TokenKind::Identifier) || Tok.text() != "inlined_at")
      return expected("expected 'inlined_at' in '.loc'");
    next();
    uint64_t At[3];
    for (unsigned I = 0; I < 3; ++I) {
      const char *Where = Tok.Ptr;
      if (parseIntegerToken(At[I], What[I]))
        return true;
      if (At[I] > UINT32_MAX)
        return error(Where, llvm::Twine(What[I]) + " is too large");
    }
    Extra->File = static_cast<uint32_t>(At[0]);
    Extra->Line = static_cast<uint32_t>(At[1]);
    Extra->Column = static_cast<uint32_t>(At[2]);
    // The call site is the latest `.loc` with the coordinates that inlined_at names.
    Extra->Parent = LocsSeen.lookup({Extra->File, Extra->Line, Extra->Column});
  }
  LocsSeen[{L->FileIndex, L->SourceLine, L->SourceColumn}] = L;
  CurrentLoc = L;
  addStatement(L);
  return false;
}
