// exploreAllTrips (Explore.h) on every reference kernel and seeded variant of the manifest
// (WSV_PTX_DIR/kernels.json): the statement for every K.
//  - No correct kernel comes out bad; H1, H2, H3, B1 and B2 (single CTA, one k-loop), H4
//    (a 2-CTA cluster with multicast) and B6 (waits skipped where a peek at the end of the
//    previous k-tile saw the phase complete) are proved for every K, and B3, B4, B5 and H5
//    (persistent; B4, B5 and H5 2-CTA clusters, B4 and B5 with the peer's copies landing
//    on the leader's barriers, H5 with a TMA-store epilogue) for every K and every tile
//    count: if one of them stops being proved, the lemmas, the periodic search or the
//    explorer's reduction lost something.
//  - No variant of a proved kernel whose bug the model has the state to show comes out clean
//    (that would be a wrong proof) or unknown: each gets a counterexample. The model's gaps
//    are listed with their reason.
//  - Every counterexample is a schedule of a real launch (K = At): replayed on that launch's
//    models from the start it reaches the same verdict.
//  - The instrumented build of a kernel (what `wsv run --check` loads: every wait first tried
//    once, then spun on with a timeout that traps) gets the plain build's verdict.
// Prints a table: kernel, variant, verdict, period, explorations, states, ms.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <set>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

const std::set<std::string> MustProve = {"h1", "h2", "h3", "h4", "h5", "b1",
                                         "b2", "b3", "b4", "b5", "b6"};

/// Bugs whose effect is a deadlock, a stage race or a barrier misuse in the model.
const std::set<std::string> Modeled = {
    "mbarrier-arrival-count", "barrier-divergent",       "named-barrier-count",
    "named-barrier-id-collision", "mbarrier-trip-count", "mbarrier-initial-phase",
    "mbarrier-tx-bytes",      "mbarrier-no-arriver",     "mbarrier-phase-skip",
    "smem-war-release",       "smem-raw-wait",           "bulk-store-reuse",
    "tcgen05-alloc-exhaustion", "tcgen05-commit-multi-thread", "mbarrier-init-visibility",
    "cluster-exit-early",     "cluster-multicast-mask",  "proxy-fence-missing",
    "accumulator-early-read", "tmem-dealloc-early",       "mbarrier-reuse",
    "aligned-divergent",      "setmaxnreg-nonuniform",    "tcgen05-alloc-lane-guard"};

/// Variants whose bug, though of a modeled class, lies outside the model, with the reason.
/// None now: B5's trip-count variant (one thread of the writeback advances its tile
/// scheduler) is refuted since the threads of an agent part where their trip counts differ.
const std::map<std::pair<std::string, std::string>, const char *> Gaps = {};

struct Proof {
  ParametricResult R;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
  ParametricOptions Options;
  std::string Error;
};

Proof prove(const std::string &File, uint64_t MaxTotalStates = 0, unsigned Threads = 0,
            uint64_t ResourceLimit = ParametricOptions().ResourceLimit) {
  Proof Out;
  auto Parsed = ptx::parseFile(std::string(WSV_PTX_DIR) + "/" + File,
                               [](const ptx::Diagnostic &) {});
  if (!Parsed || !Parsed->ok()) {
    if (!Parsed)
      llvm::consumeError(Parsed.takeError());
    Out.Error = "does not parse";
    return Out;
  }
  const ptx::Function *Entry = nullptr;
  for (const ptx::Function *F : Parsed->M->functions())
    if (F->isDefinition() && F->isEntry() && !Entry)
      Entry = F;
  if (!Entry) {
    Out.Error = "no entry";
    return Out;
  }
  Out.P = buildProtocol(*Parsed->M, *Entry);
  Out.RP = lowerRolePrograms(*Out.P);
  if (std::optional<LaunchSpec> Spec = readKernelInfo(*Parsed->M, *Entry)) {
    if (Spec->TileK)
      Out.Options.TileK = *Spec->TileK;
    if (Spec->MinKTiles)
      Out.Options.MinTiles = *Spec->MinKTiles;
  }
  // `wsv verify`'s bound: enough for every exploration of the kernels proved (H5's largest
  // needs about 49,000 states, B5's about 46,000), with room for the larger classes that a
  // later threshold brings when a Z3 query runs out.
  Out.Options.MaxStates = 150000;
  // Z3's work per lemma query, counted, not timed: a query that runs out makes the argument
  // try a later threshold (more and larger classes), and a time limit made that depend on
  // the machine's load. The time only stops a query gone wrong.
  Out.Options.ResourceLimit = ResourceLimit;
  Out.Options.TimeoutMs = 20000;
  Out.Options.MaxTotalStates = MaxTotalStates;
  Out.Options.Threads = Threads;
  Out.R = exploreAllTrips(Out.RP, Out.Options);
  return Out;
}

bool bad(ExploreVerdict V) {
  return V == ExploreVerdict::Deadlock || V == ExploreVerdict::Race ||
         V == ExploreVerdict::Violation;
}

/// Replays the counterexample on the launch it names.
bool replays(const Proof &X) {
  ConcreteSystem S = instantiate(X.RP, X.R.Launch);
  ExploreResult Again = replay(S, X.R.Found.Schedule);
  return Again.Verdict == X.R.Verdict && Again.Message == X.R.Found.Message;
}

void row(const std::string &Kernel, const std::string &Variant, const Proof &X) {
  std::printf("%-9s %-28s %-9s %6u %4zu %9llu %8.0f  %s\n", Kernel.c_str(), Variant.c_str(),
              toString(X.R.Verdict), X.R.Period, X.R.Runs.size(),
              static_cast<unsigned long long>(X.R.States), X.R.Milliseconds,
              X.R.Verdict == ExploreVerdict::Clean ? X.R.ForParameters.c_str()
                                                   : X.R.Reason.substr(0, 110).c_str());
}

/// The manifest's kernels (WSV_PTX_DIR/kernels.json); nullopt when the PTX was not built.
std::optional<llvm::json::Value> manifest() {
  auto Buf = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/kernels.json");
  if (!Buf)
    return std::nullopt;
  auto J = llvm::json::parse((*Buf)->getBuffer());
  if (!J) {
    ADD_FAILURE() << llvm::toString(J.takeError());
    return std::nullopt;
  }
  return std::move(*J);
}

#define WSV_MANIFEST_OR_SKIP(J)                                                              \
  std::optional<llvm::json::Value> J = manifest();                                           \
  if (!J)                                                                                    \
  GTEST_SKIP() << "no kernels.json in " << WSV_PTX_DIR << " (build wsv_ptx)"

TEST(ExploreAllTripsTest, ReferenceKernelsProvedVariantsRefuted) {
  WSV_MANIFEST_OR_SKIP(J);
  const llvm::json::Array *Kernels = J->getAsObject()->getArray("kernels");
  ASSERT_TRUE(Kernels);
  std::printf("%-9s %-28s %-9s %6s %4s %9s %8s\n", "kernel", "variant", "verdict", "period",
              "runs", "states", "ms");
  unsigned Proved = 0, Refuted = 0;
  for (const llvm::json::Value &K : *Kernels) {
    const llvm::json::Object &KO = *K.getAsObject();
    std::string Name = KO.getString("name")->str();
    Proof X = prove(KO.getString("ptx")->str());
    ASSERT_TRUE(X.Error.empty()) << Name << ": " << X.Error;
    row(Name, "-", X);
    EXPECT_FALSE(bad(X.R.Verdict)) << Name << ": " << X.R.Reason;
    bool KernelProved = X.R.Verdict == ExploreVerdict::Clean;
    if (MustProve.count(Name)) {
      EXPECT_TRUE(KernelProved) << Name << ": " << X.R.Reason;
    }
    Proved += KernelProved;
    for (const llvm::json::Value &V : *KO.getArray("variants")) {
      const llvm::json::Object &VO = *V.getAsObject();
      std::string Bug = VO.getString("bug")->str();
      Proof B = prove(VO.getString("ptx")->str());
      ASSERT_TRUE(B.Error.empty()) << Name << " " << Bug << ": " << B.Error;
      row(Name, Bug, B);
      if (bad(B.R.Verdict)) {
        ++Refuted;
        EXPECT_TRUE(replays(B)) << Name << " " << Bug << ": the replay disagrees";
      }
      if (KernelProved && Modeled.count(Bug) && !Gaps.count({Name, Bug})) {
        EXPECT_NE(B.R.Verdict, ExploreVerdict::Clean)
            << Name << " " << Bug << " is proved: a wrong proof";
        EXPECT_TRUE(bad(B.R.Verdict)) << Name << " " << Bug << " is not refuted: " << B.R.Reason;
      }
    }
  }
  std::printf("%u kernels proved for every K, %u variants refuted with a replayed schedule\n",
              Proved, Refuted);
  for (const auto &[Key, Why] : Gaps)
    std::printf("gap %s %s: %s\n", Key.first.c_str(), Key.second.c_str(), Why);
}

TEST(ExploreAllTripsTest, ExplorationsRunAtOnceGiveTheResultOfRunningThemInTurn) {
  WSV_MANIFEST_OR_SKIP(J);
  // Proved (H4), refuted on a periodic system's launch (h3 arrival-count), and stopped by
  // the budget for all explorations partway through a batch of tile classes (H5, whose
  // proof takes about 420,000 states): the same verdict, reason, explorations, states and
  // Z3 queries (the lemmas are asked at once too) with 1 and 3 threads.
  for (const auto &[File, Budget] : std::vector<std::pair<std::string, uint64_t>>{
           {"h4.ptx", 0}, {"h3.bug-mbarrier-arrival-count.ptx", 0}, {"h5.ptx", 250000}}) {
    Proof One = prove(File, Budget, 1), Three = prove(File, Budget, 3);
    ASSERT_TRUE(One.Error.empty() && Three.Error.empty()) << File;
    EXPECT_EQ(One.R.Verdict, Three.R.Verdict) << File;
    EXPECT_EQ(One.R.Reason, Three.R.Reason) << File;
    EXPECT_EQ(One.R.Runs, Three.R.Runs) << File;
    EXPECT_EQ(One.R.States, Three.R.States) << File;
    EXPECT_EQ(One.R.SolverQueries, Three.R.SolverQueries) << File;
    EXPECT_EQ(One.R.Found.Schedule.size(), Three.R.Found.Schedule.size()) << File;
  }
}

TEST(ExploreAllTripsTest, AConditionsPartsAreProvedOneByOne) {
  // B4's MMA role runs where `%ctaid.x / 2 < M / 256 * N / 256 && %cluster_ctarank == 0`:
  // as one query, whether it depends on K only through the trip count took Z3 about 2 s
  // (Z3 counts 3 to 4 million units of its resource count a second here). Part by part, the tile test is decided by
  // whether the CTA has a tile and the rank does not read K: 100,000 units per query (a
  // million for the grid's; they take at most 45,000 and 240,000, 0.1 s) are plenty, and
  // the argument is the one that the default finds (it tries later thresholds, with more
  // and larger classes, when a query runs out).
  WSV_MANIFEST_OR_SKIP(J);
  Proof Fast = prove("b4.ptx", 0, 0, /*ResourceLimit=*/100000), Default = prove("b4.ptx");
  ASSERT_TRUE(Fast.Error.empty()) << Fast.Error;
  EXPECT_EQ(Fast.R.Verdict, ExploreVerdict::Clean) << Fast.R.Reason;
  EXPECT_EQ(Fast.R.Runs.size(), Default.R.Runs.size());
  EXPECT_EQ(Fast.R.States, Default.R.States);
  EXPECT_EQ(Fast.R.Threshold, Default.R.Threshold);
}

TEST(ExploreAllTripsTest, ATileCountIsANumberOfItsOwnForZ3) {
  // Whether B3's roles run where `%ctaid.x < M / 128 * N / 128` is decided by the CTA having
  // a tile: with the tile count's product in it, the two claims took Z3 0.9 s and 0.8 s
  // (3 to 4 million units of its resource count a second here); with the product a variable
  // bounded by what the grid allows (M, N < 2^20), at most 200,000 units. A million units
  // per grid query (100,000 for the others, which take at most 42,000) proves B3.
  WSV_MANIFEST_OR_SKIP(J);
  Proof Fast = prove("b3.ptx", 0, 0, /*ResourceLimit=*/100000);
  ASSERT_TRUE(Fast.Error.empty()) << Fast.Error;
  EXPECT_EQ(Fast.R.Verdict, ExploreVerdict::Clean) << Fast.R.Reason;
}

TEST(ExploreAllTripsTest, EachRoleHasAThresholdOfItsOwn) {
  // H5's consumer starts its accumulators in its first iteration (`k == 0`, 2 k-tiles), its
  // producer (4 k-tiles an iteration) needs no threshold: the steps repeat from k-tile 2,
  // so the periodic classes start at 10 k-tiles (2 + the period of 8). One threshold for
  // both made it 4 k-tiles and 12: two more launches of up to 11 k-tiles explored as they
  // are, each with every tile class.
  WSV_MANIFEST_OR_SKIP(J);
  Proof X = prove("h5.ptx");
  ASSERT_TRUE(X.Error.empty()) << X.Error;
  ASSERT_EQ(X.R.Verdict, ExploreVerdict::Clean) << X.R.Reason;
  EXPECT_EQ(X.R.Period, 8u);
  EXPECT_EQ(X.R.Threshold, 2u);
  std::set<uint64_t> Concrete, Periodic;
  std::regex Run("^K = ([0-9]+)( \\+ 8j tiles)?, ");
  for (const std::string &R : X.R.Runs) {
    std::smatch M;
    if (std::regex_search(R, M, Run))
      (M[2].matched ? Periodic : Concrete).insert(std::stoull(M[1]) / 64);
  }
  ASSERT_FALSE(Concrete.empty());
  ASSERT_FALSE(Periodic.empty());
  EXPECT_EQ(*Concrete.rbegin(), 9u);
  EXPECT_EQ(*Periodic.begin(), 10u);
  EXPECT_EQ(*Periodic.rbegin(), 17u);
}

TEST(ExploreAllTripsTest, TheTileCountsOfAClassAreExploredAsOneOrTwoSystems) {
  // B4's periodic tile counts (8 to 15 + 8i per class of K) share their first 8 tiles, the
  // cycle, and its small tile counts (1 to 7) are each a prefix of the launch of 7: explored
  // as two systems per class of K, or as one with exits inside the cycle where a tile has
  // as many k-tiles as the ring has stages, the proof is the same with fewer explorations
  // and states than one by one.
  WSV_MANIFEST_OR_SKIP(J);
  Proof Merged = prove("b4.ptx");
  ASSERT_TRUE(Merged.Error.empty()) << Merged.Error;
  Merged.Options.MergeTileCounts = false;
  ParametricResult OneByOne = exploreAllTrips(Merged.RP, Merged.Options);
  ASSERT_EQ(Merged.R.Verdict, ExploreVerdict::Clean) << Merged.R.Reason;
  ASSERT_EQ(OneByOne.Verdict, ExploreVerdict::Clean) << OneByOne.Reason;
  EXPECT_EQ(Merged.R.ForParameters, OneByOne.ForParameters);
  EXPECT_LT(Merged.R.Runs.size(), OneByOne.Runs.size());
  EXPECT_LT(Merged.R.States, OneByOne.States);
  unsigned Periodic = 0, Small = 0, Both = 0;
  for (const std::string &Run : Merged.R.Runs) {
    Periodic += Run.find(" to 15 + 8i tiles per CTA: clean") != std::string::npos;
    Small += Run.find(", 1 to 7 tiles per CTA: clean") != std::string::npos;
    Both += Run.find(", 1 or more tiles per CTA: clean") != std::string::npos;
  }
  // B4's ring has 4 stages: K = 64 to 192 are two systems, the 12 classes from 256 one.
  EXPECT_EQ(Periodic, 3u);
  EXPECT_EQ(Small, 3u);
  EXPECT_EQ(Both, 12u);
}

TEST(ExploreAllTripsTest, ExitsInsideTheCycleOfTilesProveWhatTwoSystemsProve) {
  // H5 and B5: the small tile counts and the periodic ones of a class of K as one system,
  // with an exit after each tile of the cycle in every pass, prove the same as the two
  // systems, in fewer states (the tiles after the cycle and the small counts' own run
  // through their tiles are gone).
  WSV_MANIFEST_OR_SKIP(J);
  for (const char *Kernel : {"h5.ptx", "b5.ptx"}) {
    Proof One = prove(Kernel);
    ASSERT_TRUE(One.Error.empty()) << One.Error;
    One.Options.MergeTileCycle = false;
    ParametricResult Two = exploreAllTrips(One.RP, One.Options);
    ASSERT_EQ(One.R.Verdict, ExploreVerdict::Clean) << Kernel << ": " << One.R.Reason;
    ASSERT_EQ(Two.Verdict, ExploreVerdict::Clean) << Kernel << ": " << Two.Reason;
    EXPECT_EQ(One.R.ForParameters, Two.ForParameters);
    EXPECT_LT(One.R.Runs.size(), Two.Runs.size()) << Kernel;
    EXPECT_LT(One.R.States * 4, Two.States * 3) << Kernel << ": a quarter fewer at least";
    EXPECT_TRUE(llvm::any_of(One.R.Runs, [](const std::string &R) {
      return R.find(" or more tiles per CTA: clean") != std::string::npos;
    })) << Kernel;
  }
}

TEST(ExploreAllTripsTest, ADepthFirstSearchFindsWhatTheFullSearchRunsOutBefore) {
  // H5 with the consumers restarting the ring at every tile: with 5 k-tiles and 2 tiles per
  // CTA the full search runs out of 20,000 states long before the bug; a depth-first search
  // within the same bound reaches the end of a tile and finds it.
  WSV_MANIFEST_OR_SKIP(J);
  Proof H = prove("h5.bug-mbarrier-phase-skip.ptx");
  ASSERT_TRUE(H.Error.empty()) << H.Error;
  std::optional<Instance> I = chooseInstance(H.RP, 64, 5, 2);
  ASSERT_TRUE(I);
  ConcreteSystem S = instantiate(H.RP, *I);
  ASSERT_EQ(S.Unknown, "");
  ExploreOptions Broad;
  Broad.MaxStates = 20000;
  EXPECT_EQ(explore(S, Broad).Verdict, ExploreVerdict::Unknown);
  ExploreOptions Deep = Broad;
  Deep.DepthFirst = true;
  ExploreResult D = explore(S, Deep);
  ASSERT_TRUE(bad(D.Verdict)) << D.Message;
  EXPECT_EQ(replay(S, D.Schedule).Verdict, D.Verdict);
}

TEST(ExploreAllTripsTest, TheRingsWrapComesBeforeTwoTilesAndItsRaceIsCut) {
  // B5 with mma2tma initialized for one arrival where both MMA warps commit: the producer
  // gets a stage back early and laps a consumer on the ring, which shows once the ring
  // wraps (5 k-tiles).
  WSV_MANIFEST_OR_SKIP(J);
  Proof X = prove("b5.bug-mbarrier-arrival-count.ptx");
  ASSERT_TRUE(X.Error.empty()) << X.Error;
  // The argument needs no depth-first search here: the launch of one tile whose ring
  // wraps (5 k-tiles) comes before those of two tiles, and its full search ends at the
  // race itself, a shortest schedule of a few dozen steps (the depth-first one was a
  // deadlock hundreds of steps deep).
  EXPECT_EQ(X.R.Verdict, ExploreVerdict::Race) << X.R.Reason;
  EXPECT_EQ(X.R.Reason.find("depth-first"), std::string::npos) << X.R.Reason;
  EXPECT_LE(X.R.Found.Schedule.size(), 90u);
  EXPECT_TRUE(replays(X));
  // The breadth-first schedule of the reduced search runs agents the race does not need;
  // cut, it is shorter and replays to the same race, and no agent's last step can go.
  std::optional<Instance> Wrap = chooseInstance(X.RP, 64, 5, 1);
  ASSERT_TRUE(Wrap);
  ConcreteSystem W = instantiate(X.RP, *Wrap);
  ExploreOptions Whole;
  Whole.Shorten = false;
  ExploreResult Long = explore(W, Whole), Cut = explore(W);
  ASSERT_EQ(Long.Verdict, ExploreVerdict::Race) << Long.Message;
  ASSERT_EQ(Cut.Verdict, ExploreVerdict::Race) << Cut.Message;
  EXPECT_EQ(Cut.Message, Long.Message);
  EXPECT_LT(Cut.Schedule.size(), Long.Schedule.size());
  EXPECT_EQ(replay(W, Cut.Schedule).Message, Cut.Message);
  for (unsigned A = 0; A < W.Agents.size(); ++A) {
    std::vector<ScheduleStep> Fewer = Cut.Schedule;
    auto Last = std::find_if(Fewer.rbegin() + 1, Fewer.rend(), [&](const ScheduleStep &T) {
      return T.K == ScheduleStep::Kind::Execute && T.Agent == A;
    });
    if (Last == Fewer.rend())
      continue;
    // With the completions of what it issued (the bad step itself stays).
    unsigned Step = Last->Step;
    Fewer.erase(std::next(Last).base());
    Fewer.erase(std::remove_if(Fewer.begin(), Fewer.end() - 1,
                               [&](const ScheduleStep &T) {
                                 return T.K == ScheduleStep::Kind::Complete && T.Agent == A &&
                                        T.Step == Step;
                               }),
                Fewer.end() - 1);
    ExploreResult Again = replay(W, Fewer);
    EXPECT_FALSE(Again.Verdict == ExploreVerdict::Race && Again.Message == Cut.Message)
        << W.Agents[A].Name << "'s last step is not needed";
  }
  // On the correct kernel it finds nothing.
  Proof Clean = prove("b5.ptx");
  EXPECT_FALSE(bad(Clean.R.Verdict)) << Clean.R.Reason;
}

TEST(ExploreAllTripsTest, CheckedBuildsGetThePlainBuildsVerdicts) {
  WSV_MANIFEST_OR_SKIP(J);
  unsigned Compared = 0, ProvedBoth = 0, RefutedBoth = 0;
  auto Compare = [&](const std::string &What, const llvm::json::Object &O) {
    std::string Checked = O.getString("checked_ptx").value_or("").str();
    if (Checked.empty())
      return;
    // H5's proofs take about 420,000 states (the plain build); H4's about 7,000.
    // Variants stop at their first bug.
    const uint64_t Budget = What.rfind("h5", 0) == 0 ? 1500000 : 600000;
    Proof Plain = prove(O.getString("ptx")->str(), Budget), Inst = prove(Checked, Budget);
    ASSERT_TRUE(Inst.Error.empty()) << What << ": " << Inst.Error;
    row(What, "checked", Inst);
    ++Compared;
    EXPECT_EQ(Inst.R.Verdict, Plain.R.Verdict) << What << ": " << Inst.R.Reason << " / plain: "
                                               << Plain.R.Reason;
    if (Plain.R.Verdict == ExploreVerdict::Clean && Inst.R.Verdict == ExploreVerdict::Clean) {
      ++ProvedBoth;
      EXPECT_EQ(Inst.R.ForParameters, Plain.R.ForParameters) << What;
    }
    if (bad(Plain.R.Verdict) && bad(Inst.R.Verdict)) {
      ++RefutedBoth;
      // Barriers are named by how they are used, and the instrumented waits may number two
      // arrays of one name differently (empty0 against empty).
      auto Unnumbered = [](const std::string &M) {
        return std::regex_replace(M, std::regex("([A-Za-z_]+)[0-9]+\\["), "$1[");
      };
      EXPECT_EQ(Unnumbered(Inst.R.Found.Message), Unnumbered(Plain.R.Found.Message)) << What;
      EXPECT_TRUE(replays(Inst)) << What << ": the replay disagrees";
    }
  };
  for (const llvm::json::Value &K : *J->getAsObject()->getArray("kernels")) {
    const llvm::json::Object &KO = *K.getAsObject();
    std::string Name = KO.getString("name")->str();
    Compare(Name, KO);
    for (const llvm::json::Value &V : *KO.getArray("variants"))
      Compare(Name + " " + V.getAsObject()->getString("bug")->str(), *V.getAsObject());
  }
  std::printf("%u checked builds: %u proved and %u refuted as their plain builds\n", Compared,
              ProvedBoth, RefutedBoth);
  // H1 to H5 and their deadlock and race variants at least.
  EXPECT_GE(ProvedBoth, 5u);
  EXPECT_GE(RefutedBoth, 10u);
}

} // namespace
