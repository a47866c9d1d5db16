//===- ParseDeclarations.cpp - variables, registers, initializers -----------------===//
#include "ParserImpl.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv::ptx;
using llvm::StringRef;

static unsigned vectorWidthOf(StringRef D) {
  return llvm::StringSwitch<unsigned>(D).Case(".v2", 2).Case(".v4", 4).Case(".v8", 8).Default(0);
}

/// Bytes per element of an integer or bit type (`.b8` .. `.b64`, `.u*`, `.s*`), 0 otherwise.
static unsigned integerWidth(StringRef Type, bool &Signed) {
  Signed = Type.starts_with(".s");
  return llvm::StringSwitch<unsigned>(Type)
      .Cases(".b8", ".u8", ".s8", 1)
      .Cases(".b16", ".u16", ".s16", 2)
      .Cases(".b32", ".u32", ".s32", 4)
      .Cases(".b64", ".u64", ".s64", 8)
      .Default(0);
}

/// ::= {linkage | space | .align n | .vN | .ptr [space] [.align n] | .attribute(...) | type}
///     name {'[' [n] ']'} [= initializer] ;
/// Parameters (DeclContext::Param) end after the dimensions, without ';'.
VariableDecl *Parser::parseVariableDecl(DeclContext Context, uint8_t Linkage,
                                        const char *Start) {
  auto *V = create<VariableDecl>(Start);
  V->LinkageFlags = Linkage;
  bool PointerSeen = false;
  while (Tok.is(TokenKind::Directive)) {
    StringRef D = Tok.text();
    // A parameter is no symbol of the module: it has no linkage (and the printer, which puts
    // linkage first, would write what does not parse back).
    if (Context == DeclContext::Param &&
        (D == ".extern" || D == ".visible" || D == ".weak" || D == ".common")) {
      expected(llvm::Twine("a parameter has no linkage, but '") + D + "' is given");
      return nullptr;
    }
    if (D == ".extern") {
      V->LinkageFlags |= LinkageExtern;
    } else if (D == ".visible") {
      V->LinkageFlags |= LinkageVisible;
    } else if (D == ".weak") {
      V->LinkageFlags |= LinkageWeak;
    } else if (D == ".common") {
      V->LinkageFlags |= LinkageCommon;
    } else if (isStateSpace(D)) {
      if (PointerSeen && V->PtrSpace.empty()) {
        V->PtrSpace = D;
      } else if (V->Space.empty()) {
        V->Space = D;
      } else {
        expected(llvm::Twine("a declaration has one state space, but '") + D +
                 "' follows '" + V->Space + "'");
        return nullptr;
      }
    } else if (D == ".align") {
      next();
      uint64_t Align = 0;
      const char *At = Tok.Ptr;
      if (parseIntegerToken(Align, "an alignment after '.align'"))
        return nullptr;
      if (Align == 0 || Align > UINT32_MAX || (Align & (Align - 1))) {
        error(At, "alignment must be a power of two");
        return nullptr;
      }
      (PointerSeen ? V->PtrAlign : V->Align) = static_cast<uint32_t>(Align);
      continue;
    } else if (unsigned Width = vectorWidthOf(D)) {
      V->VectorWidth = static_cast<uint8_t>(Width);
    } else if (D == ".ptr") {
      PointerSeen = true;
      V->Flags |= VariableDecl::FlagPointer;
    } else if (D == ".attribute") {
      next();
      if (Tok.isNot(TokenKind::LParen)) {
        expected("expected '(' after '.attribute'");
        return nullptr;
      }
      const char *Open = Tok.Ptr;
      next();
      while (Tok.isNot(TokenKind::RParen)) {
        if (Tok.is(TokenKind::Eof) || Tok.is(TokenKind::Semicolon) || Tok.is(TokenKind::Error)) {
          expected("expected ')' after the attribute");
          return nullptr;
        }
        next();
      }
      V->Attribute = StringRef(Open + 1, Tok.Ptr - Open - 1).trim();
    } else if (V->Type.empty()) {
      V->Type = D;
    } else {
      expected(llvm::Twine("unexpected '") + D + "' after the type '" + V->Type + "'");
      return nullptr;
    }
    next();
  }
  if (V->Space.empty()) {
    expected("expected a state space such as '.global' or '.param'");
    return nullptr;
  }
  if (V->Type.empty()) {
    expected("expected a type such as '.b32' in the declaration");
    return nullptr;
  }
  if (Tok.isNot(TokenKind::Identifier)) {
    expected("expected a name in the declaration");
    return nullptr;
  }
  V->Name = Tok.text();
  next();
  llvm::SmallVector<int64_t, 2> Dims;
  while (Tok.is(TokenKind::LBracket)) {
    next();
    if (consumeIf(TokenKind::RBracket)) {
      Dims.push_back(-1);
      continue;
    }
    uint64_t N = 0;
    const char *At = Tok.Ptr;
    if (parseIntegerToken(N, "an array size"))
      return nullptr;
    if (N > static_cast<uint64_t>(INT64_MAX)) {
      error(At, "array size is too large");
      return nullptr;
    }
    Dims.push_back(static_cast<int64_t>(N));
    if (expect(TokenKind::RBracket, "after the array size"))
      return nullptr;
  }
  V->Dims = copy<int64_t>(Dims);
  if (Context == DeclContext::Param)
    return V;
  if (Tok.is(TokenKind::Equal)) {
    next();
    if (parseInitializer(*V))
      return nullptr;
  }
  if (expectSemicolon("the declaration"))
    return nullptr;
  return V;
}

/// ::= .reg [.vN] type name[<count>] {, name[<count>]} ;
bool Parser::parseRegisterDecl() {
  auto *R = create<RegisterDecl>(Tok.Ptr);
  next();
  while (Tok.is(TokenKind::Directive)) {
    if (unsigned Width = vectorWidthOf(Tok.text()))
      R->VectorWidth = static_cast<uint8_t>(Width);
    else if (R->Type.empty())
      R->Type = Tok.text();
    else
      return expected(llvm::Twine("unexpected '") + Tok.text() + "' after the type '" + R->Type +
                      "'");
    next();
  }
  if (R->Type.empty())
    return expected("expected a type such as '.b32' after '.reg'");
  llvm::SmallVector<RegisterName, 4> Names;
  do {
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected a register name");
    RegisterName N;
    N.Name = {Tok.Ptr, Tok.Length};
    next();
    if (Tok.is(TokenKind::Less)) {
      next();
      uint64_t Count = 0;
      const char *At = Tok.Ptr;
      if (parseIntegerToken(Count, "a register count"))
        return true;
      if (Count > UINT32_MAX)
        return error(At, "register count is too large");
      N.Count = static_cast<uint32_t>(Count);
      N.HasRange = true;
      if (expect(TokenKind::Greater, "after the register count"))
        return true;
    }
    Names.push_back(N);
  } while (consumeIf(TokenKind::Comma));
  R->Names = copy<RegisterName>(Names);
  if (expectSemicolon("the register declaration"))
    return true;
  addStatement(R);
  return false;
}

/// ::= scalar | { value {, value} }
bool Parser::parseInitializer(VariableDecl &V) {
  auto *Init = create<Initializer>();
  bool Signed = false;
  unsigned Width = integerWidth(V.Type, Signed);
  bool FloatBits = false;
  if (!Width && (V.Type == ".f32" || V.Type == ".f64")) {
    Width = V.Type == ".f32" ? 4 : 8;
    FloatBits = true;
  }
  if (Width && V.VectorWidth == 0 && Tok.is(TokenKind::LBrace) &&
      tryPackedList(Width, Signed, FloatBits, *Init)) {
    V.Init = Init;
    return false;
  }
  Ops.clear();
  if (parseInitValue(0))
    return true;
  Ops.Top.push_back(Ops.Open.back());
  Ops.Open.pop_back();
  uint32_t Count = 0;
  Init->Base = V.Ptr;
  if (materializeOperands(V.Ptr, Init->Value, Count))
    return true;
  V.Init = Init;
  return false;
}

/// Appends Value to PackedBytes as Width little-endian bytes if it fits the width as an
/// unsigned or a signed number.
static bool packValue(llvm::SmallVectorImpl<uint8_t> &Out, uint64_t Magnitude, bool Negative,
                      unsigned Width) {
  uint64_t Bits;
  if (Negative) {
    if (Width < 8 && Magnitude > (uint64_t(1) << (Width * 8 - 1)))
      return false;
    if (Width == 8 && Magnitude > (uint64_t(1) << 63))
      return false;
    Bits = ~Magnitude + 1;
  } else {
    if (Width < 8 && Magnitude >> (Width * 8))
      return false;
    Bits = Magnitude;
  }
  for (unsigned I = 0; I < Width; ++I)
    Out.push_back(static_cast<uint8_t>(Bits >> (8 * I)));
  return true;
}

/// Tries `{ int, int, ... }` as packed elements; restores the parser and returns false when an
/// element is anything else (the caller then parses operands).
bool Parser::tryPackedList(unsigned Width, bool Signed, bool FloatBits, Initializer &Init) {
  State Saved = save();
  bool WasQuiet = Quiet;
  Quiet = true;
  PackedBytes.clear();
  uint64_t Count = 0;
  bool Ok = true;
  next(); // '{'
  if (Tok.isNot(TokenKind::RBrace)) {
    do {
      bool Negative = consumeIf(TokenKind::Minus);
      uint64_t Value = 0;
      if (Tok.is(TokenKind::Integer) && !FloatBits) {
        Ok = parseIntegerLiteral(Tok.text(), Value) &&
             packValue(PackedBytes, Value, Negative, Width);
      } else if (Tok.is(TokenKind::Float) && FloatBits && !Negative &&
                 Tok.Length == 2 + 2 * Width && (Tok.Ptr[1] == 'f' || Tok.Ptr[1] == 'F') ==
                                                    (Width == 4)) {
        Ok = !Tok.text().drop_front(2).getAsInteger(16, Value) &&
             packValue(PackedBytes, Value, false, Width);
      } else {
        Ok = false;
      }
      if (!Ok)
        break;
      ++Count;
      next();
    } while (consumeIf(TokenKind::Comma));
  }
  Ok = Ok && Tok.is(TokenKind::RBrace);
  Quiet = WasQuiet;
  if (!Ok) {
    restore(Saved);
    return false;
  }
  next(); // '}'
  uint8_t *Data = M.Alloc.Allocate<uint8_t>(PackedBytes.size() ? PackedBytes.size() : 1);
  std::copy(PackedBytes.begin(), PackedBytes.end(), Data);
  Init.Packed = Data;
  Init.Count = Count;
  Init.Width = static_cast<uint8_t>(Width);
  Init.Signed = Signed;
  Init.FloatBits = FloatBits;
  return true;
}

/// ::= { [value {, value}] } | generic(name) [(+|-) int] | name [(+|-) int | - name]
///   | [-] int | [-] float | constant-expression | name = (name | int)  (inside braces)
/// Pushes the value onto Ops.Open. Nesting is capped at MaxInitializerDepth, which keeps the
/// recursion here bounded whatever the input.
bool Parser::parseInitValue(unsigned Depth) {
  if (Tok.is(TokenKind::LBrace)) {
    if (Depth >= MaxInitializerDepth)
      return expected(llvm::Twine("initializer braces nest deeper than ") +
                      llvm::Twine(MaxInitializerDepth) + " levels");
    const char *Open = Tok.Ptr;
    size_t From = Ops.Open.size();
    next();
    if (Tok.isNot(TokenKind::RBrace)) {
      do {
        if (parseInitValue(Depth + 1))
          return true;
      } while (consumeIf(TokenKind::Comma));
    }
    if (expect(TokenKind::RBrace, "at the end of the initializer list"))
      return true;
    if (Ops.Open.size() - From >= (1u << 24))
      return error(Open, "initializer list has too many elements");
    OperandData List = Ops.closeList(From, OperandKind::Vector, Open);
    Ops.Open.push_back(List);
    return false;
  }
  if (Tok.is(TokenKind::Identifier) && Depth > 0 && peek().is(TokenKind::Equal)) {
    // `{ addr_mode_0 = clamp_to_border, filter_mode = nearest }` of a `.samplerref`.
    const char *Start = Tok.Ptr;
    size_t From = Ops.Open.size();
    Ops.Open.push_back(leaf(Tok, OperandKind::Name));
    next();
    next(); // '='
    if (Tok.isNot(TokenKind::Identifier) && Tok.isNot(TokenKind::Integer))
      return expected("expected a value after '='");
    Ops.Open.push_back(leaf(Tok, Tok.is(TokenKind::Integer) ? OperandKind::Integer
                                                             : OperandKind::Name));
    next();
    Ops.Open.push_back(Ops.closeList(From, OperandKind::Assignment, Start));
    return false;
  }
  if (Tok.is(TokenKind::Identifier)) {
    OperandData D;
    if (parseSymbolExpression(D))
      return true;
    Ops.Open.push_back(D);
    return false;
  }
  llvm::SmallVector<OperandData, 1> One;
  InCall = false;
  if (Tok.is(TokenKind::Minus) || Tok.is(TokenKind::Plus) || Tok.is(TokenKind::Integer) ||
      Tok.is(TokenKind::Float) || Tok.is(TokenKind::LParen) || Tok.is(TokenKind::Tilde) ||
      Tok.is(TokenKind::Exclaim)) {
    if (parseOperand(One))
      return true;
    Ops.Open.push_back(One.front());
    return false;
  }
  return expected("expected a value in the initializer");
}
