//===- Semantics.cpp - what each instruction writes -------------------------------===//
//
// Integer arithmetic, comparisons, selects, conversions and address computations become
// expressions; everything else a destination receives (floating point, tensor-core results,
// shuffles of lane-varying values, wait results) is an Opaque leaf that names the opcode, one
// per instruction occurrence and destination element, so equal reads stay equal and different
// instructions stay different.
//
//===----------------------------------------------------------------------------------===//
#include "ValueBuilder.h"

#include "llvm/ADT/StringSwitch.h"

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

namespace {
struct TypeInfo {
  unsigned Width = 32;
  bool Signed = false;
  bool Float = false;
};

std::optional<TypeInfo> parseType(StringRef M) {
  if (M == "pred")
    return TypeInfo{1, false, false};
  if (M.size() < 2)
    return std::nullopt;
  char C = M[0];
  bool IsFloat = C == 'f' || M.starts_with("bf") || M.starts_with("e4m3") || M.starts_with("e5m2");
  StringRef Digits = M.starts_with("bf") ? M.drop_front(2) : M.drop_front(1);
  if (C != 'u' && C != 's' && C != 'b' && C != 'f')
    return std::nullopt;
  unsigned Bits = 0;
  if (Digits.getAsInteger(10, Bits) || (Bits != 8 && Bits != 16 && Bits != 32 && Bits != 64 &&
                                        Bits != 128))
    return std::nullopt;
  return TypeInfo{std::min(Bits, 64u), C == 's', IsFloat};
}

llvm::SmallVector<TypeInfo, 2> typesOf(const ptx::Instruction &I) {
  llvm::SmallVector<TypeInfo, 2> Out;
  for (StringRef M : I.modifiers())
    if (auto T = parseType(M))
      Out.push_back(*T);
  return Out;
}

TypeInfo lastType(const ptx::Instruction &I) {
  auto Types = typesOf(I);
  return Types.empty() ? TypeInfo{} : Types.back();
}

bool isSharedSpace(const ptx::Instruction &I) {
  for (StringRef M : I.modifiers())
    if (M.starts_with("shared"))
      return true;
  return false;
}

} // namespace

bool ValueBuilder::hasDestination(const ptx::Instruction &I) {
  if (I.operands().empty())
    return false;
  ptx::OperandKind K = I.operands()[0].kind();
  if (K != ptx::OperandKind::Name && K != ptx::OperandKind::Pair &&
      K != ptx::OperandKind::Vector && K != ptx::OperandKind::Sink)
    return false;
  StringRef Base = I.baseName();
  if (Base == "tcgen05")
    return I.opcodeStartsWith("tcgen05.ld");
  if (Base == "wmma")
    return !I.opcodeStartsWith("wmma.store");
  return !llvm::StringSwitch<bool>(Base)
              .Cases("st", "red", "bar", "barrier", "nanosleep", "stackrestore", "sust", true)
              .Cases("sured", "call", "bra", "brx", "ret", "exit", "trap", true)
              .Cases("membar", "fence", "prefetch", "prefetchu", "pmevent", "setmaxnreg", true)
              .Cases("griddepcontrol", "discard", "applypriority", "cp", "multimem", true)
              .Cases("tensormap", "st", "brkpt", "suq", true)
              .Default(false);
}

unsigned ValueBuilder::elementsOf(ptx::Operand Op) const {
  switch (Op.kind()) {
  case ptx::OperandKind::Vector:
  case ptx::OperandKind::Pair:
  case ptx::OperandKind::List:
    return std::max<unsigned>(1, Op.elements().size());
  default:
    return 1;
  }
}

const Expr *ValueBuilder::opaqueResult(InstId I, unsigned Element, unsigned Width, StringRef Why) {
  std::string Reason = Why.empty() ? ("result of " + G.inst(I).I->opcode()).str() : Why.str();
  return Ctx.opaque(Ctx.save(Reason), &G.inst(I), Element, Width);
}

//===- Operands ---------------------------------------------------------------------------===//

const Expr *ValueBuilder::readLeaf(InstId I, ptx::Operand Op, unsigned Width, const State &S) {
  const CfgInst &CI = G.inst(I);
  auto Fit = [&](const Expr *V) { return V ? Ctx.resize(V, Width) : nullptr; };
  switch (Op.kind()) {
  case ptx::OperandKind::Integer:
  case ptx::OperandKind::Expression: {
    std::optional<int64_t> V = Op.integerValue();
    return V ? Ctx.constant(static_cast<uint64_t>(*V), Width)
             : opaqueResult(I, 0, Width, "integer literal too large");
  }
  case ptx::OperandKind::Float: {
    std::optional<uint64_t> Bits = Op.floatBits();
    return Bits ? Ctx.constant(*Bits, Width) : opaqueResult(I, 0, Width, "floating-point literal");
  }
  case ptx::OperandKind::SpecialRegister: {
    if (auto R = parseSpecialRegister(Op.text()))
      return Fit(Ctx.specialRegister(*R));
    return Ctx.opaque(Ctx.save(("special register " + Op.text() + " is not modelled").str()),
                      &CI, 0, Width);
  }
  case ptx::OperandKind::SymbolOffset: {
    const Expr *Base = readLeaf(I, Op.first(), Width, S);
    std::optional<int64_t> Off = Op.second().integerValue();
    if (!Base || !Off)
      return nullptr;
    return Ctx.add(Base, Ctx.constant(static_cast<uint64_t>(*Off), Width));
  }
  case ptx::OperandKind::Name: {
    const Expr *V = nullptr;
    if (std::optional<RegId> R = lookupRegister(I, Op.text())) {
      V = get(S, *R);
      if (!V)
        V = undefined(*R);
    } else {
      // Not a register: the address of a variable or a function.
      const ptx::NameResolver &Names = *G.frames()[CI.Frame].Names;
      SymbolSpace Space = SymbolSpace::Generic;
      const ptx::VariableDecl *Var = Names.findVariable(*CI.Scope, Op.text());
      if (!Var)
        Var = G.module().globalVariable(Op.text());
      if (Var) {
        StringRef Sp = Var->space();
        Space = Sp.starts_with(".shared") ? SymbolSpace::Shared
                : Sp == ".global"         ? SymbolSpace::Global
                : Sp == ".const"          ? SymbolSpace::Const
                : Sp == ".local"          ? SymbolSpace::Local
                : Sp == ".param"          ? SymbolSpace::Param
                                          : SymbolSpace::Generic;
      } else if (G.module().function(Op.text())) {
        Space = SymbolSpace::Function;
      } else {
        return Ctx.opaque(Ctx.save(("unknown name " + Op.text()).str()), &CI, 0, Width);
      }
      return Ctx.symbol(Op.text(), Space, Width);
    }
    V = Fit(V);
    return Op.isNegated() ? Ctx.bitNot(V) : V;
  }
  default:
    return nullptr;
  }
}

const Expr *ValueBuilder::readNatural(InstId I, ptx::Operand Op, const State &S) {
  if (Op.isName())
    if (std::optional<RegId> R = lookupRegister(I, Op.text()))
      return readLeaf(I, Op, Regs[*R].Width, S);
  return readLeaf(I, Op, std::max(1u, lastType(*G.inst(I).I).Width), S);
}

const Expr *ValueBuilder::readAddress(InstId I, ptx::Operand Op, const State &S) {
  if (!Op.is(ptx::OperandKind::Address))
    return readLeaf(I, Op, 64, S);
  const ptx::Instruction &In = *G.inst(I).I;
  std::optional<int64_t> Offset = Op.addressOffset();
  const Expr *Base = nullptr;
  unsigned Width = isSharedSpace(In) ? 32 : 64;
  if (std::optional<int64_t> Abs = Op.addressBaseInteger()) {
    Base = Ctx.constant(static_cast<uint64_t>(*Abs), Width);
  } else {
    StringRef Name = Op.addressBaseName();
    if (std::optional<RegId> R = lookupRegister(I, Name)) {
      Width = std::max(Regs[*R].Width, 32u);
      Base = get(S, *R);
      if (!Base)
        Base = undefined(*R);
      Base = Ctx.resize(Base, Width);
    } else if (auto SR = parseSpecialRegister(Name)) {
      Base = Ctx.resize(Ctx.specialRegister(*SR), Width);
    } else {
      const CfgInst &CI = G.inst(I);
      const ptx::NameResolver &Names = *G.frames()[CI.Frame].Names;
      const ptx::VariableDecl *Var = Names.findVariable(*CI.Scope, Name);
      if (!Var)
        Var = G.module().globalVariable(Name);
      StringRef Sp = Var ? Var->space() : StringRef();
      SymbolSpace Space = Sp.starts_with(".shared") ? SymbolSpace::Shared
                          : Sp == ".global"         ? SymbolSpace::Global
                          : Sp == ".const"          ? SymbolSpace::Const
                          : Sp == ".local"          ? SymbolSpace::Local
                          : Sp == ".param"          ? SymbolSpace::Param
                                                    : SymbolSpace::Generic;
      if (Space == SymbolSpace::Shared)
        Width = 32;
      Base = Ctx.symbol(Name, Space, Width);
    }
  }
  if (!Offset)
    return opaqueResult(I, 0, Width, "address offset too large");
  return Ctx.add(Base, Ctx.constant(static_cast<uint64_t>(*Offset), Width));
}

//===- Parameters --------------------------------------------------------------------------===//

const Expr *ValueBuilder::loadParam(InstId I, ptx::Operand Address, uint64_t Extra,
                                    unsigned Width, const State &S) {
  StringRef Name = Address.addressBaseName();
  std::optional<int64_t> Offset = Address.addressOffset();
  auto [Var, Frame] = Name.empty() ? std::pair<const ptx::VariableDecl *, unsigned>{nullptr, 0}
                                   : resolveParam(I, Name);
  if (!Var || !Offset || Var->space() != ".param") {
    const Expr *Addr = readAddress(I, Address, S);
    return Ctx.load(&G.inst(I), Ctx.add(Addr, Ctx.constant(Extra, Addr->width())), Width,
                    G.inst(I).I->opcode());
  }
  uint64_t At = static_cast<uint64_t>(*Offset) + Extra;
  if (isFunctionParam(*Var, Frame) && Frame == 0)
    return Ctx.param(Var->name(), At, Width);
  if (std::optional<RegId> Cell = paramCell(*Var, Frame, At, Width, false))
    if (const Expr *V = get(S, *Cell))
      return Ctx.resize(V, Width);
  auto It = ReturnedBy.find({Var, Frame});
  if (It != ReturnedBy.end()) {
    const CallSite *C = G.callAt(It->second);
    std::string Callee = C && C->Callee ? C->Callee->name().str() : std::string("a function");
    return Ctx.opaque(Ctx.save("result of the call to " + Callee), &G.inst(It->second), At,
                      Width);
  }
  return Ctx.opaque(Ctx.save(("parameter cell " + Var->name() + " is read before it is written")
                                 .str()),
                    Var, At, Width);
}

//===- Results -----------------------------------------------------------------------------===//

// Whether a value is the same in every lane of a warp: it depends on the thread only through
// %tid.x / (a multiple of 32). That holds for 1-D blocks and for blocks whose x extent is a
// multiple of 32, the shapes warp-specialized kernels launch.
static bool isWarpUniform(const Expr *E) {
  if (!isThreadDependent(E))
    return true;
  if (E->is(ExprKind::UDiv) && E->op(1)->isConstant() && E->op(1)->payload() % 32 == 0) {
    const Expr *X = E->op(0);
    if (X->is(ExprKind::ZExt) || X->is(ExprKind::Trunc))
      X = X->op(0);
    return X->is(ExprKind::SpecialReg) && X->specialRegister() == SpecialRegister::TidX;
  }
  if (E->isLeaf())
    return false;
  for (const Expr *Op : E->ops())
    if (!isWarpUniform(Op))
      return false;
  return true;
}

void ValueBuilder::compute(InstId I, const State &S, llvm::SmallVectorImpl<const Expr *> &Results) {
  const CfgInst &CI = G.inst(I);
  const ptx::Instruction &In = *CI.I;
  ptx::OperandRange Ops = In.operands();
  ptx::Operand Dest = Ops[0];
  const unsigned NumDest = elementsOf(Dest);
  Results.assign(NumDest, nullptr);
  StringRef Base = In.baseName();
  TypeInfo T = lastType(In);
  const unsigned W = T.Width;
  auto Src = [&](unsigned K, unsigned Width) -> const Expr * {
    return K < Ops.size() ? readLeaf(I, Ops[K], Width, S) : nullptr;
  };
  auto Opaque = [&](StringRef Why = {}) {
    for (unsigned E = 0; E < NumDest; ++E)
      Results[E] = opaqueResult(I, E, W, Why);
  };
  auto Set = [&](const Expr *V) {
    if (V)
      Results[0] = V;
    else
      Opaque();
  };
  const bool Integer = !T.Float;
  const bool Wide = In.hasModifier("wide");

  if (Base == "mov") {
    if (Dest.is(ptx::OperandKind::Vector)) {
      // Unpack: the elements are consecutive bit fields of the source.
      unsigned EW = W / NumDest;
      const Expr *V = Src(1, W);
      for (unsigned E = 0; V && E < NumDest; ++E)
        Results[E] = Ctx.trunc(Ctx.lshr(V, Ctx.constant(E * EW, W)), EW);
      if (!V)
        Opaque();
      return;
    }
    if (Ops.size() > 1 && Ops[1].is(ptx::OperandKind::Vector)) {
      ptx::OperandRange Parts = Ops[1].elements();
      unsigned EW = W / Parts.size();
      const Expr *V = Ctx.constant(0, W);
      for (unsigned E = 0; E < Parts.size(); ++E) {
        const Expr *P = readLeaf(I, Parts[E], EW, S);
        if (!P)
          return Opaque();
        V = Ctx.add(V, Ctx.shl(Ctx.zext(P, W), Ctx.constant(E * EW, W)));
      }
      return Set(V);
    }
    return Set(Src(1, W));
  }
  if (Base == "ld" || Base == "ldu") {
    if (In.hasModifier("param")) {
      unsigned EW = W;
      for (unsigned E = 0; E < NumDest; ++E)
        Results[E] = loadParam(I, Ops[1], uint64_t(E) * (EW / 8), EW, S);
      return;
    }
    const Expr *Addr = readAddress(I, Ops[1], S);
    for (unsigned E = 0; E < NumDest; ++E)
      Results[E] = Ctx.load(&CI, Ctx.add(Addr, Ctx.constant(uint64_t(E) * (W / 8), Addr->width())),
                            W, In.opcode());
    return;
  }
  if ((Base == "add" || Base == "sub") && Integer && !In.hasModifier("sat")) {
    const Expr *A = Src(1, W), *B = Src(2, W);
    return Set(A && B ? (Base == "add" ? Ctx.add(A, B) : Ctx.sub(A, B)) : nullptr);
  }
  if ((Base == "mul" || Base == "mad") && Integer) {
    bool Hi = In.hasModifier("hi");
    unsigned RW = Wide ? std::min(2 * W, 64u) : W;
    auto Ext = [&](const Expr *V) { return T.Signed ? Ctx.sext(V, RW) : Ctx.zext(V, RW); };
    const Expr *A = Src(1, W), *B = Src(2, W);
    if (!A || !B)
      return Opaque();
    const Expr *P;
    if (Hi) {
      if (!T.Signed && W <= 64)
        return Set(Ctx.mulhiu(A, B));
      // Signed: the unsigned high half less b where a < 0 and a where b < 0, modulo 2^W
      // (a = a_u - 2^W [a < 0]; the 2^2W term leaves no high bits). Triton divides its i32
      // sizes by constants so (`mul.hi.s32 %r, %x, 1041204193` for / 132).
      if (W <= 64 && (!A->isConstant() || !B->isConstant())) {
        const Expr *Zero = Ctx.constant(0, W);
        const Expr *Hi = Ctx.sub(Ctx.sub(Ctx.mulhiu(A, B), Ctx.select(Ctx.slt(A, Zero), B, Zero)),
                                 Ctx.select(Ctx.slt(B, Zero), A, Zero));
        return Set(Hi);
      }
      if (!A->isConstant() || !B->isConstant())
        return Opaque("high half of a signed product");
      unsigned __int128 Full =
          T.Signed ? static_cast<unsigned __int128>(static_cast<__int128>(A->signedValue()) *
                                                    static_cast<__int128>(B->signedValue()))
                   : static_cast<unsigned __int128>(A->payload()) * B->payload();
      P = Ctx.constant(static_cast<uint64_t>(Full >> W), W);
    } else {
      P = Ctx.mul(Ext(A), Ext(B));
    }
    if (Base == "mad") {
      const Expr *C = Src(3, RW);
      if (!C)
        return Opaque();
      P = Ctx.add(P, C);
    }
    return Set(P);
  }
  if ((Base == "div" || Base == "rem") && Integer) {
    const Expr *A = Src(1, W), *B = Src(2, W);
    if (!A || !B)
      return Opaque();
    if (Base == "div")
      return Set(T.Signed ? Ctx.sdiv(A, B) : Ctx.udiv(A, B));
    return Set(T.Signed ? Ctx.srem(A, B) : Ctx.urem(A, B));
  }
  if (Base == "neg" && Integer)
    return Set(Src(1, W) ? Ctx.neg(Src(1, W)) : nullptr);
  if (Base == "abs" && Integer) {
    const Expr *A = Src(1, W);
    return Set(A ? Ctx.select(Ctx.slt(A, Ctx.constant(0, W)), Ctx.neg(A), A) : nullptr);
  }
  if ((Base == "min" || Base == "max") && Integer && Ops.size() >= 3) {
    const Expr *V = Src(1, W);
    for (unsigned K = 2; V && K < Ops.size(); ++K) {
      const Expr *B = Src(K, W);
      if (!B)
        V = nullptr;
      else if (Base == "min")
        V = T.Signed ? Ctx.smin(V, B) : Ctx.umin(V, B);
      else
        V = T.Signed ? Ctx.smax(V, B) : Ctx.umax(V, B);
    }
    return Set(V);
  }
  if (Base == "and" || Base == "or" || Base == "xor") {
    const Expr *A = Src(1, W), *B = Src(2, W);
    if (!A || !B)
      return Opaque();
    return Set(Base == "and" ? Ctx.bitAnd(A, B) : Base == "or" ? Ctx.bitOr(A, B) : Ctx.bitXor(A, B));
  }
  if (Base == "not")
    return Set(Src(1, W) ? Ctx.bitNot(Src(1, W)) : nullptr);
  if (Base == "cnot") {
    const Expr *A = Src(1, W);
    return Set(A ? Ctx.select(Ctx.eq(A, Ctx.constant(0, W)), Ctx.constant(1, W),
                              Ctx.constant(0, W))
                 : nullptr);
  }
  if (Base == "shl" || Base == "shr") {
    const Expr *A = Src(1, W), *B = Src(2, 32);
    if (!A || !B)
      return Opaque();
    if (Base == "shl")
      return Set(Ctx.shl(A, Ctx.resize(B, W)));
    return Set(T.Signed ? Ctx.ashr(A, Ctx.resize(B, W)) : Ctx.lshr(A, Ctx.resize(B, W)));
  }
  if (Base == "selp") {
    const Expr *A = Src(1, W), *B = Src(2, W), *C = Src(3, 1);
    return Set(A && B && C ? Ctx.select(C, A, B) : nullptr);
  }
  if (Base == "setp" || Base == "set") {
    StringRef Cmp = *In.modifiers().begin();
    if (T.Float || Ops.size() < 3)
      return Opaque("floating-point comparison");
    const Expr *A = Src(1, W), *B = Src(2, W);
    if (!A || !B)
      return Opaque();
    bool Sg = T.Signed;
    const Expr *C = llvm::StringSwitch<const Expr *>(Cmp)
                        .Case("eq", Ctx.eq(A, B))
                        .Case("ne", Ctx.ne(A, B))
                        .Case("lt", Sg ? Ctx.slt(A, B) : Ctx.ult(A, B))
                        .Case("le", Sg ? Ctx.sle(A, B) : Ctx.ule(A, B))
                        .Case("gt", Sg ? Ctx.sgt(A, B) : Ctx.ugt(A, B))
                        .Case("ge", Sg ? Ctx.sge(A, B) : Ctx.uge(A, B))
                        .Case("lo", Ctx.ult(A, B))
                        .Case("ls", Ctx.ule(A, B))
                        .Case("hi", Ctx.ugt(A, B))
                        .Case("hs", Ctx.uge(A, B))
                        .Default(nullptr);
    if (!C)
      return Opaque();
    const Expr *NotC = Ctx.bitNot(C);
    // setp.cmp.bop p|q, a, b, c: p = (a cmp b) bop c, q = !(a cmp b) bop c.
    StringRef BoolOp;
    for (StringRef M : In.modifiers())
      if (M == "and" || M == "or" || M == "xor")
        BoolOp = M;
    if (!BoolOp.empty()) {
      const Expr *Extra = Src(3, 1);
      if (!Extra)
        return Opaque();
      auto Combine = [&](const Expr *X) {
        return BoolOp == "and" ? Ctx.bitAnd(X, Extra)
               : BoolOp == "or" ? Ctx.bitOr(X, Extra) : Ctx.bitXor(X, Extra);
      };
      C = Combine(C);
      NotC = Combine(NotC);
    }
    if (Base == "set") {
      TypeInfo D = typesOf(In).front();
      if (D.Float)
        return Opaque("floating-point result");
      return Set(Ctx.select(C, Ctx.constant(~0ull, D.Width), Ctx.constant(0, D.Width)));
    }
    Results[0] = C;
    if (NumDest > 1)
      Results[1] = NotC;
    return;
  }
  if (Base == "cvt") {
    auto Types = typesOf(In);
    if (Types.size() < 2 || Types[0].Float || Types[1].Float || In.hasModifier("sat"))
      return Opaque(Types.size() >= 2 && (Types[0].Float || Types[1].Float)
                        ? "floating-point conversion" : "");
    const Expr *A = Src(1, Types[1].Width);
    if (!A)
      return Opaque();
    unsigned DW = Types[0].Width;
    if (DW > Types[1].Width)
      return Set(Types[1].Signed ? Ctx.sext(A, DW) : Ctx.zext(A, DW));
    return Set(Ctx.resize(A, DW));
  }
  if (Base == "cvta") {
    // A window address and its generic address are one symbolic value: barrier identity
    // should not depend on which form an instruction uses.
    return Set(Src(1, W));
  }
  if (Base == "bfe" && Integer) {
    const Expr *A = Src(1, W), *Pos = Src(2, 32), *Len = Src(3, 32);
    if (!A || !Pos || !Len || !Pos->isConstant() || !Len->isConstant())
      return Opaque("bit-field extract at a variable position");
    uint64_t P = Pos->payload() & 0xff, L = Len->payload() & 0xff;
    if (L == 0)
      return Set(Ctx.constant(0, W));
    if (P >= W)
      return Set(T.Signed ? Ctx.ashr(A, Ctx.constant(W - 1, W)) : Ctx.constant(0, W));
    L = std::min<uint64_t>(L, W - P);
    const Expr *Field = Ctx.trunc(Ctx.lshr(A, Ctx.constant(P, W)), static_cast<unsigned>(L));
    return Set(T.Signed ? Ctx.sext(Field, W) : Ctx.zext(Field, W));
  }
  if (Base == "mapa") {
    const Expr *A = Src(1, W), *Rank = Src(2, 32);
    return Set(A && Rank ? Ctx.mapa(A, Rank) : nullptr);
  }
  if (Base == "elect" && Dest.is(ptx::OperandKind::Pair)) {
    const Expr *Mask = Src(1, 32);
    Results[0] = opaqueResult(I, 0, 32, "lane of the elected thread");
    Results[1] = Ctx.elect(&CI, Mask ? Mask : Ctx.constant(~0u, 32),
                           Ctx.save(("elected lane (elect.sync at line " +
                                     llvm::Twine(G.location(I).Line) + ")")
                                        .str()));
    return;
  }
  if (Base == "shfl" && In.hasModifier("idx") && Ops.size() >= 3) {
    const Expr *A = Src(1, W), *Lane = Src(2, 32);
    Opaque();
    if (A && Lane && Lane->isConstant() && Lane->payload() == 0 && isWarpUniform(A))
      Results[0] = A;
    return;
  }
  return Opaque();
}

//===- Transfer ---------------------------------------------------------------------------===//

void ValueBuilder::writtenRegisters(InstId I, llvm::SmallVectorImpl<RegId> &Out) {
  const CfgInst &CI = G.inst(I);
  const ptx::Instruction &In = *CI.I;
  ptx::OperandRange Ops = In.operands();
  if (hasDestination(In)) {
    ptx::Operand D = Ops[0];
    auto Add = [&](ptx::Operand Op) {
      if (Op.isName())
        if (auto R = lookupRegister(I, Op.text()))
          Out.push_back(*R);
    };
    if (D.is(ptx::OperandKind::Name))
      Add(D);
    else if (!D.is(ptx::OperandKind::Sink))
      for (ptx::Operand E : D.elements())
        Add(E);
  }
  StringRef Base = In.baseName();
  if (Base == "st" && In.hasModifier("param") && Ops.size() >= 2) {
    auto [Var, Frame] = resolveParam(I, Ops[0].addressBaseName());
    std::optional<int64_t> Off = Ops[0].addressOffset();
    if (Var && Off && Var->space() == ".param") {
      TypeInfo T = lastType(In);
      unsigned N = elementsOf(Ops[1]);
      for (unsigned E = 0; E < N; ++E)
        Out.push_back(*paramCell(*Var, Frame, *Off + uint64_t(E) * (T.Width / 8), T.Width, true));
    }
  }
  if (Base == "call")
    if (const CallSite *C = G.callAt(I)) {
      if (C->Status == CallStatus::Inlined) {
        for (const ptx::VariableDecl *Formal : C->Callee->params())
          if (Formal->space() == ".reg")
            Out.push_back(intern({Formal, C->InlinedFrame, 0},
                                 {Formal->name(), lastType(In).Width, C->InlinedFrame}));
      }
      if (C->Returns)
        for (ptx::Operand R : C->Returns.elements())
          if (R.isName()) {
            if (auto Reg = lookupRegister(I, R.text()))
              Out.push_back(*Reg);
            auto [Var, Frame] = resolveParam(I, R.text());
            if (Var && Var->space() == ".param" && C->Status != CallStatus::Inlined)
              ReturnedBy[{Var, Frame}] = I;
          }
    }
}

void ValueBuilder::transfer(InstId I, State &S) {
  const CfgInst &CI = G.inst(I);
  const ptx::Instruction &In = *CI.I;
  ptx::OperandRange Ops = In.operands();
  const unsigned Start = OperandStart[I];
  const Expr *Guard = nullptr;
  if (ptx::Operand GOp = In.guard())
    Guard = readLeaf(I, GOp, 1, S);
  if (Recording)
    Guards[I] = Guard;
  const bool Dest = hasDestination(In);

  // Sources, read before anything is written.
  unsigned Index = Start;
  for (unsigned K = 0; K < Ops.size(); ++K) {
    ptx::Operand Op = Ops[K];
    unsigned N = elementsOf(Op);
    if (Recording && !(K == 0 && Dest)) {
      if (Op.is(ptx::OperandKind::Address))
        OperandValues[Index] = readAddress(I, Op, S);
      else if (Op.is(ptx::OperandKind::Vector) || Op.is(ptx::OperandKind::Pair))
        for (unsigned E = 0; E < N; ++E)
          OperandValues[Index + E] = readNatural(I, Op.elements()[E], S);
      else if (!Op.is(ptx::OperandKind::List))
        OperandValues[Index] = readNatural(I, Op, S);
    }
    Index += N;
  }

  StringRef Base = In.baseName();
  if (Dest) {
    llvm::SmallVector<const Expr *, 4> Results;
    compute(I, S, Results);
    ptx::Operand D = Ops[0];
    auto Write = [&](ptx::Operand Op, unsigned E) {
      if (!Op.isName())
        return;
      std::optional<RegId> R = lookupRegister(I, Op.text());
      if (!R)
        return;
      const Expr *New = Results[E] ? Ctx.resize(Results[E], Regs[*R].Width)
                                   : opaqueResult(I, E, Regs[*R].Width, "");
      if (Guard) {
        const Expr *Old = get(S, *R);
        New = Ctx.select(Guard, New, Old ? Old : undefined(*R));
      }
      set(S, *R, New);
      if (Recording)
        OperandValues[Start + E] = New;
    };
    if (D.is(ptx::OperandKind::Name))
      Write(D, 0);
    else if (!D.is(ptx::OperandKind::Sink))
      for (unsigned E = 0; E < D.elements().size(); ++E)
        Write(D.elements()[E], E);
  }

  if (Base == "st" && In.hasModifier("param") && Ops.size() >= 2) {
    auto [Var, Frame] = resolveParam(I, Ops[0].addressBaseName());
    std::optional<int64_t> Off = Ops[0].addressOffset();
    if (Var && Off && Var->space() == ".param") {
      TypeInfo T = lastType(In);
      unsigned N = elementsOf(Ops[1]);
      for (unsigned E = 0; E < N; ++E) {
        ptx::Operand V = Ops[1].is(ptx::OperandKind::Vector) ? Ops[1].elements()[E] : Ops[1];
        RegId Cell = *paramCell(*Var, Frame, *Off + uint64_t(E) * (T.Width / 8), T.Width, true);
        const Expr *Value = readLeaf(I, V, T.Width, S);
        if (Guard)
          Value = Ctx.select(Guard, Value, get(S, Cell) ? get(S, Cell) : undefined(Cell));
        set(S, Cell, Value);
      }
    }
  }
  if (Base == "call")
    if (const CallSite *C = G.callAt(I)) {
      if (C->Status == CallStatus::Inlined && C->Arguments) {
        ptx::OperandRange Args = C->Arguments.elements();
        auto Formals = C->Callee->params();
        for (size_t K = 0; K < Args.size() && K < Formals.size(); ++K)
          if (Formals[K]->space() == ".reg") {
            RegId R = intern({Formals[K], C->InlinedFrame, 0},
                             {Formals[K]->name(), 32, C->InlinedFrame});
            set(S, R, readLeaf(I, Args[K], Regs[R].Width, S));
          }
      }
      if (C->Returns)
        for (ptx::Operand R : C->Returns.elements()) {
          if (!R.isName())
            continue;
          if (auto Reg = lookupRegister(I, R.text()))
            set(S, *Reg, opaqueResult(I, 0, Regs[*Reg].Width, "result of a call"));
          auto [Var, Frame] = resolveParam(I, R.text());
          if (Var && C->Status != CallStatus::Inlined)
            for (RegId Cell : CellsOf.lookup({Var, Frame}))
              set(S, Cell, nullptr);
        }
    }
}
