// Proofs and counterexamples on a small hand-written 2-stage ring (tests/lit/verify/Inputs):
// the correct ring is proved for every trip count, the seeded initial-phase and
// arrival-count bugs are refuted with short schedules that end where the bug says, fixing the
// parameter decides exactly that instance, and a protocol the encoding cannot express stays
// unknown.
#include "VerifyTestSupport.h"

#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/Verify.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <memory>
#include <string>

using namespace wsv;
using namespace wsv::analyzer;
using namespace wsv::analyzer::test;

namespace {

std::string input(const std::string &Name) { return verifyInput(Name); }

std::unique_ptr<Verified> verifyFile(const std::string &Name, VerifyOptions Options = {}) {
  return verifyText(input(Name), Options);
}

/// The parameter the ring's loops count to, by whatever name the protocol gives it.
uint64_t tripOf(const Verdict &V) {
  EXPECT_EQ(V.Parameters.size(), 1u) << describe(V);
  return V.Parameters.empty() ? 0 : V.Parameters.begin()->second;
}

/// Small budgets: these tests check answers, not speed (tests/bench/verify measures that).
/// Z3's work is counted, not timed, so that a loaded machine gets the same answers: the
/// answers decided here take at most about 600,000 units; 3 million is 1.5 s here.
VerifyOptions quick() {
  VerifyOptions Options;
  Options.ResourceLimit = 3000000;
  Options.TimeoutMs = 60000;
  return Options;
}

TEST(VerifyTest, TwoStageRingHasNoCounterexample) {
  // The correct ring: no property is refuted; what is not proved in the budget says why and
  // how far the bounded search got.
  auto R = verifyFile("ring2.ptx", quick());
  ASSERT_EQ(R->Verdicts.size(), 3u);
  for (const Verdict &V : R->Verdicts) {
    EXPECT_FALSE(V.refuted()) << toString(V.Prop) << ": " << describe(V);
    if (V.unknown()) {
      EXPECT_FALSE(V.Reason.empty());
      EXPECT_GT(V.BoundReached, 0u) << toString(V.Prop);
    }
    EXPECT_FALSE(V.Assumptions.empty());
  }
}

TEST(VerifyTest, InitialPhaseBugDeadlocksAtTheProducersFirstWait) {
  auto R = verifyFile("ring2.bug-initial-phase.ptx", quick());
  const Verdict &V = R->of(Property::DeadlockFreedom);
  ASSERT_TRUE(V.refuted()) << describe(V);
  EXPECT_GE(tripOf(V), 1u);
  EXPECT_LE(V.Schedule.size(), 24u) << describe(V);
  bool ProducerStuck = false;
  for (const AgentState &A : V.FinalAgents)
    if (A.Blocked && A.Barrier == std::string("empty")) {
      ProducerStuck = true;
      EXPECT_EQ(A.Parity, 0u);
      EXPECT_EQ(A.Slot, 0u);
    }
  EXPECT_TRUE(ProducerStuck) << describe(V);
  // The consumer waits for a fill that never comes: both ends of the ring are blocked.
  for (const AgentState &A : V.FinalAgents)
    EXPECT_TRUE(A.State == "finished" || A.Blocked) << A.Agent << " " << A.State;
  // The schedule names the instructions it ran.
  for (const VerifyStep &S : V.Schedule)
    EXPECT_GT(S.PtxLine, 0u) << S.What;
}

/// A seeded variant whose first bug breaks Broken: the search past that bug proves the
/// other two properties for every K, and their assumptions say what it went past (Says);
/// with a budget of 3 states (Tighten) they are not proved, and the reason says which
/// search ran out (Past).
void expectProvedPast(const char *File, Property Broken, const char *Says,
                      void (*Tighten)(VerifyOptions &), const char *Past) {
  auto Buffer = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/" + File);
  if (!Buffer)
    GTEST_SKIP() << "no " << File << " in " << WSV_PTX_DIR;
  const std::string Text = (*Buffer)->getBuffer().str();
  auto R = verifyText(Text, quick());
  ASSERT_TRUE(R->of(Broken).refuted());
  std::vector<Property> Others;
  for (Property Prop :
       {Property::DeadlockFreedom, Property::StageSafety, Property::BarrierHygiene})
    if (Prop != Broken)
      Others.push_back(Prop);
  for (Property Prop : Others) {
    const Verdict &V = R->of(Prop);
    EXPECT_TRUE(V.proved()) << toString(Prop) << ": " << describe(V);
    EXPECT_EQ(V.Engine, "explore") << toString(Prop);
    EXPECT_NE(V.ForParameters.find("every"), std::string::npos) << V.ForParameters;
    bool Said = false;
    for (const std::string &A : V.Assumptions)
      Said = Said || A.find(Says) != std::string::npos;
    EXPECT_TRUE(Said) << toString(Prop) << ": no assumption says '" << Says << "'";
  }
  VerifyOptions Tight = quick();
  Tighten(Tight);
  auto T = verifyText(Text, Tight);
  const Verdict &V = T->of(Others.front());
  EXPECT_FALSE(V.proved() && V.Engine == "explore") << describe(V);
  EXPECT_NE(V.Reason.find(Past), std::string::npos) << V.Reason;
}

TEST(VerifyTest, PastTheDeadlockStageSafetyAndHygieneAreProved) {
  // H2 with BUG(mbarrier-initial-phase) deadlocks at the producer's first wait, for every
  // K: the search past deadlocks proves the two safety properties for every K rather than
  // leave them unexamined, and says that deadlocked schedules end where they block.
  expectProvedPast("h2.bug-mbarrier-initial-phase.ptx", Property::DeadlockFreedom, "deadlocks",
                   [](VerifyOptions &O) { O.SafetyStates = 3; },
                   "the search past the deadlock");
}

TEST(VerifyTest, PastTheRaceDeadlockFreedomAndHygieneAreProved) {
  // H3 with BUG(smem-war-release) releases a stage before its readers are done: a race, for
  // every K. The search past races proves deadlock freedom and barrier hygiene for every K
  // rather than leave them to Z3's short bounded search, and says that racing steps go on.
  expectProvedPast("h3.bug-smem-war-release.ptx", Property::StageSafety, "a step that races",
                   [](VerifyOptions &O) { O.PastRaceStates = 3; },
                   "the search past the race");
}

TEST(VerifyTest, ExecutionsThatAllEndEarlyAreProvedByExhaustion) {
  // With the initial-phase bug every execution stops (finished or stuck) within a few steps
  // for every trip count, so the bounded search sees every reachable state: the other
  // properties are proved for all parameter values, and the verdict says how.
  VerifyOptions Options = quick();
  Options.NotExaminedTimeoutMs = Options.TimeoutMs; // Z3's whole budget
  // Stepping param_1 by 64 (its loops count it by 1, which the explorer's search past the
  // deadlock settles by itself) leaves these two to Z3, whose exhaustion this is about.
  Options.TileKGiven = true;
  auto R = verifyFile("ring2.bug-initial-phase.ptx", Options);
  for (Property Prop : {Property::StageSafety, Property::BarrierHygiene}) {
    const Verdict &V = R->of(Prop);
    ASSERT_TRUE(V.proved()) << toString(Prop) << ": " << describe(V);
    EXPECT_EQ(V.Engine, "bmc");
    EXPECT_NE(V.ForParameters.find("every"), std::string::npos) << V.ForParameters;
    bool SaysHow = false;
    for (const std::string &A : V.Assumptions)
      SaysHow |= A.find("every execution ends within") != std::string::npos;
    EXPECT_TRUE(SaysHow);
  }
}

TEST(VerifyTest, AnUnfencedInitIsNoProofOfHygiene) {
  // The model does not follow fence.mbarrier_init: without it, the copies' complete_tx
  // reach barriers whose init the async proxy may not see (the explorer's violation). The
  // search that exhausts the initial-phase ring's executions (above) finds nothing to refute,
  // which is no proof of hygiene then; with the fence it is (the test above).
  std::string Text = input("ring2.bug-initial-phase.ptx");
  std::string Fence = "  fence.mbarrier_init.release.cluster;\n";
  size_t At = Text.find(Fence);
  ASSERT_NE(At, std::string::npos);
  Text.erase(At, Fence.size());
  VerifyOptions Z3Only = quick();
  Z3Only.ExploreAllTrips = false;
  Z3Only.Properties = {Property::BarrierHygiene};
  Z3Only.TileKGiven = true;
  auto R = verifyText(Text, Z3Only);
  const Verdict &V = R->of(Property::BarrierHygiene);
  ASSERT_TRUE(V.unknown()) << describe(V);
  EXPECT_NE(V.Reason.find("no counterexample (bmc), but the model lacks a hazard"),
            std::string::npos)
      << V.Reason;
  EXPECT_NE(V.Reason.find("is published by no fence.mbarrier_init"), std::string::npos)
      << V.Reason;
}

TEST(VerifyTest, ArrivalCountBugIsNotProved) {
  // empty[0] expects two arrivals and gets one per phase; from the third k-tile on the
  // producer hangs. Whatever the budget allows, it must never be called proved.
  auto R = verifyFile("ring2.bug-arrival-count.ptx", quick());
  const Verdict &V = R->of(Property::DeadlockFreedom);
  EXPECT_FALSE(V.proved()) << describe(V);
  if (V.refuted()) {
    EXPECT_GE(tripOf(V), 3u);
  }
}

TEST(VerifyTest, AResourceLimitStopsTheSearchAtTheSameDepthEveryTime) {
  // Counted work, unlike time, ends the bounded search at the same place on every run; a
  // budget too small for the deadlock says so, and a large enough one finds it.
  VerifyOptions Z3Only = quick();
  Z3Only.ExploreAllTrips = false;
  Z3Only.Properties = {Property::DeadlockFreedom};
  Z3Only.ResourceLimit = 100000;
  auto A = verifyFile("ring2.bug-initial-phase.ptx", Z3Only);
  auto B = verifyFile("ring2.bug-initial-phase.ptx", Z3Only);
  const Verdict &VA = A->of(Property::DeadlockFreedom), &VB = B->of(Property::DeadlockFreedom);
  ASSERT_TRUE(VA.unknown()) << describe(VA);
  EXPECT_NE(VA.Reason.find("resource limit (100000 units"), std::string::npos) << VA.Reason;
  EXPECT_GT(VA.BoundReached, 0u);
  EXPECT_EQ(VA.BoundReached, VB.BoundReached);
  EXPECT_EQ(VA.Reason, VB.Reason);
  Z3Only.ResourceLimit = 3000000;
  auto C = verifyFile("ring2.bug-initial-phase.ptx", Z3Only);
  EXPECT_TRUE(C->of(Property::DeadlockFreedom).refuted())
      << describe(C->of(Property::DeadlockFreedom));
}

/// Z3 alone on a reference kernel's PTX (WSV_PTX_DIR) at K = 64, for Prop, in Budget units.
std::unique_ptr<Verified> z3OnKernel(const std::string &File, Property Prop, uint64_t Budget) {
  auto Buffer = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/" + File);
  if (!Buffer)
    return nullptr;
  VerifyOptions Z3Only = quick();
  Z3Only.ExploreAllTrips = false;
  Z3Only.Properties = {Prop};
  Z3Only.ResourceLimit = Budget;
  Z3Only.Params["K"] = 64;
  return verifyText((*Buffer)->getBuffer().str(), Z3Only);
}

TEST(VerifyTest, WhereTheModelLacksAHazardFindingNoneIsNoProof) {
  // The model reads an MMA's operands when it is issued; the tensor cores read them until
  // the group retires, so a copy into the stage before then is a race the model cannot see.
  // H2 with the initial-phase bug ends every execution within a few steps: Z3 searches them
  // all and finds no stage race, which it called a proof of stage safety before.
  auto Stage = z3OnKernel("h2.bug-mbarrier-initial-phase.ptx", Property::StageSafety, 12000000);
  if (!Stage)
    GTEST_SKIP() << "no reference PTX in " << WSV_PTX_DIR;
  const Verdict &S = Stage->of(Property::StageSafety);
  ASSERT_TRUE(S.unknown()) << describe(S);
  EXPECT_NE(S.Reason.find("no counterexample (bmc), but the model lacks a hazard"),
            std::string::npos)
      << S.Reason;
  EXPECT_NE(S.Reason.find("asynchronously"), std::string::npos) << S.Reason;
  // (ExplorerZ3AgreementTest has the hygiene counterpart, which takes Z3 longer.)
}

TEST(VerifyTest, TripCountReadFromMemoryStaysUnknown) {
  // The loop bound is loaded from global memory: no closed form in the parameters, so no
  // proof and no counterexample.
  std::string Text = input("ring2.ptx");
  std::string From = "  ld.param.u32 %r1, [ring2_param_1];\n";
  size_t At = Text.find(From);
  ASSERT_NE(At, std::string::npos);
  Text.replace(At, From.size(), "  ld.global.u32 %r1, [%rd1];\n");
  auto R = verifyText(Text, quick());
  for (const Verdict &V : R->Verdicts) {
    EXPECT_TRUE(V.unknown()) << toString(V.Prop) << ": " << describe(V);
    EXPECT_FALSE(V.Reason.empty());
  }
}

} // namespace

TEST(VerifyTest, ExplorerAndZ3AgreeOnSmallTripCounts) {
  // The two engines implement one contract (RoleProgram.h): for every input and small trip
  // count, each property Z3's bounded search decides (without the exploration in front) must
  // get the answer the exhaustive exploration of that launch gives. What Z3 leaves unknown in
  // its budget (two trips, here) is not compared; the count of compared answers is printed.
  unsigned Compared = 0;
  for (const char *Name :
       {"ring2.ptx", "ring2.bug-initial-phase.ptx", "ring2.bug-arrival-count.ptx"}) {
    for (uint64_t Trips : {1u, 2u}) {
      VerifyOptions Z3Only = quick();
      Z3Only.ExploreAllTrips = false;
      Z3Only.Params["param_1"] = Trips;
      auto R = verifyText(input(Name), Z3Only);
      ASSERT_TRUE(R->P);

      RolePrograms RP = lowerRolePrograms(*R->P);
      Instance I;
      I.Params["param_1"] = Trips;
      ConcreteSystem S = instantiate(RP, I);
      ASSERT_TRUE(S.Unknown.empty()) << Name << ": " << S.Unknown;
      ExploreResult E = explore(S);
      ASSERT_NE(E.Verdict, ExploreVerdict::Unknown) << Name << ": " << E.Message;

      for (const Verdict &V : R->Verdicts) {
        // One trip is within the budget for every property: the search folds each role's
        // private steps (loop bookkeeping, runs of reads) into the step before them.
        if (Trips == 1) {
          EXPECT_FALSE(V.unknown()) << Name << ", " << toString(V.Prop) << ": " << describe(V);
        }
        if (V.unknown())
          continue;
        bool ExplorerRefutes =
            E.Verdict != ExploreVerdict::Clean && brokenBy(E.Verdict) == V.Prop;
        // The explorer stops at its first bad state: a property it did not get to is
        // compared only where it refutes it.
        if (E.Verdict != ExploreVerdict::Clean && !ExplorerRefutes && V.refuted())
          continue;
        ++Compared;
        EXPECT_EQ(V.refuted(), ExplorerRefutes)
            << Name << " with param_1 = " << Trips << ", " << toString(V.Prop)
            << ": Z3 says " << describe(V) << "; the explorer says " << toString(E.Verdict)
            << " " << E.Message;
      }
    }
  }
  std::printf("%u answers of Z3 compared with the explorer's\n", Compared);
  EXPECT_GT(Compared, 0u);
}
