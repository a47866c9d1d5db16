//===- ProtocolSequence.cpp - each role's events, in its loops, with conditions ---===//
//
// Step 4 of the protocol builder. Events are already in an order where a loop is one run
// (ProtocolEvents.cpp), so a role's sequence is its events in that order with a loop node
// opened where an event's chain of counted loops goes deeper and closed where it leaves.
// Conditions are written relative to where an item sits: a role keeps what all its work
// shares (a CTA rank), a loop what its header needs beyond its parent (K >= 64), an event
// what it needs beyond its loop (`k != 0`, `K / 64 % 2 == 1`).
//
//===----------------------------------------------------------------------------------===//
#include "ProtocolBuild.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

using ConjunctSet = llvm::SmallVector<const Expr *, 4>;

class Sequencer {
public:
  explicit Sequencer(BuildState &S) : S(S) {}
  void run();

private:
  std::vector<ProtocolItem> build(llvm::ArrayRef<unsigned> Events);
  ConjunctSet loopConjuncts(LoopId L);
  /// Whether Cond (`c <= %nctaid.x`) holds for every launch of the protocol's cluster.
  bool impliedByCluster(const Expr *Cond) const;
  ConjunctSet itemConjuncts(const ProtocolItem &I);
  ProtocolValue relative(const ConjunctSet &Own, const ConjunctSet &Context);
  void setConditions(std::vector<ProtocolItem> &Items, const ConjunctSet &Context);
  void nameLoops();

  BuildState &S;
  llvm::DenseMap<LoopId, ConjunctSet> LoopConds;
};

bool Sequencer::impliedByCluster(const Expr *Cond) const {
  // CUDA launches only whole clusters: %nctaid.x is at least the cluster's x extent
  // (LaunchShape::gridFacts). The value analysis knows it from `.reqnctapercluster`; a
  // cluster from the launch description reaches only the protocol, hence this check.
  if (S.P.Launch.ClusterX <= 1 || !Cond->is(ExprKind::ULe) || !Cond->op(0)->isConstant())
    return false;
  const Expr *N = Cond->op(1);
  return N->is(ExprKind::SpecialReg) && N->specialRegister() == SpecialRegister::NctaidX &&
         Cond->op(0)->payload() <= S.P.Launch.ClusterX;
}

std::vector<ProtocolItem> Sequencer::build(llvm::ArrayRef<unsigned> Events) {
  std::vector<ProtocolItem> Top;
  // Open loops: (PTX loop, protocol loop index).
  std::vector<std::pair<LoopId, unsigned>> Open;
  auto Body = [&]() -> std::vector<ProtocolItem> & {
    return Open.empty() ? Top : S.P.Loops[Open.back().second].Body;
  };
  for (unsigned E : Events) {
    std::vector<LoopId> Chain;
    for (LoopId L = S.Info[E].Loop; L != NoIndex;) {
      Chain.push_back(L);
      LoopId P = S.FA.loops().loop(L).Parent;
      while (P != NoIndex && S.SpinLoop[P])
        P = S.FA.loops().loop(P).Parent;
      L = P;
    }
    std::reverse(Chain.begin(), Chain.end());
    unsigned Common = 0;
    while (Common < Open.size() && Common < Chain.size() && Open[Common].first == Chain[Common])
      ++Common;
    Open.resize(Common);
    for (unsigned D = Common; D < Chain.size(); ++D) {
      LoopId L = Chain[D];
      ProtocolLoop PL;
      PL.Loop = L;
      const TripCount &T = S.values().loopSummary(L).Trip;
      if (T.isCounted()) {
        PL.Trip = ProtocolValue::of(S.values().closedForm(T.Iterations));
        for (const TripCondition &C : T.Conditions) {
          const Expr *Cond = S.values().closedForm(C.Condition);
          PL.TripConditions.push_back({Cond, C.Discharged || impliedByCluster(Cond)});
        }
        if (T.Forever)
          PL.Forever = S.values().closedForm(T.Forever);
      } else {
        PL.Trip = ProtocolValue::unknown(T.Reason.empty() ? "the loop's trip count is not known"
                                                          : T.Reason);
      }
      // The header's first instruction; a header that is only a label (B5's writeback
      // loop) gives the first instruction of the loop's blocks instead, not line 0.
      for (BlockId B : S.FA.loops().loop(L).Blocks)
        if (const BasicBlock &Block = S.cfg().block(B); !Block.empty()) {
          PL.Where = S.sourceOf(Block.Begin);
          break;
        }
      unsigned Index = S.P.Loops.size();
      S.P.Loops.push_back(std::move(PL));
      Body().push_back(ProtocolItem::loop(Index));
      Open.push_back({L, Index});
    }
    Body().push_back(ProtocolItem::event(E));
  }
  return Top;
}

ConjunctSet Sequencer::loopConjuncts(LoopId L) {
  auto It = LoopConds.find(L);
  if (It != LoopConds.end())
    return It->second;
  ConjunctSet Out;
  const Expr *C = S.FA.guards().blockCondition(S.FA.loops().loop(L).Header);
  llvm::SmallVector<const Expr *, 8> Parts;
  conjuncts(C ? S.values().closedForm(C) : nullptr, Parts);
  // The header's condition holds in iteration 0; what mentions the loop's own counter is the
  // latch's business, not a condition for entering.
  const Expr *Own = S.ctx().iterationVar(L);
  for (const Expr *P : Parts)
    if (!isThreadDependent(P) && !P->mentions([&](const Expr *X) { return X == Own; }))
      Out.push_back(P);
  LoopConds[L] = Out;
  return Out;
}

ConjunctSet Sequencer::itemConjuncts(const ProtocolItem &I) {
  if (I.isEvent())
    return ConjunctSet(S.Info[I.Index].Uniform.begin(), S.Info[I.Index].Uniform.end());
  return loopConjuncts(S.P.Loops[I.Index].Loop);
}

ProtocolValue Sequencer::relative(const ConjunctSet &Own, const ConjunctSet &Context) {
  const Expr *Result = nullptr;
  for (const Expr *C : Own)
    if (!llvm::is_contained(Context, C))
      Result = Result ? S.ctx().logicalAnd(Result, C) : C;
  return Result ? ProtocolValue::of(Result) : ProtocolValue();
}

void Sequencer::setConditions(std::vector<ProtocolItem> &Items, const ConjunctSet &Context) {
  for (ProtocolItem &I : Items) {
    ConjunctSet Own = itemConjuncts(I);
    if (I.isEvent()) {
      S.P.Events[I.Index].When = relative(Own, Context);
      continue;
    }
    ProtocolLoop &L = S.P.Loops[I.Index];
    L.When = relative(Own, Context);
    // Inside, the loop's own entry condition and everything around it hold.
    ConjunctSet Inner = Context;
    for (const Expr *C : Own)
      if (!llvm::is_contained(Inner, C))
        Inner.push_back(C);
    std::vector<ProtocolItem> Body = std::move(L.Body);
    setConditions(Body, Inner);
    S.P.Loops[I.Index].Body = std::move(Body);
  }
}

/// `k` for a loop over K, `t` for a loop around another counted loop (persistent tiles),
/// else i, j, l by depth; never the name of a loop around it.
void Sequencer::nameLoops() {
  const LoopInfo &Loops = S.FA.loops();
  S.P.LoopVars.assign(Loops.size(), "");
  auto MentionsK = [&](const ProtocolValue &V) {
    return V.known() && V.E->mentions([&](const Expr *L) {
      if (!L->is(ExprKind::Param))
        return false;
      for (unsigned K = 0; K < S.P.ParamSymbols.size(); ++K)
        if (S.P.ParamSymbols[K] == L->name())
          return S.P.ParamNames[K] == "K";
      return false;
    });
  };
  std::vector<bool> HasCountedChild(Loops.size(), false);
  for (const Loop &L : Loops.loops())
    if (!S.SpinLoop[L.Index])
      for (LoopId P = L.Parent; P != NoIndex; P = Loops.loop(P).Parent)
        if (!S.SpinLoop[P]) {
          HasCountedChild[P] = true;
          break;
        }
  std::vector<ProtocolValue> Trips(Loops.size());
  for (const ProtocolLoop &PL : S.P.Loops)
    Trips[PL.Loop] = PL.Trip;
  for (const Loop &L : Loops.loops()) { // parents come before children
    if (S.SpinLoop[L.Index])
      continue;
    std::vector<std::string> Taken;
    unsigned Depth = 0;
    for (LoopId P = L.Parent; P != NoIndex; P = Loops.loop(P).Parent)
      if (!S.SpinLoop[P]) {
        Taken.push_back(S.P.LoopVars[P]);
        ++Depth;
      }
    auto Free = [&](const std::string &N) { return !llvm::is_contained(Taken, N); };
    std::string Name;
    if (MentionsK(Trips[L.Index]) && Free("k"))
      Name = "k";
    else if (HasCountedChild[L.Index] && Free("t"))
      Name = "t";
    else
      for (const char *N : {"i", "j", "l", "m", "n"})
        if (Free(N)) {
          Name = N;
          break;
        }
    if (Name.empty())
      Name = "i" + std::to_string(L.Index);
    (void)Depth;
    S.P.LoopVars[L.Index] = Name;
  }
}

void Sequencer::run() {
  std::vector<unsigned> Prologue, Epilogue;
  std::vector<std::vector<unsigned>> PerRole(S.P.Roles.size());
  for (unsigned E = 0; E < S.P.Events.size(); ++E) {
    const EventInfo &I = S.Info[E];
    if (I.Where == EventInfo::Phase::Prologue)
      Prologue.push_back(E);
    else if (I.Where == EventInfo::Phase::Epilogue)
      Epilogue.push_back(E);
    else
      for (unsigned R : I.Roles)
        PerRole[R].push_back(E);
  }
  S.P.Prologue = build(Prologue);
  setConditions(S.P.Prologue, {});
  for (unsigned R = 0; R < S.P.Roles.size(); ++R) {
    std::vector<ProtocolItem> Body = build(PerRole[R]);
    // What every top-level item of the role needs is the role's condition.
    ConjunctSet Shared;
    for (unsigned K = 0; K < Body.size(); ++K) {
      ConjunctSet Own = itemConjuncts(Body[K]);
      if (K == 0)
        Shared = Own;
      else
        llvm::erase_if(Shared, [&](const Expr *C) { return !llvm::is_contained(Own, C); });
    }
    // A role that shares all its work with others has no condition of its own.
    if (Body.size() > 0)
      S.P.Roles[R].When = relative(Shared, {});
    setConditions(Body, Shared);
    S.P.Roles[R].Body = std::move(Body);
  }
  S.P.Epilogue = build(Epilogue);
  setConditions(S.P.Epilogue, {});
  nameLoops();
}

} // namespace

void wsv::analyzer::layOutSequences(BuildState &S) { Sequencer(S).run(); }
