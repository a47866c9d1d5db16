//===- ExploreParametricTiles.cpp - persistent kernels: every tile count and K -------===//
//
// The launches that give a CTA a number of tiles, the periodic systems of tiles (an outer
// cycle of the last M tiles, an inner cycle of k-tiles in each), and the classes of tile and
// k-tile counts that stand for every launch (ExploreParametric.cpp says why).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <numeric>
#include <set>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

std::optional<Instance> Prover::tileLaunch(uint64_t KValue, uint64_t Count) const {
  // The smallest M x N (multiples of 128) and grid (1, 2 or 4 clusters) where CTA 0 runs
  // Count tiles; none tiles: the last cluster of a grid with one tile per cluster less.
  // Where neither the tile count nor a trip condition reads K, the shape depends on Count
  // alone: it is searched once per count (B5 built 250 classes of 16 counts, each trying up
  // to 6,144 shapes: a sixth of the time spent building them).
  if (ShapeReadsK)
    return tileShape(KValue, Count);
  std::optional<Instance> Found;
  {
    std::lock_guard<std::mutex> Hold(TileShapesLock); // classes are built several at once
    auto [It, New] = TileShapes.try_emplace(Count);
    if (New)
      It->second = tileShape(KValue, Count);
    Found = It->second;
  }
  if (Found && K && !KStandIn)
    Found->Params[R.Parameter] = KValue;
  return Found;
}

std::vector<std::string> Prover::shapeParams() const {
  // The reference kernels' sizes are named M and N (their launch description names the
  // parameters); other compilers' are param_15 and param_16: then whichever parameters
  // other than K the tile count reads, if there are at most two.
  std::set<std::string> Read;
  NT->mentions([&](const Expr *L) {
    if (L->is(ExprKind::Param) && L != K)
      Read.insert(paramName(L));
    return false;
  });
  if (Read.count("M") || Read.count("N") || Read.size() > 2)
    return {"M", "N"};
  return {Read.begin(), Read.end()};
}

std::optional<Instance> Prover::tileShape(uint64_t KValue, uint64_t Count) const {
  std::optional<Instance> Best;
  uint64_t BestArea = UINT64_MAX;
  std::vector<std::string> Dims = shapeParams();
  // Launch I if CTA I.FirstCta runs Count tiles in it and its trip conditions hold, and
  // its sizes' product (Area) is the smallest yet.
  auto Consider = [&](const Instance &I, uint64_t Area) {
    auto Value = [&](const Expr *L) -> std::optional<uint64_t> {
      if (L == K)
        return KValue;
      if (L->is(ExprKind::SpecialReg))
        return L->specialRegister() == SpecialRegister::CtaidX   ? I.FirstCta
               : L->specialRegister() == SpecialRegister::NctaidX ? I.GridCtas
                                                                  : std::optional<uint64_t>();
      if (L->is(ExprKind::Param)) {
        auto It = I.Params.find(paramName(L));
        if (It != I.Params.end())
          return It->second;
      }
      return std::nullopt;
    };
    std::optional<uint64_t> V = ExprContext::evaluate(NT, Value);
    // Where the loop's condition fails the CTA has no tile, whatever NT says. (One that
    // reads the thread is not the launch's to decide.)
    if (std::optional<uint64_t> Enters =
            NTWhen ? ExprContext::evaluate(NTWhen, Value) : std::nullopt;
        V && Enters && !*Enters)
      V = 0;
    if (!V || *V != Count)
      return;
    // A condition that reads the thread is the instantiation's, not the launch shape's:
    // where it fails for some threads (a step of 0), their loop never ends or they part
    // (Forever); a thread's own loop over its words (clang -O2's `(1151 - tid) / 128`,
    // exact where tid < 897) is the verdict's assumption whatever the shape.
    for (size_t LI = 0; LI < P.Loops.size(); ++LI)
      for (const auto &[Cond, Established] : RP.TripConditions[LI])
        if (!Established && !isThreadDependent(Cond)) {
          std::optional<uint64_t> C = ExprContext::evaluate(Cond, Value);
          if (!C || !*C)
            return;
        }
    BestArea = Area;
    Best = I;
  };
  // Sizes in tiles of 128, up to 64 x 64 of them, then (for counts those do not give) up
  // to 256 x 256: a grid fixed in the code (Triton's NUM_SMS = 132) gives a CTA a ninth
  // tile only past 8 * 132 tiles, a seventeenth past 16 * 132 (more than 64 x 32 tiles of
  // 128 x 256). The first or the last cluster of 1, 2 or 4. Sizes in order of area would
  // find the smallest first; the bound on the area cuts the rest short.
  auto Scan = [&](uint64_t Most, uint64_t Scanned) {
    for (uint64_t A = 1; A <= Most; ++A)
      for (uint64_t B = 1; B <= (Dims.size() > 1 ? Most : 1) && A * B * 16384 < BestArea; ++B)
        for (uint64_t Clusters : {1u, 2u, 4u})
          for (bool Last : {false, true}) {
            if (A <= Scanned && B <= Scanned)
              continue; // the first pass tried it
            Instance I = launch(KValue);
            if (Dims.size() > 0)
              I.Params[Dims[0]] = 128 * A;
            if (Dims.size() > 1)
              I.Params[Dims[1]] = 128 * B;
            I.GridCtas = Clusters * RP.ClusterSize;
            I.FirstCta = Last ? I.GridCtas - RP.ClusterSize : 0;
            Consider(I, A * B * 16384);
          }
  };
  Scan(64, 0);
  if (!Best)
    Scan(256, 64);
  if (Best)
    return Best;
  // Counts those launches do not give: where the count is not in tiles of 128 (softmax's
  // rows, one or more a CTA: 1 to 64 of them) or depends on which cluster runs it (a
  // causal k-loop of 2 (c + 1) tiles in cluster c): every cluster of grids of up to 64
  // clusters, sizes from 1.
  const uint64_t Most = Dims.size() > 1 ? 16 : 64;
  for (uint64_t Clusters = 1; Clusters <= 64; Clusters *= 2)
    for (uint64_t First = 0; First < Clusters; ++First)
      for (uint64_t A = 1; A <= (Dims.empty() ? 1 : Most); ++A)
        for (uint64_t B = 1; B <= (Dims.size() > 1 ? Most : 1) && A * B < BestArea; ++B) {
          Instance I = launch(KValue);
          if (Dims.size() > 0)
            I.Params[Dims[0]] = A;
          if (Dims.size() > 1)
            I.Params[Dims[1]] = B;
          I.GridCtas = Clusters * RP.ClusterSize;
          I.FirstCta = First * RP.ClusterSize;
          Consider(I, A * B);
        }
  return Best;
}

bool Prover::makeTilePeriodic(ConcreteSystem &S, std::optional<uint64_t> TValue,
                              std::optional<uint64_t> NTValue) const {
  // Threads that part at a loop (ConcreteAgent::After) have no common cycle of tiles.
  if (llvm::any_of(S.Agents, [](const ConcreteAgent &A) { return A.Forked; }))
    return false;
  for (ConcreteAgent &A : S.Agents) {
    unsigned PI = A.Program;
    if (A.Place != Placement::Role || TileLoop[PI] == NoIndex)
      continue;
    LoopId TL = RP.Programs[PI].Loops[TileLoop[PI]].Loop;
    auto TileOf = [&](const ConcreteStep &C) -> int64_t {
      for (const auto &[Loop, V] : C.Iterations)
        if (Loop == TL)
          return static_cast<int64_t>(V);
      return -1;
    };
    // Steps [Begin, End) where Pick holds, and nothing else in between; false if split.
    auto Range = [&](auto Pick, uint32_t &Begin, uint32_t &End) {
      int64_t B = -1, L = -1;
      for (size_t I = 0; I < A.Steps.size(); ++I)
        if (Pick(A.Steps[I])) {
          if (B < 0)
            B = static_cast<int64_t>(I);
          L = static_cast<int64_t>(I);
        }
      if (B < 0)
        return true; // nothing to repeat
      for (int64_t I = B; I <= L; ++I)
        if (!Pick(A.Steps[I]))
          return false;
      Begin = static_cast<uint32_t>(B);
      End = static_cast<uint32_t>(L + 1);
      return true;
    };
    if (NTValue) {
      // The cycle is the first Period tiles from the threshold: run q more times, tile t of
      // it stands for tile t + q*Period, and each tile after it for the one Period*q later,
      // as the lemmas say. (First rather than last, so that launches of every residue share
      // it and can be explored as one: mergeTileCounts.)
      int64_t First = TileThreshold;
      if (!Range([&](const ConcreteStep &C) {
            return TileOf(C) >= First && TileOf(C) < First + int64_t(Period);
          }, A.CycleBegin, A.CycleEnd))
        return false;
    }
    if (!TValue || Varying[PI] == NoIndex)
      continue;
    LoopId KL = RP.Programs[PI].Loops[Varying[PI]].Loop;
    int64_t Trip = (int64_t(*TValue) + Offset[PI]) / Rates[PI];
    int64_t End = Trip - TailLength, First = End - Period / Rates[PI];
    uint64_t Count = NTValue ? *NTValue : 0;
    for (const ConcreteStep &C : A.Steps)
      Count = std::max<uint64_t>(Count, static_cast<uint64_t>(TileOf(C) + 1));
    for (int64_t Tile = 0; Tile < int64_t(Count); ++Tile) {
      uint32_t Begin = 0, Stop = 0;
      auto In = [&](const ConcreteStep &C) {
        if (TileOf(C) != Tile)
          return false;
        for (const auto &[Loop, V] : C.Iterations)
          if (Loop == KL)
            return int64_t(V) >= First && int64_t(V) < End;
        return false;
      };
      if (!Range(In, Begin, Stop))
        return false;
      if (Stop > Begin)
        A.InnerCycles.push_back({Begin, Stop});
    }
    // One inner cycle per tile, or the tiles would not line up between agents.
    if (!A.InnerCycles.empty() && A.InnerCycles.size() != Count)
      return false;
  }
  return true;
}

namespace {
bool sameStep(const ConcreteStep &A, const ConcreteStep &B) {
  return A.Kind == B.Kind && A.RoleStep == B.RoleStep && A.Event == B.Event &&
         A.Barrier == B.Barrier && A.Targets == B.Targets && A.Count == B.Count &&
         A.TxBytes == B.TxBytes && A.Parity == B.Parity && A.Reads == B.Reads &&
         A.Writes == B.Writes && A.PerCopy == B.PerCopy && A.Queue == B.Queue &&
         A.WaitN == B.WaitN && A.ReadOnly == B.ReadOnly && A.NamedId == B.NamedId &&
         A.Arriving == B.Arriving && A.Columns == B.Columns &&
         A.Iterations == B.Iterations && A.Flag == B.Flag &&
         A.Accumulators == B.Accumulators && A.TmemFirst == B.TmemFirst &&
         A.TmemEnd == B.TmemEnd && A.TmemPair == B.TmemPair && A.Undefined == B.Undefined;
}

/// The iteration of loop TL a step is in (-1: not in it).
int64_t tileOf(const ConcreteStep &C, LoopId TL) {
  for (const auto &[Loop, V] : C.Iterations)
    if (Loop == TL)
      return static_cast<int64_t>(V);
  return -1;
}

/// Where an agent's tiles end: after its last step in the tile loop TL (0: none).
size_t tilesEnd(const ConcreteAgent &Ag, LoopId TL) {
  size_t End = 0;
  for (size_t I = 0; I < Ag.Steps.size(); ++I)
    if (tileOf(Ag.Steps[I], TL) >= 0)
      End = I + 1;
  return End;
}

/// Launches that may be explored as one system: the same agents, barriers and buffers, and
/// no agent that parts (ConcreteAgent::After) in either.
bool sameShape(const ConcreteSystem &M, const ConcreteSystem &Base) {
  auto SameBarrier = [](const BarrierInstance &A, const BarrierInstance &B) {
    return A.Array == B.Array && A.Slot == B.Slot && A.Cta == B.Cta;
  };
  auto SameBuffer = [](const BufferInstance &A, const BufferInstance &B) {
    return A.Buffer == B.Buffer && A.Slot == B.Slot && A.Cta == B.Cta;
  };
  auto Forks = [](const ConcreteSystem &S) {
    return llvm::any_of(S.Agents, [](const ConcreteAgent &A) { return A.Forked; });
  };
  return M.Agents.size() == Base.Agents.size() && M.ClusterSize == Base.ClusterSize &&
         M.BlockThreads == Base.BlockThreads &&
         std::equal(M.Barriers.begin(), M.Barriers.end(), Base.Barriers.begin(),
                    Base.Barriers.end(), SameBarrier) &&
         std::equal(M.Buffers.begin(), M.Buffers.end(), Base.Buffers.begin(),
                    Base.Buffers.end(), SameBuffer) &&
         !Forks(M) && !Forks(Base);
}

/// Y's first N steps are X's, and so are the inner cycles among them (those after them, in
/// tiles past N, are each launch's own).
bool samePrefix(const ConcreteAgent &X, const ConcreteAgent &Y, size_t N) {
  if (X.Steps.size() < N || Y.Steps.size() < N ||
      !std::equal(X.Steps.begin(), X.Steps.begin() + N, Y.Steps.begin(), sameStep))
    return false;
  for (size_t I = 0; I < X.InnerCycles.size() && X.InnerCycles[I].second <= N; ++I)
    if (I >= Y.InnerCycles.size() || X.InnerCycles[I] != Y.InnerCycles[I])
      return false;
  return true;
}

/// The same agent of two launches, and (Whole) the same steps and cycles.
bool sameAgent(const ConcreteAgent &X, const ConcreteAgent &Y, bool Whole) {
  return X.Name == Y.Name && X.Program == Y.Program && X.Threads == Y.Threads &&
         (!Whole || (X.Steps.size() == Y.Steps.size() && X.InnerCycles == Y.InnerCycles &&
                     X.CycleBegin == Y.CycleBegin && X.CycleEnd == Y.CycleEnd &&
                     samePrefix(X, Y, X.Steps.size())));
}

/// Out starts as Base, the launch the merged system's main steps come from; false when
/// some member cannot join it.
bool startMerge(llvm::ArrayRef<const ConcreteSystem *> Members, const ConcreteSystem &Base,
                ConcreteSystem &Out) {
  if (!llvm::all_of(Members, [&](const ConcreteSystem *M) { return sameShape(*M, Base); }))
    return false;
  Out = Base;
  return true;
}
} // namespace

LoopId Prover::tiledLoop(const ConcreteAgent &A) const {
  // An agent with no step in its tiles (B5's MMA warp in the peer CTA runs none) has
  // nothing to leave: it must be the same in every launch.
  if (A.Place != Placement::Role || TileLoop[A.Program] == NoIndex)
    return NoIndex;
  LoopId TL = RP.Programs[A.Program].Loops[TileLoop[A.Program]].Loop;
  return tilesEnd(A, TL) ? TL : NoIndex;
}

bool Prover::mergeTileCounts(llvm::ArrayRef<const ConcreteSystem *> Members,
                             ConcreteSystem &Out) const {
  // Each launch is the largest one cut short: the same steps up to where its tiles end,
  // then its own steps after the tile loop. The merged system's schedules, with every agent
  // leaving at the same exit, are then exactly those of the launches together.
  const ConcreteSystem &Base = *Members.back();
  if (!startMerge(Members, Base, Out))
    return false;
  for (unsigned A = 0; A < Base.Agents.size(); ++A) {
    const ConcreteAgent &B = Base.Agents[A];
    ConcreteAgent &To = Out.Agents[A];
    LoopId TL = tiledLoop(B);
    bool Tiled = TL != NoIndex;
    auto InTile = [&](const ConcreteStep &C) { return tileOf(C, TL) >= 0; };
    To.MainEnd = static_cast<uint32_t>(B.Steps.size());
    for (const ConcreteSystem *M : Members.drop_back()) {
      const ConcreteAgent &Ag = M->Agents[A];
      // Not in the tile loop: the same steps in every launch.
      if (!sameAgent(Ag, B, !Tiled) || Ag.CycleBegin != B.CycleBegin ||
          Ag.CycleEnd != B.CycleEnd)
        return false;
      if (!Tiled)
        continue;
      // Where its tiles end: the largest launch must start a tile there, and have the same
      // steps before.
      size_t End = tilesEnd(Ag, TL);
      if (End == 0 || End >= B.Steps.size() || !InTile(B.Steps[End]) ||
          !samePrefix(Ag, B, End))
        return false;
      if (!To.Exits.empty() && To.Exits.back().At >= End)
        return false;
      ConcreteAgent::Exit E;
      E.At = static_cast<uint32_t>(End);
      E.Begin = static_cast<uint32_t>(To.Steps.size());
      To.Steps.insert(To.Steps.end(), Ag.Steps.begin() + End, Ag.Steps.end());
      E.End = static_cast<uint32_t>(To.Steps.size());
      To.Exits.push_back(E);
    }
    if (!Tiled)
      To.MainEnd = 0;
  }
  return true;
}

bool Prover::mergeTileCycle(llvm::ArrayRef<const ConcreteSystem *> Small,
                            llvm::ArrayRef<const ConcreteSystem *> Late,
                            ConcreteSystem &Out) const {
  // Why it is the launches together: leaving at exit e in the first pass runs the steps of
  // the launch of e + 1 tiles (checked below: the same steps up to where its tiles end);
  // in pass p >= 1, those of the launch of Period + e + 1 tiles run as its periodic system
  // runs it with p - 1 passes more (its tiles after the cycle are checked to be the
  // cycle's first e + 1 tiles, as the lemmas say, up to the tile's number); at the cycle's
  // end after p passes, the launch of Period tiles, as its own periodic system.
  if (TileThreshold != 0 || Small.size() + 1 != Period || Late.size() != Period)
    return false;
  const ConcreteSystem &Base = *Late.front();
  std::vector<const ConcreteSystem *> All(Small.begin(), Small.end());
  All.insert(All.end(), Late.begin() + 1, Late.end());
  if (!startMerge(All, Base, Out))
    return false;
  for (unsigned A = 0; A < Base.Agents.size(); ++A) {
    const ConcreteAgent &B = Base.Agents[A];
    LoopId TL = tiledLoop(B);
    // Not in the tile loop: the same steps in every launch.
    for (const ConcreteSystem *M : All)
      if (!sameAgent(M->Agents[A], B, TL == NoIndex))
        return false;
    if (TL == NoIndex)
      continue; // MainEnd stays 0: no exits
    ConcreteAgent &To = Out.Agents[A];
    To.MainEnd = static_cast<uint32_t>(B.Steps.size());
    if (!B.hasCycle() || tilesEnd(B, TL) != B.CycleEnd)
      return false;
    for (size_t E = 0; E + 1 < Period; ++E) {
      // Pass 0: the launch of E + 1 tiles, cut where its tiles end, which must be where
      // the base starts tile E + 1, inside the cycle.
      const ConcreteAgent &Sm = Small[E]->Agents[A];
      size_t End = tilesEnd(Sm, TL);
      if (Sm.hasCycle() || End <= B.CycleBegin || End >= B.CycleEnd ||
          tileOf(B.Steps[End], TL) != int64_t(E + 1) || !samePrefix(Sm, B, End))
        return false;
      // Later passes: the launch of Period + E + 1 tiles, whose tiles after the cycle must
      // be the cycle's first E + 1, tile t standing for t - Period.
      const ConcreteAgent &Lt = Late[E + 1]->Agents[A];
      size_t LateEnd = tilesEnd(Lt, TL);
      size_t Tail = End - B.CycleBegin;
      if (Lt.CycleBegin != B.CycleBegin || Lt.CycleEnd != B.CycleEnd ||
          LateEnd != B.CycleEnd + Tail || !samePrefix(Lt, B, B.CycleEnd))
        return false;
      for (size_t J = 0; J < Tail; ++J) {
        ConcreteStep Shifted = Lt.Steps[B.CycleEnd + J];
        for (auto &[Loop, V] : Shifted.Iterations)
          if (Loop == TL) {
            if (V < Period)
              return false;
            V -= Period;
          }
        if (!sameStep(Shifted, B.Steps[B.CycleBegin + J]))
          return false;
      }
      ConcreteAgent::Exit X;
      X.At = static_cast<uint32_t>(End);
      X.InCycle = true;
      X.Begin = static_cast<uint32_t>(To.Steps.size());
      To.Steps.insert(To.Steps.end(), Sm.Steps.begin() + End, Sm.Steps.end());
      X.End = static_cast<uint32_t>(To.Steps.size());
      X.LateBegin = X.End;
      To.Steps.insert(To.Steps.end(), Lt.Steps.begin() + LateEnd, Lt.Steps.end());
      X.LateEnd = static_cast<uint32_t>(To.Steps.size());
      To.Exits.push_back(X);
    }
  }
  return true;
}

void Prover::runTiles() {
  auto Launch = [&](uint64_t TV, uint64_t NTV) { return tileLaunch(TV * O.TileK, NTV); };
  // A class's K, in what explorations are called: `K = 640 + 8j tiles`.
  // (Nothing where K stands in for no parameter.)
  auto KText = [&](uint64_t TV, bool TP) {
    if (KStandIn)
      return std::string();
    return R.Parameter + " = " + std::to_string(TV * O.TileK) +
           (TP ? " + " + std::to_string(Period) + "j tiles" : "") + ", ";
  };
  // One class: its launch, its system (periodic in the tiles, the k-tiles or both), and
  // what it is called; Error when it cannot be built.
  struct Class {
    uint64_t TV = 0, NTV = 0;
    bool TP = false, NP = false;
    std::optional<Instance> I;
    ConcreteSystem S;
    std::string What, Error;
    /// What exploring S found, when a worker ran it ahead (a member of a part that no merged
    /// system stands for), and how long it took.
    std::optional<std::pair<ExploreResult, double>> Done;
  };
  auto Build = [&](uint64_t TV, uint64_t NTV, bool TP, bool NP) {
    Class C;
    C.TV = TV, C.NTV = NTV, C.TP = TP, C.NP = NP;
    C.I = Launch(TV, NTV);
    C.What = KText(TV, TP) + std::to_string(NTV) +
             (NP ? " + " + std::to_string(Period) + "i" : "") + " tile(s) per CTA";
    if (!C.I) {
      C.Error = "no launch found where a CTA runs " + std::to_string(NTV) + " tiles";
      // B5's trip-count variant: only the first thread of a role advances its scheduler.
      if (isThreadDependent(NT))
        C.Error += ": the tile count (" + P.exprString(NT) +
                   ") depends on the thread, and the explorer runs one tile count per role";
      return C;
    }
    C.S = instantiate(RP, *C.I);
    if (!C.S.Unknown.empty())
      C.Error = C.What + ": " + C.S.Unknown;
    else if ((TP || NP) &&
             !makeTilePeriodic(C.S, TP ? std::optional<uint64_t>(TV) : std::nullopt,
                               NP ? std::optional<uint64_t>(NTV) : std::nullopt))
      C.Error = C.What + ": the steps of the last " + std::to_string(Period) +
                " iterations are not contiguous";
    return C;
  };
  auto Finish = [&](Class &C, const ExploreResult *Done, double DoneMs) {
    if (!C.Error.empty())
      return unknown(C.Error);
    if (explore(C.S, C.What, *C.I, Done, DoneMs))
      return true;
    if (R.Verdict == ExploreVerdict::Unknown || (!C.TP && !C.NP))
      return false;
    // Reproduce it on a real launch of that class.
    ExploreResult Periodic = std::move(R.Found);
    for (uint64_t Jn = 0; Jn < (OnlyTV ? 1 : 3); ++Jn)
      for (uint64_t In = 0; In < 3; ++In) {
        // (Where K is fixed, on a launch with it.)
        uint64_t TJ = OnlyTV ? *OnlyTV : C.TV + (C.TP ? Jn * Period : 0),
                 NJ = C.NTV + (C.NP ? In * Period : 0);
        std::optional<Instance> L = Launch(TJ, NJ);
        if (!L)
          continue;
        ExploreResult E = wsv::analyzer::explore(instantiate(RP, *L));
        if (E.Verdict != ExploreVerdict::Clean && E.Verdict != ExploreVerdict::Unknown) {
          R.Verdict = E.Verdict;
          R.Found = std::move(E);
          R.Launch = *L;
          R.Reason = KText(TJ, false) + std::to_string(NJ) + " tile(s) per CTA: " +
                     R.Found.Message;
          return false;
        }
      }
    return unknown("the periodic search found '" + Periodic.Message +
                   "' but no launch with up to 2 more periods reproduces it");
  };
  auto Explore = [&](uint64_t TV, uint64_t NTV, bool TP, bool NP) {
    Class C = Build(TV, NTV, TP, NP);
    return Finish(C, nullptr, 0);
  };
  // Bugs first: small launches, one tile per CTA, then two. A second tile costs more
  // states than k-tiles do (the next tile's main loop runs beside the last one's
  // epilogue). Within a tile count, 1 and 2 k-tiles, then the launch that wraps every ring
  // (Ring + 1 k-tiles), then those between: a bug of the wrap then costs a search only as
  // deep as its schedule (b5's arrival count: 173,000 states, where a full search of 4
  // k-tiles runs out of states first). One that runs out of states says nothing about the
  // others: launches no larger in either count are still tried, so that a bug in the
  // second tile is found even when many k-tiles of one tile are too many states.
  // Tile counts that no launch gives a CTA (a causal k-loop of 2 (c + 1) tiles in CTA c
  // has no odd count): where no launch is found, Z3 shows there is none, and the class has
  // nothing to explore.
  std::set<std::pair<bool, uint64_t>> NoLaunch; // (periodic, count)
  auto Absent = [&](uint64_t TV, uint64_t NTV, bool NP) {
    if (Launch(TV, NTV) || !noTileCount(NTV, NP))
      return false;
    NoLaunch.insert({NP, NTV});
    return true;
  };
  unsigned Ring = deepestRing();
  std::vector<std::pair<uint64_t, uint64_t>> Small, Bounded;
  for (uint64_t NTV : {1u, 2u}) {
    std::vector<uint64_t> Order = {O.MinTiles, O.MinTiles + 1, O.MinTiles + Ring};
    for (uint64_t TV = O.MinTiles + 2; TV < O.MinTiles + Ring; ++TV)
      Order.push_back(TV);
    for (uint64_t TV : Order)
      if (!llvm::is_contained(Small, std::pair{TV, NTV}) && (!OnlyTV || TV == *OnlyTV) &&
          !Absent(TV, NTV, false))
        Small.push_back({TV, NTV});
  }
  std::string FirstBound;
  for (const auto &Launch : Small) {
    const uint64_t TV = Launch.first, NTV = Launch.second; // captured below (C++17)
    if (llvm::any_of(Bounded, [&](const auto &B) { return TV >= B.first && NTV >= B.second; }))
      continue;
    if (Explore(TV, NTV, false, false))
      continue;
    if (R.Verdict != ExploreVerdict::Unknown)
      return;
    if (FirstBound.empty())
      FirstBound = R.Reason;
    Bounded.push_back({TV, NTV});
  }
  if (!Bounded.empty() && !Small.empty()) {
    // The largest small launch wraps every ring in both loops: a depth-first search of it
    // may find what the full searches ran out of states before. Only after them: its
    // schedule is a real one but long (b5's arrival count: 371 steps where the full search
    // of one tile of 5 k-tiles, tried after a bounded search of 2 tiles, finds 72).
    auto [BigTV, BigNTV] = *llvm::max_element(Small);
    Class C = Build(BigTV, BigNTV, false, false);
    if (C.Error.empty() && searchDeep(C.S, C.What, *C.I))
      return;
    return void(unknown(FirstBound));
  }
  collectUses();
  unsigned M = slotPeriod(), RateLcm = 1;
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    RateLcm = std::lcm(RateLcm, Rates[PI]);
  if (std::lcm(M, RateLcm) > 16)
    return void(unknown("the slots' period " + std::to_string(std::lcm(M, RateLcm)) +
                        " is too long for tiles and k-tiles together"));
  if (!proveTripForms())
    return;
  LastTiles = KStandIn ? 0 : lastTilesTold();
  // As for one tile (ExploreParametric.cpp): M * Rate where each iteration is one stage of
  // a k-tile wider than the domain's.
  if (!findThresholds(std::lcm(M, RateLcm), {0u, 1u}) &&
      (RateLcm == 1 || M * RateLcm > 16 || !findThresholds(M * RateLcm, {0u, 1u})))
    return;
  R.Period = Period;
  R.Threshold = Threshold;
  R.Tail = TailLength;
  R.Tiles = true;
  R.TileThreshold = TileThreshold;
  // The classes: each small count as it is, each residue above the threshold periodic.
  std::vector<std::pair<uint64_t, bool>> TClasses, NTClasses;
  for (uint64_t TV = O.MinTiles; TV < Tmin + Period; ++TV)
    // (Where K is fixed, only its class: the one of its k-tiles.)
    if (!OnlyTV || (TV < Tmin ? TV == *OnlyTV : *OnlyTV >= Tmin && *OnlyTV % Period == TV % Period))
      TClasses.push_back({TV, TV >= Tmin});
  for (uint64_t NTV = 0; NTV < NTmin + Period; ++NTV)
    if (!Absent(TClasses.empty() ? O.MinTiles : TClasses.front().first, NTV, NTV >= NTmin))
      NTClasses.push_back({NTV, NTV >= NTmin});
  // Per class of K, the periodic tile counts are one job, explored as one system
  // (mergeTileCounts): they share the cycle of the first Period tiles, which each explored
  // on its own again (H5: 778,000 states in all instead of 1.9 million; B5 1.7 million
  // instead of 2.0). The small tile counts from 1 are another: each launch is a prefix of
  // the largest (H5 with both merged: 470,580 states in 61 explorations, against 750,349 in
  // 153 with the small counts one by one; B4 144,716 against 187,186; B5 1.02 million
  // against 0.97). That pays only since leaving the tile loop or going on goes alone
  // (Simulator::commutes); before, every agent at an exit was searched in every order, and
  // B5's small counts merged took twice the states of their launches one by one. Where the merged search is not clean, or the launches cannot
  // be merged, each is explored on its own, so that verdicts and counterexamples are those
  // of single launches.
  // Both, where the tile threshold is 0 and a tile has at least as many k-tiles as the
  // deepest ring has slots, are one job and, where their steps line up, one system
  // (mergeTileCycle): the periodic system of Period tiles with an exit after each of its
  // tiles in every pass, which needs no tiles after the cycle and no second run through the
  // small counts' tiles (H5 314,406 -> 169,738 states, B5 621,715 -> 431,231). With fewer
  // k-tiles a producer runs whole tiles ahead of the agents that drain its ring, agents
  // stand in different passes, and every exit is reached at many distances between them:
  // B5's K = 64 to 192 then ran past 150,000 states each (26,600 + 45,491 as two systems),
  // and H5's K = 64 took 32,107 against 12,081 + 9,610.
  using Job = std::tuple<uint64_t, uint64_t, bool, bool>;
  // A job's classes, and how many of them are the small counts ahead of the periodic ones
  // that mergeTileCycle may join (0: none to join).
  std::vector<std::pair<std::vector<Job>, size_t>> Jobs;
  // (It stands for every count from 1: not where some have no launch.)
  bool Cycle = O.MergeTileCounts && O.MergeTileCycle && TileThreshold == 0 && NoLaunch.empty();
  for (auto [TV, TP] : TClasses) {
    std::vector<Job> Periodic, SmallCounts;
    for (auto [NTV, NP] : NTClasses) {
      if (NP && O.MergeTileCounts)
        Periodic.push_back({TV, NTV, TP, NP});
      else if (NTV >= 1 && O.MergeTileCounts)
        SmallCounts.push_back({TV, NTV, TP, NP});
      else if (NP || TP || NTV == 0 || NTV > 2 || TV > O.MinTiles + Ring)
        Jobs.push_back({{{TV, NTV, TP, NP}}, 0}); // (the others were explored above)
    }
    if (Cycle && TV >= Ring && !SmallCounts.empty() && !Periodic.empty()) {
      size_t Split = SmallCounts.size();
      SmallCounts.insert(SmallCounts.end(), Periodic.begin(), Periodic.end());
      Jobs.push_back({std::move(SmallCounts), Split});
      continue;
    }
    if (!SmallCounts.empty())
      Jobs.push_back({std::move(SmallCounts), 0});
    if (!Periodic.empty())
      Jobs.push_back({std::move(Periodic), 0});
  }
  // A job: its classes, and the parts it is explored in: each a range of its classes, the
  // merged system when there are several, and what exploring the one that runs found (when
  // it ran ahead, on a worker).
  struct Part {
    size_t First = 0, Last = 0;
    std::optional<Class> Merged;
    std::optional<std::pair<ExploreResult, double>> Done;
  };
  struct Work {
    std::vector<Class> Members;
    std::vector<Part> Parts;
  };
  // The systems of members [First, Last), none when one could not be built.
  auto Systems = [](Work &W, size_t First, size_t Last) {
    std::optional<std::vector<const ConcreteSystem *>> Out{std::in_place};
    for (size_t I = First; I < Last; ++I) {
      if (!W.Members[I].Error.empty())
        return decltype(Out)();
      Out->push_back(&W.Members[I].S);
    }
    return Out;
  };
  // A merged class: the launch of Like, named for the tile counts it stands for.
  auto MergedLike = [&](const Class &Like, const std::string &Counts) {
    Class M;
    M.TV = Like.TV, M.NTV = Like.NTV, M.TP = Like.TP, M.NP = Like.NP;
    M.I = Like.I;
    M.What = KText(Like.TV, Like.TP) + Counts + " tiles per CTA";
    return M;
  };
  auto Merge = [&](Work &W, size_t First, size_t Last) {
    Part P;
    P.First = First, P.Last = Last;
    auto Members = Last - First < 2 ? std::nullopt : Systems(W, First, Last);
    if (!Members)
      return P;
    const Class &Front = W.Members[First], &Back = W.Members[Last - 1];
    Class M = MergedLike(Back, std::to_string(Front.NTV) + " to " + std::to_string(Back.NTV) +
                                   (Back.NP ? " + " + std::to_string(Period) + "i" : ""));
    if (mergeTileCounts(*Members, M.S))
      P.Merged = std::move(M);
    return P;
  };
  auto MergeCycle = [&](Work &W, size_t Split) {
    auto Members = Systems(W, 0, W.Members.size());
    if (!Members)
      return false;
    Class M =
        MergedLike(W.Members[Split], std::to_string(W.Members.front().NTV) + " or more");
    llvm::ArrayRef<const ConcreteSystem *> All(*Members);
    if (!mergeTileCycle(All.take_front(Split), All.drop_front(Split), M.S))
      return false;
    Part P;
    P.First = 0, P.Last = W.Members.size();
    P.Merged = std::move(M);
    W.Parts.push_back(std::move(P));
    return true;
  };
  // A part's members one by one (after a merged search that was not clean: one of them
  // finds it, with a real launch; if none does, the merged search said more than they do).
  auto FinishMembers = [&](Work &W, Part &P, bool AfterMerged) {
    ExploreVerdict Merged = R.Verdict;
    std::string Why = R.Reason;
    for (size_t I = P.First; I < P.Last; ++I) {
      const auto &D = W.Members[I].Done;
      if (!Finish(W.Members[I], D ? &D->first : nullptr, D ? D->second : 0))
        return false;
    }
    if (AfterMerged && Merged != ExploreVerdict::Unknown)
      return unknown("the search of " + P.Merged->What + " ended " + toString(Merged) +
                     " (" + Why + ") but each tile count on its own is clean");
    return true;
  };
  // What runs: the merged system, or a lone class.
  auto Runs = [](Work &W, Part &P) -> Class * {
    if (P.Merged)
      return &*P.Merged;
    return P.Last - P.First == 1 && W.Members[P.First].Error.empty() ? &W.Members[P.First]
                                                                     : nullptr;
  };
  std::vector<Work> Works(Jobs.size());
  auto BuildJob = [&](size_t I) {
    Work &W = Works[I];
    auto &[Classes, Split] = Jobs[I];
    W.Members.reserve(Classes.size());
    for (auto [TV, NTV, TP, NP] : Classes)
      W.Members.push_back(Build(TV, NTV, TP, NP));
    if (Split && MergeCycle(W, Split))
      return;
    if (Split) {
      W.Parts.push_back(Merge(W, 0, Split));
      W.Parts.push_back(Merge(W, Split, W.Members.size()));
    } else {
      W.Parts.push_back(Merge(W, 0, W.Members.size()));
    }
  };
  // With several threads every job is built and explored on a worker, in order, while the
  // results are taken in order here: no thread waits at the end of a batch, and building
  // (a third of the time of exploring H5's classes) runs beside the explorations. A clean
  // part's systems are freed at once (what it found is all that is read of it); the others
  // are kept for their members' own searches.
  std::atomic<bool> Stop{false};
  std::vector<std::shared_future<void>> Ready;
  std::optional<llvm::DefaultThreadPool> Pool;
  if (threads() > 1) {
    Pool.emplace(llvm::hardware_concurrency(threads()));
    ExploreOptions EO = exploreOptions();
    for (size_t I = 0; I < Works.size(); ++I)
      Ready.push_back(Pool->async([&, I, EO] {
        if (Stop)
          return;
        BuildJob(I);
        Work &W = Works[I];
        // Explores C ahead; false when what it found is not clean.
        auto Ahead = [&](ConcreteSystem &S, std::optional<std::pair<ExploreResult, double>> &To) {
          auto Start = std::chrono::steady_clock::now();
          ExploreResult E = wsv::analyzer::explore(S, EO);
          double Ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - Start)
                          .count();
          bool Clean = E.Verdict == ExploreVerdict::Clean;
          if (Clean)
            S = ConcreteSystem();
          To.emplace(std::move(E), Ms);
          return Clean;
        };
        for (Part &P : W.Parts) {
          if (Stop)
            return;
          if (Class *C = Runs(W, P)) {
            if (!Ahead(C->S, P.Done))
              return; // the parts after it wait for the verdict here
            for (size_t M = P.First; M < P.Last; ++M)
              W.Members[M].S = ConcreteSystem();
            continue;
          }
          // No merged system stands for the part (the tile counts' systems did not merge,
          // as on Triton's persistent matmuls): its members one by one, ahead too, up to
          // the first that is not clean (that one's verdict is taken here, in order).
          for (size_t M = P.First; M < P.Last; ++M) {
            Class &Member = W.Members[M];
            if (Stop || !Member.Error.empty() || !Ahead(Member.S, Member.Done))
              return;
          }
        }
      }));
  }
  auto Leave = [&] {
    Stop = true;
    if (Pool)
      Pool->wait();
  };
  for (size_t I = 0; I < Works.size(); ++I) {
    if (Pool)
      Ready[I].wait();
    else
      BuildJob(I);
    Work &W = Works[I];
    for (Part &P : W.Parts) {
      Class *C = Runs(W, P);
      const std::pair<ExploreResult, double> *D = P.Done ? &*P.Done : nullptr;
      if (P.Merged) {
        if (explore(C->S, C->What, *C->I, D ? &D->first : nullptr, D ? D->second : 0))
          continue;
        if (O.MaxTotalStates && R.States >= O.MaxTotalStates)
          return Leave(); // the budget is spent: the launches one by one would say nothing more
        if (!FinishMembers(W, P, /*AfterMerged=*/true))
          return Leave();
        continue;
      }
      if (C ? !Finish(*C, D ? &D->first : nullptr, D ? D->second : 0)
            : !FinishMembers(W, P, /*AfterMerged=*/false))
        return Leave();
    }
    W = Work();
  }
  R.Verdict = ExploreVerdict::Clean;
  std::string Never;
  for (auto [NP, Count] : NoLaunch)
    Never += (Never.empty() ? "" : ", ") + std::to_string(Count) +
             (NP ? " + " + std::to_string(Period) + "i" : "");
  if (!Never.empty())
    Never = "; Z3: no launch gives a CTA " + Never + (KStandIn ? " iterations" : " tiles");
  if (KStandIn) {
    // No parameter of the kernel's sets a k-loop: the tile loop's trip count is what the
    // launch varies (softmax's rows, a causal k-loop's diagonal).
    std::set<unsigned> Loops;
    for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
      if (TileLoop[PI] != NoIndex)
        Loops.insert(P.Loops[RP.Programs[PI].Loops[TileLoop[PI]].ProtocolLoop].Where.PtxLine);
    std::string Lines;
    for (unsigned L : Loops)
      Lines += (Lines.empty() ? "" : ", ") + std::to_string(L);
    return void(R.ForParameters = "every launch and every trip count of the loop at ptx line " +
                                  Lines + " (" + gridBounds() + Never + ")");
  }
  R.ForParameters = (OnlyTV ? R.Parameter + " = " + std::to_string(*OnlyTV * O.TileK)
                            : everyK()) +
                    ", and every grid and tile count (" + gridBounds() + Never + ")";
}

bool Prover::noTileCount(uint64_t Count, bool Periodic) {
  // The CTA's tiles: NT where its loop runs, none elsewhere.
  unsigned W = NT->width();
  const Expr *Runs = NTWhen ? Ctx.select(NTWhen, NT, c(0, W)) : NT;
  const Expr *Is = Ctx.eq(Runs, c(Count, W));
  if (Periodic)
    Is = Ctx.logicalAnd(Ctx.uge(Runs, c(Count, W)),
                        Ctx.eq(Ctx.urem(Ctx.sub(Runs, c(Count, W)), c(Period, W)), c(0, W)));
  ++R.SolverQueries;
  return gridZ3().isValid(Ctx.implies(domain(K), Ctx.logicalNot(Is))).Answer ==
         SolverAnswer::Yes;
}

std::string Prover::gridBounds() const {
  // gridDomain's bounds, named: the parameters the tile count reads (M and N of the
  // reference kernels, param_15 and param_16 of Triton's) below 2^20, the grid below 2^16.
  std::set<std::string> Params; // (sorted: Grid follows the leaves' addresses)
  for (const Expr *L : Grid)
    if (L->is(ExprKind::Param))
      Params.insert(paramName(L));
  std::string Names;
  for (const std::string &N : Params)
    Names += (Names.empty() ? "" : ", ") + N;
  return (Names.empty() ? std::string() : Names + " < 2^20, ") + "%nctaid.x < 2^16";
}

