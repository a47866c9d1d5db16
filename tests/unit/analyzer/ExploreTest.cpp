// The explorer on small hand-written PTX: a producer thread and a consumer warp that meet on
// one mbarrier. The correct handshake is clean; a consumer waiting for a phase nobody
// completes deadlocks; a read of the buffer before the copy that fills it completes races.
// Each bad verdict's schedule must replay to the same verdict, and a schedule cut short must
// not.
#include "wsv/analyzer/Explore.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

/// Thread 0 initializes `bar` (count Init); after bar.sync, thread 0 arrives Arrivals times,
/// and warp 1 waits for parity Parity of `bar`.
std::string handshake(unsigned Init, unsigned Arrivals, unsigned Parity) {
  std::string Arrive;
  for (unsigned I = 0; I < Arrivals; ++I)
    Arrive += "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n";
  return std::string(".version 8.7\n.target sm_100a\n.address_size 64\n"
                     ".shared .align 8 .b64 bar;\n"
                     ".visible .entry k(.param .u32 k_param_0) .maxntid 64, 1, 1 {\n"
                     "  .reg .pred %p<4>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
                     "  mov.u32 %r1, %tid.x;\n"
                     "  setp.ne.s32 %p1, %r1, 0;\n"
                     "  @%p1 bra $L_sync;\n"
                     "  mbarrier.init.shared::cta.b64 [bar], ") +
         std::to_string(Init) +
         ";\n"
         "$L_sync:\n"
         "  bar.sync 0;\n"
         "  @%p1 bra $L_consumer;\n" +
         Arrive +
         "  bra.uni $L_done;\n"
         "$L_consumer:\n"
         "  setp.lt.u32 %p2, %r1, 32;\n"
         "  @%p2 bra $L_done;\n"
         "  mov.u32 %r2, " +
         std::to_string(Parity) +
         ";\n"
         "$L_wait:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], %r2;\n"
         "  @!%p3 bra $L_wait;\n"
         "$L_done:\n"
         "  ret;\n}\n";
}

struct Explored {
  ptx::ParseResult Parsed;
  std::unique_ptr<Protocol> P;
  RolePrograms RP;
  ConcreteSystem S;
  ExploreResult R;
};

std::unique_ptr<Explored> run(const std::string &Text) {
  auto E = std::make_unique<Explored>();
  E->Parsed = ptx::parseString(Text, "test.ptx", [](const ptx::Diagnostic &D) {
    ADD_FAILURE() << D.Message;
  });
  EXPECT_TRUE(E->Parsed.ok());
  const ptx::Function *F = E->Parsed.M->function("k");
  EXPECT_TRUE(F);
  E->P = buildProtocol(*E->Parsed.M, *F);
  E->RP = lowerRolePrograms(*E->P);
  E->S = instantiate(E->RP, Instance{});
  E->R = explore(E->S);
  return E;
}

TEST(ExploreTest, HandshakeIsClean) {
  auto E = run(handshake(1, 1, 0));
  EXPECT_EQ(E->S.Unknown, "");
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
  EXPECT_GT(E->R.States, 1u);
}

TEST(ExploreTest, TooFewArrivalsDeadlockAndReplay) {
  // Init 2, one arrival: the waiter's phase never completes.
  auto E = run(handshake(2, 1, 0));
  ASSERT_EQ(E->R.Verdict, ExploreVerdict::Deadlock) << E->R.Message;
  ASSERT_EQ(E->R.Blocked.size(), 1u);
  EXPECT_NE(E->R.Blocked[0].Reason.find("parity 0"), std::string::npos)
      << E->R.Blocked[0].Reason;
  EXPECT_NE(E->R.Blocked[0].Reason.find("1 of 2 arrivals pending"), std::string::npos)
      << E->R.Blocked[0].Reason;
  ExploreResult Again = replay(E->S, E->R.Schedule);
  EXPECT_EQ(Again.Verdict, ExploreVerdict::Deadlock);
  EXPECT_EQ(Again.Message, E->R.Message);
  ASSERT_EQ(Again.Barriers.size(), 1u);
  EXPECT_EQ(Again.Barriers[0].pending(), 1u);
  // Without its last step the schedule stops where steps can still be taken.
  std::vector<ScheduleStep> Short(E->R.Schedule.begin(), E->R.Schedule.end() - 1);
  EXPECT_EQ(replay(E->S, Short).Verdict, ExploreVerdict::Unknown);
}

TEST(ExploreTest, WaitingForTheSecondPhaseDeadlocks) {
  // One arrival completes phase 0; a waiter for parity 1 after it needs phase 1.
  auto Ok = run(handshake(1, 2, 1));
  EXPECT_EQ(Ok.get()->R.Verdict, ExploreVerdict::Clean) << Ok->R.Message;
  auto Stuck = run(handshake(1, 0, 0));
  EXPECT_EQ(Stuck->R.Verdict, ExploreVerdict::Deadlock) << Stuck->R.Message;
}

TEST(ExploreTest, ExtraArrivalsAreNotADeadlock) {
  // Over-arrival completes phases early: the waiter passes, nothing blocks.
  auto E = run(handshake(1, 3, 0));
  EXPECT_EQ(E->R.Verdict, ExploreVerdict::Clean) << E->R.Message;
}

TEST(ExploreTest, ReplayRefusesAStepThatIsNotEnabled) {
  auto E = run(handshake(2, 1, 0));
  ASSERT_FALSE(E->S.Agents.empty());
  // The consumer's wait cannot be the first step: the prologue has not run.
  for (unsigned A = 0; A < E->S.Agents.size(); ++A)
    if (E->S.Agents[A].Place == Placement::Role && !E->S.Agents[A].Steps.empty()) {
      ExploreResult R = replay(E->S, {ScheduleStep{ScheduleStep::Kind::Execute, A, 0, 0}});
      EXPECT_EQ(R.Verdict, ExploreVerdict::Unknown);
      EXPECT_NE(R.Message.find("not enabled"), std::string::npos) << R.Message;
    }
}

} // namespace
