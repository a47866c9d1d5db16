// The lexer on its own: token kinds and extents for every token shape compilers emit.
#include "wsv/ptx_parser/Lexer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace wsv::ptx;

namespace {

struct Lexed {
  TokenKind Kind;
  std::string Text;
};

std::vector<Lexed> lexAll(llvm::StringRef Source) {
  Lexer L(Source);
  std::vector<Lexed> Out;
  for (Token T = L.lex(); T.isNot(TokenKind::Eof); T = L.lex())
    Out.push_back({T.Kind, T.text().str()});
  return Out;
}

void expectTokens(llvm::StringRef Source, const std::vector<Lexed> &Want) {
  std::vector<Lexed> Got = lexAll(Source);
  ASSERT_EQ(Got.size(), Want.size()) << "in: " << Source.str();
  for (size_t I = 0; I < Want.size(); ++I) {
    EXPECT_EQ(Got[I].Kind, Want[I].Kind) << "token " << I << " '" << Got[I].Text << "' of "
                                         << Source.str();
    EXPECT_EQ(Got[I].Text, Want[I].Text) << "token " << I << " of " << Source.str();
  }
}

constexpr TokenKind Id = TokenKind::Identifier;
constexpr TokenKind Dir = TokenKind::Directive;
constexpr TokenKind Int = TokenKind::Integer;
constexpr TokenKind Flt = TokenKind::Float;

TEST(Lexer, OpcodeKeepsDotAndScopeSegments) {
  expectTokens("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1]",
               {{Id, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"},
                {TokenKind::LBracket, "["},
                {Id, "%r1"},
                {TokenKind::RBracket, "]"}});
}

TEST(Lexer, OpcodeRunningIntoBraceEndsAtTheBrace) {
  expectTokens("tcgen05.ld.sync.aligned.32x32b.x16.b32{%r1, %r2},[%r3];",
               {{Id, "tcgen05.ld.sync.aligned.32x32b.x16.b32"},
                {TokenKind::LBrace, "{"},
                {Id, "%r1"},
                {TokenKind::Comma, ","},
                {Id, "%r2"},
                {TokenKind::RBrace, "}"},
                {TokenKind::Comma, ","},
                {TokenKind::LBracket, "["},
                {Id, "%r3"},
                {TokenKind::RBracket, "]"},
                {TokenKind::Semicolon, ";"}});
}

TEST(Lexer, DirectivesAreSingleSegments) {
  // `.ptr.global.align` is three directives; `.shared::cta` keeps its scope.
  expectTokens(".param .u64 .ptr.global.align 16 p, .shared::cta",
               {{Dir, ".param"}, {Dir, ".u64"}, {Dir, ".ptr"}, {Dir, ".global"}, {Dir, ".align"},
                {Int, "16"}, {Id, "p"}, {TokenKind::Comma, ","}, {Dir, ".shared::cta"}});
}

TEST(Lexer, SpecialRegistersAndNames) {
  expectTokens("%tid.x %cluster_ctarank $L__BB0_3 _Z6helperii_param_0 __local_depot2 P1 _",
               {{Id, "%tid.x"}, {Id, "%cluster_ctarank"}, {Id, "$L__BB0_3"},
                {Id, "_Z6helperii_param_0"}, {Id, "__local_depot2"}, {Id, "P1"}, {Id, "_"}});
}

TEST(Lexer, RegisterRangeDeclaration) {
  expectTokens(".reg .b32 %r<90>;", {{Dir, ".reg"}, {Dir, ".b32"}, {Id, "%r"},
                                     {TokenKind::Less, "<"}, {Int, "90"},
                                     {TokenKind::Greater, ">"}, {TokenKind::Semicolon, ";"}});
}

TEST(Lexer, IntegerForms) {
  expectTokens("42 0x2A 0X2a 052 0b101010 0B1 4294967295U 0xFFu 0",
               {{Int, "42"}, {Int, "0x2A"}, {Int, "0X2a"}, {Int, "052"}, {Int, "0b101010"},
                {Int, "0B1"}, {Int, "4294967295U"}, {Int, "0xFFu"}, {Int, "0"}});
}

TEST(Lexer, FloatForms) {
  expectTokens("0f3F800000 0F40490FDB 0d3FF0000000000000 1.5 1.25e1 1E-3 2. .5",
               {{Flt, "0f3F800000"}, {Flt, "0F40490FDB"}, {Flt, "0d3FF0000000000000"},
                {Flt, "1.5"}, {Flt, "1.25e1"}, {Flt, "1E-3"}, {Flt, "2."}, {Flt, ".5"}});
}

TEST(Lexer, MalformedNumbersAreOneErrorToken) {
  // A hex float needs exactly 8 (0f) or 16 (0d) digits; a number glued to letters is bad.
  std::vector<Lexed> Got = lexAll("0f3F80 12ab 0x");
  ASSERT_EQ(Got.size(), 3u);
  for (const Lexed &L : Got)
    EXPECT_EQ(L.Kind, TokenKind::Error) << L.Text;
  EXPECT_EQ(Got[1].Text, "12ab");
}

TEST(Lexer, OperatorsOfConstantExpressions) {
  expectTokens("(1 << 4) + 3 % 2 >> 1 <= >= == != && || ~ ^ & | ? * /",
               {{TokenKind::LParen, "("}, {Int, "1"}, {TokenKind::ShiftLeft, "<<"}, {Int, "4"},
                {TokenKind::RParen, ")"}, {TokenKind::Plus, "+"}, {Int, "3"},
                {TokenKind::Percent, "%"}, {Int, "2"}, {TokenKind::ShiftRight, ">>"}, {Int, "1"},
                {TokenKind::LessEqual, "<="}, {TokenKind::GreaterEqual, ">="},
                {TokenKind::EqualEqual, "=="}, {TokenKind::ExclaimEqual, "!="},
                {TokenKind::AmpAmp, "&&"}, {TokenKind::PipePipe, "||"}, {TokenKind::Tilde, "~"},
                {TokenKind::Caret, "^"}, {TokenKind::Amp, "&"}, {TokenKind::Pipe, "|"},
                {TokenKind::Question, "?"}, {TokenKind::Star, "*"}, {TokenKind::Slash, "/"}});
}

TEST(Lexer, PairAndGuardPunctuation) {
  expectTokens("@!%p1 elect.sync %r1|%p2, -1;",
               {{TokenKind::At, "@"}, {TokenKind::Exclaim, "!"}, {Id, "%p1"},
                {Id, "elect.sync"}, {Id, "%r1"}, {TokenKind::Pipe, "|"}, {Id, "%p2"},
                {TokenKind::Comma, ","}, {TokenKind::Minus, "-"}, {Int, "1"},
                {TokenKind::Semicolon, ";"}});
}

TEST(Lexer, CommentsAnywhereAreSkipped) {
  expectTokens("add.s32 /* a */ %r1, // rest\n/* multi\nline */ %r2;",
               {{Id, "add.s32"}, {Id, "%r1"}, {TokenKind::Comma, ","}, {Id, "%r2"},
                {TokenKind::Semicolon, ";"}});
}

TEST(Lexer, StringsKeepQuotesAndEscapes) {
  expectTokens(R"(.pragma "nounroll"; .file 1 "a \"b\".cu")",
               {{Dir, ".pragma"}, {TokenKind::String, "\"nounroll\""},
                {TokenKind::Semicolon, ";"}, {Dir, ".file"}, {Int, "1"},
                {TokenKind::String, R"("a \"b\".cu")"}});
}

TEST(Lexer, TracksLinesAndLineStarts) {
  Lexer L("a\n  b c\n/* x\ny */ d\n\te");
  Token A = L.lex(), B = L.lex(), C = L.lex(), D = L.lex(), E = L.lex();
  EXPECT_EQ(A.Line, 1u);
  EXPECT_TRUE(A.AtLineStart);
  EXPECT_EQ(B.Line, 2u);
  EXPECT_TRUE(B.AtLineStart);
  EXPECT_FALSE(C.AtLineStart);
  EXPECT_EQ(D.Line, 4u) << "lines inside a block comment count";
  EXPECT_TRUE(D.AtLineStart);
  EXPECT_EQ(E.Line, 5u);
  EXPECT_TRUE(L.lex().is(TokenKind::Eof));
}

TEST(Lexer, UnterminatedCommentAndStringAreErrors) {
  Lexer L1("ret; /* never closed");
  L1.lex();
  L1.lex();
  Token T = L1.lex();
  EXPECT_TRUE(T.is(TokenKind::Error));
  EXPECT_EQ(T.text(), "/*");
  EXPECT_STREQ(L1.errorMessage(), "unterminated '/*' comment");
  EXPECT_TRUE(L1.lex().is(TokenKind::Eof));

  Lexer L2("\"open\nnext");
  EXPECT_TRUE(L2.lex().is(TokenKind::Error));
  EXPECT_STREQ(L2.errorMessage(), "unterminated string");
  EXPECT_EQ(L2.lex().text(), "next");
}

TEST(Lexer, InvalidBytesIncludingNulFormOneTokenPerRun) {
  std::string Source("ret;\0\0\x01\xff# x", 11);
  std::vector<Lexed> Got = lexAll(Source);
  ASSERT_EQ(Got.size(), 4u);
  EXPECT_EQ(Got[2].Kind, TokenKind::Error);
  EXPECT_EQ(Got[2].Text, std::string("\0\0\x01\xff#", 5));
  EXPECT_EQ(Got[3].Text, "x");
}

TEST(Lexer, EndOfInputWithoutTerminatorIsSafe) {
  // The buffer is not NUL-terminated past its end: every scan must stop at End.
  // Each text is cut at every length and lexed from a copy of exactly that size, so a read
  // past the end shows up under the sanitizers.
  for (const char *Text : {"0x1F.", "$", "a $", "%", ".", "\"abc", "/*", "/", "0f", "a::",
                           "0b", "1e+", "@!", "<<"}) {
    llvm::StringRef Full(Text);
    for (size_t N = 0; N <= Full.size(); ++N) {
      std::unique_ptr<char[]> Exact(new char[N ? N : 1]);
      std::copy(Full.begin(), Full.begin() + N, Exact.get());
      Lexer L(llvm::StringRef(Exact.get(), N));
      unsigned Tokens = 0;
      for (Token T = L.lex(); T.isNot(TokenKind::Eof); T = L.lex()) {
        ASSERT_LT(++Tokens, 10u) << Text;
        ASSERT_LE(T.Ptr + T.Length, Exact.get() + N) << Text << " cut at " << N;
      }
    }
  }
}

TEST(Lexer, SaveAndRestoreGiveLookahead) {
  Lexer L("a b c");
  L.lex();
  Lexer::State S = L.save();
  EXPECT_EQ(L.lex().text(), "b");
  EXPECT_EQ(L.lex().text(), "c");
  L.restore(S);
  EXPECT_EQ(L.lex().text(), "b");
}

} // namespace
