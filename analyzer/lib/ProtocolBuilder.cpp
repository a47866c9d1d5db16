//===- ProtocolBuilder.cpp - the steps in order, and names from usage -------------===//
#include "wsv/analyzer/ProtocolBuilder.h"

#include "ProtocolBuild.h"

#include "wsv/analyzer/Barriers.h"

#include <map>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Whether F names its cluster's other CTAs: cluster ranks or ids, mapa, barrier.cluster or
/// a multicast. (`shared::cluster` alone is not: a CTA's own shared memory is in its window,
/// and every TMA copy and `fence.mbarrier_init` is written that way.)
bool reachesClusterPeers(const Cfg &G) {
  for (const CfgInst &CI : G.instructions()) {
    const ptx::Instruction &I = *CI.I;
    if (I.baseName() == "mapa" || I.opcodeStartsWith("barrier.cluster") ||
        I.opcode().contains(".multicast::cluster"))
      return true;
    for (ptx::Operand Op : I.operands())
      if (Op.is(ptx::OperandKind::SpecialRegister) &&
          (Op.text().starts_with("%cluster_") || Op.text().starts_with("%clusterid")))
        return true;
  }
  return false;
}


/// Block size: `.reqntid`, else `.maxntid`, else the launch description, else an assumption
/// that is said out loud. Cluster size: `.reqnctapercluster`, else the launch's
/// (ProtocolOptions::ClusterSize), else the launch description's, else 1, said out loud
/// where the kernel reaches its cluster's peers.
void setLaunch(BuildState &S, const ProtocolOptions &Options) {
  Protocol &P = S.P;
  if (std::optional<LaunchShape> L = LaunchShape::fromFunction(S.F)) {
    P.Launch = *L;
    P.LaunchFrom = L->BlockIsMaximum ? ".maxntid" : ".reqntid";
  } else if (S.Spec && S.Spec->BlockThreads && *S.Spec->BlockThreads <= 1024) {
    P.Launch.BlockX = *S.Spec->BlockThreads;
    P.LaunchFrom = S.Spec->Origin;
  } else {
    P.Launch.BlockX = 1024;
    P.LaunchFrom = "assumed";
    P.Notes.push_back({"the kernel states no block size (.reqntid or .maxntid): thread sets "
                       "assume 1024 threads",
                       {}});
  }
  auto SetCluster = [&](unsigned Size, std::string From) {
    P.Launch.ClusterSize = Size;
    P.Launch.ClusterX = Size; // a launch's cluster runs along x (M for the reference kernels)
    P.ClusterFrom = std::move(From);
  };
  if (S.F.headerDirective(".reqnctapercluster")) {
    P.ClusterFrom = ".reqnctapercluster";
    if (!LaunchShape::fromFunction(S.F)) // no block size: fromFunction left the cluster out
      SetCluster(LaunchShape::clusterX(S.F), ".reqnctapercluster");
  } else if (Options.ClusterSize) {
    SetCluster(*Options.ClusterSize,
               Options.ClusterFrom.empty() ? "the launch" : Options.ClusterFrom);
  } else if (S.Spec && S.Spec->ClusterSize) {
    SetCluster(*S.Spec->ClusterSize, S.Spec->Origin);
  } else if (reachesClusterPeers(S.cfg())) {
    P.Notes.push_back({"the kernel reaches other CTAs of its cluster, but neither "
                       ".reqnctapercluster nor the launch states the cluster size "
                       "(--cluster-size gives it): clusters of 1 CTA assumed",
                       {}});
  }
}

void setParamNames(BuildState &S) {
  llvm::ArrayRef<const ptx::VariableDecl *> Params = S.F.params();
  std::string Prefix = S.F.name().str() + "_";
  for (unsigned K = 0; K < Params.size(); ++K) {
    llvm::StringRef Name = Params[K]->name();
    S.P.ParamSymbols.push_back(Name.str());
    if (S.Spec && S.Spec->ParamNames.size() == Params.size())
      S.P.ParamNames.push_back(S.Spec->ParamNames[K]);
    else
      S.P.ParamNames.push_back(Name.starts_with(Prefix) ? Name.drop_front(Prefix.size()).str()
                                                        : Name.str());
  }
}

void addNotes(BuildState &S) {
  Protocol &P = S.P;
  for (const CfgIssue &I : S.cfg().issues())
    P.Notes.push_back({"the control-flow graph is incomplete: " + I.Message, {}});
  if (S.FA.loops().isIrreducible())
    P.Notes.push_back({"the control flow has cycles that are not natural loops: values across "
                       "them are unknown",
                       {}});
  unsigned UnknownThreads = 0;
  for (const Event &E : P.Events)
    UnknownThreads += E.Threads.isUnknown();
  if (UnknownThreads)
    P.Notes.push_back({std::to_string(UnknownThreads) +
                           " events run on threads that could not be computed (role 'unknown')",
                       {}});
}

/// Numbers names taken more than once (full -> full0, full1), in order.
template <typename T> void numberDuplicates(std::vector<T> &Items) {
  std::map<std::string, unsigned> Uses, Seen;
  for (const T &I : Items)
    ++Uses[I.Name];
  for (T &I : Items)
    if (Uses[I.Name] > 1)
      I.Name += std::to_string(Seen[I.Name]++);
}

} // namespace

void wsv::analyzer::nameByUsage(BuildState &S) {
  Protocol &P = S.P;
  // Which roles load (and so refill what they wait on).
  std::vector<bool> RoleLoads(P.Roles.size(), false);
  bool PrologueLoads = false;
  for (unsigned E = 0; E < P.Events.size(); ++E)
    if (P.Events[E].Kind == EventKind::AsyncLoad) {
      for (unsigned R : S.Info[E].Roles)
        RoleLoads[R] = true;
      PrologueLoads |= S.Info[E].Where != EventInfo::Phase::Main;
    }
  std::vector<bool> Completed(P.Barriers.size(), false), WaitedByLoader(P.Barriers.size(), false);
  for (unsigned E = 0; E < P.Events.size(); ++E) {
    const Event &Ev = P.Events[E];
    if (!Ev.Barrier.resolved())
      continue;
    if (Ev.Kind == EventKind::AsyncLoad || Ev.Kind == EventKind::TryCancel)
      Completed[Ev.Barrier.Array] = true;
    if (Ev.Kind == EventKind::Wait || Ev.Kind == EventKind::Probe) {
      bool Loader = S.Info[E].Where == EventInfo::Phase::Main
                        ? llvm::any_of(S.Info[E].Roles, [&](unsigned R) { return RoleLoads[R]; })
                        : PrologueLoads;
      WaitedByLoader[Ev.Barrier.Array] = WaitedByLoader[Ev.Barrier.Array] || Loader;
    }
  }
  for (unsigned A = 0; A < P.Barriers.size(); ++A) {
    BarrierArray &B = P.Barriers[A];
    if (B.NameFrom == NameOrigin::Symbol)
      continue;
    if (Completed[A])
      B.Name = "full", B.NameFrom = NameOrigin::Usage;
    else if (WaitedByLoader[A])
      B.Name = "empty", B.NameFrom = NameOrigin::Usage;
    else
      B.Name = "mbar", B.NameFrom = NameOrigin::Fallback;
  }
  numberDuplicates(P.Barriers);

  // Buffers after the tensor map of the copies that fill or drain them (tmap_a -> A).
  std::vector<std::string> BufferNames(P.Buffers.size());
  for (unsigned E = 0; E < P.Events.size(); ++E) {
    const Event &Ev = P.Events[E];
    const BufferRef &R = Ev.Kind == EventKind::AsyncStore ? Ev.Src : Ev.Dst;
    if ((Ev.Kind != EventKind::AsyncLoad && Ev.Kind != EventKind::AsyncStore) ||
        !R.resolved() || !S.Info[E].TensorMapParam || !BufferNames[R.Buffer].empty())
      continue;
    llvm::StringRef Param = P.ParamNames[*S.Info[E].TensorMapParam];
    if (Param.consume_front("tmap_"))
      BufferNames[R.Buffer] = Param.upper();
  }
  for (unsigned B = 0; B < P.Buffers.size(); ++B)
    P.Buffers[B].Name = BufferNames[B].empty() ? "buf" : BufferNames[B];
  numberDuplicates(P.Buffers);
}

std::optional<std::string> wsv::analyzer::clusterSizeConflict(const ptx::Function &F,
                                                              unsigned Size) {
  if (Size == 0 || Size > 16)
    return "a cluster has 1 to 16 CTAs, not " + std::to_string(Size);
  const ptx::Directive *D = F.headerDirective(".reqnctapercluster");
  if (!D)
    return std::nullopt;
  std::vector<int64_t> Dims;
  for (ptx::Operand Op : D->operands())
    Dims.push_back(Op.integerValue().value_or(1));
  Dims.resize(3, 1);
  std::string Stated = std::to_string(Dims[0]) + ", " + std::to_string(Dims[1]) + ", " +
                       std::to_string(Dims[2]);
  if (Dims[0] != int64_t(Size) || Dims[1] != 1 || Dims[2] != 1)
    return F.name().str() + " states .reqnctapercluster " + Stated +
           ": a launch with clusters of " + std::to_string(Size) + " CTAs along x fails";
  return std::nullopt;
}

std::unique_ptr<Protocol> wsv::analyzer::buildProtocol(const ptx::Module &M,
                                                       const ptx::Function &F,
                                                       const ProtocolOptions &Options) {
  auto P = std::make_unique<Protocol>();
  P->Kernel = F.name().str();
  P->File = M.bufferName().str();
  AnalysisOptions AO;
  AO.UseSolver = Options.UseSolver;
  AO.SharedSolver = Options.SharedSolver;
  P->Analysis = std::make_shared<FunctionAnalysis>(M, F, AO);
  BuildState S(M, F, *P);
  S.Spec = Options.Spec ? Options.Spec : readKernelInfo(M, F);
  setLaunch(S, Options);
  setParamNames(S);
  collectEvents(S);
  resolveOperands(S);
  foldProbedWaits(S);
  assignRoles(S);
  layOutSequences(S);
  nameByUsage(S);
  addNotes(S);
  if (Options.Notes)
    if (auto It = Options.Notes->find(F.name().str()); It != Options.Notes->end())
      for (const std::string &N : It->second)
        P->Notes.push_back({N, {}});
  noteMemorySpins(S);
  return P;
}
