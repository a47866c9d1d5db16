//===- Token.h - one lexical token of PTX text ------------------------------------===//
//
// A token is a view into the source buffer: its kind, where it starts, how long it is and the
// line it starts on. Nothing is copied, so a token costs the same for a two-character register
// name and for a ten-megabyte line.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>

namespace wsv {
namespace ptx {

enum class TokenKind : uint8_t {
  Eof,
  Error,      ///< bytes that start no token; Lexer::errorMessage() says why
  Identifier, ///< names and opcodes: `%r1`, `$L__BB0_3`, `%tid.x`, `mbarrier.arrive.shared::cta.b64`
  Directive,  ///< `.reg`, `.b32`, `.shared::cta`
  Integer,    ///< `42`, `0x2A`, `052`, `0b101010`, each optionally followed by `U`
  Float,      ///< `0f3F800000`, `0d3FF0000000000000`, `1.5`, `2e-3`
  String,     ///< `"text"`, quotes included
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  LParen,
  RParen,
  Comma,
  Semicolon,
  Colon,
  Plus,
  Minus,
  Pipe,
  At,
  Exclaim,
  Less,
  Greater,
  Equal,
  // Operators of constant expressions: `(1 << 4) + 3`, `(0x100 - 1) & 0xF0`.
  Star,
  Slash,
  Percent, ///< a '%' that starts no name
  Amp,
  Caret,
  Tilde,
  Question,
  ShiftLeft,
  ShiftRight,
  LessEqual,
  GreaterEqual,
  EqualEqual,
  ExclaimEqual,
  AmpAmp,
  PipePipe,
};

/// The spelling used in diagnostics ("expected ';'"), or a description for kinds without one.
const char *spelling(TokenKind Kind);

struct Token {
  const char *Ptr = nullptr;
  uint32_t Length = 0;
  uint32_t Line = 0; ///< 1-based line of the first character
  TokenKind Kind = TokenKind::Eof;
  bool AtLineStart = false; ///< first token of its line; error recovery stops at such directives

  llvm::StringRef text() const { return {Ptr, Length}; }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(Ptr); }
  bool is(TokenKind K) const { return Kind == K; }
  bool isNot(TokenKind K) const { return Kind != K; }
  /// A directive token with exactly this spelling, e.g. isDirective(".reg").
  bool isDirective(llvm::StringRef Name) const {
    return Kind == TokenKind::Directive && text() == Name;
  }
};

} // namespace ptx
} // namespace wsv
