//===- Ast.cpp - node accessors ---------------------------------------------------===//
#include "wsv/ptx_parser/Ast.h"

#include "llvm/ADT/SmallVector.h"

using namespace wsv::ptx;
using llvm::StringRef;

const char *wsv::ptx::toString(StmtKind Kind) {
  switch (Kind) {
  case StmtKind::Instruction: return "instruction";
  case StmtKind::Label: return "label";
  case StmtKind::Scope: return "scope";
  case StmtKind::RegisterDecl: return "register declaration";
  case StmtKind::VariableDecl: return "variable declaration";
  case StmtKind::Loc: return "'.loc'";
  case StmtKind::Directive: return "directive";
  case StmtKind::TargetList: return "target list";
  case StmtKind::CallPrototype: return "'.callprototype'";
  case StmtKind::Version: return "'.version'";
  case StmtKind::Target: return "'.target'";
  case StmtKind::AddressSize: return "'.address_size'";
  case StmtKind::File: return "'.file'";
  case StmtKind::Function: return "function";
  case StmtKind::Section: return "'.section'";
  case StmtKind::SectionData: return "section data";
  }
  return "statement";
}

void ModifierIterator::advance() {
  // Rest starts at a '.' (or is empty); the next modifier runs to the following '.', and
  // `::` inside a modifier (`shared::cta`) is part of it because it contains no '.'.
  if (Rest.empty()) {
    Current = StringRef();
    return;
  }
  Rest = Rest.drop_front(); // the '.'
  size_t Dot = Rest.find('.');
  Current = Rest.take_front(Dot);
  Rest = Dot == StringRef::npos ? StringRef() : Rest.drop_front(Dot);
}

llvm::iterator_range<ModifierIterator> Instruction::modifiers() const {
  StringRef Op = opcode();
  return {ModifierIterator(Op.drop_front(baseName().size())), ModifierIterator()};
}

bool Instruction::hasModifier(StringRef Modifier) const {
  for (StringRef M : modifiers())
    if (M == Modifier)
      return true;
  return false;
}

bool Instruction::opcodeStartsWith(StringRef Prefix) const {
  StringRef Op = opcode();
  return Op.starts_with(Prefix) && (Op.size() == Prefix.size() || Op[Prefix.size()] == '.');
}

uint64_t wsv::ptx::readPacked(const uint8_t *Data, unsigned Width, uint64_t Index) {
  uint64_t Value = 0;
  const uint8_t *P = Data + Index * Width;
  for (unsigned I = 0; I < Width; ++I)
    Value |= static_cast<uint64_t>(P[I]) << (8 * I);
  return Value;
}

uint64_t Initializer::element(uint64_t I) const {
  assert(isPacked() && I < Count && "element of a packed initializer");
  return readPacked(Packed, Width, I);
}

uint64_t SectionData::value(uint64_t I) const {
  assert(isPacked() && I < Count && "value of packed section data");
  return readPacked(Packed, Width, I);
}

StringRef LocDirective::functionNameLabel() const {
  return Extra ? Extra->FunctionName.str() : StringRef();
}
bool LocDirective::hasFunctionNameOffset() const { return Extra && Extra->HasOffset; }
int64_t LocDirective::functionNameOffset() const { return Extra ? Extra->FunctionNameOffset : 0; }
unsigned LocDirective::inlinedAtFile() const { return Extra ? Extra->File : 0; }
unsigned LocDirective::inlinedAtLine() const { return Extra ? Extra->Line : 0; }
unsigned LocDirective::inlinedAtColumn() const { return Extra ? Extra->Column : 0; }
const LocDirective *LocDirective::inlinedAt() const { return Extra ? Extra->Parent : nullptr; }

StringRef TargetDirective::architecture() const {
  for (Operand N : names())
    if (N.text().starts_with("sm_"))
      return N.text();
  return {};
}

const Directive *Function::headerDirective(StringRef Name) const {
  for (const Directive *D : HeaderDirectives)
    if (D->name() == Name)
      return D;
  return nullptr;
}

void wsv::ptx::forEachStatement(
    const Scope &Body, llvm::function_ref<void(const Statement &S, const Scope &Parent)> Fn) {
  struct Frame {
    const Scope *S;
    size_t Next;
  };
  llvm::SmallVector<Frame, 16> Stack;
  Stack.push_back({&Body, 0});
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    if (F.Next == F.S->body().size()) {
      Stack.pop_back();
      continue;
    }
    const Statement *S = F.S->body()[F.Next++];
    Fn(*S, *F.S);
    if (const auto *Inner = llvm::dyn_cast<Scope>(S))
      Stack.push_back({Inner, 0});
  }
}
