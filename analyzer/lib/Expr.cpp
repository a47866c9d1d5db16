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

void wsv::analyzer::conjuncts(const Expr *P, llvm::SmallVectorImpl<const Expr *> &Out) {
  if (!P || P->isTrue())
    return;
  if (P->width() == 1 && P->is(ExprKind::And)) {
    for (const Expr *Op : P->ops())
      conjuncts(Op, Out);
    return;
  }
  Out.push_back(P);
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
  auto It = Strings.find(S);
  if (It == Strings.end()) {
    char *Copy = Alloc.Allocate<char>(S.size() + 1);
    std::copy(S.begin(), S.end(), Copy);
    Copy[S.size()] = '\0';
    It = Strings.insert(llvm::StringRef(Copy, S.size())).first;
  }
  Interned.insert({It->data(), It->size()});
  return *It;
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
