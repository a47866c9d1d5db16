//===- NameResolution.h - names to their declarations, innermost scope first ------===//
//
// nvcc wraps every inline-asm block in `{ ... }` with its own `.reg` declarations and labels,
// so one function can declare `P1` and the label `WAIT` in hundreds of sibling scopes. A name
// used in a scope means the declaration in that scope, else in the enclosing one, and so on
// out to the function body (and, for variables, the function's parameters). NameResolver
// indexes one function once and then answers each lookup with a few hash probes per scope
// level; a register name such as `%r17` also matches a range declaration `%r<90>`.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <utility>

namespace wsv {
namespace ptx {

/// A register's declaration: the `.reg` statement and which of its names declares it.
struct RegisterRef {
  const RegisterDecl *Decl = nullptr;
  unsigned NameIndex = 0;
  explicit operator bool() const { return Decl != nullptr; }
  const RegisterName &name() const { return Decl->names()[NameIndex]; }
};

/// A name declared twice in the same scope (ptxas rejects it); the first declaration wins.
struct Redeclaration {
  const Statement *First;
  const Statement *Second;
  llvm::StringRef Name;
};

class NameResolver {
public:
  /// Indexes every scope of F's body. F must be a definition.
  explicit NameResolver(const Function &F);

  const Function &function() const { return F; }
  /// The scope that directly contains an instruction, label or scope of the function; nullptr
  /// for other statements and for statements of other functions.
  const Scope *scopeOf(const Statement &S) const;

  /// The label (a Label, or the TargetList or CallPrototype that a label names) that Name
  /// means in From.
  const Statement *findLabel(const Scope &From, llvm::StringRef Name) const;
  RegisterRef findRegister(const Scope &From, llvm::StringRef Name) const;
  /// A `.shared`/`.local`/`.param` declaration in a scope, or a parameter of the function.
  const VariableDecl *findVariable(const Scope &From, llvm::StringRef Name) const;

  /// What a Name operand of I means, looked up from I's scope.
  const Statement *resolveLabel(const Instruction &I, Operand Op) const;
  RegisterRef resolveRegister(const Instruction &I, Operand Op) const;
  /// For `bra`/`bra.uni` (guarded or not): the Label branched to; nullptr when the operand is
  /// not a label of this function.
  const Label *branchTarget(const Instruction &I) const;

  llvm::ArrayRef<Redeclaration> redeclarations() const { return Redeclarations; }

private:
  using Key = std::pair<const Scope *, llvm::StringRef>;
  void index(const Statement &S, const Scope &Parent);
  template <typename T>
  void declare(llvm::DenseMap<Key, T> &Map, const Scope &S, llvm::StringRef Name, T Value,
               const Statement &Decl, const Statement *(*DeclOf)(const T &));

  const Function &F;
  llvm::DenseMap<const Statement *, const Scope *> Parents;
  llvm::DenseMap<Key, const Statement *> Labels;
  llvm::DenseMap<Key, RegisterRef> Registers; ///< plain names: `%rx`, `P1`
  llvm::DenseMap<Key, RegisterRef> Ranges;    ///< range prefixes: `%r` of `%r<90>`
  llvm::DenseMap<Key, const VariableDecl *> Variables;
  llvm::SmallVector<Redeclaration, 0> Redeclarations;
};

/// Splits a register name into the prefix and index a range declaration would give it:
/// `%r17` -> ("%r", 17). False when the name does not end in a canonical decimal number.
bool splitRegisterName(llvm::StringRef Name, llvm::StringRef &Prefix, uint64_t &Index);

} // namespace ptx
} // namespace wsv
