//===- ConstantExpr.cpp - PTX constant expressions --------------------------------===//
#include "ConstantExpr.h"
#include "ParserImpl.h"

#include "wsv/ptx_parser/Lexer.h"

using namespace wsv::ptx;

bool wsv::ptx::isBinaryOperator(TokenKind Kind) {
  switch (Kind) {
  case TokenKind::Plus: case TokenKind::Minus: case TokenKind::Star: case TokenKind::Slash:
  case TokenKind::Percent: case TokenKind::ShiftLeft: case TokenKind::ShiftRight:
  case TokenKind::Amp: case TokenKind::Pipe: case TokenKind::Caret: case TokenKind::AmpAmp:
  case TokenKind::PipePipe: case TokenKind::EqualEqual: case TokenKind::ExclaimEqual:
  case TokenKind::Less: case TokenKind::Greater: case TokenKind::LessEqual:
  case TokenKind::GreaterEqual: case TokenKind::Question:
    return true;
  default:
    return false;
  }
}

namespace {

/// Binding strength of a binary operator; 0 for anything else.
unsigned precedence(TokenKind Kind) {
  switch (Kind) {
  case TokenKind::PipePipe: return 1;
  case TokenKind::AmpAmp: return 2;
  case TokenKind::Pipe: return 3;
  case TokenKind::Caret: return 4;
  case TokenKind::Amp: return 5;
  case TokenKind::EqualEqual: case TokenKind::ExclaimEqual: return 6;
  case TokenKind::Less: case TokenKind::Greater: case TokenKind::LessEqual:
  case TokenKind::GreaterEqual: return 7;
  case TokenKind::ShiftLeft: case TokenKind::ShiftRight: return 8;
  case TokenKind::Plus: case TokenKind::Minus: return 9;
  case TokenKind::Star: case TokenKind::Slash: case TokenKind::Percent: return 10;
  default: return 0;
  }
}

class Evaluator {
public:
  Evaluator(Token &Cur, llvm::function_ref<void()> Advance, ConstantError &Error)
      : Cur(Cur), Advance(Advance), Error(Error) {}

  /// ::= binary ['?' conditional ':' conditional]
  bool conditional(ConstantValue &V, unsigned Depth) {
    if (binary(V, 1, Depth))
      return true;
    if (Cur.isNot(TokenKind::Question))
      return false;
    Advance();
    ConstantValue A, B;
    if (conditional(A, Depth + 1))
      return true;
    if (Cur.isNot(TokenKind::Colon))
      return fail("expected ':' in the conditional expression");
    Advance();
    if (conditional(B, Depth + 1))
      return true;
    V = V.Bits ? A : B;
    V.Unsigned = A.Unsigned || B.Unsigned;
    return false;
  }

private:
  static constexpr unsigned MaxDepth = 256;

  bool fail(const char *Message) {
    Error.Ptr = Cur.Ptr;
    Error.Message = Message;
    return true;
  }

  /// Precedence climbing over the binary operators.
  bool binary(ConstantValue &Left, unsigned MinPrec, unsigned Depth) {
    if (unary(Left, Depth))
      return true;
    for (;;) {
      unsigned Prec = precedence(Cur.Kind);
      if (!Prec || Prec < MinPrec)
        return false;
      Token Op = Cur;
      Advance();
      ConstantValue Right;
      if (binary(Right, Prec + 1, Depth + 1))
        return true;
      if (apply(Op, Left, Right))
        return true;
    }
  }

  /// ::= (+ | - | ! | ~) unary | '(' (.s64 | .u64) ')' unary | primary
  bool unary(ConstantValue &V, unsigned Depth) {
    if (Depth > MaxDepth)
      return fail("constant expression nests too deeply");
    TokenKind K = Cur.Kind;
    if (K == TokenKind::Plus || K == TokenKind::Minus || K == TokenKind::Exclaim ||
        K == TokenKind::Tilde) {
      Advance();
      if (unary(V, Depth + 1))
        return true;
      if (K == TokenKind::Minus)
        V.Bits = ~V.Bits + 1;
      else if (K == TokenKind::Tilde)
        V.Bits = ~V.Bits;
      else if (K == TokenKind::Exclaim)
        V = {V.Bits == 0, false};
      return false;
    }
    if (K == TokenKind::LParen) {
      Advance();
      if (Cur.isDirective(".s64") || Cur.isDirective(".u64")) {
        bool ToUnsigned = Cur.isDirective(".u64");
        Advance();
        if (Cur.isNot(TokenKind::RParen))
          return fail("expected ')' after the cast type");
        Advance();
        if (unary(V, Depth + 1))
          return true;
        V.Unsigned = ToUnsigned;
        return false;
      }
      if (conditional(V, Depth + 1))
        return true;
      if (Cur.isNot(TokenKind::RParen))
        return fail("expected ')' in the constant expression");
      Advance();
      return false;
    }
    if (K == TokenKind::Integer) {
      uint64_t Bits = 0;
      if (!parseIntegerLiteral(Cur.text(), Bits))
        return fail("integer literal does not fit in 64 bits");
      char Last = Cur.text().back();
      V = {Bits, Last == 'U' || Last == 'u' || Bits > static_cast<uint64_t>(INT64_MAX)};
      Advance();
      return false;
    }
    if (K == TokenKind::Float)
      return fail("floating-point values cannot be combined in a constant expression");
    return fail("expected a constant in the expression");
  }

  bool apply(const Token &Op, ConstantValue &L, const ConstantValue &R) {
    bool U = L.Unsigned || R.Unsigned;
    int64_t SL = static_cast<int64_t>(L.Bits), SR = static_cast<int64_t>(R.Bits);
    uint64_t A = L.Bits, B = R.Bits, Out = 0;
    switch (Op.Kind) {
    case TokenKind::Plus: Out = A + B; break;
    case TokenKind::Minus: Out = A - B; break;
    case TokenKind::Star: Out = A * B; break;
    case TokenKind::Slash:
    case TokenKind::Percent:
      if (B == 0) {
        Error.Ptr = Op.Ptr;
        Error.Message = "division by zero in a constant expression";
        return true;
      }
      if (U)
        Out = Op.is(TokenKind::Slash) ? A / B : A % B;
      else if (SL == INT64_MIN && SR == -1)
        Out = Op.is(TokenKind::Slash) ? A : 0; // wraps, as 64-bit hardware does
      else
        Out = static_cast<uint64_t>(Op.is(TokenKind::Slash) ? SL / SR : SL % SR);
      break;
    case TokenKind::ShiftLeft:
    case TokenKind::ShiftRight:
      if (B >= 64) {
        Error.Ptr = Op.Ptr;
        Error.Message = "shift count must be less than 64";
        return true;
      }
      if (Op.is(TokenKind::ShiftLeft))
        Out = A << B;
      else
        Out = L.Unsigned ? A >> B : static_cast<uint64_t>(SL >> B);
      L = {Out, L.Unsigned};
      return false;
    case TokenKind::Amp: Out = A & B; break;
    case TokenKind::Pipe: Out = A | B; break;
    case TokenKind::Caret: Out = A ^ B; break;
    case TokenKind::AmpAmp: L = {A && B, false}; return false;
    case TokenKind::PipePipe: L = {A || B, false}; return false;
    case TokenKind::EqualEqual: L = {A == B, false}; return false;
    case TokenKind::ExclaimEqual: L = {A != B, false}; return false;
    case TokenKind::Less: L = {U ? A < B : SL < SR, false}; return false;
    case TokenKind::Greater: L = {U ? A > B : SL > SR, false}; return false;
    case TokenKind::LessEqual: L = {U ? A <= B : SL <= SR, false}; return false;
    case TokenKind::GreaterEqual: L = {U ? A >= B : SL >= SR, false}; return false;
    default: llvm_unreachable("not a binary operator");
    }
    L = {Out, U};
    return false;
  }

  Token &Cur;
  llvm::function_ref<void()> Advance;
  ConstantError &Error;
};

} // namespace

bool wsv::ptx::evaluateConstantExpression(Token &Cur, llvm::function_ref<void()> Advance,
                                          ConstantValue &Value, ConstantError &Error) {
  return Evaluator(Cur, Advance, Error).conditional(Value, 0);
}

bool wsv::ptx::evaluateConstantText(llvm::StringRef Text, ConstantValue &Value) {
  Lexer Lex(Text);
  Token Cur = Lex.lex();
  ConstantError Error;
  if (evaluateConstantExpression(Cur, [&] { Cur = Lex.lex(); }, Value, Error))
    return true;
  return Cur.isNot(TokenKind::Eof);
}
