// Every function of every PTX file in the corpus and of the reference kernels' PTX: the graph
// builds without issues, every loop has a trip count, is a spin wait, or says why neither, and
// every wait loop of compiler output is recognized as one blocking wait.
#include "wsv/analyzer/FunctionAnalysis.h"
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

std::vector<std::string> ptxFilesIn(llvm::StringRef Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).ends_with(".ptx"))
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

struct FileTotals {
  unsigned Functions = 0, Loops = 0, Counted = 0, SpinWaits = 0, Unknown = 0, TryWaits = 0;
};

/// Analyzes every function definition of Path and checks what every file must satisfy.
/// RequireSpinWaits: every small loop around a single wait must be recognized as a spin wait
/// (compiler output; the hand-written edge files are checked for everything else).
FileTotals checkFile(const std::string &Path, bool RequireSpinWaits) {
  FileTotals T;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed) {
    ADD_FAILURE() << Path << ": " << llvm::toString(Parsed.takeError());
    return T;
  }
  EXPECT_TRUE(Parsed->ok()) << Path;
  const ptx::Module &M = *Parsed->M;
  auto Solver = Solver::createZ3();
  AnalysisOptions Options;
  Options.SharedSolver = Solver.get();
  for (const ptx::Function *F : M.functions()) {
    if (!F->isDefinition())
      continue;
    SCOPED_TRACE(Path + ": " + F->name().str());
    ++T.Functions;
    FunctionAnalysis FA(M, *F, Options);
    EXPECT_TRUE(FA.cfg().issues().empty()) << FA.cfg().issues().front().Message;
    EXPECT_FALSE(FA.cfg().reversePostOrder().empty());
    for (const Loop &L : FA.loops().loops()) {
      ++T.Loops;
      const LoopSummary &S = FA.values().loopSummary(L.Index);
      switch (S.Trip.K) {
      case TripCount::Kind::Counted:
        ++T.Counted;
        EXPECT_NE(S.Trip.Iterations, nullptr);
        EXPECT_NE(S.Trip.HeaderRuns, nullptr);
        break;
      case TripCount::Kind::SpinWait:
        ++T.SpinWaits;
        EXPECT_TRUE(S.Spin.has_value());
        EXPECT_NE(S.Spin->Barrier, nullptr);
        EXPECT_TRUE(S.Spin->Parity || S.Spin->State);
        break;
      case TripCount::Kind::Unknown:
        ++T.Unknown;
        EXPECT_FALSE(S.Trip.Reason.empty()) << "loop " << L.Index << " has no count and no reason";
        break;
      }
    }
    // A small innermost loop around one wait is a wait loop, whatever shape its branches take.
    // Waits outside such loops are peeks (a try_wait whose result is used later).
    auto IsWait = [](const ptx::Instruction &In) {
      models::SyncDecodeResult D = models::decodeSyncOp(In);
      return D && (D->Kind == models::SyncKind::MbarrierTryWait ||
                   D->Kind == models::SyncKind::MbarrierTestWait);
    };
    for (InstId I = 0; I < FA.cfg().instructions().size(); ++I) {
      if (!IsWait(*FA.cfg().inst(I).I))
        continue;
      ++T.TryWaits;
      LoopId L = FA.loops().loopFor(FA.cfg().inst(I).Block);
      if (!RequireSpinWaits || L == NoIndex || !FA.loops().loop(L).Children.empty())
        continue;
      unsigned Size = 0, Waits = 0;
      for (BlockId B : FA.loops().loop(L).Blocks)
        for (const CfgInst &CI : FA.cfg().instructions(B)) {
          ++Size;
          Waits += IsWait(*CI.I);
        }
      if (Size > 8 || Waits != 1)
        continue;
      bool Recognized = FA.values().loopSummary(L).Spin &&
                        FA.values().loopSummary(L).Spin->Wait == I;
      EXPECT_TRUE(Recognized) << "the wait loop at line " << FA.cfg().location(I).Line
                              << " is not recognized as one blocking wait";
    }
  }
  return T;
}

void checkDirectory(const std::string &Dir, bool RequireSpinWaits) {
  std::vector<std::string> Files = ptxFilesIn(Dir);
  if (Files.empty())
    GTEST_SKIP() << "no PTX in " << Dir << " (build the PTX targets first)";
  FileTotals All;
  for (const std::string &File : Files) {
    FileTotals T = checkFile(File, RequireSpinWaits);
    All.Functions += T.Functions;
    All.Loops += T.Loops;
    All.Counted += T.Counted;
    All.SpinWaits += T.SpinWaits;
    All.Unknown += T.Unknown;
    All.TryWaits += T.TryWaits;
  }
  EXPECT_GT(All.Functions, 0u);
  // The record of what the corpus holds, for the log.
  std::printf("%s: %zu files, %u functions, %u loops: %u counted, %u spin waits, %u unknown; "
              "%u waits\n",
              Dir.c_str(), Files.size(), All.Functions, All.Loops, All.Counted, All.SpinWaits,
              All.Unknown, All.TryWaits);
}

TEST(CorpusTest, TritonOutput) { checkDirectory(WSV_CORPUS_DIR "/triton", true); }

TEST(CorpusTest, HandWrittenEdgeCases) { checkDirectory(WSV_CORPUS_DIR "/edge", false); }

TEST(CorpusTest, GeneratedNvccAndClangOutput) { checkDirectory(WSV_CORPUS_PTX_DIR, true); }

TEST(CorpusTest, ReferenceKernelsAndTheirBugVariants) { checkDirectory(WSV_PTX_DIR, true); }

} // namespace
