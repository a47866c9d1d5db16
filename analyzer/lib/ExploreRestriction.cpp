//===- ExploreRestriction.cpp - the argument where a part of the schedule is off -----===//
//
// H6 runs stream-K pieces only where a value of the launch alone, its count of stream-K
// tiles (`cond ? rem : 0` of M, N, K and %nctaid.x), is not 0. The pieces are loops whose
// k-ranges depend on %ctaid.x, nested in a second loop after the whole tiles, which the
// argument for every parameter (one loop over tiles per role) does not cover. Where the value
// is 0 those loops are never entered and the kernel has H5's shape.
//
// This file finds such a term: a select with a 0 arm that reads only parameters and
// %nctaid.x and that, replaced by 0 in every role program, leaves no loop the argument cannot
// take (the others are marked never entered). The programs so rewritten behave as the
// kernel's wherever the term is 0, whatever else they do elsewhere: a proof for every
// parameter of them proves the kernel on the launches where the term is 0, and a bug of them
// is the kernel's only on such a launch (checked, and replayed on the kernel's programs).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include <functional>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

namespace {

/// A value the whole launch shares: parameters, %nctaid.x and constants only.
bool launchLevel(const Expr *E) {
  return !E->mentions([](const Expr *L) {
    return !(L->isConstant() || L->is(ExprKind::Param) ||
             (L->is(ExprKind::SpecialReg) &&
              L->specialRegister() == SpecialRegister::NctaidX));
  });
}

/// Every node of E, operands before the node, each once.
void forEachNode(const Expr *E, llvm::SmallPtrSetImpl<const Expr *> &Seen,
                 const std::function<void(const Expr *)> &F) {
  if (!Seen.insert(E).second)
    return;
  for (const Expr *Op : E->ops())
    forEachNode(Op, Seen, F);
  F(E);
}

/// Loops of Items that can never be entered, with what they hold, marked so.
void pruneDead(RoleProgram &Pr, const std::vector<RoleItem> &Items, ExprContext &Ctx,
               std::set<unsigned> &Dead) {
  for (const RoleItem &It : Items) {
    if (!It.IsLoop)
      continue;
    RoleLoop &L = Pr.Loops[It.Index];
    if ((L.When && L.When->isFalse()) || (L.Trip && L.Trip->isConstant(0) && !L.Forever))
      neverRun(Pr, It.Index, Ctx, Dead);
    else
      pruneDead(Pr, L.Body, Ctx, Dead);
  }
}

} // namespace

void wsv::analyzer::parametric::forEachStepExpr(
    RoleStep &St, const std::function<void(const Expr *&)> &F) {
  auto Opt = [&](const Expr *&E) {
    if (E)
      F(E);
  };
  for (const Expr **E : {&St.When, &St.Count, &St.TxBytes, &St.Parity, &St.SkipEntry,
                         &St.SkipLatch, &St.Bytes, &St.CtaMask, &St.WaitN, &St.NamedId,
                         &St.NamedThreads, &St.Columns, &St.Barrier.Slot, &St.Barrier.PeerRank,
                         &St.Barrier.Address, &St.TmemColumn})
    Opt(*E);
  for (auto &[Cond, N] : St.Threads.Conditional)
    Opt(Cond);
  for (std::vector<SlotExpr> *Slots : {&St.Reads, &St.Writes})
    for (SlotExpr &X : *Slots) {
      Opt(X.Slot);
      Opt(X.PeerRank);
      Opt(X.Address);
    }
}

void wsv::analyzer::parametric::forEachProgramExpr(
    RoleProgram &Pr, const std::function<void(const Expr *&)> &F) {
  auto Opt = [&](const Expr *&E) {
    if (E)
      F(E);
  };
  Opt(Pr.When);
  for (RoleLoop &L : Pr.Loops) {
    Opt(L.Trip);
    Opt(L.Forever);
    Opt(L.When);
  }
  for (RoleStep &St : Pr.Steps)
    forEachStepExpr(St, F);
}

void wsv::analyzer::parametric::neverRun(RoleProgram &Pr, unsigned LI, ExprContext &Ctx, std::set<unsigned> &Dead) {
  RoleLoop &L = Pr.Loops[LI];
  Dead.insert(L.ProtocolLoop);
  L.Trip = Ctx.constant(0, L.Trip ? L.Trip->width() : 32);
  L.Forever = nullptr;
  L.When = Ctx.boolean(false);
  for (const RoleItem &It : L.Body) {
    if (It.IsLoop)
      neverRun(Pr, It.Index, Ctx, Dead);
    else
      Pr.Steps[It.Index].When = Ctx.boolean(false);
  }
}

std::optional<Restriction> wsv::analyzer::findRestriction(const RolePrograms &RP) {
  std::vector<unsigned> TileLoop;
  if (tileLoops(RP, TileLoop).empty())
    return std::nullopt; // the argument's shape already
  ExprContext &Ctx = RP.P->Analysis->context();
  // Work, not time, bounds its queries: the same restriction on any machine.
  std::unique_ptr<Solver> Z3 = Solver::createZ3(/*TimeoutMs=*/5000, /*ResourceLimit=*/1000000,
                                                /*Sample=*/false);
  // Candidates from the loops' trip counts and conditions, in order of first appearance.
  std::vector<const Expr *> Terms;
  llvm::SmallPtrSet<const Expr *, 32> Seen;
  for (const RoleProgram &Pr : RP.Programs)
    for (const RoleLoop &L : Pr.Loops)
      for (const Expr *E : {L.Trip, L.When})
        if (E)
          forEachNode(E, Seen, [&](const Expr *N) {
            if (!N->is(ExprKind::Select) || N->ops()[0]->isConstant())
              return;
            bool ZeroThen = N->ops()[1]->isConstant(0), ZeroElse = N->ops()[2]->isConstant(0);
            if (ZeroThen != ZeroElse && !N->ops()[ZeroThen ? 2 : 1]->isConstant() &&
                launchLevel(N))
              Terms.push_back(N);
          });
  for (const Expr *Term : Terms) {
    Restriction Out{Term, RP, {}};
    const Expr *Zero = Ctx.constant(0, Term->width());
    // A division of 0 by a value no launch makes 0 (`%nctaid.x / 2`: the grid is a multiple
    // of the cluster) is 0; the builders cannot fold it, not knowing the grid.
    auto NonZero = [&](const Expr *D) {
      auto Grid = [](const Expr *X) {
        return X->is(ExprKind::SpecialReg) && X->specialRegister() == SpecialRegister::NctaidX;
      };
      return D->range().Lo >= 1 || Grid(D) ||
             (D->is(ExprKind::UDiv) && Grid(D->ops()[0]) && D->ops()[1]->isConstant() &&
              D->ops()[1]->payload() >= 1 &&
              D->ops()[1]->payload() <= std::max(1u, RP.ClusterSize));
    };
    auto Rewrite = [&](const Expr *E) {
      E = Ctx.substitute(E, Term, Zero);
      return Ctx.rewrite(E, [&](const Expr *N) -> const Expr * {
        if ((N->is(ExprKind::UDiv) || N->is(ExprKind::URem)) && N->ops()[0]->isConstant(0) &&
            NonZero(N->ops()[1]))
          return Ctx.constant(0, N->width());
        return nullptr;
      });
    };
    std::set<unsigned> Dead;
    for (RoleProgram &Pr : Out.Programs.Programs) {
      forEachProgramExpr(Pr, [&](const Expr *&E) { E = Rewrite(E); });
      pruneDead(Pr, Pr.Body, Ctx, Dead);
    }
    // The conditions that make trip counts exact: none for loops that never run (they
    // would restrict the launches for nothing, or to none), the others rewritten alike.
    for (unsigned LI = 0; LI < Out.Programs.TripConditions.size(); ++LI) {
      auto &Conditions = Out.Programs.TripConditions[LI];
      if (Dead.count(LI)) {
        Conditions.clear();
        continue;
      }
      // A count is read only where its loop is entered: the condition need hold only there
      // (H6's last chunks: exact for CTAs with a tile, the only ones that enter the loop;
      // required of every CTA it would leave out the grids with more CTAs than tiles).
      const Expr *Entered = nullptr;
      for (const RoleProgram &Pr : Out.Programs.Programs)
        for (const RoleLoop &L : Pr.Loops)
          if (L.ProtocolLoop == LI && L.When && !L.When->isConstant())
            Entered = Ctx.ne(L.When, Ctx.constant(0, L.When->width()));
      for (auto &[Cond, Established] : Conditions) {
        Cond = Rewrite(Cond);
        if (Entered && !Established)
          Cond = Ctx.logicalOr(Ctx.logicalNot(Entered), Cond);
      }
      // One that holds for every launch restricts nothing, and only slows Z3 in the domain
      // of every lemma (H6's: 13 s and a lemma left undecided with it).
      llvm::erase_if(Conditions, [&](const auto &C) {
        return C.first->isTrue() ||
               (!C.second && Z3->isValid(C.first).Answer == SolverAnswer::Yes);
      });
    }
    if (!tileLoops(Out.Programs, TileLoop).empty())
      continue;
    for (unsigned LI : Dead)
      Out.DeadLines.push_back(RP.P->Loops[LI].Where.PtxLine);
    llvm::sort(Out.DeadLines);
    Out.DeadLines.erase(std::unique(Out.DeadLines.begin(), Out.DeadLines.end()),
                        Out.DeadLines.end());
    return Out;
  }
  return std::nullopt;
}

std::optional<uint64_t> wsv::analyzer::parametric::termAt(const Restriction &Re,
                                                         const RolePrograms &RP,
                                                         const Instance &I) {
  return ExprContext::evaluate(Re.Term, [&](const Expr *L) -> std::optional<uint64_t> {
    if (L->is(ExprKind::SpecialReg))
      return I.GridCtas ? I.GridCtas : RP.ClusterSize;
    for (size_t N = 0; N < RP.P->ParamSymbols.size() && N < RP.P->ParamNames.size(); ++N)
      if (RP.P->ParamSymbols[N] == L->name())
        if (auto It = I.Params.find(RP.P->ParamNames[N]); It != I.Params.end())
          return It->second;
    if (auto It = I.Params.find(L->name().str()); It != I.Params.end())
      return It->second;
    return std::nullopt;
  });
}

void wsv::analyzer::parametric::adoptVerdict(ParametricResult &R, ParametricResult Part) {
  Part.Runs = std::move(R.Runs);
  Part.States = R.States;
  Part.SolverQueries = R.SolverQueries;
  R = std::move(Part);
}

std::string wsv::analyzer::parametric::argueRestricted(const RolePrograms &RP,
                                                       const ParametricOptions &O,
                                                       ParametricResult &R,
                                                       const Restriction &Re) {
  std::string Lines;
  for (unsigned L : Re.DeadLines)
    Lines += (Lines.empty() ? "" : ", ") + std::to_string(L);
  const std::string Where = "where " + RP.P->exprString(Re.Term) + " is 0 (loops at ptx " +
                            "line(s) " + Lines + " never run)";
  // Its explorations are marked as such in the progress and the list of runs.
  const std::string Mark = "[where the term is 0] ";
  ParametricOptions RO = O;
  RO.Launch.reset(); // a launch given in full is explored on the kernel's own programs
  if (O.OnRun)
    RO.OnRun = [&](const std::string &Run, double Ms) { O.OnRun(Mark + Run, Ms); };
  ParametricResult Part;
  Prover(Re.Programs, RO, Part).run();
  R.SolverQueries += Part.SolverQueries;
  R.States += Part.States;
  for (const std::string &Run : Part.Runs)
    R.Runs.push_back(Mark + Run);
  switch (Part.Verdict) {
  case ExploreVerdict::Clean:
    R.Restricted = RP.P->exprString(RP.P->Analysis->context().eq(
        Re.Term, RP.P->Analysis->context().constant(0, Re.Term->width())));
    R.RestrictedFor = Part.ForParameters;
    return "; " + Where + ": proved for " + Part.ForParameters + " (" +
           std::to_string(Part.Runs.size()) + " explorations)";
  case ExploreVerdict::Unknown:
    return "; " + Where + ": unknown too: " + Part.Reason;
  default:
    break;
  }
  // A bug of the rewritten programs is the kernel's where the term is 0 there: then the
  // programs agree, and the schedule replays on the kernel's own.
  std::optional<uint64_t> V = termAt(Re, RP, Part.Launch);
  if (V && *V == 0) {
    ExploreResult Again = replay(instantiate(RP, Part.Launch), Part.Found.Schedule, O.StopAtRace);
    if (Again.Verdict == Part.Verdict) {
      std::string Reason = Where + ": " + Part.Reason;
      adoptVerdict(R, std::move(Part));
      R.Reason = std::move(Reason);
      return {};
    }
  }
  return "; " + Where + " the argument's search found '" + Part.Found.Message +
         "' on a launch where it is not 0, which is not the kernel's";
}
