//===- Ast.h - statements, declarations and functions of a PTX module -------------===//
//
// Every node lives in its Module's BumpPtrAllocator and is trivially destructible, so freeing a
// module is freeing its slabs: no destructor walks a million nested scopes. Names and opcodes
// are views into the source buffer; lists are arrays in the same allocator.
//
// A node carries where it starts: a pointer into the buffer, like an llvm::SMLoc.
// Module::location() turns it into file, line and column through the SourceMgr (whose line
// table is built once, on first use), so nodes do not spend four bytes each on a line number.
// An instruction also points at the `.loc` directive that governs it, which is how a finding
// maps back to a CUDA source line.
//
// Scopes are statements: a function body is a Scope, and every `{ ... }` inside it (inline-asm
// blocks, call sequences) is a nested Scope with its own declarations and labels. NameResolver
// (NameResolution.h) resolves a name to the innermost scope that declares it.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Operand.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/iterator_range.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <iterator>

namespace wsv {
namespace ptx {

class Parser;
class LocDirective;

enum class StmtKind : uint8_t {
  // Inside function bodies.
  Instruction,
  Label,
  Scope,
  RegisterDecl,
  VariableDecl, ///< also module-level variables and function parameters
  Loc,
  Directive, ///< `.pragma "nounroll";`, `.maxntid 128, 1, 1`, and directives wsv does not know
  TargetList,    ///< `L: .branchtargets A, B;` and `L: .calltargets f, g;`
  CallPrototype, ///< `proto: .callprototype (.param .b32 _) _ (.param .b64 _);`
  // Module level.
  Version,
  Target,
  AddressSize,
  File,
  Function,
  Section,
  SectionData, ///< `.b8 1,2,3` and `.b64 label+8` lines of a debug section
};

const char *toString(StmtKind Kind);

class Statement {
public:
  StmtKind kind() const { return Kind; }
  /// Where the statement starts: the '@' of a guard, the opcode, the directive, the label.
  const char *ptr() const { return Ptr; }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(Ptr); }

protected:
  explicit Statement(StmtKind Kind, const char *Ptr) : Ptr(Ptr), Kind(Kind) {}

  const char *Ptr;
  StmtKind Kind;
  uint8_t Flags = 0;
  uint16_t Aux = 0;
  friend class Parser;
};

/// A name with its text in the source buffer; 12 bytes where a StringRef would take 16.
struct NameRef {
  const char *Ptr = nullptr;
  uint32_t Length = 0;
  llvm::StringRef str() const { return {Ptr, Length}; }
};

//===- Instructions --------------------------------------------------------------===//

/// The dot-separated parts of an opcode after its base name: for
/// `mbarrier.try_wait.parity.shared::cta.b64` they are `try_wait`, `parity`, `shared::cta`,
/// `b64`. Iterating splits the text in place; nothing is stored.
class ModifierIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = llvm::StringRef;
  using difference_type = std::ptrdiff_t;
  using pointer = const llvm::StringRef *;
  using reference = const llvm::StringRef &;

  ModifierIterator() = default;
  explicit ModifierIterator(llvm::StringRef Rest) : Rest(Rest) { advance(); }
  reference operator*() const { return Current; }
  pointer operator->() const { return &Current; }
  ModifierIterator &operator++() {
    advance();
    return *this;
  }
  bool operator==(const ModifierIterator &O) const {
    return Current.data() == O.Current.data() && Current.size() == O.Current.size();
  }
  bool operator!=(const ModifierIterator &O) const { return !(*this == O); }

private:
  void advance();
  llvm::StringRef Rest;
  llvm::StringRef Current;
};

class Instruction : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Instruction; }

  /// The whole opcode as written: `cp.async.bulk.tensor.2d.shared::cluster.global...`.
  llvm::StringRef opcode() const { return {Ptr + Aux, OpcodeLength}; }
  /// The part before the first '.': `cp`, `mbarrier`, `bra`.
  llvm::StringRef baseName() const { return opcode().take_until([](char C) { return C == '.'; }); }
  /// The parts after the base name, without their dots (`::` stays inside a part).
  llvm::iterator_range<ModifierIterator> modifiers() const;
  /// Whether one of modifiers() equals Modifier (given without its dot).
  bool hasModifier(llvm::StringRef Modifier) const;
  /// Whether the opcode starts with Prefix followed by '.' or its end, e.g. `mbarrier.try_wait`.
  bool opcodeStartsWith(llvm::StringRef Prefix) const;

  /// The predicate guard (`@%p1` or `@!%p1`, the latter with isNegated()); invalid when the
  /// instruction has none.
  Operand guard() const { return (Flags & FlagGuarded) ? Operand(Ptr, slots()) : Operand(); }
  OperandRange operands() const {
    unsigned Skip = (Flags & FlagGuarded) ? 1 : 0;
    return OperandRange(Ptr, slots() + Skip, NumOperands - Skip);
  }
  /// The `.loc` directive in effect for this instruction (the last one before it in its
  /// function), or nullptr when there is none.
  const LocDirective *debugLoc() const { return DebugLoc; }

private:
  friend class Parser;
  enum : uint8_t { FlagGuarded = 1 };
  explicit Instruction(const char *Ptr) : Statement(StmtKind::Instruction, Ptr) {}
  const detail::OperandSlot *slots() const {
    return reinterpret_cast<const detail::OperandSlot *>(this + 1);
  }

  uint16_t OpcodeLength = 0;
  uint16_t NumOperands = 0; ///< top-level operands, including the guard
  const LocDirective *DebugLoc = nullptr;
};

static_assert(sizeof(Instruction) == 24, "instructions must stay compact: they dominate memory");
static_assert(sizeof(Instruction) % alignof(detail::OperandSlot) == 0,
              "operand slots follow the instruction");

class Label : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Label; }
  llvm::StringRef name() const { return {Ptr, NameLength}; }

private:
  friend class Parser;
  Label(const char *Ptr, uint32_t NameLength)
      : Statement(StmtKind::Label, Ptr), NameLength(NameLength) {}
  uint32_t NameLength;
};

class Scope : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Scope; }
  llvm::ArrayRef<const Statement *> body() const { return Body; }
  /// The enclosing scope, or nullptr for a function body.
  const Scope *parent() const { return Parent; }
  /// Scopes between this one and the function body (0 for the body itself).
  unsigned depth() const { return Depth; }

private:
  friend class Parser;
  Scope(const char *Ptr, const Scope *Parent)
      : Statement(StmtKind::Scope, Ptr), Parent(Parent),
        Depth(Parent ? Parent->Depth + 1 : 0) {}
  llvm::ArrayRef<const Statement *> Body;
  const Scope *Parent;
  uint32_t Depth;
};

//===- Declarations ----------------------------------------------------------------===//

/// One name of a `.reg` declaration: `%r<90>` declares %r0 .. %r89, `%rx` declares itself.
struct RegisterName {
  NameRef Name;        ///< `%r` for `%r<90>`
  uint32_t Count = 0;  ///< 90 for `%r<90>`; 0 for a plain name
  bool isRange() const { return Count != 0 || HasRange; }
  bool HasRange = false; ///< `%r<0>` declares nothing but is still a range
};

/// `.reg .b32 %r<90>;`, `.reg .pred P1, P2;`, `.reg .v2 .b32 %v;`
class RegisterDecl : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::RegisterDecl; }
  llvm::StringRef type() const { return Type; }
  unsigned vectorWidth() const { return VectorWidth; } ///< 0, 2, 4 or 8
  llvm::ArrayRef<RegisterName> names() const { return Names; }

private:
  friend class Parser;
  RegisterDecl(const char *Ptr) : Statement(StmtKind::RegisterDecl, Ptr) {}
  llvm::StringRef Type;
  llvm::ArrayRef<RegisterName> Names;
  uint8_t VectorWidth = 0;
};

/// An initializer: a scalar, an expression, or a brace list. Brace lists of plain integers are
/// stored packed, one element of the declared width each, because nvcc writes every
/// initialized array as `.b8 name[N] = {...}` and such tables can be megabytes.
class Initializer {
public:
  bool isPacked() const { return Packed != nullptr; }
  /// Packed: element width in bytes and count; element(I) is zero-extended.
  unsigned elementWidth() const { return Width; }
  uint64_t size() const { return Count; }
  uint64_t element(uint64_t I) const;
  /// Signed types (`.s8` .. `.s64`) print their packed elements sign-extended.
  bool isSigned() const { return Signed; }
  /// `.f32`/`.f64` lists of `0f`/`0d` bit patterns, packed as their bits.
  bool isFloatBits() const { return FloatBits; }
  /// Not packed: the value as an operand tree (a Vector for brace lists).
  Operand value() const { return Value ? Operand(Base, Value) : Operand(); }

private:
  friend class Parser;
  const uint8_t *Packed = nullptr;
  const char *Base = nullptr; ///< the declaration's start, which operand offsets count from
  const detail::OperandSlot *Value = nullptr;
  uint64_t Count = 0;
  uint8_t Width = 0;
  bool Signed = false;
  bool FloatBits = false;
};

enum Linkage : uint8_t {
  LinkageExtern = 1,
  LinkageVisible = 2,
  LinkageWeak = 4,
  LinkageCommon = 8,
};

/// A state-space declaration: module variables, `.shared`/`.local`/`.param` inside bodies, and
/// function parameters (`.param .u64 .ptr.global.align 16 p`, `.reg .b32 r`).
class VariableDecl : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::VariableDecl; }
  llvm::StringRef name() const { return Name; }
  /// `.global`, `.shared`, `.shared::cta`, `.const`, `.local`, `.param`, `.reg`, `.tex`.
  llvm::StringRef space() const { return Space; }
  llvm::StringRef type() const { return Type; }
  unsigned linkage() const { return LinkageFlags; } ///< Linkage bits
  unsigned alignment() const { return Align; }      ///< 0 when not written
  unsigned vectorWidth() const { return VectorWidth; }
  /// Array dimensions; a dimension written `[]` is -1.
  llvm::ArrayRef<int64_t> dimensions() const { return Dims; }
  bool isArray() const { return !Dims.empty(); }
  /// `.ptr.shared.align 16` on a kernel parameter: the space (`.shared`, empty for `.ptr`
  /// alone) and alignment (0 when not written).
  bool isPointer() const { return Flags & FlagPointer; }
  llvm::StringRef pointerSpace() const { return PtrSpace; }
  unsigned pointerAlignment() const { return PtrAlign; }
  /// The text inside `.attribute( ... )`, e.g. `.managed`; empty when absent.
  llvm::StringRef attribute() const { return Attribute; }
  const Initializer *initializer() const { return Init; }

private:
  friend class Parser;
  enum : uint8_t { FlagPointer = 1 };
  VariableDecl(const char *Ptr) : Statement(StmtKind::VariableDecl, Ptr) {}
  llvm::StringRef Name, Space, Type, PtrSpace, Attribute;
  llvm::ArrayRef<int64_t> Dims;
  const Initializer *Init = nullptr;
  uint32_t Align = 0, PtrAlign = 0;
  uint8_t LinkageFlags = 0, VectorWidth = 0;
};

//===- Directives in bodies ---------------------------------------------------------===//

/// `.loc file line column[, function_name label[+offset], inlined_at file line column]`.
/// The `.loc` whose file, line and column an `inlined_at` names is the call site; inlinedAt()
/// is that directive (the latest one before this one in the same function with those
/// coordinates), so following it walks the inlining chain outwards.
class LocDirective : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Loc; }
  unsigned fileIndex() const { return FileIndex; }
  unsigned sourceLine() const { return SourceLine; }
  unsigned sourceColumn() const { return SourceColumn; }
  bool hasInlineInfo() const { return Extra != nullptr; }
  /// `$L__info_string3` in `function_name $L__info_string3`; empty without inline info.
  llvm::StringRef functionNameLabel() const;
  /// `+ offset` after the label, when written.
  bool hasFunctionNameOffset() const;
  int64_t functionNameOffset() const;
  /// The coordinates written after `inlined_at`.
  unsigned inlinedAtFile() const;
  unsigned inlinedAtLine() const;
  unsigned inlinedAtColumn() const;
  /// The `.loc` of the call site, or nullptr (no inline info, or no such `.loc` before).
  const LocDirective *inlinedAt() const;

private:
  friend class Parser;
  struct InlineInfo {
    NameRef FunctionName;
    uint32_t File = 0, Line = 0, Column = 0;
    int64_t FunctionNameOffset = 0;
    bool HasOffset = false;
    const LocDirective *Parent = nullptr;
  };
  LocDirective(const char *Ptr) : Statement(StmtKind::Loc, Ptr) {}
  uint32_t FileIndex = 0, SourceLine = 0, SourceColumn = 0;
  InlineInfo *Extra = nullptr;
};

/// A directive with a name and a flat operand list: `.pragma "nounroll";`,
/// `.maxntid 128, 1, 1`, `.noreturn`, `.alias a, b;`, and any directive wsv does not know.
class Directive : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Directive; }
  llvm::StringRef name() const { return {Ptr, NameLength}; }
  OperandRange operands() const { return OperandRange(Ptr, Ops, NumOps); }
  /// Written with a terminating ';' (`.pragma` and directives in bodies and at module level);
  /// function-header directives such as `.maxntid` have none.
  bool hasSemicolon() const { return Flags & FlagSemicolon; }

private:
  friend class Parser;
  enum : uint8_t { FlagSemicolon = 1 };
  Directive(const char *Ptr, uint32_t NameLength)
      : Statement(StmtKind::Directive, Ptr), NameLength(NameLength) {}
  const detail::OperandSlot *Ops = nullptr;
  uint32_t NumOps = 0;
  uint32_t NameLength;
};

/// `label: .branchtargets L1, L2;` (for brx.idx) or `label: .calltargets f, g;`.
class TargetList : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::TargetList; }
  llvm::StringRef label() const { return {Ptr, LabelLength}; }
  bool isBranchTargets() const { return !(Flags & FlagCallTargets); }
  OperandRange targets() const { return OperandRange(Ptr, Targets, NumTargets); }

private:
  friend class Parser;
  enum : uint8_t { FlagCallTargets = 1 };
  TargetList(const char *Ptr, uint32_t LabelLength)
      : Statement(StmtKind::TargetList, Ptr), LabelLength(LabelLength) {}
  const detail::OperandSlot *Targets = nullptr;
  uint32_t NumTargets = 0;
  uint32_t LabelLength;
};

/// `proto: .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _) .noreturn;`
class CallPrototype : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::CallPrototype; }
  llvm::StringRef label() const { return {Ptr, LabelLength}; }
  /// Whether a return list `( ... )` was written before the `_`.
  bool hasReturnList() const { return Flags & FlagReturnList; }
  llvm::ArrayRef<const VariableDecl *> returns() const { return Returns; }
  llvm::ArrayRef<const VariableDecl *> params() const { return Params; }
  bool isNoReturn() const { return Flags & FlagNoReturn; }

private:
  friend class Parser;
  enum : uint8_t { FlagReturnList = 1, FlagNoReturn = 2 };
  CallPrototype(const char *Ptr, uint32_t LabelLength)
      : Statement(StmtKind::CallPrototype, Ptr), LabelLength(LabelLength) {}
  llvm::ArrayRef<const VariableDecl *> Returns, Params;
  uint32_t LabelLength;
};

//===- Module level -----------------------------------------------------------------===//

/// `.version 9.0`
class VersionDirective : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Version; }
  unsigned major() const { return Major; }
  unsigned minor() const { return Minor; }
  llvm::StringRef text() const { return Text; } ///< `9.0` as written

private:
  friend class Parser;
  VersionDirective(const char *Ptr) : Statement(StmtKind::Version, Ptr) {}
  llvm::StringRef Text;
  uint32_t Major = 0, Minor = 0;
};

/// `.target sm_90a, debug`
class TargetDirective : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Target; }
  /// `sm_90a`, `debug`, `texmode_independent`, ... as Name operands.
  OperandRange names() const { return OperandRange(Ptr, Names, NumNames); }
  /// The first `sm_*` name, empty if none.
  llvm::StringRef architecture() const;

private:
  friend class Parser;
  TargetDirective(const char *Ptr) : Statement(StmtKind::Target, Ptr) {}
  const detail::OperandSlot *Names = nullptr;
  uint32_t NumNames = 0;
};

/// `.address_size 64`
class AddressSizeDirective : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::AddressSize; }
  unsigned bits() const { return Bits; }

private:
  friend class Parser;
  AddressSizeDirective(const char *Ptr) : Statement(StmtKind::AddressSize, Ptr) {}
  uint32_t Bits = 0;
};

/// `.file 1 "kernel.cu"` or `.file 1 "kernel.cu", 1700000000, 4096`
class FileDirective : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::File; }
  unsigned index() const { return Index; }
  /// The path as written between the quotes (escapes not decoded).
  llvm::StringRef path() const { return Path; }
  bool hasTimestampAndSize() const { return Flags & FlagHasTimestamp; }
  uint64_t timestamp() const { return Timestamp; }
  uint64_t fileSize() const { return FileSize; }

private:
  friend class Parser;
  enum : uint8_t { FlagHasTimestamp = 1 };
  FileDirective(const char *Ptr) : Statement(StmtKind::File, Ptr) {}
  llvm::StringRef Path;
  uint64_t Timestamp = 0, FileSize = 0;
  uint32_t Index = 0;
};

/// `.entry` or `.func`, defined (with a body) or declared (a prototype ending in ';').
class Function : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Function; }
  llvm::StringRef name() const { return Name; }
  bool isEntry() const { return Flags & FlagEntry; }
  unsigned linkage() const { return LinkageFlags; }
  /// `.func (.param .b32 r) f(...)`: whether a return list was written.
  bool hasReturnList() const { return Flags & FlagReturnList; }
  bool hasParamList() const { return Flags & FlagParamList; }
  llvm::ArrayRef<const VariableDecl *> returns() const { return Returns; }
  llvm::ArrayRef<const VariableDecl *> params() const { return Params; }
  /// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.explicitcluster`,
  /// `.reqnctapercluster`, `.maxclusterrank`, `.noreturn`, `.pragma`, ... in written order.
  llvm::ArrayRef<const Directive *> headerDirectives() const { return HeaderDirectives; }
  /// The header directive with this name (with its dot), or nullptr.
  const Directive *headerDirective(llvm::StringRef Name) const;
  bool isNoReturn() const { return headerDirective(".noreturn") != nullptr; }
  /// The body, or nullptr for a declaration.
  const Scope *body() const { return Body; }
  bool isDefinition() const { return Body != nullptr; }

private:
  friend class Parser;
  enum : uint8_t { FlagEntry = 1, FlagReturnList = 2, FlagParamList = 4 };
  Function(const char *Ptr) : Statement(StmtKind::Function, Ptr) {}
  llvm::StringRef Name;
  llvm::ArrayRef<const VariableDecl *> Returns, Params;
  llvm::ArrayRef<const Directive *> HeaderDirectives;
  const Scope *Body = nullptr;
  uint8_t LinkageFlags = 0;
};

/// `.section .debug_str { label: .b8 95,90,0 ... }`
class Section : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::Section; }
  llvm::StringRef name() const { return Name; }
  /// Label and SectionData statements in order.
  llvm::ArrayRef<const Statement *> items() const { return Items; }

private:
  friend class Parser;
  Section(const char *Ptr) : Statement(StmtKind::Section, Ptr) {}
  llvm::StringRef Name;
  llvm::ArrayRef<const Statement *> Items;
};

/// Data lines of a section. Consecutive lines of plain integers with the same width are one
/// node with the values packed (debug sections are mostly `.b8` bytes, a few per line), so
/// the AST stays smaller than the text; lines with labels or expressions keep operands.
class SectionData : public Statement {
public:
  static bool classof(const Statement *S) { return S->kind() == StmtKind::SectionData; }
  unsigned width() const { return Width; } ///< bytes per value: 1, 2, 4 or 8
  bool isPacked() const { return Packed != nullptr; }
  uint64_t size() const { return isPacked() ? Count : NumOps; }
  /// Packed values, zero-extended.
  uint64_t value(uint64_t I) const;
  /// Values that are labels or expressions (`$L__func_begin0`, `.debug_abbrev`, `a-b`).
  OperandRange operands() const { return OperandRange(Ptr, Ops, NumOps); }

private:
  friend class Parser;
  SectionData(const char *Ptr) : Statement(StmtKind::SectionData, Ptr) {}
  const uint8_t *Packed = nullptr;
  const detail::OperandSlot *Ops = nullptr;
  uint32_t NumOps = 0;
  uint64_t Count = 0;
  uint8_t Width = 0;
};

/// Visits every statement under Body (not Body itself) in source order, with the scope that
/// directly contains it. Iterative: any nesting depth is fine.
void forEachStatement(const Scope &Body,
                      llvm::function_ref<void(const Statement &S, const Scope &Parent)> Fn);

/// Reads a little-endian value of Width bytes.
uint64_t readPacked(const uint8_t *Data, unsigned Width, uint64_t Index);

} // namespace ptx
} // namespace wsv
