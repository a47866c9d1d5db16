//===- ThreadSet.cpp - launch shapes, runs, counts, printing ----------------------===//
#include "wsv/analyzer/ThreadSet.h"

#include <algorithm>

using namespace wsv;
using namespace wsv::analyzer;

std::optional<LaunchShape> LaunchShape::fromFunction(const ptx::Function &F) {
  const ptx::Directive *D = F.headerDirective(".reqntid");
  bool Maximum = false;
  if (!D) {
    D = F.headerDirective(".maxntid");
    Maximum = true;
  }
  if (!D || D->operands().empty())
    return std::nullopt;
  LaunchShape L;
  L.BlockIsMaximum = Maximum;
  unsigned Dims[3] = {1, 1, 1};
  for (unsigned K = 0; K < 3 && K < D->operands().size(); ++K) {
    std::optional<int64_t> V = D->operands()[K].integerValue();
    if (!V || *V < 1 || *V > 1024)
      return std::nullopt;
    Dims[K] = static_cast<unsigned>(*V);
  }
  L.BlockX = Dims[0];
  L.BlockY = Dims[1];
  L.BlockZ = Dims[2];
  if (const ptx::Directive *C = F.headerDirective(".reqnctapercluster")) {
    unsigned Size = 1;
    for (ptx::Operand Op : C->operands())
      Size *= static_cast<unsigned>(Op.integerValue().value_or(1));
    L.ClusterSize = Size;
  }
  L.ClusterX = clusterX(F);
  return L;
}

unsigned LaunchShape::clusterX(const ptx::Function &F) {
  const ptx::Directive *C = F.headerDirective(".reqnctapercluster");
  if (!C || C->operands().empty())
    return 1;
  std::optional<int64_t> X = C->operands()[0].integerValue();
  return X && *X >= 1 && *X <= 1024 ? static_cast<unsigned>(*X) : 1;
}

const Expr *LaunchShape::gridFacts(ExprContext &Ctx) const {
  if (ClusterX <= 1)
    return Ctx.boolean(true);
  const Expr *Grid = Ctx.specialRegister(SpecialRegister::NctaidX);
  const Expr *X = Ctx.constant(ClusterX, Grid->width());
  return Ctx.logicalAnd(Ctx.ule(X, Grid),
                        Ctx.eq(Ctx.urem(Grid, X), Ctx.constant(0, Grid->width())));
}

ThreadSet ThreadSet::unknown(std::string Reason) {
  ThreadSet S;
  S.Reason = std::move(Reason);
  return S;
}

bool ThreadSet::isExact() const {
  if (isUnknown() || !Conditional.empty())
    return false;
  for (const ElectedGroup &G : Elected)
    if (G.Condition)
      return false;
  return true;
}

std::optional<unsigned> ThreadSet::count() const {
  if (!isExact())
    return std::nullopt;
  unsigned N = Members.count();
  for (const ElectedGroup &G : Elected)
    N = G.Excluded ? N - G.Warps.size() : N + G.Warps.size();
  return N;
}

llvm::SmallVector<ThreadRun, 4> ThreadSet::runs() const {
  // Maximal intervals first, then equal intervals at equal distances merged into one run.
  llvm::SmallVector<std::pair<unsigned, unsigned>, 8> Intervals;
  for (int T = Members.find_first(); T != -1;) {
    int End = Members.find_next_unset(T);
    unsigned E = End == -1 ? Members.size() : static_cast<unsigned>(End);
    Intervals.push_back({static_cast<unsigned>(T), E - T});
    T = E >= Members.size() ? -1 : Members.find_next(E);
  }
  llvm::SmallVector<ThreadRun, 4> Out;
  for (unsigned I = 0; I < Intervals.size();) {
    ThreadRun R{Intervals[I].first, Intervals[I].second, 0, 1};
    unsigned J = I + 1;
    if (J < Intervals.size() && Intervals[J].second == R.Length) {
      R.Stride = Intervals[J].first - R.First;
      while (J < Intervals.size() && Intervals[J].second == R.Length &&
             Intervals[J].first == R.First + R.Count * R.Stride) {
        ++R.Count;
        ++J;
      }
    }
    if (R.Count == 1)
      R.Stride = 0;
    Out.push_back(R);
    I = J;
  }
  return Out;
}

static void printRuns(llvm::raw_ostream &OS, llvm::ArrayRef<ThreadRun> Runs) {
  bool First = true;
  for (const ThreadRun &R : Runs) {
    OS << (First ? "" : ", ");
    First = false;
    if (R.Length == 1)
      OS << R.First;
    else
      OS << R.First << ".." << R.First + R.Length - 1;
    if (R.Count > 1)
      OS << " every " << R.Stride << " (x" << R.Count << ")";
  }
}

static void printWarps(llvm::raw_ostream &OS, llvm::ArrayRef<unsigned> Warps) {
  OS << (Warps.size() == 1 ? "warp " : "warps ");
  for (unsigned I = 0; I < Warps.size();) {
    unsigned J = I;
    while (J + 1 < Warps.size() && Warps[J + 1] == Warps[J] + 1)
      ++J;
    OS << (I ? ", " : "") << Warps[I];
    if (J > I)
      OS << ".." << Warps[J];
    I = J + 1;
  }
}

void ThreadSet::print(llvm::raw_ostream &OS) const {
  if (isUnknown()) {
    OS << "unknown (" << Reason << ")";
    return;
  }
  bool Any = false;
  auto Separate = [&] {
    if (Any)
      OS << "; ";
    Any = true;
  };
  for (const ElectedGroup &G : Elected) {
    Separate();
    OS << (G.Excluded ? "all but the elected lane of " : "one elected lane of ");
    printWarps(OS, G.Warps);
    if (G.Condition)
      OS << " when " << *G.Condition;
  }
  llvm::BitVector Plain = Members;
  for (const ElectedGroup &G : Elected)
    if (G.Excluded)
      Plain.reset(G.Candidates);
  if (Plain.any()) {
    Separate();
    ThreadSet Tmp;
    Tmp.Members = Plain;
    OS << "tid ";
    printRuns(OS, Tmp.runs());
  }
  for (const ConditionalGroup &G : Conditional) {
    Separate();
    ThreadSet Tmp;
    Tmp.Members = G.Threads;
    OS << "tid ";
    printRuns(OS, Tmp.runs());
    OS << " when " << *G.Condition;
    if (G.CtasWhereTrue)
      OS << " (" << *G.CtasWhereTrue << " of " << G.ClusterSize << " CTAs per cluster)";
  }
  if (!Any)
    OS << "no threads";
  if (std::optional<unsigned> N = count())
    OS << " (" << *N << (*N == 1 ? " thread)" : " threads)");
}

std::string ThreadSet::str() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS);
  return S;
}
