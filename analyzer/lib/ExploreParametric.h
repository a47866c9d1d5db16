//===- ExploreParametric.h - the prover behind exploreAllTrips, private ------------===//
//
// ExploreParametric.cpp says what the argument is. The prover's parts live in these files:
// ExploreParametricLemmas.cpp (the parameter, the loops, and Z3's lemmas over them),
// ExploreParametricForms.cpp (the lemmas' expressions in the domain's terms),
// ExploreParametricQueries.cpp (putting the lemmas to Z3),
// ExploreParametric.cpp (the k-loop's classes and their explorations),
// ExploreParametricTiles.cpp (persistent kernels: classes of tiles and k-tiles),
// ExploreParametricLastTiles.cpp (the last tiles a k-loop's test tells apart),
// ExploreCoverage.cpp (larger launches that run what small ones did not),
// ExploreRestriction.cpp (the argument where a part of the schedule is off) and
// ExploreLaunch.cpp (a launch given in full, cluster by cluster).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/analyzer/Solver.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {
namespace parametric {

/// An expression of a program, with the varying loop around it (NoIndex: none).
struct Use {
  const Expr *E = nullptr;
  unsigned VaryingLoop = NoIndex; ///< into RoleProgram::Loops of Program
  unsigned Program = 0;
  bool InTile = false; ///< inside the program's tile loop (persistent kernels)
};

/// Every Expr field of a step, or of a program (its condition, loops and steps), for a
/// rewrite of all of them.
void forEachStepExpr(RoleStep &St, const std::function<void(const Expr *&)> &F);
void forEachProgramExpr(RoleProgram &Pr, const std::function<void(const Expr *&)> &F);
/// Marks loop LI of Pr and everything in it never run; Dead collects their protocol loops.
void neverRun(RoleProgram &Pr, unsigned LI, ExprContext &Ctx, std::set<unsigned> &Dead);

/// Where unflatten applies: the argument for the programs it writes. True when that
/// decides (R: a proof, or a bug that replays on RP's programs); false otherwise, with
/// what it found in Left (its reason empty where unflatten does not apply).
bool arguedUnflattened(const RolePrograms &RP, const ParametricOptions &O, ParametricResult &R,
                       ParametricResult &Left);

/// Whether E reads %ctaid.x or %nctaid.x: a count of the grid's tiles does.
bool readsGridRegister(const Expr *E);

/// Each program's one top-level loop over the grid's tiles (NoIndex: none), or why the
/// programs do not have that shape (a second such loop, or one nested in another loop).
std::string tileLoops(const RolePrograms &RP, std::vector<unsigned> &TileLoop);

/// Where the argument ended unknown and findRestriction found Re: the argument for the
/// rewritten programs. Its proof sets R.Restricted; its bug on a launch where the term is 0
/// becomes R's. Returns what R's reason gains ("; where ...: proved for ...").
std::string argueRestricted(const RolePrograms &RP, const ParametricOptions &O,
                            ParametricResult &R, const Restriction &Re);

/// R takes Part's verdict, statement and launch, and keeps its own record of the work done
/// (runs, states, queries), which already counts Part's where Part ran after it.
void adoptVerdict(ParametricResult &R, ParametricResult Part);

/// Re's term in launch I (its parameters and grid); nothing where I lacks one it reads.
std::optional<uint64_t> termAt(const Restriction &Re, const RolePrograms &RP, const Instance &I);

/// Whether any condition, trip count, slot or count of a program reads a leaf Is accepts.
bool programsRead(const RolePrograms &RP, llvm::function_ref<bool(const Expr *)> Is);

/// exploreAllTrips's work for one kernel: run() fills the result with a statement for every
/// K (and tile count), a counterexample of a real launch, or unknown with the reason.
class Prover {
public:
  Prover(const RolePrograms &RP, const ParametricOptions &O, ParametricResult &R)
      : RP(RP), P(*RP.P), O(O), R(R), Ctx(P.Analysis->context()),
        Z3(makeZ3(false)) {}

  void run();
  /// run(), then where it said unknown: the launch given in full explored as it is, or
  /// without one the argument where a part of the schedule is off (argueRestricted).
  void runAndFallBack();
  /// run(), then the launch given in full or the restricted argument where it is unknown.
  void fallBack();

private:
  bool unknown(std::string Why) {
    R.Verdict = ExploreVerdict::Unknown;
    R.Reason = std::move(Why);
    return false;
  }
  const Expr *c(uint64_t V, unsigned W) { return Ctx.constant(V & ExprContext::mask(W), W); }
  std::optional<uint64_t> eval(const Expr *E, uint64_t KValue) const;
  bool findParameter();
  bool classifyLoops();
  void collectUses();
  const Expr *domain(const Expr *KLeaf);
  /// A solver for the lemmas; Grid: for those that read the grid's tile count, whose
  /// product and division make them slow (ten times the work and time). No sampling: a
  /// lemma's hypothesis ties K' to K and the tile counts to each other, which values picked
  /// leaf by leaf almost never meet.
  std::unique_ptr<Solver> makeZ3(bool Grid) const {
    return Solver::createZ3(Grid ? 10 * O.TimeoutMs : O.TimeoutMs,
                            Grid ? 10 * O.ResourceLimit : O.ResourceLimit, /*Sample=*/false);
  }
  bool valid(const Expr *Hyp, const Expr *Goal, const std::string &What, bool Grid = false);
  Solver &gridZ3() {
    if (!GridZ3)
      GridZ3 = makeZ3(true);
    return *GridZ3;
  }
  /// A lemma for valid(): Hyp implies Goal, What says so in words.
  struct Lemma {
    const Expr *Hyp, *Goal;
    std::string What;
    bool Grid = false;
    /// The program whose threshold the lemma assumes (NoIndex: none): when it fails,
    /// findThresholds raises that program's threshold.
    unsigned Program = NoIndex;
  };
  /// valid() of each lemma in order, up to the first that fails. With several threads()
  /// they are asked at once (a period's lemmas are a hundred queries of 20-40 ms), each
  /// worker with solvers of its own; the verdict, the reason and the count of queries are
  /// those of asking them one by one.
  bool validAll(const std::vector<Lemma> &Lemmas);
  /// validAll's second part: the lemmas Which of Lemmas, each on its own, in order.
  bool validEach(const std::vector<Lemma> &Lemmas, const std::vector<size_t> &Which);
  /// Z3's answer to each claim (Grid(I): a grid solver for claim I), on up to Threads
  /// workers; with StopAtFailure, claims after the first that is not valid may go unasked.
  /// Budget (0: none) caps each query's resource count below the solvers' own.
  std::vector<SolverResult> askAll(const std::vector<const Expr *> &Claims,
                                   llvm::function_ref<bool(size_t)> Grid, bool StopAtFailure,
                                   unsigned Threads, uint64_t Budget = 0);
  std::vector<std::unique_ptr<Solver>> WorkerZ3, WorkerGridZ3;
  /// What holds whatever the period: the varying loops' trip counts in T, and every value
  /// depending on the parameter only through T. Proved once.
  bool proveTripForms();
  /// The period's lemmas for one threshold and tail (and Tmin from them).
  bool proveLemmas(unsigned Period, unsigned Tail);
  std::string paramName(const Expr *Leaf) const;
  Instance launch(uint64_t KValue) const;
  ConcreteSystem instance(uint64_t KValue) const { return instantiate(RP, launch(KValue)); }
  void smallLaunches(std::string Why);
  /// What the small launches did, for the larger ones (coverSteps) and the reason.
  struct SmallLaunches {
    std::string Why, Range;
    unsigned Explored = 0;
    bool Bounded = false;
    std::string NotRun;
  };
  /// The larger launches that run steps the small ones did not, then the reason.
  void finishSmall(SmallLaunches Small);
  /// A parameter's names: Name, and its display or PTX name.
  std::vector<std::string> paramAliases(const std::string &Name) const;
  /// O.Fixed's value of a parameter, under any of its names.
  std::optional<uint64_t> fixedValue(const std::string &Name) const;
  /// Whether launch I has O.Fixed's values (ParametricOptions::Fixed).
  bool hasFixedValues(const Instance &I) const;
  /// R holds a counterexample of a launch without the fixed values, or a proof for every K
  /// that leaves out the fixed one: it becomes a note, and the launches with the fixed
  /// values are searched (ExploreFixed.cpp).
  void searchFixedValues();
  /// `K = 320, a grid of 8 CTAs`: the values fixed, in words.
  std::string fixedValues() const;
  /// Whether R's proof for every K covers the values fixed: K's (a multiple of the k-tile
  /// in the argument's range), and for a statement over tile counts the sizes it reads
  /// (below 2^20) and the grid (below 2^16).
  bool coversFixedValues() const;
  /// coverSteps looks only at launches with the fixed values (searchFixedValues).
  bool OnlyFixed = false;
  /// The persistent kernels' argument for one K (these k-tiles) and every tile count: the
  /// small launches and the classes of K are that K's only (searchFixedValues).
  std::optional<uint64_t> OnlyTV;
  /// No trip count reads a parameter of the kernel's besides the tile loop's: K is a leaf
  /// of the argument's own that no program reads (with OnlyTV its one class), never set in
  /// a launch nor named in a verdict.
  bool KStandIn = false;
  /// Where the programs have a restriction (and no launch is given in full): the small
  /// launches' end waits for the restricted argument, whose proof covers every launch
  /// where the term is 0.
  std::optional<Restriction> Restrict;
  std::optional<SmallLaunches> Deferred;
  /// Whether the restricted argument proved every launch where the term is 0.
  bool restrictedProved() const { return Restrict && !R.Restricted.empty(); }
  /// Set by runAndFallBack: only its prover looks for a restriction, and only once run()
  /// has not proved (findRestriction asks Z3 about trip conditions).
  bool FallsBack = false, RestrictSought = false;
  const Restriction *restriction() {
    if (!FallsBack || O.Launch)
      return nullptr;
    if (!RestrictSought) {
      RestrictSought = true;
      Restrict = findRestriction(RP);
    }
    return Restrict ? &*Restrict : nullptr;
  }
  /// Where the argument ended unknown and O.Launch gives a launch in full: every cluster
  /// of its grid explored (ExploreLaunch.cpp), for a verdict on that launch alone.
  void exploreLaunch();
  /// `K = 8192, M = 8192, N = 8192, a grid of 132 CTAs`
  std::string launchParameters(const Instance &I) const;
  /// Coverage of the small launches (ExploreCoverage.cpp): per program, the steps some
  /// explored launch ran.
  std::vector<llvm::BitVector> Reached;
  void cover(const ConcreteSystem &S);
  bool reachesNew(const ConcreteSystem &S) const;
  /// The PTX lines of steps no explored launch ran, in order.
  std::vector<unsigned> unreachedLines() const;
  /// "; they run every step ...", or the lines of those none ran.
  std::string coverage() const;
  /// The first eight of Lines, and "..." for more.
  static std::string lineList(const std::vector<unsigned> &Lines);
  /// Explores launches, in order of size, that run steps no explored launch ran; false when
  /// one has a bug (R says which). Counts them in Explored; Bounded: one ran out of states.
  bool coverSteps(unsigned &Explored, bool &Bounded, std::string &NotRun);
  /// coverSteps's search in order of size.
  bool searchSizes(unsigned &Explored, bool &Bounded, std::string &NotRun);
  /// Explores launch I (its system S) where it runs a step no explored launch ran, counted
  /// in Explored (an S that is unknown goes to NotRun); false when that ends the search: a
  /// bug (R says which) or, with Bounded set, a launch out of states. Why prefixes the
  /// launch in its run's line (`[drawn for ptx line 3389] `).
  bool coverLaunch(const ConcreteSystem &S, const Instance &I, unsigned &Explored,
                   bool &Bounded, std::string &NotRun, const std::string &Why = "");
  /// After coverSteps's search: launches drawn until one meets the path to each step no
  /// launch ran (ExploreDirected.cpp), explored where they run it; false when one has a bug.
  bool directLaunches(unsigned &Explored, bool &Bounded, std::string &NotRun);
  /// `K = 4096, M = 256, N = 256, 4 CTAs, CTA 2 and its cluster`.
  std::string launchName(const Instance &I) const;
  bool makePeriodic(ConcreteSystem &S, uint64_t T) const;
  /// Explores S (or takes Done, S's exploration run earlier with MaxStates) and records
  /// it; false when it is not clean (R says why).
  bool explore(const ConcreteSystem &S, const std::string &What, const Instance &At,
               const ExploreResult *Done = nullptr, double DoneMs = 0);
  /// Explores the systems several at once (each with MaxStates): their results and times,
  /// in order, for explore()'s Done; empty when one thread is all there is.
  std::vector<std::pair<ExploreResult, double>>
  exploreAhead(const std::vector<const ConcreteSystem *> &Systems) const;
  unsigned threads() const;
  /// The options every exploration of the argument shares (bounds, deadlocks).
  ExploreOptions exploreOptions() const;
  /// A depth-first search of launch At (system S), for a bug the full searches ran out of
  /// states before: true when it found one (R then has it); recorded in the runs and the
  /// state count either way.
  bool searchDeep(const ConcreteSystem &S, const std::string &What, const Instance &At);
  static std::vector<const ConcreteSystem *> pointers(const std::vector<ConcreteSystem> &V) {
    std::vector<const ConcreteSystem *> Out;
    for (const ConcreteSystem &S : V)
      Out.push_back(&S);
    return Out;
  }

  const RolePrograms &RP;
  const Protocol &P;
  const ParametricOptions &O;
  ParametricResult &R;
  ExprContext &Ctx;
  std::unique_ptr<Solver> Z3;

  const Expr *K = nullptr, *KPrime = nullptr;
  unsigned KWidth = 32;
  const Expr *T = nullptr; ///< the reference trip count
  /// Per program: its varying loop (NoIndex: none) and that loop's offset from T.
  std::vector<unsigned> Varying;
  std::vector<int64_t> Offset;
  std::vector<unsigned> Rates; ///< k-tiles per iteration of the varying loop
  std::vector<Use> Uses;
  unsigned Period = 1, TailLength = 0;
  /// Per program: the iteration of its varying loop from which its steps repeat; and the
  /// k-tile from which every program's do (the largest of them, as reported).
  std::vector<unsigned> Thresholds;
  unsigned Threshold = 0;
  /// Set when a lemma that assumes a program's threshold fails (Lemma::Program).
  unsigned FailedProgram = NoIndex;
  /// The index of the first lemma validAll found failing (SIZE_MAX: none).
  size_t FailedLemma = SIZE_MAX;
  /// Set: proveLemmas asks only this lemma (of the list it builds), and says whether Z3
  /// found it false (FailsForSure) rather than validating them all.
  std::optional<size_t> Probe;
  /// With Probe: Z3's work for that query (0: the solver's own bound).
  uint64_t ProbeBudget = 0;
  bool FailsForSure = false;
  std::set<uint64_t> CleanK; ///< launches already explored without a bug
  uint64_t Tmin = 0;

  // Persistent kernels: every role's top-level loop over the grid's tiles runs NT times, the
  // same expression for all; its iterations repeat with the period too (NTmin as Tmin).
  bool Tiles = false;
  const Expr *NT = nullptr;
  /// What must hold for the tile loop to run at all (the role's condition and the loop's,
  /// Triton's `%ctaid.x < tiles` around everything): NT counts the CTA's tiles only there.
  const Expr *NTWhen = nullptr;
  std::vector<unsigned> TileLoop;      ///< per program, into Loops (NoIndex: none)
  std::vector<const Expr *> Grid;      ///< leaves NT and the uses read besides K
  std::vector<const Expr *> GridPrime; ///< their primed copies
  unsigned TileThreshold = 0;
  uint64_t NTmin = 0;
  /// The last tiles a test in a k-loop tells apart from the others (`t + 2 < NT`, Triton's
  /// prefetch guard made two loops: ExploreUnflatten.cpp): they come after the cycle of
  /// tiles, whose passes then all stand for tiles before them.
  unsigned LastTiles = 0;
  enum class TileRegion : uint8_t { Any, BeforeLast, Last };
  /// U's expression with its tests on the last tiles (`t + a < NT`, `t + a == NT`) decided
  /// where the tile t is before the last LastTiles (Last false), or, in them (the tiles
  /// after the cycle, which keep their distance to the end in the other launch), each by
  /// a leaf of its own that stands for its value in both.
  const Expr *onLastTiles(const Use &U, bool Last);
  /// a where X is t + a (1 <= a <= 64) for the tile t of TL and Count is its tile count.
  std::optional<uint64_t> tileDistance(const Expr *X, const Expr *Count,
                                       const RoleLoop &TL) const;
  /// The most a, at most 4, of a test `t + a < NT` or `t + a == NT` on the tile t of a
  /// k-loop's expression (0: none).
  unsigned lastTilesTold() const;
  const Expr *prime(const Expr *E);
  const Expr *gridDomain(bool Primed);
  bool findTileLoops();
  std::optional<Instance> tileLaunch(uint64_t KValue, uint64_t Tiles) const;
  /// tileLaunch's search of the shapes, and its results by tile count where K plays no part
  /// (ShapeReadsK clear: neither the tile count nor a trip condition to check reads K; set
  /// by findTileLoops).
  std::optional<Instance> tileShape(uint64_t KValue, uint64_t Tiles) const;
  /// The parameters tileShape gives sizes to: M and N, or the (at most two) others that the
  /// tile count reads.
  std::vector<std::string> shapeParams() const;
  /// `M, N < 2^20, %nctaid.x < 2^16`: the launches a statement for every tile count covers.
  std::string gridBounds() const;
  /// The values of the k-loop's parameter the argument covers: `every K = 64*j with j >= 1
  /// and K < 2^24`, or `every k_tiles >= 1 and k_tiles < 2^24` for a k-tile of 1.
  std::string everyK() const;
  bool ShapeReadsK = true;
  mutable std::map<uint64_t, std::optional<Instance>> TileShapes;
  mutable std::mutex TileShapesLock;
  /// One system for launches that differ only in the CTA's tile count (Members, in order of
  /// it): the last one's steps with an exit where each other's tiles end
  /// (ConcreteAgent::Exits). False when their steps differ before that, or their barriers,
  /// buffers or agents do: then they are explored one by one.
  bool mergeTileCounts(llvm::ArrayRef<const ConcreteSystem *> Members,
                       ConcreteSystem &Out) const;
  /// Every tile count from 1 as one system: the launch of Period tiles with its tiles as the
  /// outer cycle, and an exit inside the cycle after each of its tiles but the last, which
  /// the agents may take in any pass: in the first for the steps after the tile loop of the
  /// launch with that few tiles (Small: 1 to Period - 1 tiles, plain launches), in a later
  /// one for those of the launch with Period more (Late: Period to 2 * Period - 1 tiles,
  /// periodic in the tiles). Leaving at the cycle's end is the launch of Period tiles. False
  /// where the launches' steps do not line up so (then they are explored as two merged
  /// systems, mergeTileCounts), or the tile threshold is not 0.
  /// The tile loop of an agent that runs steps in it (NoIndex: none, or not a role).
  LoopId tiledLoop(const ConcreteAgent &A) const;
  bool mergeTileCycle(llvm::ArrayRef<const ConcreteSystem *> Small,
                      llvm::ArrayRef<const ConcreteSystem *> Late, ConcreteSystem &Out) const;
  bool makeTilePeriodic(ConcreteSystem &S, std::optional<uint64_t> TPeriodic,
                        std::optional<uint64_t> NTPeriodic) const;
  void runTiles();
  /// Z3 shows that no launch of the domain gives a CTA Count tiles (Periodic: Count + i *
  /// Period for any i >= 0), so that the class of that count has nothing to explore.
  bool noTileCount(uint64_t Count, bool Periodic);
  unsigned slotPeriod() const;
  unsigned deepestRing() const;
  /// Sets Period, Thresholds, TailLength, TileThreshold, Tmin and NTmin to the first
  /// candidates whose lemmas hold; false (unknown) when none do.
  bool findThresholds(unsigned M, std::initializer_list<unsigned> TileThresholds);
  /// A condition outside the loops that reads the grid (`%ctaid.x < tiles`), shown to be
  /// decided by whether the CTA has a tile at all: then every launch with as many tiles, or
  /// with at least one in both, agrees on it (cheaper for Z3 than comparing two launches).
  bool decidedByTiles(const Expr *E);
  /// E reads one of the values the tile count NT reads.
  bool readsTileCount(const Expr *E) const;
  /// E with each condition decidedByTiles (and reading no iteration) replaced by a leaf of
  /// its own, the same in both launches of a lemma: they agree on it, whatever it is.
  const Expr *abstractDecided(const Expr *E);
  std::map<const Expr *, const Expr *> DecidedLeaves;
  /// E with the trip count T (and the tile count NT) replaced by leaves of their own: where
  /// that leaves nothing the two launches of a same-count lemma differ in, E reads K (and
  /// the grid) only through the counts, and the lemma holds without a query.
  const Expr *throughCounts(const Expr *E);
  const Expr *TLeaf = nullptr, *NTLeaf = nullptr;
  /// E with the tile count NT (the programs' tile loops' counts too) and its primed copy
  /// replaced by leaves of their own (NTLeaf, NTPrimeLeaf).
  const Expr *withTileCounts(const Expr *E);
  const Expr *NTPrimeLeaf = nullptr, *TPrimeLeaf = nullptr;
  /// TLeaf, NTLeaf and their primed copies, made on first use (NT's only where Tiles).
  void makeCountLeaves();
  /// E with Trips replaced by TripsLeaf, Count by CountLeaf, and the sums of products by
  /// Trips that add up to a multiple of Count * Trips written so.
  const Expr *factorCounts(const Expr *E, const Expr *Trips, const Expr *Count,
                           const Expr *TripsLeaf, const Expr *CountLeaf);
  /// Where the caller bounds the tile count (ParametricOptions::TilesBelow, which the
  /// statement then says), the lemmas that read the grid only through NT hold for
  /// every NT and NT' below the bound: asked so, Z3 need not divide by the grid (Triton's
  /// prefetch guard `t + 2 < NT` made two loops, which it gave up on).
  void abstractTileCounts(std::vector<Lemma> &Lemmas);
  /// Hyp implies Goal with every product of two unknowns and every division by one replaced
  /// by a variable of its own, bounded as the grid's domain bounds it (upperBound): a
  /// stronger, linear claim; nullptr when there is nothing to replace.
  const Expr *linearized(const Expr *Hyp, const Expr *Goal);
  /// The largest value E takes in the grid's domain, by intervals (the width's mask when
  /// unknown).
  uint64_t upperBound(const Expr *E) const;
  /// E with the signed shifts and comparisons that the domain keeps below the sign bit
  /// made unsigned (upperBound decides): the same values in every lemma's domain.
  const Expr *inDomain(const Expr *E);
  /// E with each test `Iter + a < Trip` that the lemmas' region decides replaced by its
  /// value: true for a <= Tail in the body (Iter + Tail < Trip), false for a >= Tail in the
  /// last Tail iterations; there, one with a < Tail by a leaf of its own (the tail lemma
  /// compares iterations at the same distance from the end, where it has one value).
  const Expr *decidedByTrip(const Expr *E, const Expr *Iter, const Expr *Trip, unsigned Tail,
                            bool Body);
  /// decidedByTrip's equalities: `k + a == trip`, and choices in them taken out.
  const Expr *decideEquality(const Expr *N, const Expr *Iter, const Expr *Trip, unsigned Tail,
                             bool Body, const std::function<const Expr *(const Expr *)> &Decide);
  /// E reads a value of the launch besides K (a Grid leaf).
  bool readsGrid(const Expr *E) const {
    return E->mentions([&](const Expr *L) {
      return std::find(Grid.begin(), Grid.end(), L) != Grid.end();
    });
  }
  std::map<const Expr *, bool> Decided;
  std::unique_ptr<Solver> GridZ3;
};

} // namespace parametric
} // namespace analyzer
} // namespace wsv
