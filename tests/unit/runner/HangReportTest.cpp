#include "wsv/runner/HangReport.h"
#include "wsv/runner/Trace.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

using namespace wsv;
using namespace wsv::runner;

namespace {

/// A capture with room for N records, as the runner allocates it.
struct CaptureBuf {
  explicit CaptureBuf(uint32_t N)
      : Bytes(sizeof(wsv::abi::HangCapture) + (N - 1) * sizeof(wsv::abi::HangRecord)) {
    Storage.reset(new unsigned char[Bytes]());
    cap().Magic = wsv::abi::HangCaptureMagic;
    cap().Capacity = N;
  }
  wsv::abi::HangCapture &cap() { return *reinterpret_cast<wsv::abi::HangCapture *>(Storage.get()); }
  void add(uint32_t Slot, uint8_t Op, uint8_t Role, uint8_t Barrier, uint32_t Index,
           uint32_t Parity, uint32_t Iteration, uint32_t CtaX, uint32_t Warp, uint64_t Since,
           bool Reporter = false) {
    wsv::abi::HangRecord &R = cap().Records[Slot];
    R.Op = Op;
    R.Role = Role;
    R.Barrier = Barrier;
    R.Index = Index;
    R.Parity = Parity;
    R.Iteration = Iteration;
    R.Cta[0] = CtaX;
    R.Warp = Warp;
    R.SinceNs = Since;
    R.CapturedNs = Since + 1000;
    R.Reporter = Reporter;
    R.Valid = wsv::abi::HangRecordValid;
  }
  size_t Bytes;
  std::unique_ptr<unsigned char[]> Storage;
};

wsv::abi::KernelInfo h2Info() {
  wsv::abi::KernelInfo I;
  std::memset(&I, 0, sizeof I);
  std::strcpy(I.Roles, "producer,consumer");
  std::strcpy(I.Barriers, "full,empty");
  return I;
}

} // namespace

TEST(HangReport, SplitNames) {
  EXPECT_EQ(splitNames("producer,consumer0,consumer1", 64),
            (std::vector<std::string>{"producer", "consumer0", "consumer1"}));
  EXPECT_TRUE(splitNames("", 64).empty());
  const char NoTerminator[4] = {'a', ',', 'b', 'c'};
  EXPECT_EQ(splitNames(NoTerminator, 4), (std::vector<std::string>{"a", "bc"}));
}

TEST(HangReport, ReadsValidRecordsAndGroupsThem) {
  CaptureBuf B(8);
  // The initial-phase deadlock of H2 in two CTAs: the producer on empty[0] parity 0, the four
  // consumer warps on full[0] parity 0.
  for (uint32_t Cta = 0; Cta < 2; ++Cta) {
    B.add(Cta * 3 + 0, wsv::abi::OpMbarrierWait, 0, 1, 0, 0, 0, Cta, 4, 500 + Cta, Cta == 0);
    B.add(Cta * 3 + 1, wsv::abi::OpMbarrierWait, 1, 0, 0, 0, 0, Cta, 0, 400 + Cta);
    B.add(Cta * 3 + 2, wsv::abi::OpMbarrierWait, 1, 0, 0, 0, 0, Cta, 1, 450 + Cta);
  }
  B.cap().Records[7].Valid = 0; // a slot the GPU never completed is ignored
  B.cap().Records[7].Warp = 31;
  const HangReport R = readHangCapture(B.cap(), h2Info(), 2000000000ull);
  ASSERT_EQ(R.Waits.size(), 6u);
  EXPECT_EQ(R.Waits[0].Role, "producer");
  EXPECT_EQ(R.Waits[0].Barrier, "empty");
  EXPECT_TRUE(R.Waits[0].Reporter);
  const std::vector<WaitGroup> G = R.groups();
  ASSERT_EQ(G.size(), 2u);
  EXPECT_EQ(G[0].First.Role, "producer"); // roles in declared order
  EXPECT_EQ(G[0].Ctas, 2u);
  EXPECT_EQ(G[0].Warps, std::vector<uint32_t>{4});
  EXPECT_EQ(G[1].First.Role, "consumer");
  EXPECT_EQ(G[1].Warps, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(G[1].First.SinceNs, 400u); // the earliest wait represents the group
  EXPECT_TRUE(R.silentRoles().empty());
  const std::string S = R.summary();
  EXPECT_NE(S.find("producer (warp 4) waits on empty[0] parity 0 at iteration 0 in 2 of 2"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("consumer (warps 0-1) waits on full[0] parity 0"), std::string::npos) << S;
}

TEST(HangReport, NamedBarriersAndSilentRoles) {
  CaptureBuf B(4);
  B.add(0, wsv::abi::OpNamedBarrier, 1, 0, 2, 256, 7, 0, 5, 100);
  B.add(1, wsv::abi::OpNamedBarrier, 1, 0, 2, 256, 7, 0, 6, 100);
  B.cap().Dropped = 3;
  const HangReport R = readHangCapture(B.cap(), h2Info(), 1);
  ASSERT_EQ(R.Waits.size(), 2u);
  EXPECT_EQ(R.Waits[0].what(), "bar.sync 2 (256 threads)");
  EXPECT_EQ(R.silentRoles(), std::vector<std::string>{"producer"});
  const std::string S = R.summary();
  EXPECT_NE(S.find("consumer (warps 5-6) waits in bar.sync 2 (256 threads)"), std::string::npos)
      << S;
  EXPECT_NE(S.find("not inside a wait (finished, or blocked outside an instrumented wait): "
                   "producer"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("3 more records did not fit"), std::string::npos) << S;
}

TEST(HangReport, UnknownIdsAndMissingMagic) {
  CaptureBuf B(2);
  B.add(0, wsv::abi::OpMbarrierWait, 9, 7, 1, 1, 0, 0, 0, 1);
  HangReport R = readHangCapture(B.cap(), h2Info(), 1);
  ASSERT_EQ(R.Waits.size(), 1u);
  EXPECT_EQ(R.Waits[0].Role, "role#9");
  EXPECT_EQ(R.Waits[0].Barrier, "barrier#7");
  B.cap().Magic = 0; // not armed by the runner: nothing is trusted
  EXPECT_TRUE(readHangCapture(B.cap(), h2Info(), 1).empty());
}

TEST(Trace, HardwareCaptureAsWsvTrace) {
  CaptureBuf B(4);
  B.add(0, wsv::abi::OpMbarrierWait, 0, 1, 3, 1, 12, 5, 4, 1000, true);
  B.add(1, wsv::abi::OpNamedBarrier, 1, 0, 2, 256, 11, 5, 1, 900);
  const HangReport R = readHangCapture(B.cap(), h2Info(), 2000000000ull);
  TraceLaunch L;
  L.Kernel = "h2";
  L.Entry = "h2_bf16";
  L.Variant = "mbarrier-initial-phase";
  L.PtxFile = "build/ptx/h2.bug-mbarrier-initial-phase.checked.ptx";
  L.Grid[0] = 3;
  L.Grid[1] = 5;
  L.Block[0] = 160;
  L.SmemBytes = 132160;
  L.P.M = 384;
  L.P.N = 640;
  L.P.K = 576;
  const nlohmann::json J = nlohmann::json::parse(hangTraceJson(R, L));
  EXPECT_EQ(J["schema"], "wsv-trace/1");
  EXPECT_EQ(J["source"], "hardware");
  EXPECT_EQ(J["kernel"], "h2");
  EXPECT_EQ(J["variant"], "mbarrier-initial-phase");
  EXPECT_EQ(J["launch"]["grid"], nlohmann::json({3, 5, 1}));
  EXPECT_EQ(J["launch"]["problem"]["dtype"], "bf16");
  EXPECT_EQ(J["roles"], nlohmann::json({"producer", "consumer"}));
  EXPECT_EQ(J["time_origin_ns"], 900);
  ASSERT_EQ(J["stuck"].size(), 2u);
  const nlohmann::json &P = J["stuck"][0];
  EXPECT_EQ(P["role"], "producer");
  EXPECT_EQ(P["cta"], nlohmann::json({5, 0, 0}));
  EXPECT_EQ(P["warp"], 4);
  EXPECT_EQ(P["iteration"], 12);
  EXPECT_EQ(P["reporter"], true);
  EXPECT_EQ(P["wait"]["op"], "mbarrier.try_wait.parity");
  EXPECT_EQ(P["wait"]["barrier"], "empty");
  EXPECT_EQ(P["wait"]["index"], 3);
  EXPECT_EQ(P["wait"]["parity"], 1);
  EXPECT_EQ(J["stuck"][1]["wait"]["op"], "bar.sync");
  EXPECT_EQ(J["stuck"][1]["wait"]["threads"], 256);
  EXPECT_EQ(J["summary"].size(), 2u);
  EXPECT_TRUE(J["silent_roles"].empty());
  // A variant-less run has a null variant, not an empty string.
  L.Variant.clear();
  EXPECT_TRUE(nlohmann::json::parse(hangTraceJson(R, L))["variant"].is_null());
}
