//===- NameResolution.cpp - names to their declarations ---------------------------===//
#include "wsv/ptx_parser/NameResolution.h"

using namespace wsv::ptx;
using llvm::StringRef;

bool wsv::ptx::splitRegisterName(StringRef Name, StringRef &Prefix, uint64_t &Index) {
  size_t Digits = Name.size();
  while (Digits && Name[Digits - 1] >= '0' && Name[Digits - 1] <= '9')
    --Digits;
  StringRef Number = Name.drop_front(Digits);
  // `%r<90>` declares %r0 .. %r89: `%r007` is a different name.
  if (Number.empty() || Digits == 0 || (Number.size() > 1 && Number[0] == '0'))
    return false;
  Prefix = Name.take_front(Digits);
  return !Number.getAsInteger(10, Index);
}

template <typename T>
void NameResolver::declare(llvm::DenseMap<Key, T> &Map, const Scope &S, StringRef Name, T Value,
                           const Statement &Decl, const Statement *(*DeclOf)(const T &)) {
  auto Inserted = Map.try_emplace(Key(&S, Name), Value);
  if (!Inserted.second)
    Redeclarations.push_back({DeclOf(Inserted.first->second), &Decl, Name});
}

static const Statement *statementOf(const Statement *const &S) { return S; }
static const Statement *registerStatement(const RegisterRef &R) { return R.Decl; }
static const Statement *variableStatement(const VariableDecl *const &V) { return V; }

void NameResolver::index(const Statement &S, const Scope &Parent) {
  switch (S.kind()) {
  case StmtKind::Instruction:
  case StmtKind::Scope:
    Parents[&S] = &Parent;
    return;
  case StmtKind::Label:
    Parents[&S] = &Parent;
    declare<const Statement *>(Labels, Parent, llvm::cast<Label>(S).name(), &S, S, statementOf);
    return;
  case StmtKind::TargetList:
    declare<const Statement *>(Labels, Parent, llvm::cast<TargetList>(S).label(), &S, S,
                               statementOf);
    return;
  case StmtKind::CallPrototype:
    declare<const Statement *>(Labels, Parent, llvm::cast<CallPrototype>(S).label(), &S, S,
                               statementOf);
    return;
  case StmtKind::RegisterDecl: {
    const auto &R = llvm::cast<RegisterDecl>(S);
    for (unsigned I = 0; I < R.names().size(); ++I) {
      const RegisterName &N = R.names()[I];
      declare(N.isRange() ? Ranges : Registers, Parent, N.Name.str(), RegisterRef{&R, I}, S,
              registerStatement);
    }
    return;
  }
  case StmtKind::VariableDecl:
    declare(Variables, Parent, llvm::cast<VariableDecl>(S).name(),
            &llvm::cast<VariableDecl>(S), S, variableStatement);
    return;
  default:
    return;
  }
}

NameResolver::NameResolver(const Function &F) : F(F) {
  assert(F.body() && "name resolution needs a function definition");
  forEachStatement(*F.body(), [this](const Statement &S, const Scope &Parent) { index(S, Parent); });
}

const Scope *NameResolver::scopeOf(const Statement &S) const { return Parents.lookup(&S); }

const Statement *NameResolver::findLabel(const Scope &From, StringRef Name) const {
  for (const Scope *S = &From; S; S = S->parent())
    if (const Statement *L = Labels.lookup(Key(S, Name)))
      return L;
  return nullptr;
}

RegisterRef NameResolver::findRegister(const Scope &From, StringRef Name) const {
  StringRef Prefix;
  uint64_t Index = 0;
  bool Numbered = splitRegisterName(Name, Prefix, Index);
  for (const Scope *S = &From; S; S = S->parent()) {
    // A plain declaration and a range can both cover a name in one scope; the plain one is
    // the more specific.
    auto Plain = Registers.find(Key(S, Name));
    if (Plain != Registers.end())
      return Plain->second;
    if (Numbered) {
      auto Range = Ranges.find(Key(S, Prefix));
      if (Range != Ranges.end() && Index < Range->second.name().Count)
        return Range->second;
    }
  }
  return {};
}

const VariableDecl *NameResolver::findVariable(const Scope &From, StringRef Name) const {
  for (const Scope *S = &From; S; S = S->parent())
    if (const VariableDecl *V = Variables.lookup(Key(S, Name)))
      return V;
  for (const VariableDecl *P : F.params())
    if (P->name() == Name)
      return P;
  for (const VariableDecl *P : F.returns())
    if (P->name() == Name)
      return P;
  return nullptr;
}

const Statement *NameResolver::resolveLabel(const Instruction &I, Operand Op) const {
  const Scope *S = scopeOf(I);
  if (!S || !Op || !Op.isName())
    return nullptr;
  return findLabel(*S, Op.text());
}

RegisterRef NameResolver::resolveRegister(const Instruction &I, Operand Op) const {
  const Scope *S = scopeOf(I);
  if (!S || !Op || !Op.isName())
    return {};
  return findRegister(*S, Op.text());
}

const Label *NameResolver::branchTarget(const Instruction &I) const {
  if (I.baseName() != "bra" || I.operands().empty())
    return nullptr;
  return llvm::dyn_cast_or_null<Label>(resolveLabel(I, I.operands().back()));
}
