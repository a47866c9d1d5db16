//===- Parser.cpp - entry points, tokens, recovery, module-level items ------------===//
#include "ParserImpl.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

using namespace wsv::ptx;
using llvm::StringRef;

//===--- Entry points -----------------------------------------------------------------===//

ParseResult wsv::ptx::parseBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer,
                                  DiagnosticHandler Handler, const ParseOptions &Options) {
  assert(Buffer && "parseBuffer needs a buffer");
  assert(Buffer->getBufferSize() <= MaxSourceBytes && "callers refuse larger inputs");
  ParseResult Result;
  Result.M = std::make_unique<Module>(std::move(Buffer));
  const llvm::SourceMgr &SM = Result.M->sourceMgr();
  DiagnosticEngine Diags(SM, Handler ? std::move(Handler) : printingHandler(SM, llvm::errs()),
                         Options.ErrorLimit);
  Parser P(*Result.M, Diags);
  P.parseModule();
  Result.Errors = Diags.errorCount();
  return Result;
}

ParseResult wsv::ptx::parseString(StringRef Text, StringRef Name, DiagnosticHandler Handler,
                                  const ParseOptions &Options) {
  return parseBuffer(llvm::MemoryBuffer::getMemBufferCopy(Text, Name), std::move(Handler),
                     Options);
}

static llvm::Error tooLarge(StringRef Path, uint64_t Size) {
  return llvm::createStringError(
      std::errc::file_too_large,
      "%s: file is %llu bytes; wsv reads PTX files of at most 4 GiB (%llu bytes)",
      Path.str().c_str(), static_cast<unsigned long long>(Size),
      static_cast<unsigned long long>(MaxSourceBytes));
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> wsv::ptx::readSourceFile(StringRef Path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buffer = std::error_code();
  if (Path == "-") {
    Buffer = llvm::MemoryBuffer::getSTDIN();
  } else {
    // Refuse an oversized file before reading it, so that a 5 GB file costs nothing.
    uint64_t Size = 0;
    if (std::error_code EC = llvm::sys::fs::file_size(Path, Size))
      return llvm::createStringError(EC, "cannot read '%s': %s", Path.str().c_str(),
                                     EC.message().c_str());
    if (Size > MaxSourceBytes)
      return tooLarge(Path, Size);
    // Read rather than map: parse timings then measure parsing, not page faults.
    Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false, /*IsVolatile=*/true);
  }
  if (!Buffer)
    return llvm::createStringError(Buffer.getError(), "cannot read '%s': %s",
                                   Path.str().c_str(), Buffer.getError().message().c_str());
  if ((*Buffer)->getBufferSize() > MaxSourceBytes)
    return tooLarge(Path, (*Buffer)->getBufferSize());
  return std::move(*Buffer);
}

llvm::Expected<ParseResult> wsv::ptx::parseFile(StringRef Path, DiagnosticHandler Handler,
                                                const ParseOptions &Options) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Buffer = readSourceFile(Path);
  if (!Buffer)
    return Buffer.takeError();
  return parseBuffer(std::move(*Buffer), std::move(Handler), Options);
}

//===--- Tokens and recovery ------------------------------------------------------------===//

Parser::Parser(Module &M, DiagnosticEngine &Diags)
    : M(M), Diags(Diags), Lex(M.source()) {
  Tok.Ptr = M.source().begin();
  next();
}

void Parser::next() {
  PrevEnd = Tok.Ptr + Tok.Length;
  if (HasPeeked) {
    Tok = Peeked;
    HasPeeked = false;
  } else {
    Lex.lex(Tok);
  }
  if (LLVM_UNLIKELY(Tok.Kind == TokenKind::Error) && !Quiet)
    Diags.error(Tok.loc(), Lex.errorMessage());
}

const Token &Parser::peek() {
  if (!HasPeeked) {
    Lex.lex(Peeked);
    HasPeeked = true;
  }
  return Peeked;
}

Parser::State Parser::save() {
  State S;
  S.Tok = Tok;
  S.PrevEnd = PrevEnd;
  S.HasPeeked = HasPeeked;
  S.Peeked = Peeked;
  S.Lex = Lex.save();
  return S;
}

void Parser::restore(const State &S) {
  Tok = S.Tok;
  PrevEnd = S.PrevEnd;
  HasPeeked = S.HasPeeked;
  Peeked = S.Peeked;
  Lex.restore(S.Lex);
}

bool Parser::expected(const llvm::Twine &Message) {
  // A lexer error at this token was reported when it was read; one message is enough.
  if (Tok.is(TokenKind::Error))
    return true;
  return Diags.error(Tok.loc(), Message);
}

bool Parser::expect(TokenKind K, const char *Context) {
  if (consumeIf(K))
    return false;
  return expected(llvm::Twine("expected ") + spelling(K) + " " + Context);
}

bool Parser::expectSemicolon(const char *What) {
  if (consumeIf(TokenKind::Semicolon))
    return false;
  // The statement ended at a line break: say where the ';' belongs and carry on as if it
  // were there, which is what the author meant almost every time.
  if (Tok.AtLineStart || Tok.is(TokenKind::Eof) || Tok.is(TokenKind::RBrace)) {
    Diags.error(llvm::SMLoc::getFromPointer(PrevEnd),
                llvm::Twine("expected ';' at end of ") + What);
    return false;
  }
  return expected(llvm::Twine("expected ';' at end of ") + What);
}

static bool startsLine(const Token &T) { return T.AtLineStart; }

void Parser::recover(const char *StatementStart) {
  bool WasQuiet = Quiet;
  Quiet = true; // the rest of a broken statement would only repeat the error
  while (Tok.isNot(TokenKind::Eof)) {
    if (Tok.is(TokenKind::Semicolon)) {
      next();
      break;
    }
    if (Tok.is(TokenKind::LBrace) || Tok.is(TokenKind::RBrace))
      break;
    // Statements are one per line in compiler output, so a line that starts with a name, a
    // guard or a directive starts the next statement. (A broken multi-line `call` may then
    // cost a second error; swallowing the valid line after a garbage one would cost more.)
    if (startsLine(Tok) && Tok.Ptr != StatementStart &&
        (Tok.is(TokenKind::Directive) || Tok.is(TokenKind::At) || Tok.is(TokenKind::Identifier)))
      break;
    next();
  }
  Quiet = WasQuiet;
}

bool Parser::parseIntegerToken(uint64_t &Value, const char *What) {
  if (Tok.isNot(TokenKind::Integer))
    return expected(llvm::Twine("expected ") + What);
  if (!parseIntegerLiteral(Tok.text(), Value))
    return error(Tok.Ptr, llvm::Twine(What) + " does not fit in 64 bits");
  next();
  return false;
}

bool wsv::ptx::parseIntegerLiteral(StringRef Text, uint64_t &Value) {
  if (!Text.empty() && (Text.back() == 'U' || Text.back() == 'u'))
    Text = Text.drop_back();
  unsigned Radix = 10;
  if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'x' || Text[1] == 'X')) {
    Radix = 16;
    Text = Text.drop_front(2);
  } else if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'b' || Text[1] == 'B')) {
    Radix = 2;
    Text = Text.drop_front(2);
  } else if (Text.size() > 1 && Text[0] == '0') {
    Radix = 8;
    Text = Text.drop_front(1);
  }
  if (Text.empty())
    return false;
  // By hand rather than StringRef::getAsInteger: this runs for every address offset and
  // every packed initializer value.
  uint64_t V = 0;
  for (char C : Text) {
    unsigned Digit;
    if (C >= '0' && C <= '9')
      Digit = C - '0';
    else if (C >= 'a' && C <= 'f')
      Digit = C - 'a' + 10;
    else if (C >= 'A' && C <= 'F')
      Digit = C - 'A' + 10;
    else
      return false;
    if (Digit >= Radix)
      return false;
    // Overflow flags, not a division per digit: the division made this loop a third of the
    // time spent on nvcc's `.b8 table[N] = {...}` initializers (tests/bench).
    if (__builtin_mul_overflow(V, Radix, &V) || __builtin_add_overflow(V, Digit, &V))
      return false; // does not fit 64 bits
  }
  Value = V;
  return true;
}

//===--- Module level -----------------------------------------------------------------===//

static bool isLinkage(StringRef D) {
  return D == ".extern" || D == ".visible" || D == ".weak" || D == ".common";
}

bool wsv::ptx::isStateSpace(StringRef D) {
  return llvm::StringSwitch<bool>(D)
      .Cases(".global", ".const", ".shared", ".local", ".param", ".reg", ".tex", true)
      .StartsWith(".shared::", true)
      .StartsWith(".param::", true)
      .Default(false);
}

bool wsv::ptx::startsModuleItem(const Token &T) {
  if (T.isNot(TokenKind::Directive))
    return false;
  StringRef D = T.text();
  return isLinkage(D) || D == ".entry" || D == ".func" || D == ".version" || D == ".target" ||
         D == ".address_size" || D == ".section" || D == ".file" || D == ".global" ||
         D == ".const" || D == ".tex" || D == ".alias";
}

void Parser::parseModule() {
  while (Tok.isNot(TokenKind::Eof) && !stop()) {
    const char *Before = Tok.Ptr;
    parseModuleItem();
    // Every turn of this loop consumes input, whatever the error: no input can hang it.
    if (Tok.Ptr == Before && Tok.isNot(TokenKind::Eof))
      next();
  }
  if (!M.Version && !stop()) {
    if (M.source().find_if_not([](char C) { return std::isspace(static_cast<unsigned char>(C)); }) ==
        StringRef::npos)
      Diags.error(llvm::SMLoc::getFromPointer(M.source().begin()),
                  "empty input: a PTX module starts with a '.version' directive");
    else
      Diags.error(llvm::SMLoc::getFromPointer(M.source().begin()),
                  "missing '.version' directive");
  }
  M.Items = copy<const Statement *>(Items);
  M.Functions = copy<const Function *>(FunctionList);
  M.Files = copy<const FileDirective *>(FileList);
}

void Parser::parseModuleItem() {
  const char *Start = Tok.Ptr;
  bool Failed = false;
  switch (Tok.Kind) {
  case TokenKind::Directive: {
    StringRef D = Tok.text();
    if (D == ".version")
      Failed = parseVersion();
    else if (D == ".target")
      Failed = parseTarget();
    else if (D == ".address_size")
      Failed = parseAddressSize();
    else if (D == ".file")
      Failed = parseFile();
    else if (D == ".section")
      Failed = parseSection();
    else if (isLinkage(D) || D == ".entry" || D == ".func" || isStateSpace(D))
      Failed = parseLinkageItem();
    else if (D == ".loc")
      Failed = expected("'.loc' is only allowed inside a function body");
    else if (Directive *Dir = parseDirective(/*Semicolon=*/true))
      Items.push_back(Dir);
    else
      Failed = true;
    break;
  }
  case TokenKind::Semicolon:
    next();
    return;
  case TokenKind::LBrace: {
    expected("unexpected '{' outside a function");
    // Skip the whole block; counting, not recursing, so any depth is fine.
    Quiet = true;
    uint64_t Depth = 0;
    do {
      if (Tok.is(TokenKind::LBrace))
        ++Depth;
      else if (Tok.is(TokenKind::RBrace))
        --Depth;
      next();
    } while (Depth && Tok.isNot(TokenKind::Eof));
    Quiet = false;
    return;
  }
  case TokenKind::RBrace:
    expected("unexpected '}' outside a function");
    next();
    return;
  case TokenKind::Error:
    Failed = true;
    break;
  case TokenKind::Identifier:
  case TokenKind::At:
    Failed = expected("instructions must be inside a function body");
    break;
  default:
    Failed = expected("expected a directive, a variable or a function");
    break;
  }
  if (Failed)
    recover(Start);
}

/// ::= .version major.minor
bool Parser::parseVersion() {
  auto *V = create<VersionDirective>(Tok.Ptr);
  next();
  if (Tok.isNot(TokenKind::Float) || !Tok.text().contains('.'))
    return expected("expected a version number such as '9.0'");
  StringRef Major, Minor;
  std::tie(Major, Minor) = Tok.text().split('.');
  if (Major.getAsInteger(10, V->Major) || Minor.getAsInteger(10, V->Minor))
    return expected("expected a version number such as '9.0'");
  V->Text = Tok.text();
  next();
  if (!M.Version)
    M.Version = V;
  Items.push_back(V);
  return false;
}

/// ::= .target name {, name}
bool Parser::parseTarget() {
  auto *T = create<TargetDirective>(Tok.Ptr);
  next();
  Ops.clear();
  do {
    if (Tok.isNot(TokenKind::Identifier))
      return expected("expected a target name such as 'sm_90a'");
    Ops.Top.push_back(leaf(Tok, OperandKind::Name));
    next();
  } while (consumeIf(TokenKind::Comma));
  if (materializeOperands(T->Ptr, T->Names, T->NumNames))
    return true;
  if (!M.Target)
    M.Target = T;
  Items.push_back(T);
  return false;
}

/// ::= .address_size (32 | 64)
bool Parser::parseAddressSize() {
  auto *A = create<AddressSizeDirective>(Tok.Ptr);
  next();
  uint64_t Bits = 0;
  const char *At = Tok.Ptr;
  if (parseIntegerToken(Bits, "an address size"))
    return true;
  if (Bits != 32 && Bits != 64)
    return error(At, "address size must be 32 or 64");
  A->Bits = static_cast<uint32_t>(Bits);
  if (!M.AddressSize)
    M.AddressSize = A;
  Items.push_back(A);
  return false;
}

/// ::= .file index "path" [, timestamp, size]
bool Parser::parseFile() {
  auto *F = create<FileDirective>(Tok.Ptr);
  next();
  uint64_t Index = 0;
  const char *At = Tok.Ptr;
  if (parseIntegerToken(Index, "a file index"))
    return true;
  if (Index > UINT32_MAX)
    return error(At, "file index is too large");
  F->Index = static_cast<uint32_t>(Index);
  if (Tok.isNot(TokenKind::String))
    return expected("expected a quoted file name after the file index");
  F->Path = Tok.text().drop_front().drop_back();
  next();
  if (consumeIf(TokenKind::Comma)) {
    if (parseIntegerToken(F->Timestamp, "a timestamp") ||
        expect(TokenKind::Comma, "between the timestamp and the file size") ||
        parseIntegerToken(F->FileSize, "a file size"))
      return true;
    F->Flags |= FileDirective::FlagHasTimestamp;
  }
  FileList.push_back(F);
  Items.push_back(F);
  return false;
}

/// ::= .name [operand {, operand}] [;]
/// Operands run while commas join them, so header directives (`.maxntid 128, 1, 1`) end
/// without a ';' and body or module directives (`.pragma "nounroll";`) end with one.
Directive *Parser::parseDirective(bool Semicolon) {
  auto *D = create<Directive>(Tok.Ptr, Tok.Length);
  next();
  Ops.clear();
  bool HasOperands = Semicolon ? Tok.isNot(TokenKind::Semicolon)
                               : (Tok.is(TokenKind::Integer) || Tok.is(TokenKind::Identifier) ||
                                  Tok.is(TokenKind::String) || Tok.is(TokenKind::Minus) ||
                                  Tok.is(TokenKind::Float)) &&
                                     !Tok.AtLineStart;
  if (HasOperands) {
    do {
      if (parseOperand(Ops.Top))
        return nullptr;
    } while (consumeIf(TokenKind::Comma));
  }
  if (materializeOperands(D->Ptr, D->Ops, D->NumOps))
    return nullptr;
  if (Semicolon) {
    D->Flags |= Directive::FlagSemicolon;
    if (expectSemicolon("directive"))
      return nullptr;
  }
  return D;
}
