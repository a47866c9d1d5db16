//===- ExploreParametric.cpp - every trip count of the k-loop, by periodicity ------===//
//
// A pipeline's k-loop runs T(K) times (K / 64, K / 64 - 3, ...), and every agent's steps in
// iteration k name slots and parities that repeat with a period M (k % S, (k / S) & 1: M = 2S).
// The explorer checks one instance; this file turns finitely many explorations into a
// statement for every K:
//
//  1. Lemmas, proved by Z3 over bit vectors for all values (Solver.h), with j, p >= 0 and
//     K, K' in the domain D (K a multiple of the k-tile, K >= the k-tile, K < 2^24, and the
//     trip-count conditions the code does not check itself):
//       - every agent's varying loop runs T(K) + c iterations (one T for all; c constant);
//       - when T(K') = T(K) + j*M and T(K) >= Tmin, every expression outside a varying loop
//         (counts, bytes, parities, conditions, trip counts of fixed loops) has the same value
//         under K and K', and every expression in iteration k of a varying loop has, under
//         K', the value it had under K in iteration k (for k < its trip under K) and in
//         iteration k + p*M (for C0 <= k, p <= j);
//       - two K with the same T give every expression the same value;
//       - every K of the domain with T(K) < Tmin is at most the largest K scanned.
//  2. Every T below Tmin that some K of the scan reaches is explored as it is (Explore.h).
//  3. For each residue r < M, the instance with T = Tmin + r becomes a periodic system: each
//     agent's last M iterations of its varying loop form a cycle that it may run any number
//     of times more, all agents the same number (ExploreSimulator: the first to leave fixes
//     the count). By the lemmas, unrolling the cycle j more times gives exactly the steps of
//     the instance with T = Tmin + r + j*M, for every j, so the periodic system's schedules
//     are those of all of them together. Its states are finite once completed phases count
//     only by parity and passes only by their differences; the search gives up (unknown)
//     when agents drift apart by more than ExploreOptions::MaxLag passes.
// A bad state of a periodic system is reproduced on concrete instances (T = Tmin + r + j*M for
// small j) before it is reported, so that every counterexample is a schedule of a real
// launch.
//
// Persistent kernels (every role's outermost loop runs over the grid's tiles, NT times, the
// k-loop inside it) get the same argument in two dimensions. The lemmas also cover the
// launch's grid and sizes (primed copies of M, N, %ctaid.x, %nctaid.x): with NT' = NT + i*M,
// tile t stands for tile t + q*M (q <= i), and conditions like `%ctaid.x < tiles` must be
// decided by whether the CTA has a tile. Each class of (T, NT) is explored: small ones as
// launches, the others with the last M tiles as an outer cycle and, in every tile, the last M
// k-iterations as an inner cycle (ConcreteAgent::InnerCycles). Agents agree on each tile's
// inner pass count separately, so the system also runs launches whose tiles differ in K; it
// has the real launches among its schedules, which is what a proof needs.
//
// What the lemmas cannot establish (a second parameter in trip counts, a nested varying
// loop, a value that depends on K other than through T) leaves the verdict unknown, with the
// reason. Two things follow an unknown: where a term of the launch alone, replaced by 0,
// gives the programs this shape (H6 without stream-K), the argument for those launches
// (ExploreRestriction.cpp); and where the user gave a launch in full, every cluster of it
// explored (ExploreLaunch.cpp).
//
//===----------------------------------------------------------------------------------===//
#include "ExploreParametric.h"

#include "llvm/Support/ThreadPool.h"

#include <chrono>
#include <numeric>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::parametric;

Instance Prover::launch(uint64_t KValue) const {
  Instance I;
  I.Params = O.Params;
  if (K && !KStandIn)
    I.Params[R.Parameter] = KValue;
  I.GridCtas = RP.ClusterSize;
  return I;
}

bool Prover::makePeriodic(ConcreteSystem &S, uint64_t TValue) const {
  for (ConcreteAgent &A : S.Agents) {
    unsigned PI = A.Program;
    if (Varying[PI] == NoIndex)
      continue;
    LoopId L = RP.Programs[PI].Loops[Varying[PI]].Loop;
    int64_t Trip = (int64_t(TValue) + Offset[PI]) / Rates[PI];
    int64_t End = Trip - TailLength, First = End - Period / Rates[PI];
    int64_t Begin = -1, Last = -1;
    for (size_t I = 0; I < A.Steps.size(); ++I)
      for (const auto &[Loop, V] : A.Steps[I].Iterations)
        if (Loop == L && int64_t(V) >= First && int64_t(V) < End) {
          if (Begin < 0)
            Begin = static_cast<int64_t>(I);
          Last = static_cast<int64_t>(I);
        }
    if (Begin < 0)
      continue; // no step in the loop: nothing to repeat
    // The cycle must be exactly those iterations' steps.
    for (int64_t I = Begin; I <= Last; ++I) {
      bool In = false;
      for (const auto &[Loop, V] : A.Steps[I].Iterations)
        In |= Loop == L && int64_t(V) >= First && int64_t(V) < End;
      if (!In)
        return false;
    }
    A.CycleBegin = static_cast<uint32_t>(Begin);
    A.CycleEnd = static_cast<uint32_t>(Last + 1);
  }
  return true;
}

unsigned Prover::threads() const {
  if (O.Threads)
    return O.Threads;
  return std::max(1u, std::min(4u, llvm::hardware_concurrency().compute_thread_count()));
}

ExploreOptions Prover::exploreOptions() const {
  ExploreOptions EO;
  EO.MaxStates = O.MaxStates;
  EO.MaxLag = O.MaxLag;
  EO.StopAtDeadlock = O.StopAtDeadlock;
  EO.StopAtRace = O.StopAtRace;
  return EO;
}

std::vector<std::pair<ExploreResult, double>>
Prover::exploreAhead(const std::vector<const ConcreteSystem *> &Systems) const {
  std::vector<std::pair<ExploreResult, double>> Out;
  unsigned N = threads();
  if (N <= 1 || Systems.size() <= 1)
    return Out;
  Out.resize(Systems.size());
  ExploreOptions EO = exploreOptions();
  // Explorations share nothing but the read-only system they run (a simulator each).
  llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(N));
  for (size_t I = 0; I < Systems.size(); ++I)
    Pool.async([&, I] {
      auto Start = std::chrono::steady_clock::now();
      Out[I].first = wsv::analyzer::explore(*Systems[I], EO);
      Out[I].second = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - Start)
                          .count();
    });
  Pool.wait();
  return Out;
}

bool Prover::explore(const ConcreteSystem &S, const std::string &What, const Instance &At,
                     const ExploreResult *Done, double DoneMs) {
  ExploreOptions EO = exploreOptions();
  bool Budget = false;
  if (O.MaxTotalStates) {
    if (R.States >= O.MaxTotalStates)
      return unknown("the budget of " + std::to_string(O.MaxTotalStates) +
                     " states for all explorations was spent after " +
                     std::to_string(R.Runs.size()) + " of them, before " + What);
    Budget = O.MaxTotalStates - R.States < EO.MaxStates;
    EO.MaxStates = std::min(EO.MaxStates, O.MaxTotalStates - R.States);
  }
  auto Start = std::chrono::steady_clock::now();
  ExploreResult E;
  double Ms = DoneMs;
  if (Done && Done->States <= EO.MaxStates) {
    // The same search as running it now: it ended within this exploration's bound.
    E = *Done;
  } else if (Done && Done->States > EO.MaxStates && EO.MaxStates < O.MaxStates) {
    // Run now, it would have stopped at the smaller bound the budget leaves.
    E.Verdict = ExploreVerdict::Unknown;
    E.States = EO.MaxStates + 1;
    E.Message = "state bound of " + std::to_string(EO.MaxStates) +
                " reached before every schedule was explored (--max-states raises it)";
  } else if (Done) {
    E = *Done;
  } else {
    E = wsv::analyzer::explore(S, EO);
    Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
             .count();
  }
  if (Budget && E.Verdict == ExploreVerdict::Unknown && E.States > EO.MaxStates)
    E.Message = "the budget of " + std::to_string(O.MaxTotalStates) +
                " states for all explorations was spent in this one";
  R.States += E.States;
  R.Runs.push_back(What + ": " + toString(E.Verdict) + " (" + std::to_string(E.States) +
                   " states)");
  if (O.OnRun)
    O.OnRun(R.Runs.back(), Ms);
  if (E.Verdict == ExploreVerdict::Clean)
    return true;
  if (E.Verdict == ExploreVerdict::Unknown)
    return unknown(What + ": " + E.Message);
  R.Verdict = E.Verdict;
  R.Found = std::move(E);
  R.Launch = At;
  R.Reason = What + ": " + R.Found.Message;
  return false;
}

bool Prover::searchDeep(const ConcreteSystem &S, const std::string &What,
                        const Instance &At) {
  // A depth-first search reaches the late k-tiles of a launch (a ring that wraps) within a
  // quarter of the bound. Only its bugs count (replayed: a real schedule, not the shortest);
  // finding none says nothing. Not for periodic systems, whose cycles it would run around.
  bool Periodic = llvm::any_of(S.Agents, [](const ConcreteAgent &A) {
    return A.hasCycle() || !A.InnerCycles.empty();
  });
  ExploreOptions DO = exploreOptions();
  DO.DepthFirst = true;
  DO.MaxStates = O.MaxStates / 4;
  bool Left = !O.MaxTotalStates ||
              (R.States < O.MaxTotalStates && O.MaxTotalStates - R.States > DO.MaxStates);
  if (Periodic || !Left)
    return false;
  auto Start = std::chrono::steady_clock::now();
  ExploreResult D = wsv::analyzer::explore(S, DO);
  R.States += D.States;
  R.Runs.push_back(What + ", depth-first: " + toString(D.Verdict) + " (" +
                   std::to_string(D.States) + " states)");
  if (O.OnRun)
    O.OnRun(R.Runs.back(), std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - Start)
                               .count());
  if (D.Verdict == ExploreVerdict::Clean || D.Verdict == ExploreVerdict::Unknown)
    return false;
  R.Verdict = D.Verdict;
  R.Found = std::move(D);
  R.Launch = At;
  R.Reason = What + " (found by a depth-first search: a real schedule, not the shortest): " +
             R.Found.Message;
  return true;
}

void Prover::smallLaunches(std::string Why) {
  // No statement for every parameter; small launches may still show a bug: 1 and 2 k-tiles
  // and one more than the deepest ring, 1 and 2 tiles per CTA for a persistent loop. The
  // reason says how many were explored, and why none was where none could be instantiated:
  // "explored without finding a bug" must not stand for launches that never ran. A launch
  // given in full is explored instead (exploreLaunch): these, with its M and N and other K,
  // would be neither it nor small.
  unknown(Why);
  if (O.Launch)
    return;
  unsigned Ring = deepestRing();
  std::set<std::pair<unsigned, unsigned>> Tried;
  unsigned First = static_cast<unsigned>(O.MinTiles);
  bool Bounded = false;
  unsigned Explored = 0;
  std::string NotRun; // why the first launch that could not be instantiated was not
  auto Done = [&](std::string Range) {
    // The larger launches and the reason wait for the argument where the restriction's
    // term is 0 (runAndFallBack): what it proves, they need not explore.
    SmallLaunches Small{Why, std::move(Range), Explored, Bounded, NotRun};
    if (restriction())
      Deferred = std::move(Small);
    else
      finishSmall(std::move(Small));
  };
  if (K) {
    // The k-loop's parameter alone: 1 to 2 * Ring + 1 k-tiles.
    unsigned Last = First;
    for (unsigned J = First; J <= First + 2 * Ring && !Bounded; ++J) {
      if (CleanK.count(J * O.TileK)) {
        cover(instance(J * O.TileK));
        ++Explored; // explored before the lemmas
        Last = J;
        continue;
      }
      ConcreteSystem S = instance(J * O.TileK);
      if (!S.Unknown.empty()) {
        NotRun = R.Parameter + " = " + std::to_string(J * O.TileK) + ": " + S.Unknown;
        break;
      }
      if (!explore(S, R.Parameter + " = " + std::to_string(J * O.TileK), launch(J * O.TileK))) {
        if (R.Verdict != ExploreVerdict::Unknown)
          return;
        Bounded = true;
      }
      cover(S);
      ++Explored;
      Last = J;
    }
    Done("launches up to " + R.Parameter + " = " + std::to_string(Last * O.TileK));
    return;
  }
  for (unsigned KTiles : {First, First + 1, std::max(First, Ring + 1)})
    for (unsigned Tiles : {1u, 2u}) {
      if (Bounded || !Tried.insert({KTiles, Tiles}).second)
        continue;
      std::optional<Instance> I = chooseInstance(RP, O.TileK, KTiles, Tiles);
      if (!I)
        continue;
      for (const auto &[Name, Value] : O.Params)
        if (!I->Params.count(Name))
          I->Params[Name] = Value;
      ConcreteSystem S = instantiate(RP, *I);
      if (!S.Unknown.empty()) {
        if (NotRun.empty())
          NotRun = std::to_string(KTiles) + " k-tile(s), " + std::to_string(Tiles) +
                   " tile(s) per CTA: " + S.Unknown;
        continue;
      }
      std::string What = std::to_string(KTiles) + " k-tile(s), " + std::to_string(Tiles) +
                         " tile(s) per CTA";
      ++Explored;
      if (!explore(S, What, *I)) {
        if (R.Verdict != ExploreVerdict::Unknown)
          return;
        Bounded = true; // larger launches would run out of states too
        continue;
      }
      cover(S);
    }
  Done(std::to_string(Explored) + " small launch(es)");
}

void Prover::finishSmall(SmallLaunches Small) {
  // Then launches that run what those did not (ExploreCoverage.cpp).
  if (!Small.Bounded && Small.Explored && O.CoverSteps) {
    unsigned Before = Small.Explored;
    if (!coverSteps(Small.Explored, Small.Bounded, Small.NotRun))
      return; // a bug
    if (Small.Explored > Before)
      Small.Range += " and " + std::to_string(Small.Explored - Before) +
                     " larger one(s) that run steps those did not";
  }
  std::string Last = R.Reason;
  R.Verdict = ExploreVerdict::Unknown;
  if (Small.Bounded)
    R.Reason = Small.Why + "; the small launches ran out of states (" + Last + ")";
  else if (!Small.Explored)
    R.Reason = Small.Why + "; no small launch could be explored" +
               (Small.NotRun.empty()
                    ? std::string(": none has the shape the search looks for")
                    : ": " + Small.NotRun);
  else {
    R.Reason = Small.Why + "; " + Small.Range + " explored without finding a bug" +
               coverage() + (Small.NotRun.empty() ? std::string() : " (" + Small.NotRun + ")");
    R.Unreached = unreachedLines();
  }
}

void Prover::runAndFallBack() {
  FallsBack = true;
  fallBack();
  // A bug of a launch without the values fixed, or a proof whose values leave out the ones
  // fixed (K = 100 where the statement is for K = 64*j, M = 2^21 where it is for M < 2^20):
  // not the verdict asked for.
  if ((R.Verdict != ExploreVerdict::Clean && R.Verdict != ExploreVerdict::Unknown &&
       !hasFixedValues(R.Launch)) ||
      (R.Verdict == ExploreVerdict::Clean && !coversFixedValues()))
    searchFixedValues();
}

void Prover::fallBack() {
  run();
  if (R.Verdict != ExploreVerdict::Unknown)
    return;
  if (O.Launch)
    return exploreLaunch();
  const Restriction *Re = restriction();
  if (!Re)
    return;
  std::string Said = R.Reason;
  std::string Where = argueRestricted(RP, O, R, *Re);
  if (R.Verdict != ExploreVerdict::Unknown)
    return; // a bug of the kernel where the term is 0
  if (Deferred) {
    // The small launches' reason with what their larger ones add (those where the term
    // is 0 left out when that is proved), then the argument's.
    R.Reason = Said;
    finishSmall(std::move(*Deferred));
    Deferred.reset();
    if (R.Verdict != ExploreVerdict::Unknown)
      return;
  }
  R.Reason += Where;
}

std::string Prover::lineList(const std::vector<unsigned> &Lines) {
  std::string Out;
  for (size_t I = 0; I < Lines.size() && I < 8; ++I)
    Out += (I ? ", " : "") + std::to_string(Lines[I]);
  return Out + (Lines.size() > 8 ? ", ..." : "");
}

std::string Prover::coverage() const {
  std::vector<unsigned> Lines = unreachedLines();
  // (Where the argument proved the launches on which the restriction's term is 0, the
  // steps those may run count as run: coverSteps.)
  bool Proved = restrictedProved();
  if (Lines.empty())
    return Proved ? "; they run every step that runs where the term is not 0"
                  : "; they run every step of the protocol";
  return "; steps at " + std::to_string(Lines.size()) + " PTX line(s)" +
         (Proved ? ", all where the term is not 0," : "") + " ran in none of them (" +
         lineList(Lines) + ")";
}

unsigned Prover::slotPeriod() const {
  // What slots and parities of every ring repeat with: 2 * slots for a barrier ring (its
  // parity flips every pass), slots for a buffer ring.
  unsigned M = 1;
  for (const BarrierArray &B : P.Barriers)
    M = std::lcm(M, 2 * std::max(1u, B.Slots));
  for (const Buffer &B : P.Buffers)
    M = std::lcm(M, std::max(1u, B.Slots));
  return M;
}

unsigned Prover::deepestRing() const {
  unsigned Ring = 1;
  for (const BarrierArray &B : P.Barriers)
    Ring = std::max(Ring, B.Slots);
  return Ring;
}

bool Prover::findThresholds(unsigned M, std::initializer_list<unsigned> TileThresholds) {
  // The smallest thresholds and tail the lemmas accept; R.Reason says why the first failed.
  // Each program has a threshold of its own, raised only when one of its own lemmas fails:
  // H5's consumer tests `k == 0` (its first k-tile starts the accumulators) while its
  // producer, which runs 4 k-tiles an iteration, needs none; one threshold for both made
  // the producer's 4 k-tiles the smallest period class and Tmin 12 instead of 10.
  std::vector<unsigned> Candidates;
  for (unsigned C : {0u, 1u, 2u, 4u, M})
    if (C <= M && !llvm::is_contained(Candidates, C))
      Candidates.push_back(C);
  std::string FirstFailure;
  for (const unsigned &Ct : TileThresholds) {
    // Whether a lemma has been found false under this tile threshold with every program's
    // threshold at its largest and the longest tail: then it is false with every tail too,
    // and the next tile threshold is tried at once (there is none after the last).
    bool LongestTailTried = &Ct + 1 == TileThresholds.end(), NoTailPasses = false;
    for (unsigned E : {0u, 1u, 2u, 4u, M}) {
      if (E > M || NoTailPasses)
        continue;
      std::vector<unsigned> Level(RP.Programs.size(), 0);
      auto Configure = [&](const std::vector<unsigned> &Levels, unsigned Tail) {
        Period = M;
        TailLength = Tail;
        TileThreshold = Ct;
        Thresholds.assign(RP.Programs.size(), 0);
        Threshold = 0;
        // Every varying loop's cycle must start at or after its threshold.
        int64_t Need = M + Tail;
        for (unsigned PI = 0; PI < RP.Programs.size(); ++PI) {
          Thresholds[PI] = Candidates[Levels[PI]];
          if (Varying[PI] == NoIndex)
            continue;
          Threshold = std::max(Threshold, Rates[PI] * Thresholds[PI]);
          Need = std::max(Need, int64_t(Rates[PI]) *
                                        (Thresholds[PI] + Tail + M / Rates[PI]) -
                                    Offset[PI]);
        }
        Tmin = static_cast<uint64_t>(std::max<int64_t>(Need, 1));
        // Where no k-loop varies, the tail is the tile loop's: its last Tail tiles come
        // after the cycle (a causal k-loop's diagonal tiles, `i < NT - 2`).
        NTmin = Ct + M + (KStandIn ? Tail : LastTiles);
      };
      for (;;) {
        Configure(Level, E);
        R.Verdict = ExploreVerdict::Unknown;
        R.Reason.clear();
        FailedProgram = NoIndex;
        FailedLemma = SIZE_MAX;
        if (proveLemmas(M, E))
          return true;
        if (FirstFailure.empty())
          FirstFailure = R.Reason;
        if (FailedProgram == NoIndex || Level[FailedProgram] + 1 >= Candidates.size())
          break;
        // Larger thresholds only add to a lemma's hypotheses (T >= Tmin, k >= a program's
        // threshold): a lemma false with every threshold at its largest candidate is false
        // with any, so no round of this tail can pass (H1 and B1 ran 15 failing rounds
        // before the tail of 4 passed).
        if (FailedLemma != SIZE_MAX) {
          Probe = FailedLemma;
          Configure(std::vector<unsigned>(RP.Programs.size(), Candidates.size() - 1), E);
          proveLemmas(M, E);
          if (FailsForSure) {
            // A longer tail only strengthens the lemmas' hypotheses (fewer iterations
            // before the tail, a larger Tmin; the lemmas that assume a program's threshold
            // come first in the same order whatever the tail, so the index names the same
            // lemma): one query at the longest says whether the other tails need a round.
            // H6's consumer needs a tile threshold of 1 (its first tile stores no chunks of
            // an earlier one): the rounds of the four other tails at threshold 0 took 0.4 s.
            // A false lemma shows a counterexample within a small budget; one that holds
            // with the longest tail may take long to prove, and need not be.
            if (!LongestTailTried && E != M) {
              LongestTailTried = true;
              Configure(std::vector<unsigned>(RP.Programs.size(), Candidates.size() - 1), M);
              ProbeBudget = 100000;
              proveLemmas(M, M);
              ProbeBudget = 0;
              NoTailPasses = FailsForSure;
            }
            Probe.reset();
            break;
          }
          // The next round at the failing program's smallest threshold where that lemma is
          // not false: one query per candidate instead of a round of every lemma (H6's
          // consumer stores the last tile's chunks in a tile's first 4 k-tiles: threshold 4,
          // two rounds of about 0.3 s each saved).
          unsigned Next = Level[FailedProgram] + 1;
          for (; Next + 1 < Candidates.size(); ++Next) {
            std::vector<unsigned> Try = Level;
            Try[FailedProgram] = Next;
            Configure(Try, E);
            proveLemmas(M, E);
            if (!FailsForSure)
              break;
          }
          Probe.reset();
          Level[FailedProgram] = Next;
          continue;
        }
        ++Level[FailedProgram];
      }
    }
  }
  return unknown(FirstFailure);
}

void Prover::run() {
  if (!findParameter() || !classifyLoops())
    return smallLaunches(R.Reason);
  if (Tiles)
    return runTiles();
  if (!K) {
    ConcreteSystem S = instance(0);
    if (explore(S, "the only instance (no trip count depends on a parameter)", launch(0))) {
      R.Verdict = ExploreVerdict::Clean;
      R.ForParameters = "every launch (no trip count depends on a parameter)";
    }
    return;
  }
  // Most bugs show on a launch of a few k-tiles: explore those first, so that a
  // counterexample does not wait for the lemmas (one more than the deepest ring, so that
  // every stage is reused once).
  unsigned Ring = deepestRing();
  for (uint64_t J = O.MinTiles; J <= O.MinTiles + Ring; ++J) {
    uint64_t KV = J * O.TileK;
    ConcreteSystem S = instance(KV);
    if (!S.Unknown.empty())
      break;
    if (!explore(S, R.Parameter + " = " + std::to_string(KV), launch(KV))) {
      if (R.Verdict != ExploreVerdict::Unknown)
        return;
      // The state bound: a depth-first search of the largest of these launches may still
      // find a bug in its late k-tiles, and the argument below may still prove.
      uint64_t Largest = (O.MinTiles + Ring) * O.TileK;
      ConcreteSystem Big = instance(Largest);
      if (Big.Unknown.empty() &&
          searchDeep(Big, R.Parameter + " = " + std::to_string(Largest), launch(Largest)))
        return;
      R.Verdict = ExploreVerdict::Unknown;
      R.Reason.clear();
      break;
    }
    CleanK.insert(KV);
  }
  collectUses();
  // The period: what slots and parities of every ring repeat with.
  unsigned M = slotPeriod();
  if (M > 64)
    return void(unknown("the slots' period " + std::to_string(M) + " is too long"));
  unsigned RateLcm = 1;
  for (unsigned PI = 0; PI < RP.Programs.size(); ++PI)
    RateLcm = std::lcm(RateLcm, Rates[PI]);
  if (!proveTripForms())
    return smallLaunches(R.Reason);
  // A loop of Rate k-tiles an iteration repeats every M / Rate iterations where the compiler
  // unrolled a loop of one stage a k-tile, and every M iterations where each iteration is one
  // stage of a wider k-tile (BLOCK_K = 128 against the 64 the domain counts in): that needs
  // the period M * Rate, tried when the first fails.
  if (!findThresholds(std::lcm(M, RateLcm), {0u}) &&
      (RateLcm == 1 || M * RateLcm > 64 || !findThresholds(M * RateLcm, {0u})))
    return smallLaunches(R.Reason);
  R.Period = Period;
  R.Threshold = Threshold;
  R.Tail = TailLength;

  // The scan: one K per small trip count, and the base of each residue class.
  std::map<uint64_t, uint64_t> SmallTrips, Bases; // T -> K
  for (uint64_t J = O.MinTiles; J <= O.ScanTiles; ++J) {
    uint64_t KV = J * O.TileK;
    std::optional<uint64_t> TV = eval(T, KV);
    if (!TV)
      return void(unknown("the trip count cannot be evaluated for " + R.Parameter + " = " +
                          std::to_string(KV)));
    bool Wrapped = *TV >= (uint64_t(1) << 24);
    if (*TV < Tmin || Wrapped)
      SmallTrips.emplace(*TV, KV);
    else if (*TV < Tmin + Period)
      Bases.emplace(*TV, KV);
  }
  if (Bases.size() != Period)
    return void(unknown("the scan up to " + R.Parameter + " = " +
                        std::to_string(O.TileK * O.ScanTiles) + " reaches " +
                        std::to_string(Bases.size()) + " of the " + std::to_string(Period) +
                        " trip counts from " + std::to_string(Tmin)));
  std::vector<uint64_t> SmallKs;
  for (const auto &[TV, KV] : SmallTrips) {
    R.SmallTrips.push_back(TV);
    if (!CleanK.count(KV)) // else explored above
      SmallKs.push_back(KV);
  }
  std::vector<ConcreteSystem> SmallSystems;
  for (uint64_t KV : SmallKs)
    SmallSystems.push_back(instance(KV));
  // The periodic systems, built first (a base that cannot be built is unknown in its turn).
  std::vector<ConcreteSystem> Periodic;
  std::vector<std::string> Broken;
  for (const auto &[TV, KV] : Bases) {
    Periodic.push_back(instance(KV));
    Broken.push_back(Periodic.back().Unknown);
    if (Broken.back().empty() && !makePeriodic(Periodic.back(), TV))
      Broken.back() = "the steps of the last " + std::to_string(Period) +
                      " iterations are not contiguous for " + R.Parameter + " = " +
                      std::to_string(KV);
  }
  // The small launches and the periodic systems explored at once (their results taken in
  // order below), so that no thread waits for the last small launch.
  std::vector<const ConcreteSystem *> Runnable = pointers(SmallSystems);
  for (size_t I = 0; I < Periodic.size(); ++I)
    if (Broken[I].empty())
      Runnable.push_back(&Periodic[I]);
  auto AllDone = exploreAhead(Runnable);
  for (size_t I = 0; I < SmallKs.size(); ++I)
    if (!explore(SmallSystems[I], R.Parameter + " = " + std::to_string(SmallKs[I]),
                 launch(SmallKs[I]), AllDone.empty() ? nullptr : &AllDone[I].first,
                 AllDone.empty() ? 0 : AllDone[I].second))
      return;
  size_t Index = 0, Ran = SmallKs.size();
  for (const auto &[TV, KV] : Bases) {
    size_t I = Index++;
    if (!Broken[I].empty())
      return void(unknown(Broken[I]));
    const ExploreResult *Done = AllDone.empty() ? nullptr : &AllDone[Ran].first;
    double DoneMs = AllDone.empty() ? 0 : AllDone[Ran].second;
    ++Ran;
    const ConcreteSystem &S = Periodic[I];
    std::string What = R.Parameter + " = " + std::to_string(KV) + " + " +
                       std::to_string(Period) + "j tiles (every j >= 0)";
    if (explore(S, What, launch(KV), Done, DoneMs))
      continue;
    if (R.Verdict == ExploreVerdict::Unknown)
      return;
    // Reproduce it on a real launch of that residue class.
    ExploreResult Periodic = std::move(R.Found);
    for (uint64_t Jn = 0; Jn < 4; ++Jn) {
      uint64_t KJ = KV + Jn * Period * O.TileK;
      ExploreResult E = wsv::analyzer::explore(instance(KJ));
      if (E.Verdict != ExploreVerdict::Clean && E.Verdict != ExploreVerdict::Unknown) {
        R.Verdict = E.Verdict;
        R.Found = std::move(E);
        R.Launch = launch(KJ);
        R.Reason = R.Parameter + " = " + std::to_string(KJ) + ": " + R.Found.Message;
        return;
      }
    }
    return void(unknown("the periodic search found '" + Periodic.Message +
                        "' but no launch with up to 3 more periods reproduces it"));
  }
  R.Verdict = ExploreVerdict::Clean;
  R.ForParameters = everyK();
}

std::string Prover::everyK() const {
  const std::string Below = " and " + R.Parameter + " < 2^24";
  if (O.TileK == 1)
    return "every " + R.Parameter + " >= " + std::to_string(O.MinTiles) + Below;
  return "every " + R.Parameter + " = " + std::to_string(O.TileK) + "*j with j >= " +
         std::to_string(O.MinTiles) + Below;
}

ParametricResult wsv::analyzer::exploreAllTrips(const RolePrograms &RP,
                                                const ParametricOptions &Options) {
  auto Start = std::chrono::steady_clock::now();
  ParametricResult R;
  if (!RP.P || !RP.P->Analysis) {
    R.Reason = "no protocol";
    return R;
  }
  std::vector<std::string> Missing = RP.unknowns();
  if (!Missing.empty()) {
    R.Reason = "the protocol has parts the explorer cannot run: " + Missing.front();
  } else if (ParametricResult Unflat; !arguedUnflattened(RP, Options, R, Unflat)) {
    Prover(RP, Options, R).runAndFallBack();
    if (!Unflat.Reason.empty()) {
      // What the argument found with tiles and k-tiles as two loops, and its work.
      R.Runs.insert(R.Runs.begin(), Unflat.Runs.begin(), Unflat.Runs.end());
      R.States += Unflat.States;
      R.SolverQueries += Unflat.SolverQueries;
      if (R.Verdict == ExploreVerdict::Unknown)
        R.Reason += "; with tiles and k-tiles as two loops: " + Unflat.Reason;
    }
  }
  R.Milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
          .count();
  return R;
}
