//===- SolverZ3.cpp - Expr questions encoded for Z3 -------------------------------===//
#include "wsv/analyzer/Solver.h"

#include "SolverZ3Deadline.h"
#include "SolverZ3Integers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

#include <z3++.h>

using namespace wsv::analyzer;

Solver::~Solver() = default;

namespace {

class Z3Solver final : public Solver {
public:
  Z3Solver(unsigned TimeoutMs, uint64_t ResourceLimit, bool Sample, bool Integers)
      : TimeoutMs(TimeoutMs), ResourceLimit(ResourceLimit), Sample(Sample),
        Integers(Integers) {}

  SolverResult isValid(const Expr *Predicate) override {
    return isValidWithin(Predicate, ResourceLimit);
  }

  SolverResult isValidWithin(const Expr *Predicate, uint64_t Budget) override {
    // A sampled counterexample answers without Z3, which takes milliseconds even to say no.
    if (Sample && sample(Predicate, /*Want=*/false))
      return {SolverAnswer::No, ""};
    // Valid when its negation has no model.
    SolverResult R = check(Predicate, /*Negate=*/true,
                           ResourceLimit && Budget ? std::min(Budget, ResourceLimit)
                                                   : std::max(Budget, ResourceLimit));
    if (R.Answer == SolverAnswer::Yes)
      return {SolverAnswer::No, ""};
    if (R.Answer == SolverAnswer::No)
      return {SolverAnswer::Yes, ""};
    return R;
  }

  SolverResult isSatisfiable(const Expr *Predicate) override {
    if (Sample && sample(Predicate, /*Want=*/true))
      return {SolverAnswer::Yes, ""};
    return check(Predicate, /*Negate=*/false);
  }

  ModelCount countModels(const Expr *Predicate, llvm::ArrayRef<const Expr *> Vars,
                         unsigned Limit) override {
    try {
      z3::context &C = context();
      Encoder E(C);
      z3::solver S = makeSolver(C, ResourceLimit);
      // The whole count within one limit, as one question.
      Z3Deadline Late(C, TimeoutMs);
      S.add(E.truth(Predicate));
      E.addRanges(S);
      llvm::SmallVector<z3::expr, 4> Xs;
      for (const Expr *V : Vars)
        Xs.push_back(E.encode(V));
      E.addRanges(S);
      uint64_t Count = 0;
      while (true) {
        z3::check_result R = S.check();
        if (R == z3::unknown)
          return {std::nullopt, "the solver gave up: " + why(S, Late)};
        if (R == z3::unsat)
          return {Count, ""};
        if (++Count > Limit)
          return {std::nullopt, "more than " + std::to_string(Limit) + " models"};
        // Block this assignment of Vars and look for another.
        z3::model M = S.get_model();
        z3::expr Block = C.bool_val(false);
        for (const z3::expr &X : Xs)
          Block = Block || X != M.eval(X, true);
        S.add(Block);
      }
    } catch (const z3::exception &Ex) {
      return {std::nullopt, std::string("z3: ") + Ex.msg()};
    }
  }

private:
  /// Whether one of a few assignments of the leaves gives the predicate the value Want. The
  /// values tried for a leaf are its range ends, 1, a large power of two, and the constants of
  /// the predicate with their neighbours; assignments start from a few bases (every leaf low,
  /// high, or large) and change one or two leaves at a time, so `x == 1`, `k < 64` or
  /// `tiles > ctaid / 2 && nctaid < 2` find both outcomes without the solver.
  static bool sample(const Expr *Predicate, bool Want) {
    llvm::SmallVector<uint64_t, 24> Values{0, 1, 1ull << 20};
    llvm::SmallVector<const Expr *, 8> Leaves;
    llvm::SmallVector<const Expr *, 16> Work{Predicate};
    llvm::SmallPtrSet<const Expr *, 16> Seen;
    while (!Work.empty()) {
      const Expr *E = Work.pop_back_val();
      if (!Seen.insert(E).second)
        continue;
      if (E->isConstant()) {
        if (Values.size() < 24)
          for (uint64_t V : {E->payload() - 1, E->payload(), E->payload() + 1})
            Values.push_back(V & ExprContext::mask(E->width()));
        continue;
      }
      if (E->isLeaf() && Leaves.size() < 8)
        Leaves.push_back(E);
      for (const Expr *Op : E->ops())
        Work.push_back(Op);
    }
    const unsigned NumValues = Values.size() + 2; // plus each leaf's own range ends
    auto Pick = [&](const Expr *L, unsigned Choice) -> uint64_t {
      URange R = L->range();
      if (Choice == 0)
        return R.Lo;
      if (Choice == 1)
        return R.Hi;
      return std::clamp(Values[Choice - 2], R.Lo, R.Hi);
    };
    // Choice per leaf; a leaf not listed (more than eight) gets its low end. At most a
    // couple of thousand evaluations: past that the solver is the cheaper way.
    llvm::SmallVector<unsigned, 8> Choice(Leaves.size(), 0);
    unsigned Budget = 2000;
    // Flattened once: a valid predicate is evaluated the whole budget through.
    FlatExpr Flat(Predicate);
    llvm::SmallVector<int, 16> Chosen; // per leaf of Flat: its index in Leaves (-1: none)
    for (const Expr *L : Flat.leaves())
      Chosen.push_back(static_cast<int>(llvm::find(Leaves, L) - Leaves.begin()));
    llvm::SmallVector<std::optional<uint64_t>, 16> LeafValues(Chosen.size());
    auto Try = [&]() {
      if (Budget == 0)
        return false;
      --Budget;
      for (size_t I = 0; I < Chosen.size(); ++I) {
        const Expr *L = Flat.leaves()[I];
        LeafValues[I] = Chosen[I] < static_cast<int>(Leaves.size())
                            ? Pick(L, Choice[Chosen[I]])
                            : L->range().Lo;
      }
      std::optional<uint64_t> Value = Flat.evaluate(LeafValues);
      return Value && (*Value != 0) == Want;
    };
    // Bases: every leaf at its low end, its high end, or 2^20; then one leaf changed, then
    // two.
    const unsigned Bases[] = {0, 1, 4};
    for (unsigned Base : Bases) {
      std::fill(Choice.begin(), Choice.end(), Base);
      if (Try())
        return true;
    }
    for (unsigned Base : Bases) {
      std::fill(Choice.begin(), Choice.end(), Base);
      for (unsigned A = 0; A < Leaves.size(); ++A) {
        for (unsigned VA = 0; VA < NumValues; ++VA) {
          Choice[A] = VA;
          if (Try())
            return true;
        }
        Choice[A] = Base;
      }
    }
    for (unsigned Base : Bases) {
      std::fill(Choice.begin(), Choice.end(), Base);
      for (unsigned A = 0; A < Leaves.size(); ++A) {
        for (unsigned VA = 0; VA < NumValues; ++VA) {
          Choice[A] = VA;
          for (unsigned B = A + 1; B < Leaves.size(); ++B) {
            for (unsigned VB = 0; VB < NumValues; ++VB) {
              Choice[B] = VB;
              if (Try())
                return true;
            }
            Choice[B] = Base;
          }
        }
        Choice[A] = Base;
      }
    }
    return false;
  }

  /// Translates Exprs into one Z3 context, leaves into constants named in the order the
  /// query reaches them. Not by expression id: ids count every expression built before,
  /// so that an unrelated one (a TMEM address the protocol now keeps) renamed B1's leaves,
  /// and Z3, whose search follows the names, took 5 ms on a lemma before and 30 after.
  class Encoder {
  public:
    explicit Encoder(z3::context &C) : C(C) {}

    z3::expr truth(const Expr *Predicate) { return encode(Predicate) == C.bv_val(1u, 1); }

    void addRanges(z3::solver &S) {
      for (auto &[E, X] : LeafRanges) {
        URange R = E->range();
        if (R.Lo > 0)
          S.add(z3::uge(X, C.bv_val(static_cast<uint64_t>(R.Lo), E->width())));
        if (R.Hi < ExprContext::mask(E->width()))
          S.add(z3::ule(X, C.bv_val(static_cast<uint64_t>(R.Hi), E->width())));
      }
      LeafRanges.clear();
    }

    z3::expr encode(const Expr *E) {
      auto It = Memo.find(E);
      if (It != Memo.end())
        return It->second;
      z3::expr R = build(E);
      Memo.try_emplace(E, R);
      return R;
    }

  private:
    z3::expr boolToBv(const z3::expr &B) { return z3::ite(B, C.bv_val(1u, 1), C.bv_val(0u, 1)); }

    z3::expr resizeTo(const z3::expr &X, unsigned From, unsigned To, bool Signed) {
      if (To == From)
        return X;
      if (To < From)
        return X.extract(To - 1, 0);
      return Signed ? z3::sext(X, To - From) : z3::zext(X, To - From);
    }

    z3::expr build(const Expr *E) {
      const unsigned W = E->width();
      if (E->isConstant())
        return C.bv_val(static_cast<uint64_t>(E->payload()), W);
      if (E->isLeaf()) {
        z3::expr X = C.bv_const(("x" + std::to_string(Leaves++)).c_str(), W);
        LeafRanges.push_back({E, X});
        return X;
      }
      auto Op = [&](unsigned I) { return encode(E->op(I)); };
      switch (E->kind()) {
      case ExprKind::ZExt: return resizeTo(Op(0), E->op(0)->width(), W, false);
      case ExprKind::SExt: return resizeTo(Op(0), E->op(0)->width(), W, true);
      case ExprKind::Trunc: return resizeTo(Op(0), E->op(0)->width(), W, false);
      case ExprKind::Not: return ~Op(0);
      case ExprKind::Add: return Op(0) + Op(1);
      case ExprKind::Mul: return Op(0) * Op(1);
      case ExprKind::UDiv: return z3::udiv(Op(0), Op(1));
      case ExprKind::SDiv: return Op(0) / Op(1);
      case ExprKind::URem: return z3::urem(Op(0), Op(1));
      case ExprKind::SRem: return z3::srem(Op(0), Op(1));
      case ExprKind::AShr: return z3::ashr(Op(0), Op(1));
      case ExprKind::Shl: return z3::shl(Op(0), Op(1));
      case ExprKind::LShr: return z3::lshr(Op(0), Op(1));
      case ExprKind::And: return Op(0) & Op(1);
      case ExprKind::Or: return Op(0) | Op(1);
      case ExprKind::Xor: return Op(0) ^ Op(1);
      case ExprKind::UMin: return z3::ite(z3::ule(Op(0), Op(1)), Op(0), Op(1));
      case ExprKind::UMax: return z3::ite(z3::ule(Op(0), Op(1)), Op(1), Op(0));
      case ExprKind::SMin: return z3::ite(z3::sle(Op(0), Op(1)), Op(0), Op(1));
      case ExprKind::SMax: return z3::ite(z3::sle(Op(0), Op(1)), Op(1), Op(0));
      case ExprKind::MapA: {
        z3::sort S = C.bv_sort(W);
        z3::func_decl F = C.function(("mapa" + std::to_string(W)).c_str(), S, S, S);
        return F(Op(0), Op(1));
      }
      case ExprKind::Eq: return boolToBv(Op(0) == Op(1));
      case ExprKind::ULt: return boolToBv(z3::ult(Op(0), Op(1)));
      case ExprKind::ULe: return boolToBv(z3::ule(Op(0), Op(1)));
      case ExprKind::SLt: return boolToBv(z3::slt(Op(0), Op(1)));
      case ExprKind::SLe: return boolToBv(z3::sle(Op(0), Op(1)));
      case ExprKind::Select: return z3::ite(Op(0) == C.bv_val(1u, 1), Op(1), Op(2));
      default:
        break;
      }
      // Only leaves reach here, and they are handled above.
      return C.bv_const(("x" + std::to_string(Leaves++)).c_str(), W);
    }

    z3::context &C;
    unsigned Leaves = 0;
    llvm::DenseMap<const Expr *, z3::expr> Memo;
    std::vector<std::pair<const Expr *, z3::expr>> LeafRanges;
  };

  // No `timeout` parameter: Z3Deadline says why. Integer questions go to the solver Z3 sets
  // up for QF_AUFLIA, its SMT core: the one for QF_LIA (a pipeline of tactics) ran past the
  // resource limit in Z3 4.8, to the time limit, on a question the core decides or gives
  // up on within the limit (`y <=s y % 2^31 / 16 * 16`, SolverIntegersTest).
  static z3::solver makeSolver(z3::context &C, uint64_t ResourceLimit,
                               const char *Logic = "QF_BV") {
    z3::solver S(C, Logic);
    if (ResourceLimit) { // counted from each check's start
      z3::params P(C);
      P.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(ResourceLimit, ~0u)));
      S.set(P);
    }
    return S;
  }

  static std::string why(const z3::solver &S, const Z3Deadline &Limit) {
    return Limit.timedOut() ? "timeout" : S.reason_unknown();
  }

  // Asks whether Predicate (or its negation) has a model: Yes = sat, No = unsat.
  SolverResult check(const Expr *Predicate, bool Negate) {
    return check(Predicate, Negate, ResourceLimit);
  }

  SolverResult check(const Expr *Predicate, bool Negate, uint64_t Limit) {
    try {
      z3::context &C = context();
      // One deadline for both encodings: the fallback gets what the first left.
      Z3Deadline Late(C, TimeoutMs);
      if (Integers) {
        IntegerEncoder E(C);
        if (std::optional<z3::expr> F = E.assertion(Predicate, Negate)) {
          // A quarter of the budget: the lemmas it decides take a sixth of it at most, and
          // one it cannot decide leaves the bit-vectors most of theirs.
          // (0: no limit, so a limit below 4 stays 1.)
          z3::solver S = makeSolver(C, Limit ? std::max<uint64_t>(Limit / 4, 1) : 0, "QF_AUFLIA");
          S.add(*F);
          E.addRanges(S);
          SolverResult R = answer(S, Late);
          if (R.Answer != SolverAnswer::Unknown || Late.timedOut())
            return R;
        }
      }
      Encoder E(C);
      z3::solver S = makeSolver(C, Limit);
      z3::expr F = E.truth(Predicate);
      S.add(Negate ? !F : F);
      E.addRanges(S);
      return answer(S, Late);
    } catch (const z3::exception &Ex) {
      return {SolverAnswer::Unknown, std::string("z3: ") + Ex.msg()};
    }
  }

  static SolverResult answer(z3::solver &S, const Z3Deadline &Late) {
    switch (S.check()) {
    case z3::sat: return {SolverAnswer::Yes, ""};
    case z3::unsat: return {SolverAnswer::No, ""};
    default: return {SolverAnswer::Unknown, "the solver gave up: " + why(S, Late)};
    }
  }

  unsigned TimeoutMs;
  uint64_t ResourceLimit;
  bool Sample, Integers;
  // One context for every query, made on the first: creating a context costs more than most
  // queries here, and many analyses never ask.
  std::unique_ptr<z3::context> Context;
  z3::context &context() {
    if (!Context)
      Context = std::make_unique<z3::context>();
    return *Context;
  }
};

} // namespace

std::unique_ptr<Solver> Solver::createZ3(unsigned TimeoutMs, uint64_t ResourceLimit,
                                         bool Sample, bool Integers) {
  return std::make_unique<Z3Solver>(TimeoutMs, ResourceLimit, Sample, Integers);
}
