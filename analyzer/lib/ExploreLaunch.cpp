//===- ExploreLaunch.cpp - one launch given in full: every cluster of its grid -------===//
//
// Where the argument for every parameter fails (H6's stream-K pieces: a second loop over
// tiles whose k ranges depend on %ctaid.x), a launch the user states in full (every
// parameter the protocol reads, and the grid) can still be decided: each cluster of the
// grid is instantiated with its own %ctaid.x and explored, which is every schedule of that
// launch the model has. This is the bounded fallback for a launch description: a proof
// for that launch alone, a counterexample on one of its clusters, or unknown.
//
// Clusters whose concrete steps are the same (the data-parallel tiles of a persistent
// kernel: every cluster with as many tiles) have the same schedules: one of each kind is
// explored. Kinds are told apart by a key of everything the simulator reads, so that only
// a few systems (one batch for the threads) are held at a time.
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"
#include "ExploreSimulator.h"

#include "llvm/Support/ThreadPool.h"

#include <unordered_set>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

// Every field of a concrete system the exploration reads (RoleProgram.h), so that equal
// keys mean equal schedules. The iteration numbers are in it: they name steps in traces.
std::string wsv::analyzer::systemKey(const ConcreteSystem &S) {
  exploration::KeyWriter W;
  auto Text = [&](const std::string &T) {
    W.put(T.size());
    for (char Ch : T)
      W.put(static_cast<unsigned char>(Ch));
  };
  // A list of pairs, with its length.
  auto Pairs = [&](const auto &List) {
    W.put(List.size());
    for (const auto &[A, B] : List) {
      W.put(A);
      W.put(B);
    }
  };
  W.put(S.ClusterSize);
  W.put(S.BlockThreads);
  W.put(S.Barriers.size());
  for (const BarrierInstance &B : S.Barriers) {
    W.put(B.Array);
    W.put(B.Slot);
    W.put(B.Cta);
  }
  W.put(S.Buffers.size());
  for (const BufferInstance &B : S.Buffers) {
    W.put(B.Buffer);
    W.put(B.Slot);
    W.put(B.Cta);
  }
  Pairs(S.Elided);
  W.put(S.Agents.size());
  for (const ConcreteAgent &A : S.Agents) {
    Text(A.Name);
    for (uint64_t V : {uint64_t(A.Program), uint64_t(A.Cta), uint64_t(A.Copy),
                       uint64_t(A.Place), uint64_t(A.FirstThread), uint64_t(A.Threads),
                       uint64_t(A.CycleBegin), uint64_t(A.CycleEnd), uint64_t(A.MainEnd),
                       uint64_t(A.After), uint64_t(A.Forked)})
      W.put(V);
    Pairs(A.InnerCycles);
    W.put(A.Exits.size());
    for (const ConcreteAgent::Exit &E : A.Exits)
      for (uint64_t V : {uint64_t(E.At), uint64_t(E.Begin), uint64_t(E.End),
                         uint64_t(E.InCycle), uint64_t(E.LateBegin), uint64_t(E.LateEnd)})
        W.put(V);
    W.put(A.Mask.size());
    for (unsigned Bit : A.Mask.set_bits())
      W.put(Bit);
    W.put(A.Steps.size());
    for (const ConcreteStep &C : A.Steps) {
      for (uint64_t V : {uint64_t(C.Kind), uint64_t(C.RoleStep), uint64_t(C.Event),
                         uint64_t(C.Barrier), uint64_t(C.Count), uint64_t(C.TxBytes),
                         uint64_t(C.Parity), uint64_t(C.PerCopy), uint64_t(C.Queue),
                         uint64_t(C.WaitN), uint64_t(C.ReadOnly), uint64_t(C.NamedId),
                         uint64_t(C.Arriving), uint64_t(C.Columns), uint64_t(C.Flag + 1),
                         uint64_t(C.Accumulators), uint64_t(C.TmemFirst),
                         uint64_t(C.TmemEnd), uint64_t(C.TmemPair)})
        W.put(V);
      W.putList(C.Targets);
      W.putList(C.Reads);
      W.putList(C.Writes);
      W.putList(C.Folded);
      Pairs(C.Iterations);
      Text(C.Undefined);
      Text(C.Reason);
    }
  }
  return W.bytes().str();
}

std::string Prover::launchParameters(const Instance &I) const {
  std::string Out;
  for (const auto &[Name, Value] : I.Params)
    Out += (Out.empty() ? "" : ", ") + Name + " = " + std::to_string(Value);
  return Out + (Out.empty() ? "" : ", ") + "a grid of " + std::to_string(I.GridCtas) + " CTAs";
}

void Prover::exploreLaunch() {
  const Instance &Given = *O.Launch;
  const std::string Why = R.Reason;
  const std::string Name = launchParameters(Given);
  const uint64_t Size = std::max(1u, RP.ClusterSize);
  if (Given.GridCtas < Size || Given.GridCtas % Size)
    return void(unknown(Why + "; the launch (" + Name + ") is not explored: its grid is not a "
                        "multiple of the cluster of " + std::to_string(Size) + " CTAs"));
  // Parameters the protocol reads that the launch leaves out: named here rather than as
  // the first expression that does not evaluate.
  std::set<std::string> Missing;
  programsRead(RP, [&](const Expr *L) {
    if (L->is(ExprKind::Param) && !Given.Params.count(paramName(L)) &&
        !Given.Params.count(L->name().str()))
      Missing.insert(paramName(L));
    return false;
  });
  if (!Missing.empty()) {
    std::string Names;
    for (const std::string &M : Missing)
      Names += (Names.empty() ? "" : ", ") + M;
    return void(unknown(Why + "; the launch (" + Name + ") is not explored: it gives no " +
                        "value for " + Names + ", which the protocol reads"));
  }
  const uint64_t Clusters = Given.GridCtas / Size;
  // The explorations before spent their states on the argument; the launch gets the budget
  // afresh, and R.States counts both in the end.
  const uint64_t Before = R.States;
  R.States = 0;
  auto Fail = [&](std::string Reason) {
    R.States += Before;
    if (R.Verdict == ExploreVerdict::Unknown)
      R.Reason = Why + "; the launch (" + Name + "): " + Reason;
  };
  // The keys of the kinds of cluster met; the first cluster of each is explored.
  std::unordered_set<std::string> Kinds;
  std::vector<ConcreteSystem> Batch;
  auto RunBatch = [&] {
    auto Done = exploreAhead(pointers(Batch));
    for (size_t I = 0; I < Batch.size(); ++I) {
      Instance At = Given;
      At.FirstCta = Batch[I].FirstCta;
      std::string What = "the launch's cluster of CTA " + std::to_string(At.FirstCta);
      if (!explore(Batch[I], What, At, Done.empty() ? nullptr : &Done[I].first,
                   Done.empty() ? 0 : Done[I].second))
        return false;
      cover(Batch[I]);
    }
    Batch.clear();
    return true;
  };
  Reached.clear();
  // Clusters are built and keyed a chunk at a time on the workers (instantiate runs on
  // several threads): building H6's clusters took as long as exploring their kinds.
  const uint64_t Chunk = 4 * threads();
  for (uint64_t C0 = 0; C0 < Clusters; C0 += Chunk) {
    const uint64_t N = std::min(Chunk, Clusters - C0);
    std::vector<ConcreteSystem> Built(N);
    std::vector<std::string> Keys(N);
    auto Build = [&](uint64_t J) {
      Instance I = Given;
      I.FirstCta = (C0 + J) * Size;
      Built[J] = instantiate(RP, I);
      if (Built[J].Unknown.empty())
        Keys[J] = systemKey(Built[J]);
    };
    if (threads() > 1 && N > 1) {
      llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(threads()));
      for (uint64_t J = 0; J < N; ++J)
        Pool.async([&, J] { Build(J); });
      Pool.wait();
    } else {
      for (uint64_t J = 0; J < N; ++J)
        Build(J);
    }
    for (uint64_t J = 0; J < N; ++J) {
      if (!Built[J].Unknown.empty()) {
        R.Verdict = ExploreVerdict::Unknown;
        return Fail("cluster of CTA " + std::to_string((C0 + J) * Size) + ": " +
                    Built[J].Unknown);
      }
      if (!Kinds.insert(std::move(Keys[J])).second)
        continue;
      Batch.push_back(std::move(Built[J]));
      if (Batch.size() >= threads() && !RunBatch())
        return Fail(R.Reason);
    }
  }
  if (!RunBatch())
    return Fail(R.Reason);
  R.States += Before;
  R.Verdict = ExploreVerdict::Clean;
  R.WholeLaunch = true;
  R.NotForEvery = Why;
  R.ForParameters = "the launch " + Name + " (" + std::to_string(Clusters) + " cluster(s), " +
                    std::to_string(Kinds.size()) + " with different steps, each explored)";
  std::vector<unsigned> Lines = unreachedLines();
  if (!Lines.empty())
    R.NotRun = "steps at " + std::to_string(Lines.size()) + " PTX line(s) do not run in it (" +
               lineList(Lines) + ")";
}
