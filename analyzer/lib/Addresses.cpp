//===- Addresses.cpp - addresses taken apart, symbols named and sized -------------===//
#include "wsv/analyzer/Barriers.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Demangle/Demangle.h"

using namespace wsv;
using namespace wsv::analyzer;

namespace {

bool mentionsSymbol(const Expr *E) {
  return E->mentions([](const Expr *L) { return L->is(ExprKind::Symbol); });
}

const Expr *findSymbol(const Expr *E) {
  if (E->is(ExprKind::Symbol))
    return E;
  for (const Expr *Op : E->ops())
    if (const Expr *S = findSymbol(Op))
      return S;
  return nullptr;
}

void collectTerms(const Expr *E, llvm::SmallVectorImpl<const Expr *> &Terms) {
  if (E->is(ExprKind::Add)) {
    for (const Expr *Op : E->ops())
      collectTerms(Op, Terms);
    return;
  }
  Terms.push_back(E);
}

/// Element bytes of a PTX type name (`.b8`, `.u64`, `.f32`, ...).
unsigned typeBytes(llvm::StringRef Type) {
  Type.consume_front(".");
  if (Type.size() < 2)
    return 0;
  unsigned Bits = 0;
  if (Type.drop_front().getAsInteger(10, Bits) || Bits % 8)
    return 0;
  return Bits / 8;
}

} // namespace

AddressParts wsv::analyzer::splitAddress(ExprContext &Ctx, const Expr *Address) {
  AddressParts P;
  if (!Address)
    return P;
  llvm::SmallVector<const Expr *, 8> Terms;
  collectTerms(Address, Terms);
  const Expr *Base = nullptr, *Varying = nullptr;
  for (const Expr *T : Terms) {
    if (T->isConstant()) {
      P.Offset += T->signedValue();
      continue;
    }
    if (T->is(ExprKind::MapA)) {
      // The peer's copy of the same variable: the parts of the local address, and the rank.
      AddressParts Inner = splitAddress(Ctx, T->op(0));
      P.Rank = T->op(1);
      P.Offset += Inner.Offset;
      if (Inner.Base)
        Base = Base ? Ctx.add(Base, Inner.Base) : Inner.Base;
      if (Inner.Varying)
        Varying = Varying ? Ctx.add(Varying, Inner.Varying) : Inner.Varying;
      continue;
    }
    const Expr *&Into = mentionsSymbol(T) ? Base : Varying;
    Into = Into ? Ctx.add(Into, T) : T;
  }
  P.Base = Base;
  P.Varying = Varying;
  if (Base)
    if (const Expr *S = findSymbol(Base))
      P.Symbol = S->name();
  return P;
}

std::string wsv::analyzer::sourceVariableName(llvm::StringRef Symbol) {
  std::string Demangled = llvm::demangle(Symbol);
  if (Demangled == Symbol)
    return Symbol.str();
  // The variable is the last name at nesting depth 0: `void f<__half>(A const*)::full`.
  int Depth = 0;
  size_t Last = std::string::npos;
  for (size_t I = 0; I + 1 < Demangled.size(); ++I) {
    char C = Demangled[I];
    if (C == '(' || C == '<' || C == '[')
      ++Depth;
    else if (C == ')' || C == '>' || C == ']')
      --Depth;
    else if (Depth == 0 && C == ':' && Demangled[I + 1] == ':')
      Last = I + 2;
  }
  return Last == std::string::npos ? Demangled : Demangled.substr(Last);
}

std::optional<uint64_t> wsv::analyzer::declaredBytes(const ptx::Module &M,
                                                     const ptx::Function *F,
                                                     llvm::StringRef Symbol) {
  const ptx::VariableDecl *V = M.globalVariable(Symbol);
  if (!V && F && F->body())
    for (const ptx::Statement *S : F->body()->body())
      if (const auto *D = llvm::dyn_cast<ptx::VariableDecl>(S))
        if (D->name() == Symbol)
          V = D;
  if (!V)
    return std::nullopt;
  uint64_t Bytes = typeBytes(V->type());
  if (!Bytes)
    return std::nullopt;
  if (V->vectorWidth())
    Bytes *= V->vectorWidth();
  for (int64_t D : V->dimensions()) {
    if (D <= 0)
      return std::nullopt;
    Bytes *= static_cast<uint64_t>(D);
  }
  return Bytes;
}
