//===- ParseOperands.cpp - instructions and their operands ------------------------===//
#include "ConstantExpr.h"
#include "ParserImpl.h"

using namespace wsv::ptx;
using llvm::StringRef;

//===--- Operand layout ------------------------------------------------------------------===//

OperandData OperandBuilder::closeList(size_t From, OperandKind Kind, const char *Ptr) {
  OperandData List;
  List.Ptr = Ptr;
  List.Kind = Kind;
  List.Rel = static_cast<int64_t>(Children.size());
  List.Len = static_cast<uint32_t>(Open.size() - From);
  Children.append(Open.begin() + From, Open.end());
  Open.resize(From);
  return List;
}

static bool hasElements(const OperandData &D) {
  return D.Kind > OperandKind::Expression && !(D.Flags & OperandSlot::FlagInlineAddress);
}

static bool write(OperandSlot &Dest, const OperandData &D, int64_t Index, const char *Base) {
  int64_t Offset;
  uint32_t Len = D.Len;
  if (hasElements(D)) {
    Offset = D.Rel - Index;
  } else {
    Offset = D.Ptr - Base;
    if (D.Flags & OperandSlot::FlagInlineAddress)
      Len = D.Len | static_cast<uint32_t>(static_cast<uint16_t>(D.Rel)) << 8;
  }
  if (Offset > INT32_MAX || Offset < INT32_MIN)
    return false;
  Dest.Offset = static_cast<int32_t>(Offset);
  Dest.Len = Len;
  Dest.Kind = static_cast<uint32_t>(D.Kind);
  Dest.Flags = D.Flags;
  return true;
}

bool OperandBuilder::materialize(OperandSlot *Dest, const char *Base) const {
  // Elements are laid out after the top-level operands: Children[J] lands at NumTop + J, so
  // a composite's element index Rel (into Children) becomes NumTop + Rel.
  const int64_t NumTop = static_cast<int64_t>(Top.size());
  bool Ok = true;
  for (int64_t I = 0; I < NumTop; ++I) {
    OperandData D = Top[I];
    if (hasElements(D))
      D.Rel += NumTop;
    Ok &= write(Dest[I], D, I, Base);
  }
  for (int64_t J = 0, E = static_cast<int64_t>(Children.size()); J < E; ++J) {
    OperandData D = Children[J];
    if (hasElements(D))
      D.Rel += NumTop;
    Ok &= write(Dest[NumTop + J], D, NumTop + J, Base);
  }
  return Ok;
}

bool Parser::materializeOperands(const char *Base, const OperandSlot *&Slots, uint32_t &Count) {
  Slots = nullptr;
  Count = static_cast<uint32_t>(Ops.Top.size());
  size_t N = Ops.total();
  if (!N)
    return false;
  auto *Dest = M.Alloc.Allocate<OperandSlot>(N);
  if (!Ops.materialize(Dest, Base))
    return error(Base, "statement is too long: its operands lie 2 GiB or more from its start");
  Slots = Dest;
  return false;
}

OperandData Parser::leaf(const Token &T, OperandKind Kind, uint8_t Flags) {
  OperandData D;
  D.Ptr = T.Ptr;
  D.Len = T.Length;
  D.Kind = Kind;
  D.Flags = Flags;
  return D;
}

/// Sink, SpecialRegister or Name. Called for every register operand, so the common register
/// spellings (%r12, %rd3, %f7, %p1, %rs2, %fd4) are told apart without a table lookup.
static OperandKind nameKind(StringRef Name) {
  if (Name.size() == 1 && Name[0] == '_')
    return OperandKind::Sink;
  if (Name.size() < 3 || Name[0] != '%')
    return OperandKind::Name;
  switch (Name[1]) {
  case 'r':
    if (Name[2] != 'e') // only %reserved_smem_offset_* among the special registers
      return OperandKind::Name;
    break;
  case 'p':
    if (Name[2] != 'm') // only %pm0..%pm7
      return OperandKind::Name;
    break;
  case 'f':
  case 'h':
  case 'S':
  case 'x':
  case 'b':
    return OperandKind::Name;
  default:
    break;
  }
  StringRef Base = Name.substr(0, Name.find('.'));
  return isSpecialRegisterName(Base) ? OperandKind::SpecialRegister : OperandKind::Name;
}

/// Leaves are limited to 16 MiB of text by the 24-bit length; longer ones are refused.
static constexpr uint32_t MaxLeafLength = (1u << 24) - 1;

//===--- Instructions ---------------------------------------------------------------------===//

/// ::= [@[!]pred] opcode [operand {, operand}] ;
bool Parser::parseInstruction() {
  const char *Start = Tok.Ptr;
  Ops.clear();
  if (Tok.is(TokenKind::At)) {
    next();
    uint8_t Flags = consumeIf(TokenKind::Exclaim) ? OperandSlot::FlagNegated : 0;
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected a predicate after '@'");
    if (Tok.Length > MaxLeafLength)
      return expected("predicate name is too long");
    Ops.Top.push_back(leaf(Tok, nameKind(Tok.text()), Flags));
    next();
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected an opcode after the predicate guard");
  }
  Token Opcode = Tok;
  if (Opcode.Length > UINT16_MAX)
    return expected("opcode is too long");
  // `(a, b)` is an argument list in a call and a parenthesized constant anywhere else.
  StringRef Op = Opcode.text();
  InCall = Op.size() >= 4 && Op[0] == 'c' && Op[1] == 'a' && Op[2] == 'l' && Op[3] == 'l' &&
           (Op.size() == 4 || Op[4] == '.');
  next();
  // A statement start on the next line means the ';' is missing, not that operands follow.
  bool NoOperands = Tok.is(TokenKind::Semicolon) || Tok.is(TokenKind::Eof) ||
                    (Tok.AtLineStart && (Tok.is(TokenKind::Directive) || Tok.is(TokenKind::At) ||
                                         Tok.is(TokenKind::RBrace)));
  if (!NoOperands) {
    do {
      if (parseOperand(Ops.Top))
        return true;
    } while (consumeIf(TokenKind::Comma));
  }
  if (Tok.isNot(TokenKind::Semicolon) && !Tok.AtLineStart && Tok.isNot(TokenKind::Eof) &&
      Tok.isNot(TokenKind::RBrace))
    return expected("expected ',' or ';' after the operand");
  if (expectSemicolon("the instruction"))
    return true;

  size_t N = Ops.total();
  if (Ops.Top.size() > UINT16_MAX)
    return error(Start, "instruction has too many operands");
  void *Mem = M.Alloc.Allocate(sizeof(Instruction) + N * sizeof(OperandSlot), alignof(Instruction));
  auto *I = new (Mem) Instruction(Start);
  // The opcode is found from the statement's start; a guard separated from its opcode by
  // more than 64 KiB (only ever in hostile input) gives up the guard's position instead.
  if (Opcode.Ptr - Start > UINT16_MAX)
    I->Ptr = Opcode.Ptr;
  I->Aux = static_cast<uint16_t>(Opcode.Ptr - I->Ptr);
  I->OpcodeLength = static_cast<uint16_t>(Opcode.Length);
  I->NumOperands = static_cast<uint16_t>(Ops.Top.size());
  if (Start != Opcode.Ptr)
    I->Flags |= Instruction::FlagGuarded;
  I->DebugLoc = CurrentLoc;
  if (!Ops.materialize(reinterpret_cast<OperandSlot *>(I + 1), I->Ptr))
    return error(Start, "instruction is too long: its operands lie 2 GiB or more from its start");
  addStatement(I);
  return false;
}

/// ::= address | vector | call-list | !name | [-] number | string | name [| name]
///   | name (+|-) int | generic(name) [(+|-) int]
bool Parser::parseOperand(llvm::SmallVectorImpl<OperandData> &Out) {
  switch (Tok.Kind) {
  case TokenKind::LBracket:
    return parseAddress(Out);
  case TokenKind::LBrace:
    return parseBraceVector(Out);
  case TokenKind::LParen:
    if (InCall)
      return parseCallList(Out);
    return parseNumber(Out);
  case TokenKind::Exclaim: {
    if (peek().isNot(TokenKind::Identifier))
      return parseNumber(Out);
    next();
    if (Tok.Length > MaxLeafLength)
      return expected("name is too long");
    Out.push_back(leaf(Tok, nameKind(Tok.text()), OperandSlot::FlagNegated));
    next();
    return false;
  }
  case TokenKind::Minus:
  case TokenKind::Plus:
  case TokenKind::Tilde:
  case TokenKind::Integer:
  case TokenKind::Float:
    return parseNumber(Out);
  case TokenKind::String:
    if (Tok.Length > MaxLeafLength)
      return expected("string is too long");
    Out.push_back(leaf(Tok, OperandKind::String));
    next();
    return false;
  case TokenKind::Identifier: {
    OperandData D;
    if (parseSymbolExpression(D))
      return true;
    if (Tok.is(TokenKind::Pipe) && (D.Kind == OperandKind::Name || D.Kind == OperandKind::Sink)) {
      const char *Ptr = D.Ptr;
      size_t From = Ops.Open.size();
      Ops.Open.push_back(D);
      next();
      if (Tok.isNot(TokenKind::Identifier))
        return expected("expected a second destination after '|'");
      Ops.Open.push_back(leaf(Tok, nameKind(Tok.text())));
      next();
      Out.push_back(Ops.closeList(From, OperandKind::Pair, Ptr));
      return false;
    }
    Out.push_back(D);
    return false;
  }
  default:
    return expected("expected an operand");
  }
}

/// ::= [-] int | [-] float | constant-expression
/// A lone literal (with its sign) stays an Integer or Float operand; anything longer becomes
/// an Expression operand holding its source span, validated and evaluated here so that a
/// bad expression is reported where it is.
bool Parser::parseNumber(llvm::SmallVectorImpl<OperandData> &Out) {
  const char *Start = Tok.Ptr;
  bool Negative = Tok.is(TokenKind::Minus);
  State Saved;
  if (Negative) {
    Saved = save();
    next();
  }
  if ((Tok.is(TokenKind::Integer) || Tok.is(TokenKind::Float)) &&
      !isBinaryOperator(peek().Kind)) {
    if (Tok.Length > MaxLeafLength)
      return expected("literal is too long");
    Out.push_back(leaf(Tok, Tok.is(TokenKind::Integer) ? OperandKind::Integer : OperandKind::Float,
                       Negative ? OperandSlot::FlagNegated : 0));
    next();
    return false;
  }
  if (Negative)
    restore(Saved);
  ConstantValue Value;
  ConstantError Failure;
  if (evaluateConstantExpression(Tok, [this] { next(); }, Value, Failure)) {
    if (Tok.is(TokenKind::Error))
      return true;
    return error(Failure.Ptr, Failure.Message);
  }
  if (PrevEnd - Start > MaxLeafLength)
    return error(Start, "constant expression is too long");
  OperandData D;
  D.Ptr = Start;
  D.Len = static_cast<uint32_t>(PrevEnd - Start);
  D.Kind = OperandKind::Expression;
  Out.push_back(D);
  return false;
}

/// ::= name [(+|-) int | - name] | generic ( name ) [(+|-) int]
/// Leaves D as a Name (or SpecialRegister/Sink), SymbolOffset or SymbolDifference.
bool Parser::parseSymbolExpression(OperandData &D) {
  if (Tok.Length > MaxLeafLength)
    return expected("name is too long");
  uint8_t Flags = 0;
  Token Name = Tok;
  if (Tok.is(TokenKind::Identifier) && Tok.text() == "generic" && peek().is(TokenKind::LParen)) {
    next();
    next();
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected a variable name inside 'generic( )'");
    if (Tok.Length > MaxLeafLength)
      return expected("name is too long");
    Name = Tok;
    next();
    if (Tok.isNot(TokenKind::RParen))
      return expected("expected ')' after the variable name in 'generic( )'");
    Flags = OperandSlot::FlagGeneric;
  }
  const char *Start = Name.Ptr;
  // A directive token here is a section's name used as a value (`.debug_loc+133`).
  D = leaf(Name, Flags || Name.is(TokenKind::Directive) ? OperandKind::Name : nameKind(Name.text()),
           Flags);
  next();
  bool Plus = Tok.is(TokenKind::Plus), Minus = Tok.is(TokenKind::Minus);
  if ((!Plus && !Minus) || D.Kind != OperandKind::Name)
    return false;
  Token After = peek();
  if (Plus && After.is(TokenKind::Minus)) {
    next();
    After = peek();
    Minus = true;
  }
  if (After.is(TokenKind::Integer)) {
    next();
    size_t From = Ops.Open.size();
    Ops.Open.push_back(D);
    Ops.Open.push_back(leaf(Tok, OperandKind::Integer, Minus ? OperandSlot::FlagNegated : 0));
    next();
    D = Ops.closeList(From, OperandKind::SymbolOffset, Start);
    D.Flags = Flags;
    return false;
  }
  if (Minus && !Plus && After.is(TokenKind::Identifier) && !Flags) {
    next();
    size_t From = Ops.Open.size();
    Ops.Open.push_back(D);
    Ops.Open.push_back(leaf(Tok, nameKind(Tok.text())));
    next();
    D = Ops.closeList(From, OperandKind::SymbolDifference, Start);
    return false;
  }
  return expected("expected an integer offset after the symbol");
}

/// ::= '[' base [(+ | + - | -) int] {, operand} ']'
bool Parser::parseAddress(llvm::SmallVectorImpl<OperandData> &Out) {
  const char *Open = Tok.Ptr;
  next();
  size_t From = Ops.Open.size();
  OperandData Base;
  if (Tok.is(TokenKind::Identifier)) {
    if (Tok.Length > MaxLeafLength)
      return expected("name is too long");
    Base = leaf(Tok, nameKind(Tok.text()));
  } else if (Tok.is(TokenKind::Integer)) {
    Base = leaf(Tok, OperandKind::Integer);
  } else {
    return expected("expected a register, a variable or an address inside '[ ]'");
  }
  next();
  Ops.Open.push_back(Base);
  bool HasOffset = false;
  int64_t Offset = 0;
  bool OffsetFits = true;
  if (Tok.is(TokenKind::Plus) || Tok.is(TokenKind::Minus)) {
    bool Negative = Tok.is(TokenKind::Minus);
    next();
    if (!Negative && consumeIf(TokenKind::Minus))
      Negative = true;
    if (Tok.isNot(TokenKind::Integer))
      return expected("expected an integer offset in the address");
    uint64_t Magnitude = 0;
    bool Parsed = parseIntegerLiteral(Tok.text(), Magnitude) && Magnitude <= INT32_MAX;
    Offset = Negative ? -static_cast<int64_t>(Magnitude) : static_cast<int64_t>(Magnitude);
    // An inline address keeps its offset in 16 bits; others get an Integer element.
    OffsetFits = Parsed && Offset >= INT16_MIN && Offset <= INT16_MAX;
    Ops.Open.push_back(leaf(Tok, OperandKind::Integer, Negative ? OperandSlot::FlagNegated : 0));
    HasOffset = true;
    next();
  }
  bool Extras = false;
  while (consumeIf(TokenKind::Comma)) {
    Extras = true;
    if (parseOperand(Ops.Open))
      return true;
  }
  if (Tok.isNot(TokenKind::RBracket))
    return expected("expected ']' after address");
  next();
  uint8_t Flags = HasOffset ? OperandSlot::FlagHasOffset : 0;
  if (!Extras && OffsetFits && Base.Kind != OperandKind::Integer && Base.Len <= UINT8_MAX) {
    // The common `[%r1+8]`: base name and offset in one slot.
    Ops.Open.resize(From);
    OperandData D = Base;
    D.Kind = OperandKind::Address;
    D.Flags = Flags | OperandSlot::FlagInlineAddress;
    D.Rel = Offset;
    Out.push_back(D);
    return false;
  }
  OperandData D = Ops.closeList(From, OperandKind::Address, Open);
  D.Flags = Flags;
  Out.push_back(D);
  return false;
}

/// ::= '{' [operand {, operand}] '}'
bool Parser::parseBraceVector(llvm::SmallVectorImpl<OperandData> &Out) {
  const char *Open = Tok.Ptr;
  next();
  size_t From = Ops.Open.size();
  if (Tok.isNot(TokenKind::RBrace)) {
    do {
      if (Tok.is(TokenKind::LBrace) || Tok.is(TokenKind::LBracket) || Tok.is(TokenKind::LParen))
        return expected("expected a register or a value in the vector");
      if (parseOperand(Ops.Open))
        return true;
    } while (consumeIf(TokenKind::Comma));
  }
  if (Tok.isNot(TokenKind::RBrace))
    return expected("expected '}' at the end of the vector");
  next();
  Out.push_back(Ops.closeList(From, OperandKind::Vector, Open));
  return false;
}

/// ::= '(' [operand {, operand}] ')'
bool Parser::parseCallList(llvm::SmallVectorImpl<OperandData> &Out) {
  const char *Open = Tok.Ptr;
  next();
  size_t From = Ops.Open.size();
  if (Tok.isNot(TokenKind::RParen)) {
    do {
      if (Tok.is(TokenKind::LBrace) || Tok.is(TokenKind::LBracket) || Tok.is(TokenKind::LParen))
        return expected("expected a name in the list");
      if (parseOperand(Ops.Open))
        return true;
    } while (consumeIf(TokenKind::Comma));
  }
  if (Tok.isNot(TokenKind::RParen))
    return expected("expected ')' at the end of the list");
  next();
  Out.push_back(Ops.closeList(From, OperandKind::List, Open));
  return false;
}
