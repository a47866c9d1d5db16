//===- ParserImpl.h - the recursive-descent PTX parser (internal) ------------------===//
//
// One Parser fills one Module. Grammar functions are named after what they parse, start with
// their grammar in a comment, and return true on failure so that steps chain. Nesting (scopes
// inside function bodies) is handled with explicit stacks, never recursion, so a million
// nested braces cost memory proportional to the input and no stack. The only recursion is in
// initializer brace lists, whose depth is capped.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"
#include "wsv/ptx_parser/Diagnostics.h"
#include "wsv/ptx_parser/Lexer.h"
#include "wsv/ptx_parser/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <tuple>
#include <vector>

namespace wsv {
namespace ptx {

/// An operand while it is being built: absolute text pointer, and composite elements
/// addressed by an index into OperandBuilder::Children.
struct OperandData {
  const char *Ptr = nullptr;
  int64_t Rel = 0; ///< composites: index of the first element in Children; addresses: offset
  uint32_t Len = 0;
  OperandKind Kind = OperandKind::Name;
  uint8_t Flags = 0;
};

using detail::OperandSlot;

/// Collects the operands of one statement: the top-level list and, in Children, the element
/// blocks of composites. Operands are laid out as [top-level..., children...].
struct OperandBuilder {
  llvm::SmallVector<OperandData, 16> Top;
  llvm::SmallVector<OperandData, 32> Children;
  /// Elements of lists still open (nested initializer braces stack their regions here).
  llvm::SmallVector<OperandData, 32> Open;

  void clear() {
    Top.clear();
    Children.clear();
    Open.clear();
  }
  size_t total() const { return Top.size() + Children.size(); }
  /// Moves Open[From, end) into Children as one block and returns a composite pointing at it.
  OperandData closeList(size_t From, OperandKind Kind, const char *Ptr);
  /// Writes the operands to Dest (room for total()): text as offsets from Base, elements as
  /// relative indexes. False when some text is 2 GiB or more away from Base.
  bool materialize(OperandSlot *Dest, const char *Base) const;
};

class Parser {
public:
  Parser(Module &M, DiagnosticEngine &Diags);
  void parseModule();

  // Field access for the AST's friends-only setters lives in the parse functions below.
private:
  //===--- Tokens -----------------------------------------------------------------===//
  /// Moves to the next token; a lexer error is reported as it becomes current.
  void next();
  /// The token after Tok, without consuming anything.
  const Token &peek();
  /// Everything needed to re-parse from here: a speculative parse (packed initializers)
  /// restores it when the input turns out not to fit.
  struct State {
    Token Tok, Peeked;
    const char *PrevEnd = nullptr;
    bool HasPeeked = false;
    Lexer::State Lex = {};
  };
  State save();
  void restore(const State &S);
  bool consumeIf(TokenKind K) {
    if (Tok.isNot(K))
      return false;
    next();
    return true;
  }
  /// Reports "expected X" at Tok (unless Tok is a lexer error, already reported).
  bool expected(const llvm::Twine &What);
  bool expect(TokenKind K, const char *Context);
  /// Expects the ';' that ends a statement. A missing ';' before a new line is reported at
  /// the end of the previous token and treated as present.
  bool expectSemicolon(const char *What);
  bool error(const char *Ptr, const llvm::Twine &Message) {
    return Diags.error(llvm::SMLoc::getFromPointer(Ptr), Message);
  }
  bool stop() const { return Diags.tooManyErrors(); }
  /// Skips to the end of a broken statement: past the next ';', or up to a '{', '}', or a
  /// directive, name or guard that starts a line (other than the broken statement's own
  /// first token, StatementStart).
  void recover(const char *StatementStart);
  bool parseIntegerToken(uint64_t &Value, const char *What);

  //===--- Allocation ---------------------------------------------------------------===//
  template <typename T, typename... Args> T *create(Args &&...A) {
    return new (M.Alloc.Allocate(sizeof(T), alignof(T))) T(std::forward<Args>(A)...);
  }
  template <typename T> llvm::ArrayRef<T> copy(llvm::ArrayRef<T> Items) {
    if (Items.empty())
      return {};
    T *Dest = M.Alloc.Allocate<T>(Items.size());
    std::uninitialized_copy(Items.begin(), Items.end(), Dest);
    return {Dest, Items.size()};
  }
  /// Copies the built operands into the allocator, offsets counted from Base (the owning
  /// statement's start). Returns true (and reports) when a statement is too long for that.
  bool materializeOperands(const char *Base, const OperandSlot *&Slots, uint32_t &Count);

  //===--- Module level -------------------------------------------------------------===//
  void parseModuleItem();
  bool parseVersion();
  bool parseTarget();
  bool parseAddressSize();
  bool parseFile();
  bool parseSection();
  bool flushSectionRun();
  bool parseSectionData();
  /// A directive with a flat operand list; with Semicolon, ends at a ';'.
  Directive *parseDirective(bool Semicolon);
  /// Linkage flags, then a function or a variable.
  bool parseLinkageItem();

  //===--- Functions and bodies ------------------------------------------------------===//
  bool parseFunction(const char *Start, uint8_t Linkage);
  bool parseParamList(llvm::SmallVectorImpl<const VariableDecl *> &Params);
  bool parseBody(Function &F);
  bool parseBodyStatement();
  bool parseLabelOrTargets();
  bool parseLoc();
  bool parseCallPrototype(const Token &LabelTok);
  bool parseTargetList(const Token &LabelTok, bool CallTargets);
  void addStatement(const Statement *S) { StmtStack.push_back(S); }
  void openScope(const Token &Brace);
  void closeScope();

  //===--- Declarations -------------------------------------------------------------===//
  enum class DeclContext { Module, Body, Param };
  VariableDecl *parseVariableDecl(DeclContext Context, uint8_t Linkage, const char *Start);
  bool parseRegisterDecl();
  bool parseInitializer(VariableDecl &V);
  bool tryPackedList(unsigned Width, bool Signed, bool FloatBits, Initializer &Init);
  bool parseInitValue(unsigned Depth);

  //===--- Instructions and operands ----------------------------------------------------===//
  bool parseInstruction();
  bool parseOperand(llvm::SmallVectorImpl<OperandData> &Out);
  bool parseNumber(llvm::SmallVectorImpl<OperandData> &Out);
  bool parseAddress(llvm::SmallVectorImpl<OperandData> &Out);
  bool parseBraceVector(llvm::SmallVectorImpl<OperandData> &Out);
  bool parseCallList(llvm::SmallVectorImpl<OperandData> &Out);
  bool parseSymbolExpression(OperandData &D);
  OperandData leaf(const Token &T, OperandKind Kind, uint8_t Flags = 0);

  Module &M;
  DiagnosticEngine &Diags;
  Lexer Lex;
  Token Tok;
  /// End of the token before Tok, where a missing ';' is reported.
  const char *PrevEnd = nullptr;
  Token Peeked;
  bool HasPeeked = false;
  /// Set while skipping a broken statement or parsing speculatively: lexer errors there are
  /// not reported (again).
  bool Quiet = false;
  /// Parsing a `call`: parentheses are argument lists, not constant expressions.
  bool InCall = false;

  // Module items, and statements of the scopes still open (see openScope()).
  llvm::SmallVector<const Statement *, 64> Items;
  llvm::SmallVector<const Function *, 16> FunctionList;
  llvm::SmallVector<const FileDirective *, 16> FileList;
  llvm::SmallVector<const Statement *, 256> StmtStack;
  struct OpenScope {
    Scope *Node;
    size_t FirstStatement;
  };
  std::vector<OpenScope> ScopeStack;

  OperandBuilder Ops;
  llvm::SmallVector<uint8_t, 256> PackedBytes;

  // The section being parsed: a run of packed integers not yet turned into a node.
  llvm::SmallVector<const Statement *, 64> SectionItems;
  const char *RunPtr = nullptr;
  unsigned RunWidth = 0;
  uint64_t RunCount = 0;

  // .loc state of the function being parsed.
  const LocDirective *CurrentLoc = nullptr;
  llvm::DenseMap<std::tuple<unsigned, unsigned, unsigned>, const LocDirective *> LocsSeen;

  static constexpr unsigned MaxInitializerDepth = 64;
};

bool isStateSpace(llvm::StringRef Directive);
/// Directives that can only begin a module-level item; inside a function body one of these
/// at the start of a line means the body's closing brace is missing.
bool startsModuleItem(const Token &T);

/// Parses an integer literal's text (no sign): decimal, 0x hex, 0b binary, 0-prefixed octal,
/// optional U suffix. False if it does not fit 64 bits.
bool parseIntegerLiteral(llvm::StringRef Text, uint64_t &Value);

} // namespace ptx
} // namespace wsv
