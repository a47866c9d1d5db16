//===- Expr.cpp - expression nodes, ranges, printing, evaluation ------------------===//
#include "wsv/analyzer/Expr.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"

using namespace wsv::analyzer;
using llvm::StringRef;

const char *wsv::analyzer::toString(ExprKind Kind) {
  switch (Kind) {
  case ExprKind::Constant: return "constant";
  case ExprKind::SpecialReg: return "special-register";
  case ExprKind::Param: return "param";
  case ExprKind::Symbol: return "symbol";
  case ExprKind::IterationVar: return "iteration";
  case ExprKind::Phi: return "phi";
  case ExprKind::Elect: return "elect";
  case ExprKind::Load: return "load";
  case ExprKind::Opaque: return "opaque";
  case ExprKind::ZExt: return "zext";
  case ExprKind::SExt: return "sext";
  case ExprKind::Trunc: return "trunc";
  case ExprKind::Not: return "not";
  case ExprKind::Add: return "add";
  case ExprKind::Mul: return "mul";
  case ExprKind::UDiv: return "udiv";
  case ExprKind::SDiv: return "sdiv";
  case ExprKind::URem: return "urem";
  case ExprKind::SRem: return "srem";
  case ExprKind::AShr: return "ashr";
  case ExprKind::Shl: return "shl";
  case ExprKind::LShr: return "lshr";
  case ExprKind::And: return "and";
  case ExprKind::Or: return "or";
  case ExprKind::Xor: return "xor";
  case ExprKind::UMin: return "umin";
  case ExprKind::UMax: return "umax";
  case ExprKind::SMin: return "smin";
  case ExprKind::SMax: return "smax";
  case ExprKind::MulHiU: return "mulhiu";
  case ExprKind::MapA: return "mapa";
  case ExprKind::Eq: return "eq";
  case ExprKind::ULt: return "ult";
  case ExprKind::ULe: return "ule";
  case ExprKind::SLt: return "slt";
  case ExprKind::SLe: return "sle";
  case ExprKind::Select: return "select";
  }
  return "?";
}

std::optional<SpecialRegister> wsv::analyzer::parseSpecialRegister(StringRef Name) {
  using SR = SpecialRegister;
  return llvm::StringSwitch<std::optional<SR>>(Name)
      .Case("%tid.x", SR::TidX).Case("%tid.y", SR::TidY).Case("%tid.z", SR::TidZ)
      .Case("%ntid.x", SR::NtidX).Case("%ntid.y", SR::NtidY).Case("%ntid.z", SR::NtidZ)
      .Case("%laneid", SR::LaneId).Case("%warpid", SR::WarpId).Case("%nwarpid", SR::NWarpId)
      .Case("%ctaid.x", SR::CtaidX).Case("%ctaid.y", SR::CtaidY).Case("%ctaid.z", SR::CtaidZ)
      .Case("%nctaid.x", SR::NctaidX).Case("%nctaid.y", SR::NctaidY)
      .Case("%nctaid.z", SR::NctaidZ)
      .Case("%cluster_ctarank", SR::ClusterCtaRank)
      .Case("%cluster_nctarank", SR::ClusterNctaRank)
      .Case("%clusterid.x", SR::ClusteridX).Case("%clusterid.y", SR::ClusteridY)
      .Case("%clusterid.z", SR::ClusteridZ)
      .Case("%nclusterid.x", SR::NclusteridX).Case("%nclusterid.y", SR::NclusteridY)
      .Case("%nclusterid.z", SR::NclusteridZ)
      .Case("%cluster_ctaid.x", SR::ClusterCtaidX).Case("%cluster_ctaid.y", SR::ClusterCtaidY)
      .Case("%cluster_ctaid.z", SR::ClusterCtaidZ)
      .Case("%cluster_nctaid.x", SR::ClusterNctaidX)
      .Case("%cluster_nctaid.y", SR::ClusterNctaidY)
      .Case("%cluster_nctaid.z", SR::ClusterNctaidZ)
      .Default(std::nullopt);
}

const char *wsv::analyzer::toString(SpecialRegister R) {
  static const char *const Names[] = {
      "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%laneid", "%warpid",
      "%nwarpid", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
      "%cluster_ctarank", "%cluster_nctarank", "%clusterid.x", "%clusterid.y", "%clusterid.z",
      "%nclusterid.x", "%nclusterid.y", "%nclusterid.z", "%cluster_ctaid.x",
      "%cluster_ctaid.y", "%cluster_ctaid.z", "%cluster_nctaid.x", "%cluster_nctaid.y",
      "%cluster_nctaid.z"};
  return Names[static_cast<unsigned>(R)];
}

bool wsv::analyzer::isCtaUniform(SpecialRegister R) {
  switch (R) {
  case SpecialRegister::TidX:
  case SpecialRegister::TidY:
  case SpecialRegister::TidZ:
  case SpecialRegister::LaneId:
  case SpecialRegister::WarpId:
    return false;
  default:
    return true;
  }
}

const char *wsv::analyzer::toString(SymbolSpace S) {
  switch (S) {
  case SymbolSpace::Shared: return "shared";
  case SymbolSpace::Global: return "global";
  case SymbolSpace::Const: return "const";
  case SymbolSpace::Local: return "local";
  case SymbolSpace::Param: return "param";
  case SymbolSpace::Function: return "function";
  case SymbolSpace::Generic: return "generic";
  }
  return "?";
}

int64_t Expr::signedValue() const {
  if (Width >= 64)
    return static_cast<int64_t>(Payload);
  uint64_t Sign = 1ull << (Width - 1);
  return static_cast<int64_t>((Payload ^ Sign) - Sign);
}

bool Expr::mentions(const std::function<bool(const Expr *)> &Pred) const {
  llvm::SmallVector<const Expr *, 16> Work{this};
  llvm::SmallPtrSet<const Expr *, 16> Seen;
  while (!Work.empty()) {
    const Expr *E = Work.pop_back_val();
    if (!Seen.insert(E).second)
      continue;
    if (E->isLeaf()) {
      if (Pred(E))
        return true;
      if (E->is(ExprKind::Elect) || E->is(ExprKind::Load))
        for (const Expr *Op : E->ops())
          Work.push_back(Op);
      continue;
    }
    for (const Expr *Op : E->ops())
      Work.push_back(Op);
  }
  return false;
}

bool wsv::analyzer::isThreadDependent(const Expr *E) {
  return E->mentions([](const Expr *L) {
    if (L->is(ExprKind::Elect))
      return true;
    return L->is(ExprKind::SpecialReg) && !isCtaUniform(L->specialRegister());
  });
}

//===- Construction --------------------------------------------------------------------===//

ExprContext::ExprContext() = default;

llvm::StringRef ExprContext::save(llvm::StringRef S) {
  if (Interned.count({S.data(), S.size()}))
    return S;
  S = Saver.save(S);
  Interned.insert({S.data(), S.size()});
  return S;
}

unsigned ExprContext::NodeInfo::getHashValue(const NodeKey &K) {
  return static_cast<unsigned>(llvm::hash_combine(
      static_cast<unsigned>(K.Kind), K.Width, K.Payload, K.Site, K.Name,
      llvm::hash_combine_range(K.Ops.begin(), K.Ops.end())));
}

unsigned ExprContext::NodeInfo::getHashValue(const Expr *E) {
  return getHashValue(
      NodeKey{E->kind(), E->width(), E->payload(), E->site(), E->name().data(), E->ops()});
}

bool ExprContext::NodeInfo::isEqual(const NodeKey &K, const Expr *E) {
  if (E == getEmptyKey() || E == getTombstoneKey())
    return false;
  return E->kind() == K.Kind && E->width() == K.Width && E->payload() == K.Payload &&
         E->site() == K.Site && E->name().data() == K.Name && E->ops() == K.Ops;
}

const Expr *ExprContext::make(ExprKind Kind, unsigned Width, llvm::ArrayRef<const Expr *> Ops,
                              uint64_t Payload, StringRef Name, const void *Site) {
  assert(Width >= 1 && Width <= 64 && "expression widths are 1 to 64 bits");
  // Names are interned first, so a node is identified by the name's address.
  if (!Name.empty())
    Name = save(Name);
  NodeKey Key{Kind, Width, Payload, Site, Name.empty() ? nullptr : Name.data(), Ops};
  auto It = Nodes.find_as(Key);
  if (It != Nodes.end())
    return *It;
  auto *E = new (Alloc.Allocate<Expr>()) Expr();
  E->Kind = Kind;
  E->Width = static_cast<uint8_t>(Width);
  E->Payload = Payload;
  E->Site = Site;
  E->Name = Name;
  if (!Ops.empty()) {
    auto **Stored = Alloc.Allocate<const Expr *>(Ops.size());
    std::copy(Ops.begin(), Ops.end(), Stored);
    E->Ops = Stored;
    E->NumOps = static_cast<uint16_t>(Ops.size());
  }
  E->Range = computeRange(Kind, Width, Ops, Payload);
  E->Id = NextId++;
  Nodes.insert(E);
  return E;
}

const Expr *ExprContext::constant(uint64_t Value, unsigned Width) {
  return make(ExprKind::Constant, Width, {}, Value & mask(Width));
}

const Expr *ExprContext::specialRegister(SpecialRegister R) {
  return make(ExprKind::SpecialReg, 32, {}, static_cast<uint64_t>(R));
}

const Expr *ExprContext::param(StringRef Name, uint64_t Offset, unsigned Width) {
  return make(ExprKind::Param, Width, {}, Offset, Name);
}

const Expr *ExprContext::symbol(StringRef Name, SymbolSpace Space, unsigned Width) {
  return make(ExprKind::Symbol, Width, {}, static_cast<uint64_t>(Space), Name);
}

const Expr *ExprContext::iterationVar(unsigned Loop) {
  return make(ExprKind::IterationVar, 32, {}, Loop);
}

const Expr *ExprContext::phi(StringRef Register, const void *Site, uint64_t Payload,
                             unsigned Width) {
  return make(ExprKind::Phi, Width, {}, Payload, Register, Site);
}

const Expr *ExprContext::elect(const void *Site, const Expr *Mask, StringRef Description) {
  return make(ExprKind::Elect, 1, {Mask}, 0, Description, Site);
}

const Expr *ExprContext::load(const void *Site, const Expr *Address, unsigned Width,
                              StringRef Description) {
  return make(ExprKind::Load, Width, {Address}, 0, Description, Site);
}

const Expr *ExprContext::opaque(StringRef Reason, const void *Site, uint64_t Payload,
                                unsigned Width) {
  return make(ExprKind::Opaque, Width, {}, Payload, Reason, Site);
}

//===- Ranges ---------------------------------------------------------------------------===//

static uint64_t nextPowerOfTwoMinusOne(uint64_t V) {
  uint64_t R = V;
  for (unsigned S = 1; S < 64; S <<= 1)
    R |= R >> S;
  return R;
}

static URange specialRegisterRange(SpecialRegister R) {
  using SR = SpecialRegister;
  switch (R) {
  case SR::TidX: case SR::TidY: return {0, 1023};
  case SR::TidZ: return {0, 63};
  case SR::NtidX: case SR::NtidY: return {1, 1024};
  case SR::NtidZ: return {1, 64};
  case SR::LaneId: return {0, 31};
  case SR::CtaidX: return {0, 0x7fffffffull - 1};
  case SR::CtaidY: case SR::CtaidZ: return {0, 65534};
  case SR::NctaidX: return {1, 0x7fffffffull};
  case SR::NctaidY: case SR::NctaidZ: return {1, 65535};
  // Clusters hold at most 16 CTAs (8 portable).
  case SR::ClusterCtaRank: return {0, 15};
  case SR::ClusterNctaRank: return {1, 16};
  case SR::ClusterCtaidX: case SR::ClusterCtaidY: case SR::ClusterCtaidZ: return {0, 15};
  case SR::ClusterNctaidX: case SR::ClusterNctaidY: case SR::ClusterNctaidZ: return {1, 16};
  default: return {0, 0xffffffffull};
  }
}

URange ExprContext::computeRange(ExprKind Kind, unsigned Width, llvm::ArrayRef<const Expr *> Ops,
                                 uint64_t Payload) const {
  const uint64_t Max = mask(Width);
  const URange Full{0, Max};
  auto R = [&](unsigned I) { return Ops[I]->range(); };
  switch (Kind) {
  case ExprKind::Constant:
    return {Payload, Payload};
  case ExprKind::SpecialReg:
    return specialRegisterRange(static_cast<SpecialRegister>(Payload));
  case ExprKind::IterationVar:
    return {0, Max};
  case ExprKind::Symbol:
    // Shared-window addresses are offsets into at most a few hundred KB.
    if (static_cast<SymbolSpace>(Payload) == SymbolSpace::Shared)
      return {0, std::min<uint64_t>(Max, 0xffffffffull)};
    return Full;
  case ExprKind::Elect:
    return {0, 1};
  case ExprKind::ZExt:
    return R(0);
  case ExprKind::Trunc:
    return R(0).Hi <= Max ? R(0) : Full;
  case ExprKind::Add: {
    URange A = R(0), B = R(1);
    if (A.Hi <= Max - B.Hi)
      return {A.Lo + B.Lo, A.Hi + B.Hi};
    return Full;
  }
  case ExprKind::Mul: {
    URange A = R(0), B = R(1);
    if (A.Hi == 0 || B.Hi <= Max / A.Hi)
      return {A.Lo * B.Lo, A.Hi * B.Hi};
    return Full;
  }
  case ExprKind::UDiv: {
    URange A = R(0), B = R(1);
    if (B.Lo == 0)
      return Full;
    return {A.Lo / B.Hi, A.Hi / B.Lo};
  }
  case ExprKind::URem: {
    URange A = R(0), B = R(1);
    if (B.Hi == 0)
      return Full;
    if (A.Hi < B.Lo)
      return A;
    return {0, std::min(A.Hi, B.Hi - 1)};
  }
  case ExprKind::And:
    return {0, std::min(R(0).Hi, R(1).Hi)};
  case ExprKind::Or:
  case ExprKind::Xor:
    return {Kind == ExprKind::Or ? std::max(R(0).Lo, R(1).Lo) : 0,
            nextPowerOfTwoMinusOne(std::max(R(0).Hi, R(1).Hi)) & Max};
  case ExprKind::UMin:
    return {std::min(R(0).Lo, R(1).Lo), std::min(R(0).Hi, R(1).Hi)};
  case ExprKind::UMax:
    return {std::max(R(0).Lo, R(1).Lo), std::max(R(0).Hi, R(1).Hi)};
  case ExprKind::Select:
    return {std::min(R(1).Lo, R(2).Lo), std::max(R(1).Hi, R(2).Hi)};
  case ExprKind::Eq:
  case ExprKind::ULt:
  case ExprKind::ULe:
  case ExprKind::SLt:
  case ExprKind::SLe:
  case ExprKind::Not:
    return Width == 1 ? URange{0, 1} : Full;
  default:
    return Full;
  }
}

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

using PrintHook = std::function<bool(const Expr *, llvm::raw_ostream &)>;

class Printer {
public:
  Printer(llvm::raw_ostream &OS, const PrintHook &Hook) : OS(OS), Hook(Hook) {}

  void print(const Expr *E, int Outer = 0) {
    // Width changes that keep the value print as their operand, in the same place.
    while ((E->is(ExprKind::ZExt) || E->is(ExprKind::SExt) ||
            (E->is(ExprKind::Trunc) && E->op(0)->range().Hi <= ExprContext::mask(E->width()))) &&
           !(Hook && Hook(E, OS)))
      E = E->op(0);
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

  // A term of a sum with a negative constant factor prints as a subtraction.
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

  void printSum(const Expr *E) {
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
    if (Hook && Hook(E, OS))
      return;
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
    case ExprKind::Load:
    case ExprKind::Opaque:
      OS << E->name();
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
    // Associative operators chain without parentheses; the others bracket a right operand
    // of the same strength (a / (b / c)).
    int P = precedence(E);
    bool Associative = E->is(ExprKind::Mul) || E->is(ExprKind::And) || E->is(ExprKind::Or) ||
                       E->is(ExprKind::Xor);
    print(E->op(0), E->isComparison() ? P + 1 : P);
    OS << Op;
    print(E->op(1), Associative ? P : P + 1);
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

//===- Evaluation ------------------------------------------------------------------------===//

static int64_t toSigned(uint64_t V, unsigned Width) {
  if (Width >= 64)
    return static_cast<int64_t>(V);
  uint64_t Sign = 1ull << (Width - 1);
  return static_cast<int64_t>((V ^ Sign) - Sign);
}

std::optional<uint64_t> ExprContext::apply(const Expr *N, llvm::ArrayRef<uint64_t> V) {
  const uint64_t M = mask(N->width());
  if (N->is(ExprKind::Select))
    return V[0] ? V[1] : V[2];
  const unsigned W = N->op(0)->width();
  const int64_t S0 = toSigned(V[0], W), S1 = V.size() > 1 ? toSigned(V[1], W) : 0;
  const uint64_t V1 = V.size() > 1 ? V[1] : 0;
  switch (N->kind()) {
  case ExprKind::ZExt: return V[0];
  case ExprKind::SExt: return static_cast<uint64_t>(S0) & M;
  case ExprKind::Trunc: return V[0] & M;
  case ExprKind::Not: return ~V[0] & M;
  case ExprKind::Add: return (V[0] + V1) & M;
  case ExprKind::Mul: return (V[0] * V1) & M;
  case ExprKind::UDiv: return V1 ? std::optional<uint64_t>(V[0] / V1) : std::nullopt;
  case ExprKind::URem: return V1 ? std::optional<uint64_t>(V[0] % V1) : std::nullopt;
  case ExprKind::SDiv:
    return S1 ? std::optional<uint64_t>(static_cast<uint64_t>(S0 / S1) & M) : std::nullopt;
  case ExprKind::SRem:
    return S1 ? std::optional<uint64_t>(static_cast<uint64_t>(S0 % S1) & M) : std::nullopt;
  case ExprKind::Shl: return V1 >= W ? 0 : (V[0] << V1) & M;
  case ExprKind::LShr: return V1 >= W ? 0 : V[0] >> V1;
  case ExprKind::AShr: return static_cast<uint64_t>(S0 >> std::min<uint64_t>(V1, W - 1)) & M;
  case ExprKind::And: return V[0] & V1;
  case ExprKind::Or: return V[0] | V1;
  case ExprKind::Xor: return V[0] ^ V1;
  case ExprKind::UMin: return std::min(V[0], V1);
  case ExprKind::UMax: return std::max(V[0], V1);
  case ExprKind::SMin: return static_cast<uint64_t>(std::min(S0, S1)) & M;
  case ExprKind::SMax: return static_cast<uint64_t>(std::max(S0, S1)) & M;
  case ExprKind::MulHiU:
    return static_cast<uint64_t>((static_cast<unsigned __int128>(V[0]) * V1) >> W) & M;
  case ExprKind::Eq: return V[0] == V1;
  case ExprKind::ULt: return V[0] < V1;
  case ExprKind::ULe: return V[0] <= V1;
  case ExprKind::SLt: return S0 < S1;
  case ExprKind::SLe: return S0 <= S1;
  default: return std::nullopt; // MapA: an address in another CTA has no single number
  }
}

namespace {
/// Evaluation with a memo for shared subexpressions; most predicates are small, so the memo
/// lives on the stack.
class Evaluator {
public:
  explicit Evaluator(llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf)
      : Leaf(Leaf) {}

  std::optional<uint64_t> eval(const Expr *N) {
    if (N->isConstant())
      return N->payload();
    if (N->isLeaf())
      return Leaf(N);
    auto It = Memo.find(N);
    if (It != Memo.end())
      return It->second;
    std::optional<uint64_t> Result = compute(N);
    Memo[N] = Result;
    return Result;
  }

private:
  std::optional<uint64_t> compute(const Expr *N) {
    // Selects evaluate only the chosen arm, so an unknown in the other arm does not matter.
    if (N->is(ExprKind::Select)) {
      std::optional<uint64_t> C = eval(N->op(0));
      return C ? eval(N->op(*C ? 1 : 2)) : std::nullopt;
    }
    uint64_t V[2] = {0, 0};
    for (unsigned K = 0; K < N->ops().size() && K < 2; ++K) {
      std::optional<uint64_t> X = eval(N->op(K));
      if (!X)
        return std::nullopt;
      V[K] = *X;
    }
    return ExprContext::apply(N, llvm::ArrayRef<uint64_t>(V, N->ops().size()));
  }

  llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf;
  llvm::SmallDenseMap<const Expr *, std::optional<uint64_t>, 32> Memo;
};
} // namespace

std::optional<uint64_t>
ExprContext::evaluate(const Expr *E,
                      llvm::function_ref<std::optional<uint64_t>(const Expr *)> Leaf) {
  return Evaluator(Leaf).eval(E);
}

//===- Rewriting -------------------------------------------------------------------------===//

const Expr *ExprContext::rebuild(const Expr *E, llvm::ArrayRef<const Expr *> Ops) {
  switch (E->kind()) {
  case ExprKind::ZExt: return zext(Ops[0], E->width());
  case ExprKind::SExt: return sext(Ops[0], E->width());
  case ExprKind::Trunc: return trunc(Ops[0], E->width());
  case ExprKind::Not: return bitNot(Ops[0]);
  case ExprKind::Add: return add(Ops[0], Ops[1]);
  case ExprKind::Mul: return mul(Ops[0], Ops[1]);
  case ExprKind::UDiv: return udiv(Ops[0], Ops[1]);
  case ExprKind::SDiv: return sdiv(Ops[0], Ops[1]);
  case ExprKind::URem: return urem(Ops[0], Ops[1]);
  case ExprKind::SRem: return srem(Ops[0], Ops[1]);
  case ExprKind::AShr: return ashr(Ops[0], Ops[1]);
  case ExprKind::Shl: return shl(Ops[0], Ops[1]);
  case ExprKind::LShr: return lshr(Ops[0], Ops[1]);
  case ExprKind::And: return bitAnd(Ops[0], Ops[1]);
  case ExprKind::Or: return bitOr(Ops[0], Ops[1]);
  case ExprKind::Xor: return bitXor(Ops[0], Ops[1]);
  case ExprKind::UMin: return umin(Ops[0], Ops[1]);
  case ExprKind::UMax: return umax(Ops[0], Ops[1]);
  case ExprKind::SMin: return smin(Ops[0], Ops[1]);
  case ExprKind::SMax: return smax(Ops[0], Ops[1]);
  case ExprKind::MapA: return mapa(Ops[0], Ops[1]);
  case ExprKind::MulHiU: return mulhiu(Ops[0], Ops[1]);
  case ExprKind::Eq: return eq(Ops[0], Ops[1]);
  case ExprKind::ULt: return ult(Ops[0], Ops[1]);
  case ExprKind::ULe: return ule(Ops[0], Ops[1]);
  case ExprKind::SLt: return slt(Ops[0], Ops[1]);
  case ExprKind::SLe: return sle(Ops[0], Ops[1]);
  case ExprKind::Select: return select(Ops[0], Ops[1], Ops[2]);
  case ExprKind::Elect: return elect(E->site(), Ops[0], E->name());
  case ExprKind::Load: return load(E->site(), Ops[0], E->width(), E->name());
  default:
    return E;
  }
}

const Expr *ExprContext::rewrite(const Expr *E,
                                 const std::function<const Expr *(const Expr *)> &Leaf) {
  llvm::DenseMap<const Expr *, const Expr *> Memo;
  std::function<const Expr *(const Expr *)> Walk = [&](const Expr *N) -> const Expr * {
    auto It = Memo.find(N);
    if (It != Memo.end())
      return It->second;
    const Expr *Result = N;
    if (const Expr *Replaced = Leaf(N)) {
      Result = Replaced;
    } else if (!N->ops().empty()) {
      llvm::SmallVector<const Expr *, 3> Ops;
      bool Changed = false;
      for (const Expr *Op : N->ops()) {
        Ops.push_back(Walk(Op));
        Changed |= Ops.back() != Op;
      }
      if (Changed)
        Result = rebuild(N, Ops);
    }
    Memo[N] = Result;
    return Result;
  };
  return Walk(E);
}

const Expr *ExprContext::substitute(const Expr *E, const Expr *From, const Expr *To) {
  return rewrite(E, [&](const Expr *N) -> const Expr * { return N == From ? To : nullptr; });
}
