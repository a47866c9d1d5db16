//===- TransitionSystemZ3Expr.cpp - the protocol's closed forms as Z3 integers ------===//
//
// An expression of the protocol (a slot, a parity, a trip count, a condition) over an agent's
// loop counters and the kernel's parameters, as linear integer arithmetic: values do not wrap,
// divisions and remainders are by constants, bit operations are those that have a linear form
// (masks of low bits, x ^ 1 on a parity) or whose operands are constants in the agent (a
// CTA's rank). What has no such form is an EncodeError, which leaves the verdict unknown.
//
//===----------------------------------------------------------------------------------===//

#include "TransitionSystemZ3Encoding.h"

namespace wsv {
namespace analyzer {
namespace ts {
namespace detail {

std::optional<int64_t> numeral(const z3::expr &E) {
  int64_t V = 0;
  if (E.is_numeral_i64(V))
    return V;
  return std::nullopt;
}

z3::expr Encoding::param(const Expr *Leaf) {
  std::string Name = Leaf->name().str();
  auto It = ParamVars.find(Name);
  if (It != ParamVars.end())
    return It->second;
  z3::expr V = C.int_const(("param." + Name).c_str());
  ParamVars.emplace(Name, V);
  return V;
}

z3::expr Encoding::paramValue(const Expr *Leaf) {
  // A fixed parameter is its value in every formula, not a variable that the initial state
  // pins (that too, for the schedule's report): the incremental solver does not propagate
  // the pinned value, and `K / 64 * t` would stay a division and a product of variables.
  z3::expr V = param(Leaf);
  std::string Name = Leaf->name().str();
  for (const auto &[Given, Value] : Options.Params)
    for (const auto &[Symbol, Display] : TS.Params)
      if (Symbol == Name && (Given == Symbol || Given == Display))
        return C.int_val(static_cast<uint64_t>(Value));
  return V;
}

z3::expr Encoding::boolOf(const Expr *E, unsigned Agent) {
  switch (E->kind()) {
  case ExprKind::Constant:
    if (E->width() == 1)
      return C.bool_val(E->payload() != 0);
    break;
  case ExprKind::Not:
    if (E->width() == 1)
      return !boolOf(E->op(0), Agent);
    break;
  case ExprKind::And:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) && boolOf(E->op(1), Agent);
    break;
  case ExprKind::Or:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) || boolOf(E->op(1), Agent);
    break;
  case ExprKind::Xor:
    if (E->width() == 1)
      return boolOf(E->op(0), Agent) != boolOf(E->op(1), Agent);
    break;
  case ExprKind::Eq:
    if (E->op(0)->width() == 1)
      return boolOf(E->op(0), Agent) == boolOf(E->op(1), Agent);
    return intOf(E->op(0), Agent) == intOf(E->op(1), Agent);
  case ExprKind::ULt:
  case ExprKind::SLt:
    return intOf(E->op(0), Agent) < intOf(E->op(1), Agent);
  case ExprKind::ULe:
  case ExprKind::SLe:
    return intOf(E->op(0), Agent) <= intOf(E->op(1), Agent);
  case ExprKind::Select:
    return z3::ite(boolOf(E->op(0), Agent), boolOf(E->op(1), Agent), boolOf(E->op(2), Agent));
  default:
    break;
  }
  if (E->width() == 1)
    return intOf(E, Agent) != 0;
  throw EncodeError{"a condition of width " + std::to_string(E->width()) + ": " +
                    P.exprString(E)};
}

z3::expr Encoding::intOf(const Expr *E, unsigned Agent) {
  auto Op = [&](unsigned I) { return intOf(E->op(I), Agent); };
  auto ConstOp = [&](unsigned I) -> std::optional<uint64_t> {
    return E->op(I)->isConstant() ? std::optional<uint64_t>(E->op(I)->payload()) : std::nullopt;
  };
  // Bit operations on values that are constants in this agent (a mask `1 << rank`, a peer
  // `rank ^ 1` once the CTA's rank is in): computed, whatever their form.
  if (E->width() > 1 && E->width() < 64 &&
      (E->is(ExprKind::And) || E->is(ExprKind::Or) || E->is(ExprKind::Xor) ||
       E->is(ExprKind::Shl) || E->is(ExprKind::LShr) || E->is(ExprKind::Not))) {
    std::vector<int64_t> Vals;
    for (unsigned I = 0; I < E->ops().size(); ++I) {
      std::optional<int64_t> N = numeral(Op(I).simplify());
      if (!N || *N < 0)
        break;
      Vals.push_back(*N);
    }
    if (Vals.size() == E->ops().size()) {
      uint64_t Mask = (uint64_t(1) << E->width()) - 1;
      uint64_t A = Vals[0], B = Vals.size() > 1 ? Vals[1] : 0;
      uint64_t R = E->is(ExprKind::And)   ? A & B
                   : E->is(ExprKind::Or)  ? A | B
                   : E->is(ExprKind::Xor) ? A ^ B
                   : E->is(ExprKind::Shl) ? (B < 64 ? A << B : 0)
                   : E->is(ExprKind::LShr) ? (B < 64 ? A >> B : 0)
                                          : ~A;
      return C.int_val(static_cast<uint64_t>(R & Mask));
    }
  }
  switch (E->kind()) {
  case ExprKind::Constant: {
    // Values are integers without wraparound (the analyzer assumes counters do not wrap);
    // a constant with its top bit set is a negative addend (`x - 4` is `x + 0xfffffffc`).
    unsigned W = E->width();
    if (W == 1)
      return C.int_val(static_cast<int64_t>(E->payload()));
    int64_t S = E->signedValue();
    return C.int_val(S);
  }
  case ExprKind::Param:
    return paramValue(E);
  case ExprKind::SpecialReg: {
    // Within the model's cluster: a CTA's rank is its agents' (the x dimension alone is
    // the rank where the cluster lies along x, as the explorer takes it).
    SpecialRegister R = E->specialRegister();
    bool AlongX = P.Launch.ClusterX == TS.Ctas;
    if (Agent != NoIndex) {
      unsigned Cta = TS.Agents[Agent].Cta;
      switch (R) {
      case SpecialRegister::ClusterCtaRank:
        return C.int_val(Cta);
      case SpecialRegister::ClusterNctaRank:
        return C.int_val(TS.Ctas);
      case SpecialRegister::ClusterCtaidX:
        if (AlongX)
          return C.int_val(Cta);
        break;
      case SpecialRegister::ClusterNctaidX:
        if (AlongX)
          return C.int_val(TS.Ctas);
        break;
      case SpecialRegister::ClusterCtaidY:
      case SpecialRegister::ClusterCtaidZ:
        if (AlongX)
          return C.int_val(0);
        break;
      case SpecialRegister::ClusterNctaidY:
      case SpecialRegister::ClusterNctaidZ:
        if (AlongX)
          return C.int_val(1);
        break;
      default:
        break;
      }
    }
    throw EncodeError{std::string("the special register ") + toString(R) + " in " +
                      P.exprString(E)};
  }
  case ExprKind::IterationVar: {
    if (Agent != NoIndex)
      for (unsigned I = 0; I < TS.Agents[Agent].Counters.size(); ++I)
        if (TS.Agents[Agent].Counters[I] == E->payload())
          return v(Ctr[Agent][I]);
    throw EncodeError{"iteration number " + P.loopVar(E->payload()) +
                      " used outside its loop"};
  }
  case ExprKind::ZExt:
  case ExprKind::SExt:
  case ExprKind::Trunc:
    return Op(0);
  case ExprKind::Add:
    return Op(0) + Op(1);
  case ExprKind::Mul: {
    // Linear only: one side constant, in the expression or once fixed parameters are in.
    z3::expr A = Op(0).simplify(), B = Op(1).simplify();
    if (!A.is_numeral() && !B.is_numeral())
      throw EncodeError{"a product of two variables: " + P.exprString(E)};
    return A * B;
  }
  case ExprKind::UDiv:
  case ExprKind::SDiv:
  case ExprKind::URem:
  case ExprKind::SRem: {
    bool Div = E->is(ExprKind::UDiv) || E->is(ExprKind::SDiv);
    z3::expr A = Op(0).simplify(), B = Op(1).simplify();
    int64_t By = 0;
    if (!B.is_numeral_i64(By) || By <= 0)
      throw EncodeError{std::string(Div ? "a division" : "a remainder") + " by a variable: " +
                        P.exprString(E)};
    if (int64_t Value = 0; A.is_numeral_i64(Value) && Value >= 0)
      return C.int_val(Div ? Value / By : Value % By);
    return Div ? A / B : z3::mod(A, B);
  }
  case ExprKind::And: {
    if (E->width() == 1)
      return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
    unsigned MaskAt = ConstOp(1) ? 1 : ConstOp(0) ? 0 : 2;
    if (MaskAt == 2)
      throw EncodeError{"a bitwise and of two variables: " + P.exprString(E)};
    uint64_t Mask = *ConstOp(MaskAt);
    z3::expr Value = Op(1 - MaskAt);
    uint64_t WidthMask = E->width() == 64 ? ~0ull : (1ull << E->width()) - 1;
    if ((Mask & (Mask + 1)) == 0) // 2^n - 1: the low n bits
      return z3::mod(Value, C.int_val(static_cast<uint64_t>(Mask + 1)));
    uint64_t Low = ~Mask & WidthMask;
    if ((Low & (Low + 1)) == 0) // all but the low n bits: round down
      return Value - z3::mod(Value, C.int_val(static_cast<uint64_t>(Low + 1)));
    // Contiguous bits 2^a .. 2^b - 1 (a stage times 8 masked to the ring): x mod 2^b minus
    // x mod 2^a.
    uint64_t LowBit = Mask & (~Mask + 1);
    uint64_t Top = Mask + LowBit;
    if (Mask && (Top & (Top - 1)) == 0 && Top != 0)
      return z3::mod(Value, C.int_val(static_cast<uint64_t>(Top))) -
             z3::mod(Value, C.int_val(static_cast<uint64_t>(LowBit)));
    throw EncodeError{"a bitwise and with mask " + std::to_string(Mask)};
  }
  case ExprKind::Xor: {
    if (E->width() == 1)
      return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
    // x ^ 1 on a value that is 0 or 1 (a phase parity) is 1 - x.
    for (unsigned I = 0; I < 2; ++I)
      if (E->op(I)->isConstant(1) && E->op(1 - I)->range().Hi <= 1)
        return 1 - Op(1 - I);
    throw EncodeError{"a bitwise xor: " + P.exprString(E)};
  }
  case ExprKind::UMin:
  case ExprKind::SMin:
    return z3::ite(Op(0) <= Op(1), Op(0), Op(1));
  case ExprKind::UMax:
  case ExprKind::SMax:
    return z3::ite(Op(0) >= Op(1), Op(0), Op(1));
  case ExprKind::Select:
    return z3::ite(boolOf(E->op(0), Agent), Op(1), Op(2));
  case ExprKind::Eq:
  case ExprKind::ULt:
  case ExprKind::ULe:
  case ExprKind::SLt:
  case ExprKind::SLe:
  case ExprKind::Not:
  case ExprKind::Or:
    return z3::ite(boolOf(E, Agent), C.int_val(1), C.int_val(0));
  default:
    break;
  }
  throw EncodeError{std::string("cannot encode ") + toString(E->kind()) + " in " +
                    P.exprString(E)};
}

} // namespace detail
} // namespace ts
} // namespace analyzer
} // namespace wsv
