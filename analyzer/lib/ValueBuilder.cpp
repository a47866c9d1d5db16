//===- ValueBuilder.cpp - walking the graph, joining states -----------------------===//
#include "ValueBuilder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

using namespace wsv;
using namespace wsv::analyzer;
using llvm::StringRef;

static unsigned widthOfType(StringRef Type) {
  Type.consume_front(".");
  if (Type == "pred")
    return 1;
  unsigned Bits = 0;
  if (Type.size() >= 2 && !Type.drop_front(1).getAsInteger(10, Bits) && Bits >= 8 && Bits <= 64)
    return Bits;
  return 32;
}

ValueBuilder::ValueBuilder(ValueAnalysis &VA, const DominatorTree &Dom, Solver *S)
    : VA(VA), G(VA.G), Dom(Dom), Loops(VA.Loops), Ctx(VA.Ctx), S(S) {
  const unsigned N = G.size();
  // Inlined calls: a callee's formal `.param` variables are the caller's actual ones.
  for (const CallSite &C : G.calls()) {
    if (C.Status != CallStatus::Inlined)
      continue;
    const CfgInst &CI = G.inst(C.Inst);
    const ptx::NameResolver &Names = *G.frames()[CI.Frame].Names;
    auto Bind = [&](ptx::Operand List, llvm::ArrayRef<const ptx::VariableDecl *> Formals) {
      if (!List)
        return;
      ptx::OperandRange Actuals = List.elements();
      for (size_t K = 0; K < Actuals.size() && K < Formals.size(); ++K) {
        if (!Actuals[K].isName())
          continue;
        auto [Actual, ActualFrame] = resolveParam(C.Inst, Actuals[K].text());
        if (Actual && Actual->space() == ".param")
          ParamAlias[{C.InlinedFrame, Formals[K]}] = {ActualFrame, Actual};
      }
      (void)Names;
    };
    Bind(C.Arguments, C.Callee->params());
    Bind(C.Returns, C.Callee->returns());
  }

  OperandStart.resize(G.instructions().size() + 1);
  unsigned Total = 0;
  for (InstId I = 0; I < G.instructions().size(); ++I) {
    OperandStart[I] = Total;
    for (ptx::Operand Op : G.inst(I).I->operands())
      Total += elementsOf(Op);
  }
  OperandStart.back() = Total;
  OperandValues.assign(Total, nullptr);
  Guards.assign(G.instructions().size(), nullptr);

  // What each loop writes: those registers are phis at its header.
  std::vector<llvm::SmallVector<RegId, 8>> BlockDefs(N);
  for (InstId I = 0; I < G.instructions().size(); ++I)
    writtenRegisters(I, BlockDefs[G.inst(I).Block]);
  LoopDefs.resize(Loops.size());
  Summaries.resize(Loops.size());
  for (const Loop &L : Loops.loops()) {
    Summaries[L.Index].Loop = L.Index;
    LoopDefs[L.Index].resize(Regs.size());
    for (BlockId B : L.Blocks)
      for (RegId R : BlockDefs[B])
        LoopDefs[L.Index].set(R);
  }

  // Forward reachability without back edges, for gated joins.
  Reach.assign(N, llvm::BitVector(N));
  auto Rpo = G.reversePostOrder();
  for (auto It = Rpo.rbegin(); It != Rpo.rend(); ++It) {
    BlockId B = *It;
    Reach[B].set(B);
    for (BlockId Succ : G.block(B).Succs)
      if (G.rpoNumber(Succ) > G.rpoNumber(B))
        Reach[B] |= Reach[Succ];
  }
  In.resize(N);
  Out.resize(N);
  Done.assign(N, 0);
}

void ValueBuilder::run() { processRegion(NoIndex); }

//===- Registers -------------------------------------------------------------------------===//

RegId ValueBuilder::intern(std::tuple<const void *, unsigned, uint64_t> Key, const RegInfo &Info) {
  auto [It, Inserted] = RegIndex.try_emplace(Key, Regs.size());
  if (Inserted) {
    Regs.push_back(Info);
    Regs.back().Name = Ctx.save(Info.Name);
  }
  return It->second;
}

std::optional<RegId> ValueBuilder::lookupRegister(InstId I, StringRef Name) {
  const CfgInst &CI = G.inst(I);
  auto Key = std::make_pair(Name.data(), CI.Frame);
  auto Cached = Resolved.find(Key);
  if (Cached != Resolved.end())
    return Cached->second == NoIndex ? std::nullopt : std::optional<RegId>(Cached->second);
  std::optional<RegId> R = resolveRegister(I, Name);
  Resolved[Key] = R ? *R : NoIndex;
  return R;
}

std::optional<RegId> ValueBuilder::resolveRegister(InstId I, StringRef Name) {
  const CfgInst &CI = G.inst(I);
  const ptx::NameResolver &Names = *G.frames()[CI.Frame].Names;
  if (ptx::RegisterRef R = Names.findRegister(*CI.Scope, Name)) {
    // A declaration may mix ranges and plain names (`.reg .pred %p<8>, %leader;`): a plain
    // name's key must not equal a range element's, so it takes the index no range reaches.
    uint64_t Sub = (uint64_t(R.NameIndex) << 32) | 0xffffffffu;
    if (R.name().isRange()) {
      StringRef Prefix;
      uint64_t Index = 0;
      ptx::splitRegisterName(Name, Prefix, Index);
      Sub = (uint64_t(R.NameIndex) << 32) | Index;
    }
    return intern({R.Decl, CI.Frame, Sub}, {Name, widthOfType(R.Decl->type()), CI.Frame});
  }
  // A `.reg` formal parameter of the function is a register too.
  if (const ptx::VariableDecl *V = Names.findVariable(*CI.Scope, Name))
    if (V->space() == ".reg")
      return intern({V, CI.Frame, 0}, {Name, widthOfType(V->type()), CI.Frame});
  return std::nullopt;
}

std::pair<const ptx::VariableDecl *, unsigned> ValueBuilder::resolveParam(InstId I,
                                                                          StringRef Name) {
  const CfgInst &CI = G.inst(I);
  const ptx::VariableDecl *V = G.frames()[CI.Frame].Names->findVariable(*CI.Scope, Name);
  unsigned Frame = CI.Frame;
  // Follow formal -> actual through every inlining level.
  while (V) {
    auto It = ParamAlias.find({Frame, V});
    if (It == ParamAlias.end())
      break;
    std::tie(Frame, V) = It->second;
  }
  return {V, Frame};
}

std::optional<RegId> ValueBuilder::paramCell(const ptx::VariableDecl &Var, unsigned Frame,
                                             uint64_t Offset, unsigned Width, bool Create) {
  auto Key = std::make_tuple(static_cast<const void *>(&Var), Frame, Offset);
  auto It = RegIndex.find(Key);
  if (It != RegIndex.end())
    return It->second;
  if (!Create)
    return std::nullopt;
  std::string Name = Var.name().str();
  if (Offset)
    Name += "+" + std::to_string(Offset);
  RegId R = intern(Key, RegInfo{Name, Width, Frame, true});
  CellsOf[{&Var, Frame}].push_back(R);
  return R;
}

bool ValueBuilder::isFunctionParam(const ptx::VariableDecl &Var, unsigned Frame) const {
  const ptx::Function &F = *G.frames()[Frame].Function;
  return llvm::is_contained(F.params(), &Var);
}

const Expr *ValueBuilder::undefined(RegId R) {
  if (R >= Undefined.size())
    Undefined.resize(Regs.size(), nullptr);
  if (!Undefined[R])
    Undefined[R] = Ctx.opaque(Ctx.save((Regs[R].Name + " is read before it is written").str()),
                              nullptr, R, Regs[R].Width);
  return Undefined[R];
}

//===- Walking the graph --------------------------------------------------------------------===//

void ValueBuilder::processRegion(LoopId L) {
  llvm::ArrayRef<BlockId> Blocks =
      L == NoIndex ? G.reversePostOrder() : llvm::ArrayRef<BlockId>(Loops.loop(L).Blocks);
  for (BlockId B : Blocks) {
    LoopId Inner = Loops.loopFor(B);
    if (Inner == L) {
      processBlock(B);
      continue;
    }
    // B is in a loop nested in L: the child of L that contains it is processed as a whole,
    // starting at its header.
    LoopId Child = Inner;
    while (Child != NoIndex && Loops.loop(Child).Parent != L)
      Child = Loops.loop(Child).Parent;
    if (Child != NoIndex && Loops.loop(Child).Header == B)
      processLoop(Child);
  }
}

void ValueBuilder::processLoop(LoopId L) {
  processRegion(L);
  finishLoop(L);
}

void ValueBuilder::processBlock(BlockId B) {
  State S;
  const BasicBlock &BB = G.block(B);
  LoopId Header = Loops.loopWithHeader(B);
  if (B == G.entry() && BB.Preds.empty()) {
    // Nothing is defined on entry.
  } else if (Header != NoIndex) {
    const Loop &L = Loops.loop(Header);
    S = join(B, L.Entries);
    const llvm::BitVector &Defs = LoopDefs[Header];
    for (unsigned R = Defs.find_first(); R != ~0u && R < Defs.size(); R = Defs.find_next(R)) {
      const Expr *Entry = get(S, R);
      if (!Entry)
        Entry = undefined(R);
      const Expr *Phi = Ctx.phi(Regs[R].Name, &BB, R, Regs[R].Width);
      PhiInfo &Info = Phis[Phi];
      Info.Block = B;
      Info.Register = R;
      Info.Loop = Header;
      Info.Incoming.assign(1, {L.Entries.empty() ? NoIndex : L.Entries[0], Entry});
      set(S, R, Phi);
    }
  } else {
    llvm::SmallVector<BlockId, 4> Preds;
    for (BlockId P : BB.Preds)
      if (G.block(P).Reachable)
        Preds.push_back(P);
    S = join(B, Preds);
  }
  In[B] = S;
  for (InstId I = BB.Begin; I < BB.End; ++I)
    transfer(I, S);
  Out[B] = std::move(S);
  Done[B] = 1;
}

const State *ValueBuilder::edgeState(BlockId From, BlockId To) const {
  auto It = EdgeStates.find({From, To});
  if (It != EdgeStates.end())
    return &It->second;
  return Done[From] ? &Out[From] : nullptr;
}

State ValueBuilder::join(BlockId B, llvm::ArrayRef<BlockId> Preds) {
  llvm::SmallVector<const State *, 4> States;
  llvm::SmallVector<BlockId, 4> From;
  bool Irreducible = false;
  for (BlockId P : Preds) {
    if (const State *St = edgeState(P, B)) {
      States.push_back(St);
      From.push_back(P);
    } else {
      Irreducible = true;
    }
  }
  if (States.empty() && !Irreducible)
    return {};
  if (States.size() == 1 && !Irreducible)
    return *States[0];
  size_t Size = Regs.size();
  State Result(Size, nullptr);
  llvm::SmallVector<std::pair<BlockId, const Expr *>, 4> Incoming;
  for (RegId R = 0; R < Size; ++R) {
    Incoming.clear();
    bool Same = true;
    for (unsigned K = 0; K < States.size(); ++K) {
      Incoming.push_back({From[K], get(*States[K], R)});
      Same &= Incoming.back().second == Incoming[0].second;
    }
    if (Irreducible) {
      // A predecessor not evaluated yet: the graph enters a cycle here at more than one
      // point, and no value written anywhere can be trusted.
      Result[R] = Ctx.opaque(Ctx.save(("value of " + Regs[R].Name +
                                       " where control flow is irreducible").str()),
                             &G.block(B), R, Regs[R].Width);
      continue;
    }
    Result[R] = Same ? Incoming[0].second : joinValue(B, R, Incoming);
  }
  return Result;
}

const Expr *ValueBuilder::joinValue(BlockId B, RegId R,
                                    llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming) {
  llvm::SmallVector<std::pair<BlockId, const Expr *>, 4> In(Incoming.begin(), Incoming.end());
  for (auto &P : In)
    if (!P.second)
      P.second = undefined(R);
  if (const Expr *Gated = gatedValue(B, In))
    return Gated;
  if (In.size() > 2)
    if (const Expr *Gated = gatedMultiway(B, In))
      return Gated;
  const Expr *Phi = Ctx.phi(Regs[R].Name, &G.block(B), R, Regs[R].Width);
  PhiInfo &Info = Phis[Phi];
  Info.Block = B;
  Info.Register = R;
  Info.Incoming.assign(In.begin(), In.end());
  return Phi;
}

// A two-way join whose sides are the two arms of one conditional branch is a select on the
// branch condition. The arms must not reach each other (ignoring back edges), or a thread that
// took one arm could arrive through the other.
const Expr *ValueBuilder::gatedValue(BlockId B,
                                     llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming) {
  if (Incoming.size() != 2)
    return nullptr;
  BlockId D = Dom.idom(B);
  if (D == NoIndex || G.block(D).Terminator != TerminatorKind::CondBranch)
    return nullptr;
  LoopId DL = Loops.loopFor(D);
  if (DL != NoIndex && !Loops.loop(DL).contains(B))
    return nullptr;
  BlockId T = G.block(D).Succs[0], F = G.block(D).Succs[1];
  if (T != B && F != B && (forwardReaches(T, F) || forwardReaches(F, T)))
    return nullptr;
  auto Side = [&](BlockId P) -> int {
    if (P == D)
      return T == B ? 1 : F == B ? 0 : -1;
    if (T != B && Dom.dominates(T, P))
      return 1;
    if (F != B && Dom.dominates(F, P))
      return 0;
    return -1;
  };
  int S0 = Side(Incoming[0].first), S1 = Side(Incoming[1].first);
  if (S0 < 0 || S1 < 0 || S0 == S1)
    return nullptr;
  const Expr *WhenTaken = S0 == 1 ? Incoming[0].second : Incoming[1].second;
  const Expr *Otherwise = S0 == 1 ? Incoming[1].second : Incoming[0].second;
  const Expr *Cond = edgeCondition(D, T);
  if (!Cond)
    return nullptr;

  // A branch around a loop that runs zero times exactly when it is skipped: the value after
  // the loop, a closed form at the trip count, is also right on the skipping path (the closed
  // form at zero iterations is the start value).
  for (int Skip = 0; Skip < 2; ++Skip) {
    const Expr *SkipValue = Skip ? WhenTaken : Otherwise;
    const Expr *LoopValue = Skip ? Otherwise : WhenTaken;
    auto It = ExitForms.find(LoopValue);
    if (It == ExitForms.end())
      continue;
    const LoopSummary &Sum = Summaries[It->second.first];
    const InductionVar &IV = Sum.Inductions[It->second.second];
    if (IV.Start != SkipValue || !Sum.Trip.isCounted())
      continue;
    const Expr *SkipCond = Skip ? Cond : Ctx.bitNot(Cond);
    const Expr *Zero = Ctx.eq(Sum.Trip.HeaderRuns, Ctx.constant(0, Sum.Trip.HeaderRuns->width()));
    if (implies({SkipCond}, Zero))
      return LoopValue;
  }
  return Ctx.select(Cond, WhenTaken, Otherwise);
}

// Edges into a join that more than one branch split apart (a loop skipped when K / 64 is 0, a
// peeled last iteration when it is odd): the branch at the nearest common dominator of their
// sources splits them into the edges below each arm, and each side is a join of its own. As
// for two edges, the arms must not reach each other and each source must lie below one arm,
// so that the branch alone decides which value arrives.
const Expr *
ValueBuilder::gatedMultiway(BlockId B,
                            llvm::ArrayRef<std::pair<BlockId, const Expr *>> Incoming) {
  if (Incoming.empty())
    return nullptr;
  if (llvm::all_of(Incoming, [&](const auto &P) { return P.second == Incoming[0].second; }))
    return Incoming[0].second;
  BlockId D = Incoming[0].first;
  for (const auto &P : Incoming) {
    D = Dom.nearestCommonDominator(D, P.first);
    if (D == NoIndex)
      return nullptr;
  }
  if (G.block(D).Terminator != TerminatorKind::CondBranch)
    return nullptr;
  LoopId DL = Loops.loopFor(D);
  if (DL != NoIndex && !Loops.loop(DL).contains(B))
    return nullptr;
  BlockId T = G.block(D).Succs[0], F = G.block(D).Succs[1];
  if (T != B && F != B && (forwardReaches(T, F) || forwardReaches(F, T)))
    return nullptr;
  llvm::SmallVector<std::pair<BlockId, const Expr *>, 4> Taken, NotTaken;
  for (const auto &P : Incoming) {
    if (P.first == D) {
      if (T == B)
        Taken.push_back(P);
      else if (F == B)
        NotTaken.push_back(P);
      else
        return nullptr;
    } else if (T != B && Dom.dominates(T, P.first)) {
      Taken.push_back(P);
    } else if (F != B && Dom.dominates(F, P.first)) {
      NotTaken.push_back(P);
    } else {
      return nullptr;
    }
  }
  if (Taken.empty() || NotTaken.empty())
    return nullptr;
  const Expr *WhenTaken = gatedMultiway(B, Taken);
  const Expr *Otherwise = WhenTaken ? gatedMultiway(B, NotTaken) : nullptr;
  const Expr *Cond = Otherwise ? edgeCondition(D, T) : nullptr;
  if (!Cond)
    return nullptr;
  return Ctx.select(Cond, WhenTaken, Otherwise);
}

const Expr *ValueBuilder::edgeCondition(BlockId From, BlockId To) {
  const BasicBlock &BB = G.block(From);
  InstId T = BB.empty() ? NoIndex : BB.End - 1;
  const Expr *Guard = T == NoIndex ? nullptr : Guards[T];
  switch (BB.Terminator) {
  case TerminatorKind::CondBranch:
    if (!Guard)
      return nullptr;
    return To == BB.Succs[0] ? Guard : Ctx.bitNot(Guard);
  case TerminatorKind::CondExit:
    return Guard ? Ctx.bitNot(Guard) : nullptr;
  case TerminatorKind::Switch: {
    const Expr *Index = OperandValues[OperandStart[T]];
    if (!Index)
      return nullptr;
    const Expr *Cond = Ctx.boolean(false);
    for (unsigned K = 0; K < BB.SwitchTargets.size(); ++K)
      if (BB.SwitchTargets[K] == To)
        Cond = Ctx.bitOr(Cond, Ctx.eq(Index, Ctx.constant(K, Index->width())));
    if (Guard) {
      bool ToFallThrough = BB.Succs.back() == To && !llvm::is_contained(BB.SwitchTargets, To);
      return ToFallThrough ? Ctx.bitNot(Guard) : Ctx.bitAnd(Guard, Cond);
    }
    return Cond;
  }
  default:
    return Ctx.boolean(true);
  }
}

//===- ValueAnalysis ---------------------------------------------------------------------===//

ValueAnalysis::ValueAnalysis(const Cfg &G, const DominatorTree &Dom, const LoopInfo &Loops,
                             ExprContext &Ctx, Solver *S)
    : G(G), Loops(Loops), Ctx(Ctx) {
  Impl = std::make_unique<ValueBuilder>(*this, Dom, S);
  Impl->run();
}

ValueAnalysis::~ValueAnalysis() = default;

unsigned ValueAnalysis::numElements(InstId I, unsigned Op) const {
  return Impl->elementsOf(G.inst(I).I->operands()[Op]);
}

const Expr *ValueAnalysis::operand(InstId I, unsigned Op, unsigned Element) const {
  ptx::OperandRange Ops = G.inst(I).I->operands();
  if (Op >= Ops.size())
    return nullptr;
  unsigned Index = Impl->OperandStart[I];
  for (unsigned K = 0; K < Op; ++K)
    Index += Impl->elementsOf(Ops[K]);
  if (Element >= Impl->elementsOf(Ops[Op]))
    return nullptr;
  return Impl->OperandValues[Index + Element];
}

bool ValueAnalysis::isDestination(InstId I, unsigned Op) const {
  return Op == 0 && ValueBuilder::hasDestination(*G.inst(I).I);
}

const Expr *ValueAnalysis::guard(InstId I) const { return Impl->Guards[I]; }

std::optional<RegId> ValueAnalysis::registerAt(InstId I, StringRef Name) const {
  return Impl->lookupRegister(I, Name);
}

StringRef ValueAnalysis::registerName(RegId R) const { return Impl->Regs[R].Name; }
unsigned ValueAnalysis::numRegisters() const { return Impl->Regs.size(); }

const Expr *ValueAnalysis::valueBefore(InstId I, RegId R) const {
  BlockId B = G.inst(I).Block;
  if (!Impl->Done[B])
    return nullptr;
  State S = Impl->In[B];
  Impl->Recording = false;
  for (InstId K = G.block(B).Begin; K < I; ++K)
    Impl->transfer(K, S);
  Impl->Recording = true;
  const Expr *V = ValueBuilder::get(S, R);
  return V ? V : Impl->undefined(R);
}

const Expr *ValueAnalysis::valueAtEnd(BlockId B, RegId R) const {
  if (!Impl->Done[B])
    return nullptr;
  const Expr *V = ValueBuilder::get(Impl->Out[B], R);
  return V ? V : Impl->undefined(R);
}

const Expr *ValueAnalysis::edgeCondition(BlockId From, BlockId To) const {
  if (!Impl->Done[From])
    return nullptr;
  return Impl->edgeCondition(From, To);
}

const PhiInfo *ValueAnalysis::phiInfo(const Expr *Phi) const {
  auto It = Impl->Phis.find(Phi);
  return It == Impl->Phis.end() ? nullptr : &It->second;
}

const LoopSummary &ValueAnalysis::loopSummary(LoopId L) const { return Impl->Summaries[L]; }

const Expr *ValueAnalysis::closedForm(const Expr *E) const { return Impl->closedForm(E); }

bool ValueAnalysis::isLoopInvariant(const Expr *E, LoopId L) const {
  return Impl->isInvariant(E, L);
}

BlockId ValueAnalysis::leafBlock(const Expr *Leaf) const { return Impl->leafBlock(Leaf); }

bool ValueAnalysis::isDeadBlock(BlockId B) const {
  if (Impl->Infeasible.empty())
    return false;
  if (Impl->Dead.empty()) {
    // In reverse post-order every predecessor but a back edge's comes first; a block inside a
    // loop keeps its way in through the header, which is not dead.
    Impl->Dead.assign(G.size(), false);
    for (BlockId X : G.reversePostOrder()) {
      if (X == G.entry())
        continue;
      bool Dead = true;
      for (BlockId P : G.block(X).Preds)
        Dead &= !G.block(P).Reachable || Impl->Dead[P] || Impl->Infeasible.count({P, X});
      Impl->Dead[X] = Dead && !G.block(X).Preds.empty();
    }
  }
  return Impl->Dead[B];
}

void ValueAnalysis::print(llvm::raw_ostream &OS) const {
  for (const LoopSummary &Sum : Impl->Summaries) {
    const Loop &L = Loops.loop(Sum.Loop);
    ptx::SourceLocation Loc = G.block(L.Header).empty()
                                  ? ptx::SourceLocation()
                                  : G.location(G.block(L.Header).Begin);
    OS << "loop " << Sum.Loop << " (bb" << L.Header << ", line " << Loc.Line << "): ";
    switch (Sum.Trip.K) {
    case TripCount::Kind::Counted:
      OS << "runs " << *Sum.Trip.Iterations << " times";
      for (const TripCondition &C : Sum.Trip.Conditions)
        OS << (C.Discharged ? ", given (established) " : ", if ") << *C.Condition;
      break;
    case TripCount::Kind::SpinWait:
      OS << "spin wait on " << *Sum.Spin->Barrier;
      if (Sum.Spin->Parity)
        OS << " parity " << *Sum.Spin->Parity;
      break;
    case TripCount::Kind::Unknown:
      OS << "trip count unknown: " << Sum.Trip.Reason;
      break;
    }
    OS << "\n";
    for (const InductionVar &IV : Sum.Inductions) {
      OS << "  " << Impl->Regs[IV.Register].Name << ": " << toString(IV.Kind) << ", "
         << *IV.ClosedForm;
      for (const Expr *C : IV.Conditions)
        OS << " if " << *C;
      OS << "\n";
    }
  }
}
