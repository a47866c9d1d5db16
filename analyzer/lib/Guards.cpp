//===- Guards.cpp - reach conditions and their thread sets ------------------------===//
#include "wsv/analyzer/Guards.h"

#include "wsv/analyzer/Solver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;

GuardAnalysis::GuardAnalysis(const ValueAnalysis &Values, const DominatorTree &Dom,
                             const DominatorTree &PostDom, Solver *S)
    : Values(Values), G(Values.cfg()), Dom(Dom), PostDom(PostDom), Loops(Values.loops()),
      Ctx(Values.context()), S(S) {}

// Whether every path from D that can still end normally (not in a trap or a hang report, the
// way an instrumented wait's timeout leaves) passes through B: then a thread that reaches D
// reaches B unless it traps, and B has D's condition.
bool GuardAnalysis::postDominatesUnlessTrapped(BlockId B, BlockId D) const {
  if (G.block(B).NeverReturns || Values.isDeadBlock(B))
    return false;
  std::vector<bool> Seen(G.size(), false);
  llvm::SmallVector<BlockId, 16> Work{D};
  Seen[D] = true;
  while (!Work.empty()) {
    BlockId X = Work.pop_back_val();
    const BasicBlock &BB = G.block(X);
    if (BB.exits() && !BB.NeverReturns)
      return false;
    // Blocks no thread reaches (Values.isDeadBlock) are no way around B either.
    for (BlockId Succ : BB.Succs)
      if (Succ != B && !Seen[Succ] && !G.block(Succ).NeverReturns &&
          !Values.isDeadBlock(Succ)) {
        Seen[Succ] = true;
        Work.push_back(Succ);
      }
  }
  return true;
}

bool GuardAnalysis::staysInCountedLoop(BlockId P, BlockId B) const {
  LoopId L = Loops.loopFor(P);
  if (L == NoIndex || !Loops.loop(L).contains(B))
    return false;
  const TripCount &Trip = Values.loopSummary(L).Trip;
  if (!Trip.isCounted() || Trip.ExitingBlock != P || !Trip.ExitTestInHeader || Trip.Forever)
    return false;
  return liveExits(L) == 1;
}

unsigned GuardAnalysis::liveExits(LoopId L) const {
  unsigned WaysOut = 0;
  for (BlockId X : Loops.loop(L).exitBlocks())
    WaysOut += !G.block(X).NeverReturns && !Values.isDeadBlock(X);
  return WaysOut;
}

void GuardAnalysis::computeConditions() {
  Computed = true;
  Conditions.assign(G.size(), nullptr);
  for (BlockId B : G.reversePostOrder()) {
    if (B == G.entry()) {
      Conditions[B] = Ctx.boolean(true);
      continue;
    }
    if (Values.isDeadBlock(B)) {
      Conditions[B] = Ctx.boolean(false);
      continue;
    }
    // Every thread that reaches the dominator reaches B when B post-dominates it in the same
    // loop (loops are left, so post-dominance across an iteration holds too).
    BlockId D = Dom.idom(B);
    if (D != NoIndex && Conditions[D] &&
        (PostDom.dominates(B, D) || postDominatesUnlessTrapped(B, D)) &&
        Loops.loopFor(B) == Loops.loopFor(D)) {
      Conditions[B] = Conditions[D];
      continue;
    }
    const Expr *Cond = Ctx.boolean(false);
    for (BlockId P : G.block(B).Preds) {
      if (!G.block(P).Reachable || Loops.isBackEdge(P, B))
        continue;
      // Leaving loops: the outermost loop left on this edge counts as one step.
      LoopId Left = NoIndex;
      for (LoopId L = Loops.loopFor(P); L != NoIndex; L = Loops.loop(L).Parent)
        if (!Loops.loop(L).contains(B))
          Left = L;
      const Expr *Contribution;
      if (Left != NoIndex) {
        const Loop &Lp = Loops.loop(Left);
        const Expr *Entered = Conditions[Lp.Header];
        if (!Entered)
          Entered = Ctx.opaque("reached through irreducible control flow", &G.block(B), P, 1);
        if (liveExits(Left) <= 1) {
          Contribution = Entered;
        } else {
          // Which of several exits a thread takes depends on the iterations it ran.
          std::string Why = "leaves the loop at line " +
                            std::to_string(G.block(Lp.Header).empty()
                                               ? 0
                                               : G.location(G.block(Lp.Header).Begin).Line) +
                            " towards block " + std::to_string(B);
          Contribution =
              Ctx.bitAnd(Entered, Ctx.opaque(Ctx.save(Why), &G.block(Lp.Header), B, 1));
        }
      } else if (!Conditions[P]) {
        Contribution = Ctx.opaque("reached through irreducible control flow", &G.block(B), P, 1);
      } else if (staysInCountedLoop(P, B)) {
        // The loop's own test, passed in every iteration its count runs (a while loop's
        // test at its top: nvcc -G's tile loop repeated `%ctaid.x + %nctaid.x * t < tiles`
        // in every step of its body, which the argument for every launch took for a second
        // way the launch reaches them).
        Contribution = Conditions[P];
      } else {
        const Expr *Edge = Values.edgeCondition(P, B);
        if (!Edge)
          Edge = Ctx.opaque("branch condition unknown", &G.block(P), B, 1);
        Contribution = Ctx.bitAnd(Conditions[P], Edge);
      }
      Cond = Ctx.bitOr(Cond, Contribution);
    }
    Conditions[B] = Cond;
  }
}

const Expr *GuardAnalysis::blockCondition(BlockId B) {
  if (!Computed)
    computeConditions();
  return Conditions[B];
}

const Expr *GuardAnalysis::instructionCondition(InstId I) {
  const Expr *C = blockCondition(G.inst(I).Block);
  if (!C)
    return nullptr;
  if (const Expr *Guard = Values.guard(I))
    C = Ctx.bitAnd(C, Guard);
  return C;
}

const Expr *GuardAnalysis::threadCondition(InstId I,
                                           llvm::SmallVectorImpl<const Expr *> *Uniform) {
  const Expr *Cond = instructionCondition(I);
  llvm::SmallVector<const Expr *, 8> Parts;
  conjuncts(Cond ? Values.closedForm(Cond) : Ctx.boolean(false), Parts);
  const Expr *Threads = Ctx.boolean(true);
  for (const Expr *C : Parts) {
    if (isThreadDependent(C))
      Threads = Ctx.logicalAnd(Threads, C);
    else if (Uniform)
      Uniform->push_back(C);
  }
  return Threads;
}

//===- Thread sets -----------------------------------------------------------------------===//

namespace {
bool isThreadLeaf(const Expr *E) {
  return E->is(ExprKind::SpecialReg) && !isCtaUniform(E->specialRegister());
}

// Maximal subexpressions that depend on the thread id and on nothing else: evaluated per
// thread, they reduce the predicate to a residual over the other leaves.
void collectThreadTerms(const Expr *E, llvm::SmallPtrSetImpl<const Expr *> &Seen,
                        llvm::SmallVectorImpl<const Expr *> &Out) {
  if (!Seen.insert(E).second || E->isConstant())
    return;
  bool Thread = false, Other = false;
  E->mentions([&](const Expr *L) {
    if (isThreadLeaf(L))
      Thread = true;
    else if (!L->isConstant())
      Other = true;
    return false;
  });
  if (!Thread)
    return;
  if (!Other) {
    Out.push_back(E);
    return;
  }
  // A load's address may depend on the thread (each warp reads its own role byte): its
  // thread part is substituted too, so each thread's residual names the load it does.
  if (E->isLeaf() && !E->is(ExprKind::Load))
    return;
  for (const Expr *Op : E->ops())
    collectThreadTerms(Op, Seen, Out);
}
/// A thread-only subexpression flattened for evaluation at every thread id: nodes in
/// operand-before-use order, each reading earlier slots. A CTA has up to 1024 threads and a
/// guard a handful of such terms; this avoids a hash map per evaluation.
class ThreadProgram {
public:
  explicit ThreadProgram(const Expr *Root) { add(Root); }

  /// Runs with the thread's coordinates; std::nullopt for an unspecified result.
  std::optional<uint64_t> run(uint64_t X, uint64_t Y, uint64_t Z, uint64_t Lane) {
    Values.resize(Nodes.size());
    for (unsigned K = 0; K < Nodes.size(); ++K) {
      const Step &St = Nodes[K];
      const Expr *N = St.Node;
      if (N->isConstant()) {
        Values[K] = N->payload();
        continue;
      }
      if (N->is(ExprKind::SpecialReg)) {
        switch (N->specialRegister()) {
        case SpecialRegister::TidX: Values[K] = X; break;
        case SpecialRegister::TidY: Values[K] = Y; break;
        case SpecialRegister::TidZ: Values[K] = Z; break;
        default: Values[K] = Lane; break;
        }
        continue;
      }
      uint64_t Operands[3];
      for (unsigned O = 0; O < St.NumOps; ++O)
        Operands[O] = Values[St.Ops[O]];
      std::optional<uint64_t> V = ExprContext::apply(N, llvm::ArrayRef<uint64_t>(Operands, St.NumOps));
      if (!V)
        return std::nullopt;
      Values[K] = *V;
    }
    return Values.back();
  }

private:
  struct Step {
    const Expr *Node;
    unsigned Ops[3];
    unsigned NumOps;
  };
  unsigned add(const Expr *E) {
    auto It = Slot.find(E);
    if (It != Slot.end())
      return It->second;
    Step St{E, {0, 0, 0}, 0};
    if (!E->isLeaf())
      for (const Expr *Op : E->ops())
        St.Ops[St.NumOps++] = add(Op);
    Nodes.push_back(St);
    return Slot[E] = Nodes.size() - 1;
  }
  std::vector<Step> Nodes;
  std::vector<uint64_t> Values;
  llvm::DenseMap<const Expr *, unsigned> Slot;
};
} // namespace

ThreadSet GuardAnalysis::threadSet(const Expr *Predicate, const LaunchShape &Launch) {
  if (!Predicate)
    return ThreadSet::unknown("the instruction is unreachable");
  auto Key = std::make_tuple(Predicate, Launch.BlockX, Launch.BlockY, Launch.BlockZ,
                             Launch.ClusterSize, Launch.ClusterX);
  auto It = Sets.find(Key);
  if (It != Sets.end())
    return It->second;
  ThreadSet S = evaluate(Predicate, Launch, 0);
  Sets.emplace(Key, S);
  return S;
}

ThreadSet GuardAnalysis::evaluate(const Expr *Predicate, const LaunchShape &Launch,
                                  unsigned Depth) {
  const unsigned N = Launch.threads();
  if (N == 0 || N > 1024)
    return ThreadSet::unknown("no block size: the function states no .reqntid or .maxntid "
                              "and no launch shape was given");
  if (Predicate->mentions([](const Expr *L) {
        return L->is(ExprKind::SpecialReg) && L->specialRegister() == SpecialRegister::WarpId;
      }))
    return ThreadSet::unknown("the guard reads %warpid, which is not stable (a warp can "
                              "move); roles must come from %tid");

  // CTA-wide values the launch fixes.
  const Expr *Pred = Ctx.rewrite(Predicate, [&](const Expr *E) -> const Expr * {
    if (!E->is(ExprKind::SpecialReg))
      return nullptr;
    switch (E->specialRegister()) {
    case SpecialRegister::NtidX: return Ctx.constant(Launch.BlockX, 32);
    case SpecialRegister::NtidY: return Ctx.constant(Launch.BlockY, 32);
    case SpecialRegister::NtidZ: return Ctx.constant(Launch.BlockZ, 32);
    case SpecialRegister::ClusterNctaRank: return Ctx.constant(Launch.ClusterSize, 32);
    case SpecialRegister::ClusterCtaRank:
      return Launch.ClusterSize == 1 ? Ctx.constant(0, 32) : nullptr;
    default: return nullptr;
    }
  });

  llvm::SmallPtrSet<const Expr *, 16> Seen;
  llvm::SmallVector<const Expr *, 8> Terms;
  collectThreadTerms(Pred, Seen, Terms);

  std::vector<ThreadProgram> Programs;
  for (const Expr *Term : Terms)
    Programs.emplace_back(Term);
  ThreadSet Result(N);
  std::map<std::vector<uint64_t>, const Expr *> Residuals;
  llvm::DenseMap<const Expr *, llvm::BitVector> Groups; // residual -> threads
  llvm::SmallVector<const Expr *, 4> GroupOrder;
  for (unsigned T = 0; T < N; ++T) {
    const uint64_t X = T % Launch.BlockX, Y = (T / Launch.BlockX) % Launch.BlockY,
                   Z = T / (Launch.BlockX * Launch.BlockY);
    std::vector<uint64_t> Key;
    Key.reserve(Terms.size());
    for (ThreadProgram &P : Programs)
      Key.push_back(P.run(X, Y, Z, T % WarpSize).value_or(~0ull));
    auto [It, Inserted] = Residuals.try_emplace(Key, nullptr);
    if (Inserted) {
      llvm::DenseMap<const Expr *, const Expr *> Values;
      for (unsigned K = 0; K < Terms.size(); ++K)
        Values[Terms[K]] = Ctx.constant(Key[K], Terms[K]->width());
      It->second = Ctx.rewrite(Pred, [&](const Expr *E) -> const Expr * {
        auto V = Values.find(E);
        return V == Values.end() ? nullptr : V->second;
      });
    }
    const Expr *R = It->second;
    if (R->isTrue()) {
      Result.Members.set(T);
    } else if (!R->isFalse()) {
      auto [G, New] = Groups.try_emplace(R, llvm::BitVector(N));
      if (New)
        GroupOrder.push_back(R);
      G->second.set(T);
    }
  }

  for (const Expr *R : GroupOrder) {
    const llvm::BitVector &Threads = Groups[R];
    // An elected lane, possibly under a condition on CTA-uniform values.
    llvm::SmallVector<const Expr *, 4> Conjuncts, Rest;
    llvm::SmallVector<const Expr *, 4> Work{R};
    while (!Work.empty()) {
      const Expr *C = Work.pop_back_val();
      if (C->is(ExprKind::And) && C->width() == 1) {
        Work.push_back(C->op(0));
        Work.push_back(C->op(1));
      } else {
        Conjuncts.push_back(C);
      }
    }
    const Expr *ElectPart = nullptr;
    unsigned ElectParts = 0;
    for (const Expr *C : Conjuncts) {
      if (C->mentions([](const Expr *L) { return L->is(ExprKind::Elect); })) {
        ElectPart = C;
        ++ElectParts;
      } else {
        Rest.push_back(C);
      }
    }
    const Expr *Atom = !ElectPart ? nullptr
                       : ElectPart->is(ExprKind::Not) ? ElectPart->op(0) : ElectPart;
    const Expr *ElectCondition = nullptr;
    if (ElectParts == 1 && Atom->is(ExprKind::Elect) && !Rest.empty()) {
      ElectCondition = Ctx.boolean(true);
      for (const Expr *C : Rest)
        ElectCondition = Ctx.bitAnd(ElectCondition, C);
      if (S && S->isValid(ElectCondition).Answer == SolverAnswer::Yes)
        ElectCondition = nullptr;
      else if (ElectPart->is(ExprKind::Not))
        return ThreadSet::unknown("the guard excludes the elected lane only under a condition");
    }
    if (ElectParts == 1 && Atom->is(ExprKind::Elect)) {
      // The threads that execute the elect.sync, within its member mask.
      if (Depth > 4)
        return ThreadSet::unknown("elect.sync results nested too deeply");
      const CfgInst *Site = static_cast<const CfgInst *>(Atom->site());
      InstId SiteId = static_cast<InstId>(Site - G.instructions().data());
      const Expr *SiteCondition = instructionCondition(SiteId);
      // A condition on CTA-uniform values (a loop counter, K) holds for every thread of the
      // CTA or for none; when for none, nothing the election guards runs either. The
      // candidates are the threads the thread-dependent part selects.
      if (SiteCondition) {
        llvm::SmallVector<const Expr *, 8> Parts{SiteCondition}, Kept;
        while (!Parts.empty()) {
          const Expr *C = Parts.pop_back_val();
          if (C->is(ExprKind::And) && C->width() == 1) {
            Parts.push_back(C->op(0));
            Parts.push_back(C->op(1));
          } else if (isThreadDependent(C)) {
            Kept.push_back(C);
          }
        }
        SiteCondition = Ctx.boolean(true);
        for (const Expr *C : Kept)
          SiteCondition = Ctx.bitAnd(SiteCondition, C);
      }
      ThreadSet Reach = SiteCondition ? evaluate(SiteCondition, Launch, Depth + 1)
                                      : ThreadSet::unknown("unreachable");
      if (!Reach.isExact() || !Reach.elected().empty())
        return ThreadSet::unknown("the threads that reach the elect.sync at line " +
                                  std::to_string(G.location(SiteId).Line) +
                                  " are not known exactly");
      llvm::BitVector Candidates = Reach.members();
      if (Atom->op(0)->isConstant())
        for (unsigned T = 0; T < N; ++T)
          if (!((Atom->op(0)->payload() >> (T % WarpSize)) & 1))
            Candidates.reset(T);
      ThreadSet::ElectedGroup Group;
      Group.Atom = Atom;
      Group.Candidates = llvm::BitVector(N);
      Group.Excluded = ElectPart->is(ExprKind::Not);
      Group.Condition = ElectCondition;
      for (unsigned W = 0; W * WarpSize < N; ++W) {
        unsigned Hit = 0, Cand = 0;
        for (unsigned T = W * WarpSize; T < std::min(N, (W + 1) * WarpSize); ++T) {
          Cand += Candidates.test(T);
          Hit += Candidates.test(T) && Threads.test(T);
          // A thread that does not execute the elect.sync is never the elected lane.
          if (Group.Excluded && Threads.test(T) && !Candidates.test(T))
            Result.Members.set(T);
        }
        if (Hit == 0)
          continue;
        if (Hit != Cand)
          return ThreadSet::unknown("whether the lane elected in warp " + std::to_string(W) +
                                    " passes the rest of the guard depends on which lane "
                                    "elect.sync picks");
        Group.Warps.push_back(W);
        for (unsigned T = W * WarpSize; T < std::min(N, (W + 1) * WarpSize); ++T)
          if (Candidates.test(T)) {
            Group.Candidates.set(T);
            if (Group.Excluded)
              Result.Members.set(T);
          }
      }
      if (!Group.Warps.empty())
        Result.Elected.push_back(std::move(Group));
      continue;
    }
    if (R->mentions([](const Expr *L) { return L->is(ExprKind::Elect); }))
      return ThreadSet::unknown("the guard combines an elect.sync result with other values "
                                "in a way that is not one elected lane per warp");
    // A condition on values the thread id does not decide.
    if (S) {
      // Under what every launch guarantees: a test like `2 <= %nctaid.x` in a kernel of
      // two-CTA clusters holds, and Z3 took the time limit to fail to decide it without.
      const Expr *Facts = Launch.gridFacts(Ctx);
      auto [It, New] = Decided.try_emplace(Ctx.logicalAnd(Facts, R), false, false);
      if (New) {
        It->second.first = S->isValid(Ctx.implies(Facts, R)).Answer == SolverAnswer::Yes;
        It->second.second = !It->second.first &&
                            S->isSatisfiable(Ctx.logicalAnd(Facts, R)).Answer == SolverAnswer::No;
      }
      if (It->second.first) {
        Result.Members |= Threads;
        continue;
      }
      if (It->second.second)
        continue;
    }
    ThreadSet::ConditionalGroup Group;
    Group.Condition = R;
    Group.Threads = Threads;
    Group.ClusterSize = Launch.ClusterSize;
    const Expr *Rank = Ctx.specialRegister(SpecialRegister::ClusterCtaRank);
    bool OnlyRank = !R->mentions([&](const Expr *L) { return !L->isConstant() && L != Rank; });
    if (OnlyRank && Launch.ClusterSize > 1) {
      // Count the CTAs of a cluster for which the condition holds.
      uint64_t Count = 0;
      bool Known = true;
      for (uint64_t V = 0; V < Launch.ClusterSize && Known; ++V) {
        auto Value = ExprContext::evaluate(R, [&](const Expr *L) -> std::optional<uint64_t> {
          return L == Rank ? std::optional<uint64_t>(V) : std::nullopt;
        });
        Known = Value.has_value();
        Count += Value.value_or(0);
      }
      if (Known)
        Group.CtasWhereTrue = Count;
    } else if (S && Launch.ClusterSize > 1) {
      llvm::SmallVector<const Expr *, 4> Vars;
      R->mentions([&](const Expr *L) {
        if (L->is(ExprKind::SpecialReg) && (L->specialRegister() == SpecialRegister::ClusterCtaRank ||
                                            L->specialRegister() == SpecialRegister::ClusterCtaidX ||
                                            L->specialRegister() == SpecialRegister::ClusterCtaidY ||
                                            L->specialRegister() == SpecialRegister::ClusterCtaidZ))
          if (!llvm::is_contained(Vars, L))
            Vars.push_back(L);
        return false;
      });
      if (!Vars.empty()) {
        const Expr *InCluster = Ctx.ult(Rank, Ctx.constant(Launch.ClusterSize, 32));
        ModelCount C = S->countModels(Ctx.bitAnd(R, InCluster), Vars, Launch.ClusterSize);
        if (C.Count && Vars.size() == 1 && Vars[0] == Rank)
          Group.CtasWhereTrue = *C.Count;
      }
    }
    Result.Conditional.push_back(std::move(Group));
  }
  return Result;
}
