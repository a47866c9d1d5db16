//===- ParseSections.cpp - debug sections -----------------------------------------===//
//
// `.section .debug_str { $L__info_string0: .b8 95,90,0 ... }` and friends. With -G, nvcc
// writes one byte per line (`.b8 5`), so consecutive integer lines of one width are packed
// into a single SectionData node: the AST of a debug section is then smaller than its text.
//
//===----------------------------------------------------------------------------------===//
#include "ParserImpl.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv::ptx;
using llvm::StringRef;

static unsigned dataWidth(StringRef D) {
  return llvm::StringSwitch<unsigned>(D)
      .Case(".b8", 1)
      .Case(".b16", 2)
      .Case(".b32", 4)
      .Case(".b64", 8)
      .Default(0);
}

/// ::= .section name { {label : | data-line} }
bool Parser::parseSection() {
  auto *S = create<Section>(Tok.Ptr);
  next();
  if (Tok.isNot(TokenKind::Directive) && Tok.isNot(TokenKind::Identifier))
    return expected("expected a section name such as '.debug_str'");
  S->Name = Tok.text();
  next();
  if (Tok.isNot(TokenKind::LBrace))
    return expected("expected '{' after the section name");
  next();
  SectionItems.clear();
  RunCount = 0;
  PackedBytes.clear(); // a packed initializer may have left its bytes here
  while (!stop()) {
    if (Tok.is(TokenKind::RBrace)) {
      next();
      break;
    }
    if (Tok.is(TokenKind::Eof) || (Tok.AtLineStart && startsModuleItem(Tok))) {
      expected("expected '}' at the end of the section");
      break;
    }
    const char *Before = Tok.Ptr;
    bool Failed;
    if (Tok.is(TokenKind::Identifier) && peek().is(TokenKind::Colon)) {
      flushSectionRun();
      SectionItems.push_back(create<Label>(Tok.Ptr, Tok.Length));
      next();
      next();
      Failed = false;
    } else if (Tok.is(TokenKind::Directive) && dataWidth(Tok.text())) {
      Failed = parseSectionData();
    } else if (Tok.is(TokenKind::Semicolon)) {
      next();
      Failed = false;
    } else {
      Failed = expected("expected a label or a '.b8', '.b16', '.b32' or '.b64' line");
    }
    if (Failed) {
      recover(Before);
      if (Tok.Ptr == Before && Tok.isNot(TokenKind::Eof))
        next();
    }
  }
  flushSectionRun();
  S->Items = copy<const Statement *>(SectionItems);
  Items.push_back(S);
  return false;
}

/// Turns the pending run of packed values into one SectionData node.
bool Parser::flushSectionRun() {
  if (!RunCount)
    return false;
  auto *D = create<SectionData>(RunPtr);
  uint8_t *Data = M.Alloc.Allocate<uint8_t>(PackedBytes.size());
  std::copy(PackedBytes.begin(), PackedBytes.end(), Data);
  D->Packed = Data;
  D->Count = RunCount;
  D->Width = static_cast<uint8_t>(RunWidth);
  SectionItems.push_back(D);
  RunCount = 0;
  PackedBytes.clear();
  return false;
}

static bool fitsWidth(uint64_t Magnitude, bool Negative, unsigned Width, uint64_t &Bits) {
  if (Width < 8) {
    uint64_t Limit = Negative ? (uint64_t(1) << (Width * 8 - 1)) : (uint64_t(1) << (Width * 8)) - 1;
    if (Magnitude > Limit)
      return false;
  } else if (Negative && Magnitude > (uint64_t(1) << 63)) {
    return false;
  }
  Bits = Negative ? ~Magnitude + 1 : Magnitude;
  return true;
}

/// ::= (.b8 | .b16 | .b32 | .b64) value {, value} [;]
/// value ::= [-] int | label | label (+|-) int | label - label
bool Parser::parseSectionData() {
  unsigned Width = dataWidth(Tok.text());
  const char *Start = Tok.Ptr;
  next();

  // Plain integers join the current run when the width matches.
  State Saved = save();
  bool WasQuiet = Quiet;
  Quiet = true;
  llvm::SmallVector<uint64_t, 64> Values;
  bool AllIntegers = true;
  do {
    bool Negative = consumeIf(TokenKind::Minus);
    uint64_t Magnitude = 0, Bits = 0;
    if (Tok.isNot(TokenKind::Integer) || !parseIntegerLiteral(Tok.text(), Magnitude) ||
        !fitsWidth(Magnitude, Negative, Width, Bits)) {
      AllIntegers = false;
      break;
    }
    Values.push_back(Bits);
    next();
  } while (consumeIf(TokenKind::Comma));
  Quiet = WasQuiet;
  if (AllIntegers) {
    // A run holds one width; another width starts a new node.
    if (!RunCount || RunWidth != Width) {
      flushSectionRun();
      RunPtr = Start;
      RunWidth = Width;
    }
    for (uint64_t V : Values)
      for (unsigned I = 0; I < Width; ++I)
        PackedBytes.push_back(static_cast<uint8_t>(V >> (8 * I)));
    RunCount += Values.size();
    consumeIf(TokenKind::Semicolon);
    return false;
  }

  // Labels and expressions: one node with operands.
  restore(Saved);
  flushSectionRun();
  auto *D = create<SectionData>(Start);
  D->Width = static_cast<uint8_t>(Width);
  Ops.clear();
  do {
    if (Tok.is(TokenKind::Directive)) {
      // A section's own name used as a value: `.b32 .debug_abbrev`, `.b32 .debug_loc+133`.
      OperandData D;
      if (parseSymbolExpression(D))
        return true;
      Ops.Top.push_back(D);
      continue;
    }
    if (Tok.isNot(TokenKind::Identifier) && Tok.isNot(TokenKind::Integer) &&
        Tok.isNot(TokenKind::Minus))
      return expected("expected an integer or a label in the data line");
    if (parseOperand(Ops.Top))
      return true;
  } while (consumeIf(TokenKind::Comma));
  if (materializeOperands(D->Ptr, D->Ops, D->NumOps))
    return true;
  consumeIf(TokenKind::Semicolon);
  SectionItems.push_back(D);
  return false;
}
