//===- ExprPtx.cpp - PTX statements that compute an expression ---------------------===//
//
// One fresh register per node of the DAG (shared subexpressions once), every operand in a
// register, so each node is one or two statements whose semantics match ExprEval's: PTX's
// wrap-around arithmetic at the node's width, shifts clamped at the width, signed division
// truncating. Predicates have no arithmetic in PTX: a predicate operand of a comparison or a
// select is spelled with and/or/xor/not instead.
//
//===----------------------------------------------------------------------------------===//
#include "wsv/analyzer/ExprPtx.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

namespace {

class Emitter {
public:
  explicit Emitter(StringRef Prefix) : Prefix(Prefix.str()) {}

  /// The register holding E, or "" with Why set.
  std::string emit(const Expr *E);

  std::string Why;
  std::string Code;
  unsigned Preds = 0, Regs16 = 0, Regs32 = 0, Regs64 = 0;

private:
  std::string Prefix;
  llvm::DenseMap<const Expr *, std::string> Done;

  std::string fresh(unsigned Width) {
    switch (Width) {
    case 1: return "%" + Prefix + "_p" + std::to_string(Preds++);
    case 16: return "%" + Prefix + "_h" + std::to_string(Regs16++);
    case 32: return "%" + Prefix + "_r" + std::to_string(Regs32++);
    default: return "%" + Prefix + "_d" + std::to_string(Regs64++);
    }
  }
  void line(const std::string &S) { Code += S + "; "; }
  std::string fail(const std::string &Reason) {
    if (Why.empty())
      Why = Reason;
    return "";
  }
  std::string node(const Expr *E);
  std::string toU32(const std::string &Reg, unsigned Width);
};

std::string ty(char Kind, unsigned Width) { return "." + std::string(1, Kind) + std::to_string(Width); }

std::string Emitter::emit(const Expr *E) {
  auto It = Done.find(E);
  if (It != Done.end())
    return It->second;
  if (E->width() != 1 && E->width() != 16 && E->width() != 32 && E->width() != 64)
    return fail("a value of " + std::to_string(E->width()) + " bits has no PTX register to compute it in");
  std::string R = node(E);
  if (!R.empty())
    Done[E] = R;
  return R;
}

std::string Emitter::toU32(const std::string &Reg, unsigned Width) {
  if (Width == 32)
    return Reg;
  std::string T = fresh(32);
  line("cvt.u32.u" + std::to_string(Width) + " " + T + ", " + Reg);
  return T;
}

std::string Emitter::node(const Expr *E) {
  const unsigned W = E->width();
  const bool Pred = W == 1;
  std::vector<std::string> Op;
  if (!E->isLeaf()) {
    for (const Expr *O : E->ops()) {
      std::string R = emit(O);
      if (R.empty())
        return "";
      Op.push_back(R);
    }
  }
  const unsigned OW = E->isLeaf() || E->ops().empty() ? W : E->op(0)->width();
  std::string D = fresh(W);
  auto Bin = [&](const std::string &Opcode) {
    line(Opcode + " " + D + ", " + Op[0] + ", " + Op[1]);
    return D;
  };
  switch (E->kind()) {
  case ExprKind::Constant:
    if (Pred)
      line("mov.pred " + D + ", " + std::to_string(E->payload()));
    else
      line("mov" + ty('b', W) + " " + D + ", " + std::to_string(E->payload()));
    return D;
  case ExprKind::SpecialReg:
    if (!isCtaUniform(E->specialRegister()))
      return fail(std::string(toString(E->specialRegister())) + " differs between the threads");
    if (W != 32)
      return fail("a special register read at " + std::to_string(W) + " bits");
    line("mov.u32 " + D + ", " + toString(E->specialRegister()));
    return D;
  case ExprKind::Param:
    if (Pred)
      return fail("a predicate parameter");
    line("ld.param" + ty('b', W) + " " + D + ", [" + E->name().str() +
         (E->payload() ? "+" + std::to_string(E->payload()) : std::string()) + "]");
    return D;
  case ExprKind::Symbol:
    if (Pred || W == 16)
      return fail("the address of " + E->name().str() + " at " + std::to_string(W) + " bits");
    line("mov" + ty('u', W) + " " + D + ", " + E->name().str());
    return D;
  case ExprKind::IterationVar: return fail("a loop's iteration number");
  case ExprKind::Phi: return fail("the value of " + E->name().str() + " at a join");
  case ExprKind::Elect: return fail("an elect.sync result");
  case ExprKind::Load: return fail("a value loaded from memory");
  case ExprKind::Opaque: return fail("a value the analysis does not model (" + E->name().str() + ")");
  case ExprKind::MapA: return fail("a mapa address");
  case ExprKind::ZExt:
  case ExprKind::SExt:
  case ExprKind::Trunc: {
    unsigned From = E->op(0)->width();
    if (From == 1) {
      // A predicate widened: 1 (zero-extended) or all ones (sign-extended).
      line("selp" + ty('b', W) + " " + D + ", " + (E->is(ExprKind::SExt) ? "-1" : "1") + ", 0, " +
           Op[0]);
    } else if (Pred) {
      std::string T = fresh(From);
      line("and" + ty('b', From) + " " + T + ", " + Op[0] + ", 1");
      line("setp.ne" + ty('b', From) + " " + D + ", " + T + ", 0");
    } else {
      char K = E->is(ExprKind::SExt) ? 's' : 'u';
      line("cvt" + ty(K, W) + ty(K, From) + " " + D + ", " + Op[0]);
    }
    return D;
  }
  case ExprKind::Not:
    line(std::string("not") + (Pred ? ".pred" : ty('b', W)) + " " + D + ", " + Op[0]);
    return D;
  case ExprKind::And: return Bin(std::string("and") + (Pred ? ".pred" : ty('b', W)));
  case ExprKind::Or: return Bin(std::string("or") + (Pred ? ".pred" : ty('b', W)));
  case ExprKind::Xor: return Bin(std::string("xor") + (Pred ? ".pred" : ty('b', W)));
  default: break;
  }
  if (Pred && !E->isComparison() && !E->is(ExprKind::Select))
    return fail(std::string("arithmetic (") + toString(E->kind()) + ") on predicates");
  switch (E->kind()) {
  case ExprKind::Add: return Bin("add" + ty('s', W));
  case ExprKind::Mul: return Bin("mul.lo" + ty('s', W));
  case ExprKind::UDiv: return Bin("div" + ty('u', W));
  case ExprKind::SDiv: return Bin("div" + ty('s', W));
  case ExprKind::URem: return Bin("rem" + ty('u', W));
  case ExprKind::SRem: return Bin("rem" + ty('s', W));
  case ExprKind::UMin: return Bin("min" + ty('u', W));
  case ExprKind::UMax: return Bin("max" + ty('u', W));
  case ExprKind::SMin: return Bin("min" + ty('s', W));
  case ExprKind::SMax: return Bin("max" + ty('s', W));
  case ExprKind::MulHiU: return Bin("mul.hi" + ty('u', W));
  case ExprKind::Shl:
  case ExprKind::LShr:
  case ExprKind::AShr: {
    // The shift amount is a .u32 operand whatever the value's width.
    std::string Amount = toU32(Op[1], E->op(1)->width());
    std::string Opcode = E->is(ExprKind::Shl) ? "shl" + ty('b', W)
                         : E->is(ExprKind::LShr) ? "shr" + ty('u', W)
                                                 : "shr" + ty('s', W);
    line(Opcode + " " + D + ", " + Op[0] + ", " + Amount);
    return D;
  }
  case ExprKind::Eq:
  case ExprKind::ULt:
  case ExprKind::ULe:
  case ExprKind::SLt:
  case ExprKind::SLe: {
    if (OW == 1) {
      if (!E->is(ExprKind::Eq))
        return fail("an ordering of predicates");
      std::string T = fresh(1);
      line("xor.pred " + T + ", " + Op[0] + ", " + Op[1]);
      line("not.pred " + D + ", " + T);
      return D;
    }
    std::string Cmp = E->is(ExprKind::Eq)    ? "eq" + ty('b', OW)
                      : E->is(ExprKind::ULt) ? "lt" + ty('u', OW)
                      : E->is(ExprKind::ULe) ? "le" + ty('u', OW)
                      : E->is(ExprKind::SLt) ? "lt" + ty('s', OW)
                                             : "le" + ty('s', OW);
    line("setp." + Cmp + " " + D + ", " + Op[0] + ", " + Op[1]);
    return D;
  }
  case ExprKind::Select:
    if (Pred) {
      // c ? a : b as (c and a) or (not c and b).
      std::string T = fresh(1), U = fresh(1), N = fresh(1);
      line("and.pred " + T + ", " + Op[0] + ", " + Op[1]);
      line("not.pred " + N + ", " + Op[0]);
      line("and.pred " + U + ", " + N + ", " + Op[2]);
      line("or.pred " + D + ", " + T + ", " + U);
    } else {
      line("selp" + ty('b', W) + " " + D + ", " + Op[1] + ", " + Op[2] + ", " + Op[0]);
    }
    return D;
  default: return fail(std::string("an expression of kind ") + toString(E->kind()));
  }
}

} // namespace

bool wsv::analyzer::isLaunchValue(const Expr *E) {
  return !E->mentions([](const Expr *L) {
    switch (L->kind()) {
    case ExprKind::Constant:
    case ExprKind::Param:
    case ExprKind::Symbol: return false;
    case ExprKind::SpecialReg: return !isCtaUniform(L->specialRegister());
    default: return true;
    }
  });
}

std::optional<PtxValue> wsv::analyzer::emitPtx(const Expr *E, StringRef Prefix, std::string &Why) {
  Emitter Em(Prefix);
  std::string Reg = Em.emit(E);
  if (Reg.empty()) {
    Why = Em.Why;
    return std::nullopt;
  }
  PtxValue V;
  auto Decl = [&](const char *Type, char Letter, unsigned N) {
    if (N)
      V.Decls += std::string(".reg ") + Type + " %" + Prefix.str() + "_" + Letter + "<" +
                 std::to_string(N) + ">; ";
  };
  Decl(".pred", 'p', Em.Preds);
  Decl(".b16", 'h', Em.Regs16);
  Decl(".b32", 'r', Em.Regs32);
  Decl(".b64", 'd', Em.Regs64);
  V.Code = std::move(Em.Code);
  V.Reg = Reg;
  return V;
}
