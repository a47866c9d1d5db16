// Exhaustive exploration of every reference kernel and seeded variant of the manifest
// (WSV_PTX_DIR/kernels.json) for small parameters: 1, 2 and (ring slots + 1) k-tiles, and 1-2
// tiles per CTA for the persistent kernels, each instance bounded to StateBound states. No correct kernel may come
// out bad; single-CTA kernels must come out clean (their instances finish within the bound;
// cluster kernels may reach it, and the table says unknown). Every deadlock or race variant
// the model covers should come out bad for some instance (or, for cluster kernels, reach the
// bound); those it does not find are printed as MISSED, the explorer's known gaps. Every bad
// verdict's schedule, replayed on the models from the start, must reach the same verdict.
// Prints a table: kernel, variant, verdict, steps, states, ms.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <tuple>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Bug classes whose failure is a deadlock, a race on a stage buffer, or a barrier misuse
/// the models reject, i.e. what the explorer's model has the state to show.
const std::set<std::string> Covered = {
    "mbarrier-arrival-count", "mbarrier-init-visibility", "barrier-divergent",
    "named-barrier-count",    "named-barrier-id-collision", "mbarrier-trip-count",
    "mbarrier-initial-phase", "mbarrier-tx-bytes",        "mbarrier-no-arriver",
    "mbarrier-phase-skip",    "smem-war-release",         "smem-raw-wait",
    "bulk-store-reuse",       "tcgen05-alloc-exhaustion", "tcgen05-commit-multi-thread",
    "cluster-exit-early",     "cluster-multicast-mask",   "proxy-fence-missing",
    "accumulator-early-read", "tmem-dealloc-early",       "mbarrier-reuse",
    "aligned-divergent",      "setmaxnreg-nonuniform",    "tcgen05-alloc-lane-guard"};

/// Why the others are not deadlocks or races in this model.
const char *whyNotCovered(const std::string &Bug) {
  return "not modeled";
}

constexpr uint64_t StateBound = 20000;

struct Outcome {
  ExploreVerdict Verdict = ExploreVerdict::Unknown;
  std::string Message, Instance;
  size_t Steps = 0;
  uint64_t States = 0;
  double Ms = 0;
  bool Replayed = false;
  unsigned ClusterSize = 1;
  std::string Check; ///< ExploreResult::Check
};

/// The checks whose bugs show as races: a variant of one that the explorer refutes with a
/// race must get the race named by its own check (what `wsv explain` diagnoses it by).
const std::set<std::string> RaceChecks = {
    "smem-raw-wait", "smem-war-release", "bulk-store-reuse", "proxy-fence-missing",
    "accumulator-early-read", "tmem-dealloc-early"};

/// Likewise the checks whose bugs show as a barrier misuse (a violation; a whole warp's
/// tcgen05.commit shows as a lane's arrival after the CTA left). Not among them:
/// mbarrier-trip-count, whose misuse is a CTA's own copy landing after it exited, which a
/// role that skips a wait ends with too (named by no check).
const std::set<std::string> ViolationChecks = {
    "mbarrier-reuse",           "mbarrier-init-visibility", "tcgen05-alloc-lane-guard",
    "tcgen05-alloc-exhaustion", "aligned-divergent",        "setmaxnreg-nonuniform",
    "cluster-multicast-mask",   "cluster-exit-early",       "named-barrier-id-collision",
    "mbarrier-phase-skip",      "tcgen05-commit-multi-thread"};

class ExploreKernelsTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto Buf = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/kernels.json");
    if (!Buf)
      GTEST_SKIP() << "no kernels.json in " << WSV_PTX_DIR << " (build wsv_ptx)";
    auto J = llvm::json::parse((*Buf)->getBuffer());
    ASSERT_TRUE(static_cast<bool>(J)) << llvm::toString(J.takeError());
    Manifest = std::move(*J);
  }

  /// The small instances of File's first entry: 1 and 2 k-tiles, and one more than the
  /// deepest barrier ring (so that the ring wraps and stages are reused: a missing release
  /// shows only then), each with 1 and 2 tiles per CTA.
  /// The systems point into the parsed module, protocol and role programs kept here.
  struct Loaded {
    std::string Error;
    unsigned ClusterSize = 1;
    ptx::ParseResult Parsed;
    std::unique_ptr<Protocol> P;
    RolePrograms RP;
    std::vector<std::pair<std::string, ConcreteSystem>> Systems;
  };
  static std::unique_ptr<Loaded> load(const std::string &File) {
    auto Out = std::make_unique<Loaded>();
    Loaded &L = *Out;
    auto Parsed = ptx::parseFile(std::string(WSV_PTX_DIR) + "/" + File,
                                 [](const ptx::Diagnostic &) {});
    if (!Parsed || !Parsed->ok()) {
      if (!Parsed)
        llvm::consumeError(Parsed.takeError());
      L.Error = "does not parse";
      return Out;
    }
    L.Parsed = std::move(*Parsed);
    const ptx::Function *Entry = nullptr;
    for (const ptx::Function *F : L.Parsed.M->functions())
      if (F->isDefinition() && F->isEntry() && !Entry)
        Entry = F;
    if (!Entry) {
      L.Error = "no entry";
      return Out;
    }
    L.P = buildProtocol(*L.Parsed.M, *Entry);
    L.RP = lowerRolePrograms(*L.P);
    L.ClusterSize = L.RP.ClusterSize;
    std::optional<LaunchSpec> Spec = readKernelInfo(*L.Parsed.M, *Entry);
    uint64_t TileK = Spec && Spec->TileK ? *Spec->TileK : 64;
    unsigned MinK = Spec && Spec->MinKTiles ? *Spec->MinKTiles : 1;
    unsigned Ring = 1;
    for (const BarrierArray &B : L.P->Barriers)
      Ring = std::max(Ring, B.Slots);
    std::vector<unsigned> KTileCounts = {std::max(1u, MinK), std::max(2u, MinK), Ring + 1};
    for (unsigned KTiles : KTileCounts)
      for (unsigned Tiles = 1; Tiles <= 2; ++Tiles)
        if (std::optional<Instance> I = chooseInstance(L.RP, TileK, KTiles, Tiles))
          L.Systems.emplace_back("k-tiles " + std::to_string(KTiles) + ", tiles " +
                                     std::to_string(Tiles),
                                 instantiate(L.RP, *I));
    if (L.Systems.empty())
      L.Error = "no M, N and grid give a small instance";
    return Out;
  }

  /// Explores File's first entry over the small instances; stops at the first bad verdict.
  Outcome run(const std::string &File) {
    Outcome O;
    auto Start = std::chrono::steady_clock::now();
    std::unique_ptr<Loaded> Held = load(File);
    const Loaded &L = *Held;
    O.ClusterSize = L.ClusterSize;
    if (!L.Error.empty()) {
      O.Message = L.Error;
      return O;
    }
    O.Verdict = ExploreVerdict::Clean;
    ExploreOptions Options;
    Options.MaxStates = StateBound;
    for (const auto &[Name, S] : L.Systems) {
      ExploreResult R = explore(S, Options);
      O.States += R.States;
      if (R.Verdict == ExploreVerdict::Clean)
        continue;
      // An instance that reached the state bound says unknown unless a later one is bad.
      if (R.Verdict == ExploreVerdict::Unknown && O.Verdict == ExploreVerdict::Unknown)
        continue;
      O.Verdict = R.Verdict;
      O.Message = R.Message;
      O.Check = R.Check;
      O.Steps = R.Schedule.size();
      O.Instance = Name;
      if (R.Verdict != ExploreVerdict::Unknown) {
        ExploreResult Again = replay(S, R.Schedule);
        O.Replayed = Again.Verdict == R.Verdict && Again.Message == R.Message;
        break;
      }
    }
    O.Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
               .count();
    return O;
  }

  static void row(const std::string &Kernel, const std::string &Variant, const Outcome &O) {
    std::printf("%-4s %-28s %-9s %5zu %8llu %8.1f  %s%s%s\n", Kernel.c_str(), Variant.c_str(),
                toString(O.Verdict), O.Steps, static_cast<unsigned long long>(O.States), O.Ms,
                O.Instance.c_str(), O.Instance.empty() ? "" : ": ", O.Message.c_str());
  }

  /// Fn(label, PTX file) for every kernel of the manifest and every variant of it.
  template <typename Fn> void forEachFile(Fn F) {
    for (const llvm::json::Value &K : *Manifest.getAsObject()->getArray("kernels")) {
      const llvm::json::Object &KO = *K.getAsObject();
      std::string Name = KO.getString("name")->str();
      F(Name, KO.getString("ptx")->str());
      for (const llvm::json::Value &V : *KO.getArray("variants"))
        F(Name + " " + V.getAsObject()->getString("bug")->str(),
          V.getAsObject()->getString("ptx")->str());
    }
  }
  static bool isBad(ExploreVerdict V) {
    return V == ExploreVerdict::Deadlock || V == ExploreVerdict::Race ||
           V == ExploreVerdict::Violation;
  }

  /// F(Label, Name, S, R) on each kernel's and variant's first small instance that comes out
  /// bad, R its schedule as the search found it (not gathered: agents switch more often).
  template <typename Fn> void forEachFirstBadSchedule(Fn F) {
    forEachFile([&](const std::string &Label, const std::string &File) {
      std::unique_ptr<Loaded> Held = load(File);
      if (!Held->Error.empty())
        return;
      for (const auto &[Name, S] : Held->Systems) {
        ExploreOptions Options;
        Options.MaxStates = StateBound;
        Options.Gather = false;
        ExploreResult R = explore(S, Options);
        if (isBad(R.Verdict)) {
          F(Label, Name, S, R);
          return;
        }
      }
    });
  }

  llvm::json::Value Manifest = nullptr;
  unsigned Missed = 0, Checked = 0;
};

TEST_F(ExploreKernelsTest, CorrectKernelsCleanVariantsFoundAndReplayed) {
  std::printf("%-4s %-28s %-9s %5s %8s %8s\n", "kern", "variant", "verdict", "steps", "states",
              "ms");
  const llvm::json::Array *Kernels = Manifest.getAsObject()->getArray("kernels");
  ASSERT_TRUE(Kernels);
  for (const llvm::json::Value &K : *Kernels) {
    const llvm::json::Object &KO = *K.getAsObject();
    std::string Name = KO.getString("name")->str();
    Outcome O = run(KO.getString("ptx")->str());
    row(Name, "-", O);
    bool Bad = O.Verdict == ExploreVerdict::Deadlock || O.Verdict == ExploreVerdict::Race ||
               O.Verdict == ExploreVerdict::Violation;
    EXPECT_FALSE(Bad) << Name << ": " << O.Message;
    // A single-CTA kernel finishes within the bound: clean, unless the protocol itself has
    // an unknown the instance needs (printed in the table), which no exploration can settle.
    bool Bounded = O.Message.find("state bound") != std::string::npos;
    if (O.ClusterSize == 1 && (O.Verdict == ExploreVerdict::Clean || Bounded)) {
      EXPECT_EQ(O.Verdict, ExploreVerdict::Clean) << Name << ": " << O.Message;
    }
    for (const llvm::json::Value &V : *KO.getArray("variants")) {
      const llvm::json::Object &VO = *V.getAsObject();
      std::string Bug = VO.getString("bug")->str();
      Outcome B = run(VO.getString("ptx")->str());
      if (!Covered.count(Bug) && B.Message.empty())
        B.Message = whyNotCovered(Bug);
      row(Name, Bug, B);
      if (!Covered.count(Bug))
        continue;
      bool Found = B.Verdict == ExploreVerdict::Deadlock || B.Verdict == ExploreVerdict::Race ||
                   B.Verdict == ExploreVerdict::Violation;
      bool Bounded = B.ClusterSize > 1 && B.Verdict == ExploreVerdict::Unknown &&
                     B.Message.find("state bound") != std::string::npos;
      // A covered variant the explorer does not find is a gap of the model or of the
      // small instances, listed as MISSED (the report of the change names them); what it
      // finds must replay.
      if (!Found && !Bounded) {
        std::printf("MISSED %s %s\n", Name.c_str(), Bug.c_str());
        ++Missed;
      }
      Checked += Found;
      if (B.Verdict != ExploreVerdict::Unknown && B.Verdict != ExploreVerdict::Clean) {
        EXPECT_TRUE(B.Replayed) << Name << " " << Bug << ": the replay disagrees";
      }
      if (B.Verdict == ExploreVerdict::Race && RaceChecks.count(Bug)) {
        EXPECT_EQ(B.Check, Bug) << Name << ": " << B.Message;
      }
      if (B.Verdict == ExploreVerdict::Violation && ViolationChecks.count(Bug)) {
        EXPECT_EQ(B.Check, Bug) << Name << ": " << B.Message;
      }
    }
  }
  std::printf("%u covered variants found and replayed, %u missed\n", Checked, Missed);
  EXPECT_GT(Checked, 0u);
}

/// Runs of one agent's consecutive transitions (the completions of async work count as
/// one agent of their own).
unsigned runs(const std::vector<ScheduleStep> &Schedule) {
  unsigned N = 0;
  auto Who = [](const ScheduleStep &T) {
    return T.K == ScheduleStep::Kind::Execute ? int(T.Agent) : -1;
  };
  for (size_t I = 0; I < Schedule.size(); ++I)
    N += !I || Who(Schedule[I]) != Who(Schedule[I - 1]);
  return N;
}

/// Agent A's steps in the order the schedule takes them; with Completions, the completions
/// of its async work instead, in a fixed order (they may move past each other).
std::vector<ScheduleStep> stepsOf(const std::vector<ScheduleStep> &Schedule, unsigned A,
                                  bool Completions = false) {
  std::vector<ScheduleStep> Out;
  for (const ScheduleStep &T : Schedule)
    if (T.Agent == A && (T.K == ScheduleStep::Kind::Complete) == Completions)
      Out.push_back(T);
  if (Completions)
    std::sort(Out.begin(), Out.end(), [](const ScheduleStep &X, const ScheduleStep &Y) {
      return std::tie(X.Step, X.Copy) < std::tie(Y.Step, Y.Copy);
    });
  return Out;
}

/// G holds the transitions of Original, each agent's steps and its completions in their own
/// order.
void expectSameTransitions(const ConcreteSystem &S, const std::vector<ScheduleStep> &G,
                           const std::vector<ScheduleStep> &Original, const std::string &What) {
  ASSERT_EQ(G.size(), Original.size()) << What;
  for (unsigned A = 0; A < S.Agents.size(); ++A) {
    EXPECT_TRUE(stepsOf(G, A) == stepsOf(Original, A)) << What << " " << A;
    EXPECT_TRUE(stepsOf(G, A, true) == stepsOf(Original, A, true)) << What;
  }
}

// Every bad verdict's schedule, found without gathering, gathered (gatherAgents) on its own,
// i.e. without the fallback to the order found that explore() has: the same transitions, each
// agent's in its own order, in no more runs of one agent, replaying to the same verdict,
// message and blocked agents; a race's or violation's last step stays last. Over all variants
// the runs must drop by a third at least (H5's phase-skip schedule, 274 steps, has 36 runs
// as found).
TEST_F(ExploreKernelsTest, GatheredSchedulesReachTheSameBug) {
  unsigned Before = 0, After = 0, Compared = 0;
  forEachFirstBadSchedule([&](const std::string &Label, const std::string &Name,
                              const ConcreteSystem &S, const ExploreResult &R) {
    bool KeepLast = R.Verdict != ExploreVerdict::Deadlock;
    std::vector<ScheduleStep> G = gatherAgents(S, R.Schedule, KeepLast);
    expectSameTransitions(S, G, R.Schedule, Label + " " + Name);
    if (KeepLast) {
      EXPECT_TRUE(G.back() == R.Schedule.back()) << Label << " " << Name;
    }
    ExploreResult Again = replay(S, G);
    EXPECT_EQ(Again.Verdict, R.Verdict) << Label << " " << Name << ": " << Again.Message;
    EXPECT_EQ(Again.Message, R.Message) << Label << " " << Name;
    ASSERT_EQ(Again.Blocked.size(), R.Blocked.size()) << Label << " " << Name;
    for (size_t I = 0; I < R.Blocked.size(); ++I)
      EXPECT_EQ(Again.Blocked[I].Reason, R.Blocked[I].Reason) << Label << " " << Name;
    EXPECT_LE(runs(G), runs(R.Schedule)) << Label << " " << Name;
    // explore() gathers so by default.
    ExploreOptions Options;
    Options.MaxStates = StateBound;
    EXPECT_TRUE(explore(S, Options).Schedule == G) << Label << " " << Name;
    Before += runs(R.Schedule);
    After += runs(G);
    ++Compared;
  });
  std::printf("%u schedules gathered: %u runs of one agent as found, %u gathered\n", Compared,
              Before, After);
  EXPECT_GT(Compared, 40u);
  EXPECT_LE(3 * After, 2 * Before);
}

// Every bad verdict's schedule in atomic steps (foldPrivateSteps): the same transitions, each
// agent's in its own order; steps numbered from 0 in order, each a run of one agent's
// transitions (a completion is a step of its own) whose transitions before the last are
// private, so never a wait or a cluster barrier step; replaying to the same verdict, message
// and blocked agents, also with a step's private transitions moved back past the other
// agents' transitions to right after their agent's previous one; a race's or violation's last
// transition stays last. Over all variants
// the steps must be fewer than three quarters of the transitions (H5's phase-skip schedule
// folds 274 transitions into 64 steps). A schedule that is not one of the system comes back
// a step per transition.
TEST_F(ExploreKernelsTest, FoldedSchedulesReachTheSameBug) {
  size_t Transitions = 0, Steps = 0;
  unsigned Compared = 0, Folded = 0, MovedBack = 0;
  forEachFirstBadSchedule([&](const std::string &Label, const std::string &Name,
                              const ConcreteSystem &S, const ExploreResult &R) {
    bool Race = R.Verdict == ExploreVerdict::Race;
    FoldedSchedule F = foldPrivateSteps(S, R.Schedule, Race);
    const std::vector<ScheduleStep> &G = F.Schedule;
    ASSERT_EQ(F.Step.size(), G.size()) << Label << " " << Name;
    expectSameTransitions(S, G, R.Schedule, Label + " " + Name);
    if (R.Verdict != ExploreVerdict::Deadlock) {
      EXPECT_TRUE(G.back() == R.Schedule.back()) << Label << " " << Name;
    }
    EXPECT_EQ(F.Step.front(), 0u) << Label << " " << Name;
    for (size_t I = 1; I < G.size(); ++I) {
      ASSERT_TRUE(F.Step[I] == F.Step[I - 1] || F.Step[I] == F.Step[I - 1] + 1)
          << Label << " " << Name << " at " << I;
      if (F.Step[I] != F.Step[I - 1])
        continue;
      const ScheduleStep &T = G[I - 1];
      ASSERT_EQ(T.K, ScheduleStep::Kind::Execute) << Label << " " << Name << " at " << I;
      ASSERT_EQ(G[I].K, ScheduleStep::Kind::Execute) << Label << " " << Name << " at " << I;
      EXPECT_EQ(T.Agent, G[I].Agent) << Label << " " << Name << " at " << I;
      StepKind K = S.Agents[T.Agent].Steps[T.Step].Kind;
      EXPECT_TRUE(K != StepKind::Wait && K != StepKind::Probe && K != StepKind::ClusterArrive &&
                  K != StepKind::ClusterWait && K != StepKind::Exit)
          << Label << " " << Name << " folds a " << toString(K) << " at " << I;
    }
    ExploreResult Before = replay(S, R.Schedule, Race);
    auto SameEnd = [&](const std::vector<ScheduleStep> &Order, const std::string &What) {
      ExploreResult Again = replay(S, Order, Race);
      EXPECT_EQ(Again.Verdict, Before.Verdict) << Label << " " << Name << What << ": "
                                               << Again.Message;
      EXPECT_EQ(Again.Message, Before.Message) << Label << " " << Name << What;
      ASSERT_EQ(Again.Blocked.size(), Before.Blocked.size()) << Label << " " << Name << What;
      for (size_t I = 0; I < Before.Blocked.size(); ++I)
        EXPECT_EQ(Again.Blocked[I].Reason, Before.Blocked[I].Reason) << Label << " " << Name;
    };
    SameEnd(G, "");
    // Folded transitions commute with whatever others do while their agent is between two
    // transitions: a step's private transitions, moved back to any place between their
    // agent's previous transition and the other agents' transitions that follow it, leave
    // the schedule ending in the same bug (at most 40 such moves per schedule).
    unsigned Moved = 0;
    for (size_t First = 1; First < G.size() && Moved < 40; ++First) {
      size_t Closer = First;
      while (Closer + 1 < G.size() && F.Step[Closer + 1] == F.Step[First])
        ++Closer;
      if (F.Step[First] == F.Step[First - 1] || Closer == First)
        continue;
      size_t To = First;
      while (To > 0 && !(G[To - 1].K == ScheduleStep::Kind::Execute &&
                         G[To - 1].Agent == G[First].Agent))
        --To;
      if (To == First || To == 0) // nothing in between, or the agent's first step
        continue;
      for (size_t At = To; At < First && Moved < 40; ++At, ++Moved) {
        std::vector<ScheduleStep> Early = G;
        std::rotate(Early.begin() + At, Early.begin() + First, Early.begin() + Closer);
        SameEnd(Early, " moving transitions " + std::to_string(First) + "-" +
                           std::to_string(Closer - 1) + " to " + std::to_string(At));
      }
    }
    MovedBack += Moved;
    Transitions += G.size();
    Steps += F.steps();
    Folded += F.steps() < G.size();
    ++Compared;
    // Not a schedule of S (a transition left out): nothing folds.
    if (G.size() > 2) {
      std::vector<ScheduleStep> Broken = R.Schedule;
      Broken.erase(Broken.begin() + Broken.size() / 2);
      FoldedSchedule B = foldPrivateSteps(S, Broken, Race);
      if (replay(S, Broken, Race).Verdict == ExploreVerdict::Unknown) {
        EXPECT_EQ(B.steps(), Broken.size()) << Label << " " << Name;
      }
      EXPECT_TRUE(B.Schedule == Broken || B.steps() < Broken.size()) << Label << " " << Name;
    }
  });
  std::printf("%u schedules folded (%u shorter): %zu transitions, %zu steps; %u moves of a "
              "step's private transitions back\n",
              Compared, Folded, Transitions, Steps, MovedBack);
  EXPECT_GT(Compared, 40u);
  EXPECT_GT(MovedBack, 60u);
  EXPECT_GT(Folded, 20u);
  EXPECT_LT(4 * Steps, 3 * Transitions);
}

// Where each variant's deadlock becomes certain (whereInevitable): the searches end within
// their bound, and where a step before the end is named, the schedule that could still
// finish from the step before it does finish when replayed (every agent at its end), with
// the searches' own simulator out of the loop. Both answers occur among the variants: bugs
// that hang whatever the timing (an initial phase: 0) and ones that hang only if a
// completion comes first (B5's surplus commit: a late step).
TEST_F(ExploreKernelsTest, DeadlocksAreCertainWhereNoScheduleFinishes) {
  unsigned Deadlocks = 0, FromStart = 0, Later = 0, NotDeadlocks = 0;
  auto Check = [&](const std::string &Label, const ConcreteSystem &S, const ExploreResult &R) {
    ++Deadlocks;
    std::optional<Inevitability> In = whereInevitable(S, R.Schedule);
    ASSERT_TRUE(In) << Label << ": the searches ran out of states";
    ASSERT_LE(In->Step, R.Schedule.size()) << Label;
    if (In->Step == 0) {
      ++FromStart;
      EXPECT_TRUE(In->Escape.empty()) << Label;
      return;
    }
    ++Later;
    std::vector<ScheduleStep> Finishing(R.Schedule.begin(), R.Schedule.begin() + In->Step - 1);
    Finishing.insert(Finishing.end(), In->Escape.begin(), In->Escape.end());
    ExploreResult End = replay(S, Finishing, /*StopAtRace=*/false);
    EXPECT_EQ(End.Verdict, ExploreVerdict::Clean)
        << Label << ": the escape after " << In->Step - 1 << " steps does not finish: "
        << End.Message;
  };
  // Past races, as verify's second search goes (several variants race before they hang).
  forEachFile([&](const std::string &Label, const std::string &File) {
    std::unique_ptr<Loaded> Held = load(File);
    for (const auto &[Name, S] : Held->Systems) {
      ExploreOptions Options;
      Options.MaxStates = StateBound;
      Options.StopAtRace = false;
      ExploreResult R = explore(S, Options);
      if (!isBad(R.Verdict))
        continue;
      if (R.Verdict == ExploreVerdict::Deadlock) {
        Check(Label + " " + Name, S, R);
      } else {
        ++NotDeadlocks;
        EXPECT_FALSE(whereInevitable(S, R.Schedule)) << Label << ": not a deadlock's schedule";
      }
      return;
    }
  });
  std::printf("%u deadlocks: %u certain from the start, %u from a later step; %u other bugs\n",
              Deadlocks, FromStart, Later, NotDeadlocks);
  EXPECT_GT(FromStart, 3u);
  EXPECT_GT(Later, 3u);
  EXPECT_GT(NotDeadlocks, 0u);
}

// The partial-order reduction against the full search, on every small instance of every
// kernel and variant that both finish within the bound: a schedule the reduction skips must
// not hide a deadlock, race or violation (or make one up), and where no bug ends the
// search early the reduction must visit no more states than the full search.
TEST_F(ExploreKernelsTest, ReductionAgreesWithTheFullSearch) {
  unsigned Compared = 0, BadCompared = 0;
  uint64_t Reduced = 0, Full = 0;
  auto Check = [&](const std::string &What, const std::string &File) {
    std::unique_ptr<Loaded> L = load(File);
    for (const auto &[Name, S] : L->Systems) {
      ExploreOptions Options;
      Options.MaxStates = StateBound;
      ExploreResult R = explore(S, Options);
      Options.PartialOrder = false;
      ExploreResult F = explore(S, Options);
      if (R.Verdict == ExploreVerdict::Unknown || F.Verdict == ExploreVerdict::Unknown)
        continue;
      ++Compared;
      BadCompared += isBad(F.Verdict);
      Reduced += R.States;
      Full += F.States;
      EXPECT_EQ(isBad(R.Verdict), isBad(F.Verdict))
          << What << " " << Name << ": reduced " << toString(R.Verdict) << " (" << R.Message
          << "), full " << toString(F.Verdict) << " (" << F.Message << ")";
      // A search that ends at a bug stops at the first level holding one, which can be a
      // deeper level in the reduced graph (the reduction keeps bugs reachable, not their
      // distance): only complete searches compare their sizes.
      if (F.Verdict == ExploreVerdict::Clean) {
        EXPECT_LE(R.States, F.States) << What << " " << Name;
      }
    }
  };
  forEachFile(Check);
  std::printf("%u instances compared (%u bad), %llu states reduced, %llu full\n", Compared,
              BadCompared, static_cast<unsigned long long>(Reduced),
              static_cast<unsigned long long>(Full));
  EXPECT_GT(Compared, 50u);
  EXPECT_GT(BadCompared, 10u);
}

// Past deadlocks (ExploreOptions::StopAtDeadlock false, how `wsv verify` decides stage
// safety and barrier hygiene after a deadlock): the reduced search finds a race or violation
// wherever the full search does, on every small instance that deadlocks (elsewhere the
// searches are the usual ones), and never reports a deadlock.
TEST_F(ExploreKernelsTest, PastDeadlocksTheReductionFindsWhatTheFullSearchFinds) {
  unsigned Compared = 0, Bad = 0;
  forEachFile([&](const std::string &What, const std::string &File) {
    std::unique_ptr<Loaded> L = load(File);
    for (const auto &[Name, S] : L->Systems) {
      ExploreOptions Options;
      Options.MaxStates = StateBound;
      if (explore(S, Options).Verdict != ExploreVerdict::Deadlock)
        continue;
      Options.StopAtDeadlock = false;
      ExploreResult R = explore(S, Options);
      Options.PartialOrder = false;
      ExploreResult F = explore(S, Options);
      EXPECT_NE(R.Verdict, ExploreVerdict::Deadlock) << What << " " << Name;
      EXPECT_NE(F.Verdict, ExploreVerdict::Deadlock) << What << " " << Name;
      if (R.Verdict == ExploreVerdict::Unknown || F.Verdict == ExploreVerdict::Unknown)
        continue;
      ++Compared;
      Bad += isBad(F.Verdict);
      EXPECT_EQ(R.Verdict, F.Verdict)
          << What << " " << Name << ": reduced " << toString(R.Verdict) << " (" << R.Message
          << "), full " << toString(F.Verdict) << " (" << F.Message << ")";
      if (isBad(R.Verdict)) {
        ExploreResult Again = replay(S, R.Schedule);
        EXPECT_EQ(Again.Message, R.Message) << What << " " << Name;
      }
    }
  });
  std::printf("%u deadlocking instances compared past their deadlocks (%u bad)\n", Compared,
              Bad);
  EXPECT_GT(Compared, 30u);
}

TEST_F(ExploreKernelsTest, PackedStatesGiveTheSameSearch) {
  // Every waiting state packed and unpacked again (State::save / load) must leave the search
  // exactly as it was: the same verdict, message, schedule length and number of states.
  unsigned Compared = 0;
  forEachFile([&](const std::string &What, const std::string &File) {
    std::unique_ptr<Loaded> L = load(File);
    for (const auto &[Name, S] : L->Systems) {
      ExploreOptions Options;
      Options.MaxStates = StateBound;
      ExploreResult Plain = explore(S, Options);
      Options.PackBeyond = 0;
      ExploreResult Packed = explore(S, Options);
      ++Compared;
      EXPECT_EQ(Packed.Verdict, Plain.Verdict) << What << " " << Name;
      EXPECT_EQ(Packed.Message, Plain.Message) << What << " " << Name;
      EXPECT_EQ(Packed.States, Plain.States) << What << " " << Name;
      EXPECT_EQ(Packed.Schedule.size(), Plain.Schedule.size()) << What << " " << Name;
    }
  });
  std::printf("%u instances searched with every waiting state packed\n", Compared);
  EXPECT_GT(Compared, 100u);
}

TEST_F(ExploreKernelsTest, SymmetryAgreesWithoutIt) {
  // Where copies of a role are interchangeable (H5's consumer warpgroups), the search with
  // symmetry must reach the verdict the reduced search without it reaches (the full search
  // cannot finish on these: H5's smallest launch has over a million states), on fewer states.
  unsigned Compared = 0, BadCompared = 0;
  uint64_t With = 0, Without = 0;
  auto Check = [&](const std::string &What, const std::string &File) {
    std::unique_ptr<Loaded> L = load(File);
    for (const auto &[Name, S] : L->Systems) {
      ExploreOptions Options;
      Options.MaxStates = 10 * StateBound;
      ExploreResult R = explore(S, Options);
      if (!R.SymmetryGroups)
        continue;
      Options.Symmetry = false;
      ExploreResult N = explore(S, Options);
      if (R.Verdict == ExploreVerdict::Unknown || N.Verdict == ExploreVerdict::Unknown)
        continue;
      ++Compared;
      BadCompared += isBad(N.Verdict);
      With += R.States;
      Without += N.States;
      EXPECT_EQ(isBad(R.Verdict), isBad(N.Verdict))
          << What << " " << Name << ": with symmetry " << toString(R.Verdict) << " ("
          << R.Message << "), without " << toString(N.Verdict) << " (" << N.Message << ")";
      EXPECT_LE(R.States, N.States) << What << " " << Name;
    }
  };
  forEachFile(Check);
  std::printf("%u instances with symmetry compared (%u bad), %llu states with it, %llu "
              "without\n",
              Compared, BadCompared, static_cast<unsigned long long>(With),
              static_cast<unsigned long long>(Without));
  EXPECT_GT(Compared, 10u);
  EXPECT_GT(BadCompared, 2u);
  EXPECT_LT(With, Without);
}

} // namespace
