//===- ExprPrint.cpp - expressions as readers write them --------------------------===//
#include "wsv/analyzer/Expr.h"
#include "wsv/analyzer/ExprNames.h"

#include "llvm/ADT/SmallVector.h"

using namespace wsv::analyzer;

//===- Printing --------------------------------------------------------------------------===//

namespace {
// Binding strength, higher binds tighter.
int precedence(const Expr *E) {
  switch (E->kind()) {
  case ExprKind::Select: return 1;
  case ExprKind::Or: return E->width() == 1 ? 2 : 5;
  case ExprKind::And: return E->width() == 1 ? 3 : 7;
  case ExprKind::Xor: return 6;
  case ExprKind::Eq: case ExprKind::ULt: case ExprKind::ULe: case ExprKind::SLt:
  case ExprKind::SLe: return 4;
  case ExprKind::Shl: case ExprKind::LShr: case ExprKind::AShr: return 8;
  case ExprKind::Add: return 9;
  case ExprKind::Mul: case ExprKind::UDiv: case ExprKind::SDiv: case ExprKind::URem:
  case ExprKind::SRem: return 10;
  case ExprKind::Not: return 11;
  default: return 12;
  }
}

/// Width changes that keep the value: printed as their operand.
bool keepsValue(const Expr *E) {
  return E->is(ExprKind::ZExt) || E->is(ExprKind::SExt) ||
         (E->is(ExprKind::Trunc) && E->op(0)->range().Hi <= ExprContext::mask(E->width()));
}

/// A sum's terms, left to right.
llvm::SmallVector<const Expr *, 8> sumTerms(const Expr *E) {
  llvm::SmallVector<const Expr *, 8> Terms;
  llvm::SmallVector<const Expr *, 8> Work{E};
  while (!Work.empty()) {
    const Expr *T = Work.pop_back_val();
    if (T->is(ExprKind::Add)) {
      Work.push_back(T->op(1));
      Work.push_back(T->op(0));
    } else {
      Terms.push_back(T);
    }
  }
  return Terms;
}

/// A term of a sum with a negative constant factor prints as a subtraction.
bool negatedTerm(const Expr *E, const Expr *&Positive, uint64_t &Factor) {
  if (E->is(ExprKind::Mul) && E->op(1)->isConstant() && E->op(1)->signedValue() < 0) {
    Positive = E->op(0);
    Factor = static_cast<uint64_t>(-E->op(1)->signedValue());
    return true;
  }
  if (E->isConstant() && E->width() > 1 && E->signedValue() < 0) {
    Positive = nullptr;
    Factor = static_cast<uint64_t>(-E->signedValue());
    return true;
  }
  return false;
}

using PrintHook = std::function<bool(const Expr *, llvm::raw_ostream &)>;

class Printer {
public:
  Printer(llvm::raw_ostream &OS, const PrintHook &Hook) : OS(OS), Hook(Hook) {}

  void print(const Expr *E, int Outer = 0) {
    // What a hook prints stands as one operand (a name): no parentheses around it. Width
    // changes that keep the value print as their operand, in the same place.
    for (;;) {
      if (Hook && Hook(E, OS))
        return;
      if (!keepsValue(E))
        break;
      E = E->op(0);
    }
    bool Paren = precedence(E) < Outer;
    if (Paren)
      OS << '(';
    printBare(E);
    if (Paren)
      OS << ')';
  }

private:
  void printConstant(const Expr *E) {
    if (E->width() == 1) {
      OS << (E->isTrue() ? "true" : "false");
      return;
    }
    int64_t S = E->signedValue();
    if (S < 0 && S > -65536)
      OS << S;
    else
      OS << E->payload();
  }

  void printSum(const Expr *E) {
    llvm::SmallVector<const Expr *, 8> Terms = sumTerms(E);
    for (unsigned I = 0; I < Terms.size(); ++I) {
      const Expr *Positive;
      uint64_t Factor;
      if (I > 0 && negatedTerm(Terms[I], Positive, Factor)) {
        OS << " - ";
        if (!Positive)
          OS << Factor;
        else if (Factor == 1)
          print(Positive, 10);
        else {
          print(Positive, 10);
          OS << " * " << Factor;
        }
        continue;
      }
      if (I > 0)
        OS << " + ";
      print(Terms[I], 9);
    }
  }

  void printBare(const Expr *E) {
    switch (E->kind()) {
    case ExprKind::Constant:
      return printConstant(E);
    case ExprKind::SpecialReg:
      OS << toString(E->specialRegister());
      return;
    case ExprKind::Param:
      OS << E->name();
      if (E->payload())
        OS << '+' << E->payload();
      return;
    case ExprKind::Symbol:
      OS << E->name();
      return;
    case ExprKind::IterationVar:
      OS << "i" << E->payload();
      return;
    case ExprKind::Phi:
      OS << "phi(" << E->name() << ')';
      return;
    case ExprKind::Elect:
    case ExprKind::Opaque:
      OS << E->name();
      return;
    case ExprKind::Load:
      OS << E->name() << '[';
      print(E->op(0));
      OS << ']';
      return;
    case ExprKind::ZExt:
    case ExprKind::SExt:
      // Widening does not change what a value means to a reader.
      return print(E->op(0), 12);
    case ExprKind::Trunc:
      if (E->op(0)->range().Hi <= ExprContext::mask(E->width()))
        return print(E->op(0), 12);
      // Narrowing drops high bits: show it.
      print(E->op(0), 10);
      OS << " % " << (1ull << E->width());
      return;
    case ExprKind::Not:
      if (E->width() == 1 && E->op(0)->is(ExprKind::Eq)) {
        print(E->op(0)->op(0), 5);
        OS << " != ";
        print(E->op(0)->op(1), 5);
        return;
      }
      OS << (E->width() == 1 ? "!" : "~");
      return print(E->op(0), 11);
    case ExprKind::Add:
      return printSum(E);
    case ExprKind::Mul:
      if (E->op(1)->isConstant() && E->op(1)->signedValue() == -1) {
        OS << '-';
        return print(E->op(0), 11);
      }
      break;
    case ExprKind::Select:
      print(E->op(0), 2);
      OS << " ? ";
      print(E->op(1), 2);
      OS << " : ";
      print(E->op(2), 1);
      return;
    case ExprKind::UMin: case ExprKind::UMax: case ExprKind::SMin: case ExprKind::SMax:
    case ExprKind::MapA: case ExprKind::MulHiU: {
      const char *Fn = E->is(ExprKind::MapA)     ? "mapa"
                       : E->is(ExprKind::MulHiU) ? "mulhi"
                       : E->is(ExprKind::UMin)   ? "min"
                       : E->is(ExprKind::UMax)   ? "max"
                       : E->is(ExprKind::SMin)   ? "smin"
                                                 : "smax";
      OS << Fn << '(';
      print(E->op(0));
      OS << ", ";
      print(E->op(1));
      OS << ')';
      return;
    }
    default:
      break;
    }
    const char *Op = "?";
    switch (E->kind()) {
    case ExprKind::Mul: Op = " * "; break;
    case ExprKind::UDiv: Op = " / "; break;
    case ExprKind::SDiv: Op = " /s "; break;
    case ExprKind::URem: Op = " % "; break;
    case ExprKind::SRem: Op = " %s "; break;
    case ExprKind::Shl: Op = " << "; break;
    case ExprKind::LShr: Op = " >> "; break;
    case ExprKind::AShr: Op = " >>s "; break;
    case ExprKind::And: Op = E->width() == 1 ? " && " : " & "; break;
    case ExprKind::Or: Op = E->width() == 1 ? " || " : " | "; break;
    case ExprKind::Xor: Op = " ^ "; break;
    case ExprKind::Eq: Op = " == "; break;
    case ExprKind::ULt: Op = " < "; break;
    case ExprKind::ULe: Op = " <= "; break;
    case ExprKind::SLt: Op = " <s "; break;
    case ExprKind::SLe: Op = " <=s "; break;
    default: break;
    }
    // An associative operator chains without parentheses over its own kind (a * b * c);
    // any other right operand of the same strength is bracketed: a / (b / c), and
    // a * (b / c), which is not (a * b) / c in integers.
    int P = precedence(E);
    bool Associative = E->is(ExprKind::Mul) || E->is(ExprKind::And) || E->is(ExprKind::Or) ||
                       E->is(ExprKind::Xor);
    print(E->op(0), E->isComparison() ? P + 1 : P);
    OS << Op;
    print(E->op(1), Associative && printedExpr(E->op(1))->is(E->kind()) ? P : P + 1);
  }

  llvm::raw_ostream &OS;
  const PrintHook &Hook;
};
} // namespace

void Expr::print(llvm::raw_ostream &OS, const PrintHook &Hook) const {
  Printer(OS, Hook).print(this);
}

std::string Expr::str() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS);
  return S;
}


//===- What the printer writes, for ExprNames ------------------------------------------===//

const Expr *wsv::analyzer::printedExpr(const Expr *E) {
  while (keepsValue(E))
    E = E->op(0);
  return E;
}

// Follows printBare: each operand listed here is printed once through print().
llvm::SmallVector<const Expr *, 4> wsv::analyzer::printedOperands(const Expr *E) {
  llvm::SmallVector<const Expr *, 4> Out;
  E = printedExpr(E);
  switch (E->kind()) {
  case ExprKind::Add: {
    llvm::SmallVector<const Expr *, 8> Terms = sumTerms(E);
    for (unsigned I = 0; I < Terms.size(); ++I) {
      const Expr *Positive = Terms[I];
      uint64_t Factor;
      if (I > 0 && negatedTerm(Terms[I], Positive, Factor) && !Positive)
        continue; // a constant
      Out.push_back(Positive);
    }
    break;
  }
  case ExprKind::Mul:
    if (E->op(1)->isConstant() && E->op(1)->signedValue() == -1)
      Out.push_back(E->op(0));
    else
      Out.append(E->ops().begin(), E->ops().end());
    break;
  case ExprKind::Not:
    if (E->width() == 1 && E->op(0)->is(ExprKind::Eq))
      Out.append(E->op(0)->ops().begin(), E->op(0)->ops().end());
    else
      Out.push_back(E->op(0));
    break;
  default:
    if (!E->isLeaf())
      Out.append(E->ops().begin(), E->ops().end());
    break;
  }
  for (const Expr *&O : Out)
    O = printedExpr(O);
  return Out;
}
