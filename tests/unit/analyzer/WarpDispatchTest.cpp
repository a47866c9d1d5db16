//===- WarpDispatchTest.cpp - roles read from a shared-memory byte, made explicit --===//
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/ProtocolPrinter.h"
#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

std::string readFile(const std::string &Path) {
  auto B = llvm::MemoryBuffer::getFile(Path);
  return B ? (*B)->getBuffer().str() : std::string();
}

std::string dispatchPtx() { return readFile(WSV_VERIFY_INPUTS "/dispatch.ptx"); }

ptx::ParseResult parse(const std::string &Text, const std::string &Name = "k.ptx") {
  ptx::ParseResult R = ptx::parseString(Text, Name, [](const ptx::Diagnostic &) {});
  EXPECT_TRUE(R.ok());
  return R;
}

std::string replaced(std::string Text, const std::string &From, const std::string &To) {
  size_t At = Text.find(From);
  EXPECT_NE(At, std::string::npos) << From;
  if (At != std::string::npos)
    Text.replace(At, From.size(), To);
  return Text;
}

/// The roles' thread ranges as `lo..hi` strings, sorted.
std::vector<std::string> roleThreads(const Protocol &P) {
  std::vector<std::string> Out;
  for (const Role &R : P.Roles)
    Out.push_back(R.Threads.str());
  std::sort(Out.begin(), Out.end());
  return Out;
}

std::string printed(const Protocol &P) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printProtocol(P, OS);
  return Out;
}

std::string onlyNote(const KernelNotes &N, const std::string &Kernel) {
  auto It = N.find(Kernel);
  if (It == N.end() || It->second.size() != 1)
    return "";
  return It->second.front();
}

/// The note of a dispatch in Text that is refused (no rewrite).
std::string refusal(const std::string &Text) {
  ptx::ParseResult R = parse(Text);
  WarpDispatchResult D = resolveWarpDispatch(*R.M);
  EXPECT_TRUE(D.Text.empty());
  return onlyNote(D.Notes, "dispatch");
}

TEST(WarpDispatchTest, WorkersReadTheStoreBeforeTheirPassAndKeepEveryLine) {
  std::string Text = dispatchPtx();
  ASSERT_FALSE(Text.empty());
  ptx::ParseResult R = parse(Text, "dispatch.ptx");
  WarpDispatchResult D = resolveWarpDispatch(*R.M);
  ASSERT_FALSE(D.Text.empty());
  EXPECT_EQ(std::count(D.Text.begin(), D.Text.end(), '\n'),
            std::count(Text.begin(), Text.end(), '\n'));
  std::string Note = onlyNote(D.Notes, "dispatch");
  EXPECT_NE(Note.find("resolved from the stores of constants at ptx line(s) 31, 36"),
            std::string::npos)
      << Note;
  EXPECT_NE(Note.find("warps 4-7 read state 0 and run the code at ptx line 53"), std::string::npos)
      << Note;

  // Without the rewrite the workers' loop has no trip count and their events run on threads
  // chosen by a value that is not a thread id; with it, neither.
  std::unique_ptr<Protocol> Before = buildProtocol(*R.M, *R.M->function("dispatch"));
  std::string BeforeText = printed(*Before);
  EXPECT_NE(BeforeText.find("trip count unknown"), std::string::npos) << BeforeText;
  EXPECT_NE(BeforeText.find("chosen by a value that is not a thread id"), std::string::npos);
  KernelNotes Notes;
  ASSERT_TRUE(applyWarpDispatch(R, Notes));
  ProtocolOptions PO;
  PO.Notes = &Notes;
  std::unique_ptr<Protocol> After = buildProtocol(*R.M, *R.M->function("dispatch"), PO);
  EXPECT_EQ(roleThreads(*After),
            (std::vector<std::string>{"tid 0..127 (128 threads)", "tid 128..255 (128 threads)"}));
  std::string AfterText = printed(*After);
  EXPECT_EQ(AfterText.find("trip count unknown"), std::string::npos) << AfterText;
  EXPECT_EQ(AfterText.find("chosen by a value that is not a thread id"), std::string::npos);
  bool Noted = false;
  for (const ProtocolNote &N : After->Notes)
    Noted |= N.Message == Note;
  EXPECT_TRUE(Noted);
}

TEST(WarpDispatchTest, AStoreBetweenTheSamePassesAsTheReadIsARace) {
  // The exit state stored after the fourth pass: the workers' second read may see either.
  std::string Text = replaced(dispatchPtx(),
                              "\tst.shared.b32 \t[smem+16], 16843009;\n\tbarrier.sync \t1;\n",
                              "\tbarrier.sync \t1;\n\tst.shared.b32 \t[smem+16], 16843009;\n");
  ptx::ParseResult R = parse(Text);
  WarpDispatchResult D = resolveWarpDispatch(*R.M);
  EXPECT_TRUE(D.Text.empty());
  EXPECT_NE(onlyNote(D.Notes, "dispatch")
                .find("the store at ptx line 37 and the read race: both come after pass 4"),
            std::string::npos)
      << onlyNote(D.Notes, "dispatch");
}

TEST(WarpDispatchTest, AnExitStateThatLeadsBackIntoAPartitionIsRefused) {
  ptx::ParseResult R = parse(replaced(dispatchPtx(), "16843009", "0"));
  WarpDispatchResult D = resolveWarpDispatch(*R.M);
  EXPECT_TRUE(D.Text.empty());
  EXPECT_NE(onlyNote(D.Notes, "dispatch").find("second state (0) does not lead out of the loop"),
            std::string::npos);
}

TEST(WarpDispatchTest, ABarrierPassedInALoopCannotBeCounted) {
  // The default warps pass barrier 1 in a loop of param_0 rounds before the exit state.
  std::string Text = replaced(dispatchPtx(), "\tbarrier.sync \t1;\n\tst.shared.b32 \t[smem+16], 16843009;",
                              "\tld.param.u32 \t%r7, [dispatch_param_0];\n$L__SPIN:\n\tbarrier.sync "
                              "\t1;\n\tsub.s32 \t%r7, %r7, 1;\n\tsetp.ne.s32 \t%p5, %r7, 0;\n\t@%p5 bra "
                              "\t$L__SPIN;\n\tst.shared.b32 \t[smem+16], 16843009;");
  std::string Note = refusal(Text);
  EXPECT_NE(Note.find("barrier 1 is passed inside a loop"), std::string::npos) << Note;
}

TEST(WarpDispatchTest, KernelsThatBranchOnTheWarpIdAreLeftAlone) {
  std::string Text = readFile(WSV_CORPUS_DIR "/triton/matmul_tma.sm_90a.ptx");
  ASSERT_FALSE(Text.empty());
  ptx::ParseResult R = parse(Text);
  KernelNotes Notes;
  EXPECT_FALSE(applyWarpDispatch(R, Notes));
  EXPECT_TRUE(Notes.empty());
}

TEST(WarpDispatchTest, TritonsHopperAndBlackwellLoweringsAreResolved) {
  struct Case {
    const char *File, *Roles;
    std::vector<std::string> Threads;
  } Cases[] = {
      {"matmul_tma_ws.sm_90a.ptx", "warps 4-7 read state 0 and run the code at ptx line 712; "
                                   "warps 8-11 read state 1 and run the code at ptx line 470",
       {"tid 0..127 (128 threads)", "tid 128..255 (128 threads)", "tid 256..383 (128 threads)"}},
      {"matmul_tma_ws.sm_100a.ptx",
       "warps 4-5 read state 1 and run the code at ptx line 787; warp 6 read state 0 and run "
       "the code at ptx line 692; warp 7 read state 2 and run the code at ptx line 672",
       {}},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.File);
    ptx::ParseResult R = parse(readFile(std::string(WSV_CORPUS_DIR "/triton/") + C.File));
    KernelNotes Notes;
    ASSERT_TRUE(applyWarpDispatch(R, Notes));
    std::string Note = onlyNote(Notes, "matmul_tma");
    EXPECT_NE(Note.find(C.Roles), std::string::npos) << Note;
    std::unique_ptr<Protocol> P = buildProtocol(*R.M, *R.M->function("matmul_tma"));
    for (const Event &E : P->Events)
      EXPECT_FALSE(E.Threads.isUnknown()) << "ptx line " << E.Where.PtxLine;
    if (!C.Threads.empty()) {
      EXPECT_EQ(roleThreads(*P), C.Threads);
    }
  }
}

/// ptxas's verdict on Text for Arch (its messages on failure), through a file in the test's
/// temporary directory.
std::string ptxasErrors(const std::string &Text, const std::string &Arch) {
  // One name per test and call: ctest runs the tests of this file in parallel processes.
  static unsigned Calls = 0;
  std::string Base = ::testing::TempDir() + "/wsv_dispatch_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                     std::to_string(Calls++);
  std::string In = Base + ".ptx", Log = Base + ".log";
  {
    std::ofstream OS(In);
    OS << Text;
  }
  std::string Cmd = std::string(WSV_PTXAS) + " -arch=" + Arch + " -o " + Base + ".cubin " + In +
                    " > " + Log + " 2>&1";
  if (std::system(Cmd.c_str()) == 0)
    return "";
  std::string Out = readFile(Log);
  return Out.empty() ? "ptxas failed" : Out;
}

TEST(WarpDispatchTest, ADispatchThatDependsOnTheLaunchChoosesByItsBranch) {
  // Triton's persistent Blackwell kernel: on the path for K >= 64 the default warps store the
  // partitions' states before pass 1 of barrier 1 and the exit state after pass 3; on the
  // path for K < 64 they store only the exit state, before pass 1, and the workers leave at
  // once. The partitions read their loop's trip count from shared memory (a value of the
  // launch the default warps computed): the rewrite computes it again.
  std::string Text = readFile(WSV_CORPUS_DIR "/triton/matmul_persistent_ws.sm_100a.ptx");
  ASSERT_FALSE(Text.empty());
  ptx::ParseResult R = parse(Text);
  WarpDispatchResult D = resolveWarpDispatch(*R.M);
  ASSERT_FALSE(D.Text.empty()) << onlyNote(D.Notes, "matmul_persistent");
  EXPECT_EQ(std::count(D.Text.begin(), D.Text.end(), '\n'),
            std::count(Text.begin(), Text.end(), '\n'));
  std::string Note = onlyNote(D.Notes, "matmul_persistent");
  for (const char *Part :
       {"where 64 <=s matmul_persistent_param_17 + 63, warps 4-5 read state 1 and run the code "
        "at ptx line 381; warp 6 read state 0",
        "where matmul_persistent_param_17 + 63 <s 64, warps 4-7 read state 3",
        "the read at ptx line 228 is the value of the launch stored at ptx line 666"})
    EXPECT_NE(Note.find(Part), std::string::npos) << Part << "\n" << Note;
  EXPECT_EQ(ptxasErrors(D.Text, "sm_100a"), "");

  // Without the rewrite the partitions' events run on unknown threads and their loops read
  // shared memory for a trip count; with it, every event has its threads and no loop does.
  std::unique_ptr<Protocol> Before = buildProtocol(*R.M, *R.M->function("matmul_persistent"));
  EXPECT_NE(printed(*Before).find("ld.shared.b32[global_smem + 98304]"), std::string::npos);
  KernelNotes Notes;
  ASSERT_TRUE(applyWarpDispatch(R, Notes));
  std::unique_ptr<Protocol> After = buildProtocol(*R.M, *R.M->function("matmul_persistent"));
  for (const Event &E : After->Events)
    EXPECT_FALSE(E.Threads.isUnknown()) << "ptx line " << E.Where.PtxLine;
  std::string AfterText = printed(*After);
  EXPECT_EQ(AfterText.find("ld.shared.b32[global_smem + 98304]"), std::string::npos) << AfterText;
  EXPECT_EQ(roleThreads(*After),
            (std::vector<std::string>{"tid 0..127 (128 threads)", "tid 128..191 (64 threads)",
                                      "tid 192..223 (32 threads)", "tid 224..255 (32 threads)"}));
}

TEST(WarpDispatchTest, AStoreMadeOnlyUnderALaunchConditionIsNotTakenAsMade) {
  // The exit state is stored only when param_0 != 0. Where param_0 == 0 the workers' second
  // read sees state 0 again, which leads back into the partition: refused, where counting
  // the store as made would have resolved it.
  std::string Text = replaced(dispatchPtx(), "\tst.shared.b32 \t[smem+16], 16843009;\n",
                              "\tld.param.u32 \t%r7, [dispatch_param_0];\n\tsetp.eq.u32 \t%p5, "
                              "%r7, 0;\n\t@%p5 bra \t$L__SKIP;\n\tst.shared.b32 \t[smem+16], "
                              "16843009;\n$L__SKIP:\n");
  std::string Note = refusal(Text);
  EXPECT_NE(Note.find("second state (0) does not lead out of the loop"), std::string::npos)
      << Note;
}

TEST(WarpDispatchTest, TheRewrittenTextIsPtxThatPtxasAccepts) {
  for (const char *File : {"matmul_tma_ws.sm_90a.ptx", "matmul_tma_ws.sm_100a.ptx",
                           "matmul_subtile_ws.sm_100a.ptx"}) {
    SCOPED_TRACE(File);
    ptx::ParseResult R = parse(readFile(std::string(WSV_CORPUS_DIR "/triton/") + File));
    WarpDispatchResult D = resolveWarpDispatch(*R.M);
    ASSERT_FALSE(D.Text.empty());
    std::string Arch = std::string(File).find("sm_100a") != std::string::npos ? "sm_100a" : "sm_90a";
    EXPECT_EQ(ptxasErrors(D.Text, Arch), "");
  }
}

} // namespace
