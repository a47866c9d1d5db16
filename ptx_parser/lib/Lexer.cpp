//===- Lexer.cpp - hand-written PTX lexer -----------------------------------------===//
//
// One pass over the bytes with a 256-entry class table; no regexes, no allocation. Lines are
// counted while skipping whitespace so every token knows its line without a later lookup.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/ptx_parser/Lexer.h"

#include <cstring>

using namespace wsv::ptx;

namespace {

enum CharClass : uint8_t {
  CCIdentStart = 1, ///< may start a name: letters, `_`, `$`, `%`
  CCIdentBody = 2,  ///< may continue a name: letters, digits, `_`, `$`
  CCDigit = 4,
  CCHex = 8,
  CCSpace = 16, ///< whitespace other than '\n'
};

struct CharTable {
  uint8_t Classes[256] = {};
  constexpr CharTable() {
    for (int C = 'a'; C <= 'z'; ++C)
      Classes[C] = CCIdentStart | CCIdentBody;
    for (int C = 'A'; C <= 'Z'; ++C)
      Classes[C] = CCIdentStart | CCIdentBody;
    for (int C = '0'; C <= '9'; ++C)
      Classes[C] = CCIdentBody | CCDigit | CCHex;
    for (int C = 'a'; C <= 'f'; ++C)
      Classes[C] |= CCHex;
    for (int C = 'A'; C <= 'F'; ++C)
      Classes[C] |= CCHex;
    Classes[static_cast<int>('_')] = CCIdentStart | CCIdentBody;
    Classes[static_cast<int>('$')] = CCIdentStart | CCIdentBody;
    Classes[static_cast<int>('%')] = CCIdentStart;
    Classes[static_cast<int>(' ')] = CCSpace;
    Classes[static_cast<int>('\t')] = CCSpace;
    Classes[static_cast<int>('\r')] = CCSpace;
    Classes[static_cast<int>('\v')] = CCSpace;
    Classes[static_cast<int>('\f')] = CCSpace;
  }
};

constexpr CharTable Table;

/// Punctuation that is one character whatever follows it; the fast path of lex() uses it.
/// (`|`, `!`, `<`, `>`, `=`, `&` may start two-character operators and take the slow path.)
struct PunctuationTable {
  TokenKind Kinds[256] = {};
  constexpr PunctuationTable() {
    Kinds[static_cast<int>('{')] = TokenKind::LBrace;
    Kinds[static_cast<int>('}')] = TokenKind::RBrace;
    Kinds[static_cast<int>('[')] = TokenKind::LBracket;
    Kinds[static_cast<int>(']')] = TokenKind::RBracket;
    Kinds[static_cast<int>('(')] = TokenKind::LParen;
    Kinds[static_cast<int>(')')] = TokenKind::RParen;
    Kinds[static_cast<int>(',')] = TokenKind::Comma;
    Kinds[static_cast<int>(';')] = TokenKind::Semicolon;
    Kinds[static_cast<int>(':')] = TokenKind::Colon;
    Kinds[static_cast<int>('+')] = TokenKind::Plus;
    Kinds[static_cast<int>('-')] = TokenKind::Minus;
    Kinds[static_cast<int>('@')] = TokenKind::At;
  }
};

constexpr PunctuationTable SingleChar;

inline bool is(char C, uint8_t Class) {
  return Table.Classes[static_cast<unsigned char>(C)] & Class;
}

/// Characters that are tokens by themselves.
inline bool isPunctuation(char C) {
  switch (C) {
  case '{': case '}': case '[': case ']': case '(': case ')': case ',': case ';': case ':':
  case '+': case '-': case '|': case '@': case '!': case '<': case '>': case '=':
  case '*': case '/': case '&': case '^': case '~': case '?':
    return true;
  default:
    return false;
  }
}

} // namespace

const char *wsv::ptx::spelling(TokenKind Kind) {
  switch (Kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Directive: return "directive";
  case TokenKind::Integer: return "integer";
  case TokenKind::Float: return "floating-point number";
  case TokenKind::String: return "string";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::Comma: return "','";
  case TokenKind::Semicolon: return "';'";
  case TokenKind::Colon: return "':'";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Pipe: return "'|'";
  case TokenKind::At: return "'@'";
  case TokenKind::Exclaim: return "'!'";
  case TokenKind::Less: return "'<'";
  case TokenKind::Greater: return "'>'";
  case TokenKind::Equal: return "'='";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Amp: return "'&'";
  case TokenKind::Caret: return "'^'";
  case TokenKind::Tilde: return "'~'";
  case TokenKind::Question: return "'?'";
  case TokenKind::ShiftLeft: return "'<<'";
  case TokenKind::ShiftRight: return "'>>'";
  case TokenKind::LessEqual: return "'<='";
  case TokenKind::GreaterEqual: return "'>='";
  case TokenKind::EqualEqual: return "'=='";
  case TokenKind::ExclaimEqual: return "'!='";
  case TokenKind::AmpAmp: return "'&&'";
  case TokenKind::PipePipe: return "'||'";
  }
  return "token";
}

Lexer::Lexer(llvm::StringRef Source)
    : Begin(Source.begin()), Cur(Source.begin()), End(Source.end()) {}

Token Lexer::make(TokenKind Kind, const char *Start) {
  Token T;
  T.Ptr = Start;
  T.Length = static_cast<uint32_t>(Cur - Start);
  T.Line = Line;
  T.Kind = Kind;
  T.AtLineStart = AtLineStart;
  AtLineStart = false;
  return T;
}

/// Consumes `.segment` and `::segment` continuations, where a segment is [A-Za-z0-9_$]+.
static const char *skipSegments(const char *Cur, const char *End) {
  while (Cur != End) {
    if (*Cur == '.' && Cur + 1 != End && is(Cur[1], CCIdentBody)) {
      Cur += 2;
    } else if (*Cur == ':' && Cur + 2 < End && Cur[1] == ':' && is(Cur[2], CCIdentBody)) {
      Cur += 3;
    } else {
      break;
    }
    while (Cur != End && is(*Cur, CCIdentBody))
      ++Cur;
  }
  return Cur;
}

void Lexer::lex(Token &T) {
  // The cursor lives in locals so that storing into T (which may alias this) does not force
  // reloads; this loop and the identifier scan below are most of the time spent parsing.
  const char *P = Cur;
  const char *const E = End;
  bool LineStart = AtLineStart;
  while (P != E) {
    char C = *P;
    if (C == ' ' || C == '\t') {
      ++P;
    } else if (C == '\n') {
      ++Line;
      LineStart = true;
      ++P;
    } else if (C == '/' && P + 1 != E && P[1] == '/') {
      const void *NL = std::memchr(P, '\n', E - P);
      P = NL ? static_cast<const char *>(NL) : E;
    } else if (C == '/' && P + 1 != E && P[1] == '*') {
      const char *Open = P;
      P += 2;
      for (;;) {
        const void *Star = std::memchr(P, '*', E - P);
        const char *Stop = Star ? static_cast<const char *>(Star) : E;
        for (const char *Q = P; Q != Stop; ++Q)
          Line += *Q == '\n';
        if (!Star) {
          // Unterminated: one error at the '/*', then the end of the input.
          T.Ptr = Open;
          T.Length = 2;
          T.Line = Line;
          T.Kind = TokenKind::Error;
          T.AtLineStart = LineStart;
          AtLineStart = false;
          ErrorMessage = "unterminated '/*' comment";
          Cur = E;
          return;
        }
        P = Stop + 1;
        if (P != E && *P == '/') {
          ++P;
          break;
        }
      }
    } else if (C == '\r' || C == '\v' || C == '\f') {
      ++P;
    } else {
      break;
    }
  }
  T.Ptr = P;
  T.Line = Line;
  T.AtLineStart = LineStart;
  AtLineStart = false;
  if (P == E) {
    T.Length = 0;
    T.Kind = TokenKind::Eof;
    Cur = P;
    return;
  }
  char C = *P;
  if (is(C, CCIdentStart)) {
    const char *Q = P + 1;
    while (Q != E && is(*Q, CCIdentBody))
      ++Q;
    if (Q != P + 1 || (C != '%' && C != '$')) {
      Q = skipSegments(Q, E);
      T.Length = static_cast<uint32_t>(Q - P);
      T.Kind = TokenKind::Identifier;
      Cur = Q;
      return;
    }
  }
  // Eof is TokenKind 0, so a zero entry means "not single-character punctuation".
  if (TokenKind K = SingleChar.Kinds[static_cast<unsigned char>(C)];
      K != TokenKind::Eof) {
    T.Length = 1;
    T.Kind = K;
    Cur = P + 1;
    return;
  }
  // Everything else is rarer: numbers, directives, strings, other operators.
  Cur = P;
  AtLineStart = LineStart;
  T = lexOther(P);
}

Token Lexer::lexOther(const char *Start) {
  char C = *Start;
  // A lone '%' is the remainder operator; a lone '$' names nothing.
  if (C == '%') {
    ++Cur;
    return make(TokenKind::Percent, Start);
  }
  if (C == '$')
    return lexInvalid(Start, "expected a name after '$'");
  if (is(C, CCDigit))
    return lexNumber(Start);
  if (C == '.') {
    if (Cur + 1 != End && is(Cur[1], CCDigit))
      return lexNumber(Start);
    return lexDirective(Start);
  }
  if (C == '"')
    return lexString(Start);
  if (isPunctuation(C)) {
    ++Cur;
    char N = Cur != End ? *Cur : '\0';
    // Two-character operators first; '/' here is never a comment (lex() took those).
    auto Two = [&](TokenKind K) {
      ++Cur;
      return make(K, Start);
    };
    switch (C) {
    case '{': return make(TokenKind::LBrace, Start);
    case '}': return make(TokenKind::RBrace, Start);
    case '[': return make(TokenKind::LBracket, Start);
    case ']': return make(TokenKind::RBracket, Start);
    case '(': return make(TokenKind::LParen, Start);
    case ')': return make(TokenKind::RParen, Start);
    case ',': return make(TokenKind::Comma, Start);
    case ';': return make(TokenKind::Semicolon, Start);
    case ':': return make(TokenKind::Colon, Start);
    case '+': return make(TokenKind::Plus, Start);
    case '-': return make(TokenKind::Minus, Start);
    case '|': return N == '|' ? Two(TokenKind::PipePipe) : make(TokenKind::Pipe, Start);
    case '@': return make(TokenKind::At, Start);
    case '!': return N == '=' ? Two(TokenKind::ExclaimEqual) : make(TokenKind::Exclaim, Start);
    case '<':
      if (N == '<')
        return Two(TokenKind::ShiftLeft);
      return N == '=' ? Two(TokenKind::LessEqual) : make(TokenKind::Less, Start);
    case '>':
      if (N == '>')
        return Two(TokenKind::ShiftRight);
      return N == '=' ? Two(TokenKind::GreaterEqual) : make(TokenKind::Greater, Start);
    case '=': return N == '=' ? Two(TokenKind::EqualEqual) : make(TokenKind::Equal, Start);
    case '*': return make(TokenKind::Star, Start);
    case '/': return make(TokenKind::Slash, Start);
    case '&': return N == '&' ? Two(TokenKind::AmpAmp) : make(TokenKind::Amp, Start);
    case '^': return make(TokenKind::Caret, Start);
    case '~': return make(TokenKind::Tilde, Start);
    default: return make(TokenKind::Question, Start);
    }
  }
  return lexInvalid(Start, "invalid character");
}

/// A run of bytes that start no token is one error, so binary garbage costs one diagnostic
/// per run rather than one per byte.
Token Lexer::lexInvalid(const char *Start, const char *Message) {
  // From Start, not from Cur: a caller may have consumed the byte already (a lone '$' at the
  // end of the input), and stepping past it again would run over the end of the buffer.
  Cur = Start + 1;
  while (Cur != End) {
    char C = *Cur;
    if (C == '\n' || is(C, CCSpace | CCIdentStart | CCDigit) || isPunctuation(C) || C == '.' ||
        C == '"' || C == '/')
      break;
    ++Cur;
  }
  ErrorMessage = Message;
  return make(TokenKind::Error, Start);
}

Token Lexer::lexDirective(const char *Start) {
  ++Cur;
  if (Cur == End || !is(*Cur, CCIdentStart) || *Cur == '%') {
    ErrorMessage = "expected a directive name after '.'";
    return make(TokenKind::Error, Start);
  }
  while (Cur != End && is(*Cur, CCIdentBody))
    ++Cur;
  // `.shared::cta`, `.shared::cluster`: the scope qualifier belongs to the directive.
  while (Cur + 2 < End && Cur[0] == ':' && Cur[1] == ':' && is(Cur[2], CCIdentBody)) {
    Cur += 3;
    while (Cur != End && is(*Cur, CCIdentBody))
      ++Cur;
  }
  return make(TokenKind::Directive, Start);
}

static const char *skipClass(const char *Cur, const char *End, uint8_t Class) {
  while (Cur != End && is(*Cur, Class))
    ++Cur;
  return Cur;
}

Token Lexer::lexNumber(const char *Start) {
  const char *P = Start;
  TokenKind Kind = TokenKind::Integer;
  bool Digits = true;
  if (*P == '0' && P + 1 != End && (P[1] == 'x' || P[1] == 'X')) {
    const char *D = P + 2;
    P = skipClass(D, End, CCHex);
    Digits = P != D;
  } else if (*P == '0' && P + 1 != End && (P[1] == 'b' || P[1] == 'B') && P + 2 != End &&
             (P[2] == '0' || P[2] == '1')) {
    P += 2;
    while (P != End && (*P == '0' || *P == '1'))
      ++P;
  } else if (*P == '0' && P + 1 != End && (P[1] == 'f' || P[1] == 'F' || P[1] == 'd' ||
                                            P[1] == 'D')) {
    // 0fXXXXXXXX is a single-precision and 0dXXXXXXXXXXXXXXXX a double-precision bit pattern.
    unsigned Want = (P[1] == 'f' || P[1] == 'F') ? 8 : 16;
    const char *D = P + 2;
    P = skipClass(D, End, CCHex);
    Kind = TokenKind::Float;
    Digits = static_cast<unsigned>(P - D) == Want;
  } else {
    P = skipClass(P, End, CCDigit);
    if (P != End && *P == '.' && (P + 1 == End || !is(P[1], CCIdentStart) || is(P[1], CCDigit) ||
                                  P[1] == 'e' || P[1] == 'E')) {
      Kind = TokenKind::Float;
      P = skipClass(P + 1, End, CCDigit);
    }
    if (P != End && (*P == 'e' || *P == 'E')) {
      const char *E = P + 1;
      if (E != End && (*E == '+' || *E == '-'))
        ++E;
      if (E != End && is(*E, CCDigit)) {
        Kind = TokenKind::Float;
        P = skipClass(E, End, CCDigit);
      }
    }
  }
  if (Kind == TokenKind::Integer && P != End && (*P == 'U' || *P == 'u'))
    ++P;
  // A number glued to a name (`12ab`) is one bad token, not a number and a name.
  if (!Digits || (P != End && is(*P, CCIdentBody))) {
    Cur = skipClass(P, End, CCIdentBody);
    ErrorMessage = Kind == TokenKind::Float ? "invalid floating-point literal"
                                            : "invalid integer literal";
    return make(TokenKind::Error, Start);
  }
  Cur = P;
  return make(Kind, Start);
}

Token Lexer::lexString(const char *Start) {
  ++Cur;
  while (Cur != End && *Cur != '"' && *Cur != '\n') {
    if (*Cur == '\\' && Cur + 1 != End && Cur[1] != '\n')
      ++Cur;
    ++Cur;
  }
  if (Cur == End || *Cur != '"') {
    ErrorMessage = "unterminated string";
    return make(TokenKind::Error, Start);
  }
  ++Cur;
  return make(TokenKind::String, Start);
}
