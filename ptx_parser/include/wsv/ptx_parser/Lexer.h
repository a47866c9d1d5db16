//===- Lexer.h - hand-written PTX lexer -------------------------------------------===//
//
// A cursor over the source buffer that hands out one token at a time. It never allocates and
// never prints: a byte sequence that starts no token comes back as a TokenKind::Error token
// whose reason errorMessage() gives, and the parser reports it at the token's location.
//
// Opcodes and names are lexed as one identifier with their dot and `::` segments
// (`cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes`, `%tid.x`), so
// an opcode that runs straight into `{` or `[` still ends where it should. Directives
// (`.reg`, `.shared::cta`) are single segments so that `.ptr.global.align` lexes as three.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Token.h"

#include "llvm/ADT/StringRef.h"

namespace wsv {
namespace ptx {

class Lexer {
public:
  /// Lexes Source, which must stay alive as long as the tokens are used. Source need not be
  /// null-terminated, and NUL bytes inside it are ordinary (invalid) characters.
  explicit Lexer(llvm::StringRef Source);

  /// The next token; Eof forever once the end is reached.
  Token lex() {
    Token T;
    lex(T);
    return T;
  }
  /// The same, written into T (the parser's hot path: no copy).
  void lex(Token &T);

  /// Why the last Error token was produced ("invalid character", "unterminated string", ...).
  const char *errorMessage() const { return ErrorMessage; }

  /// Where the next lex() starts; with restore() this gives the parser cheap lookahead.
  struct State {
    const char *Cur;
    uint32_t Line;
    bool AtLineStart;
  };
  State save() const { return {Cur, Line, AtLineStart}; }
  void restore(State S) {
    Cur = S.Cur;
    Line = S.Line;
    AtLineStart = S.AtLineStart;
  }

  llvm::StringRef source() const { return {Begin, static_cast<size_t>(End - Begin)}; }

private:
  Token make(TokenKind Kind, const char *Start);
  Token lexOther(const char *Start);
  Token lexDirective(const char *Start);
  Token lexNumber(const char *Start);
  Token lexString(const char *Start);
  Token lexInvalid(const char *Start, const char *Message);

  const char *Begin;
  const char *Cur;
  const char *End;
  uint32_t Line = 1;
  bool AtLineStart = true;
  const char *ErrorMessage = "";
};

} // namespace ptx
} // namespace wsv
