// decodeSyncOp over every instruction of every PTX file wsv has: the committed corpus
// (tests/corpus: Triton, hand-written edge cases), the corpus PTX the build makes with nvcc
// and clang-19, and the reference kernels' PTX with all their bug variants. No instruction of
// a synchronization family may be left undecoded, and no instruction at all may come back
// unrecognized, unless the allow-list below names it and says why.
#include "wsv/models/SyncOp.h"
#include "wsv/ptx_parser/Parser.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::models;

namespace {

/// Opcode prefixes whose every instruction is synchronization (the families SyncOp.h names).
/// `bar` and `barrier` match as whole base names, as Instruction::opcodeStartsWith does.
const char *const SyncPrefixes[] = {
    "mbarrier", "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.mbarrier", "tcgen05",
    "wgmma",    "bar",           "barrier",              "elect",             "fence",
    "membar",   "setmaxnreg",    "mapa",                 "clusterlaunchcontrol.try_cancel",
};

/// Forms the decoder leaves undecoded on purpose: file name (not path), opcode, and why.
struct Allowed {
  const char *File;
  const char *Opcode;
  const char *Why;
};
/// Empty: every instruction of the corpus and of the reference kernels decodes. A form that
/// the PTX ISA defines and the decoder does not know belongs in the decoder, not here; an
/// entry is for PTX that a compiler emits and the ISA does not define.
const std::vector<Allowed> AllowList = {};

bool isAllowed(llvm::StringRef File, llvm::StringRef Opcode) {
  return std::any_of(AllowList.begin(), AllowList.end(), [&](const Allowed &A) {
    return File == A.File && Opcode == A.Opcode;
  });
}

bool hasSyncPrefix(const ptx::Instruction &I) {
  for (const char *Prefix : SyncPrefixes)
    if (I.opcodeStartsWith(Prefix))
      return true;
  return false;
}

/// The .ptx files under Dir (recursively); none when Dir does not exist.
std::vector<std::string> ptxFilesUnder(llvm::StringRef Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".ptx")
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

/// What one file holds, for the assertions and for the failure messages.
struct FileScan {
  bool Parsed = false;
  unsigned Instructions = 0;
  unsigned Decoded = 0;
  std::map<SyncKind, unsigned> Kinds;
  std::vector<std::string> Problems; ///< `file:line: opcode: why`
};

FileScan scanFile(const std::string &Path) {
  FileScan Scan;
  auto Result = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Result) {
    Scan.Problems.push_back(Path + ": " + llvm::toString(Result.takeError()));
    return Scan;
  }
  const ptx::Module &M = *Result->M;
  Scan.Parsed = Result->ok();
  llvm::StringRef FileName = llvm::sys::path::filename(Path);
  for (const ptx::Function *F : M.functions()) {
    if (!F->body())
      continue;
    ptx::forEachStatement(*F->body(), [&](const ptx::Statement &S, const ptx::Scope &) {
      const auto *I = llvm::dyn_cast<ptx::Instruction>(&S);
      if (!I)
        return;
      ++Scan.Instructions;
      SyncDecodeResult R = decodeSyncOp(*I);
      if (R.isDecoded()) {
        ++Scan.Decoded;
        ++Scan.Kinds[R->Kind];
        return;
      }
      bool Problem = R.isUnrecognized() || hasSyncPrefix(*I);
      if (!Problem || isAllowed(FileName, I->opcode()))
        return;
      std::string Message;
      llvm::raw_string_ostream OS(Message);
      OS << Path << ':' << M.location(*I).Line << ": " << I->opcode() << ": ";
      if (R.isUnrecognized())
        R.printReason(OS);
      else
        OS << "not decoded";
      Scan.Problems.push_back(OS.str());
    });
  }
  return Scan;
}

/// Checks every file of a set and returns how many records of each kind they held.
std::map<SyncKind, unsigned> checkFiles(const std::vector<std::string> &Files) {
  std::map<SyncKind, unsigned> Kinds;
  for (const std::string &Path : Files) {
    SCOPED_TRACE(Path);
    FileScan Scan = scanFile(Path);
    EXPECT_TRUE(Scan.Parsed) << "the PTX parser reported errors";
    for (const std::string &P : Scan.Problems)
      ADD_FAILURE() << P;
    for (const auto &[Kind, N] : Scan.Kinds)
      Kinds[Kind] += N;
  }
  return Kinds;
}

TEST(SyncOpCorpus, CommittedCorpusDecodesCompletely) {
  std::vector<std::string> Files = ptxFilesUnder(WSV_CORPUS_DIR);
  // triton/ and edge/ hold eighteen files; fewer means the path or the corpus broke.
  ASSERT_GE(Files.size(), 10u) << "no corpus under " << WSV_CORPUS_DIR;
  std::map<SyncKind, unsigned> Kinds = checkFiles(Files);
  // The corpus was chosen to hold these forms; each must come out as its kind.
  for (SyncKind K : {SyncKind::MbarrierInit, SyncKind::MbarrierArriveExpectTx,
                     SyncKind::MbarrierTryWait, SyncKind::MbarrierTestWait,
                     SyncKind::BulkTensorLoad, SyncKind::BulkTensorStore, SyncKind::CpAsync,
                     SyncKind::Tcgen05Mma, SyncKind::Tcgen05Commit, SyncKind::Tcgen05Ld,
                     SyncKind::WgmmaMmaAsync, SyncKind::ElectSync, SyncKind::Mapa,
                     SyncKind::ClusterLaunchTryCancel, SyncKind::ClusterArrive})
    EXPECT_GT(Kinds[K], 0u) << toString(K) << " never decoded in the corpus";
}

TEST(SyncOpCorpus, BuildCorpusPtxDecodesCompletely) {
  std::vector<std::string> Files = ptxFilesUnder(WSV_CORPUS_PTX_DIR);
  if (Files.empty())
    GTEST_SKIP() << "no corpus PTX built in " << WSV_CORPUS_PTX_DIR
                 << " (build the wsv_ptx_corpus target)";
  checkFiles(Files);
}

TEST(SyncOpCorpus, ReferenceKernelPtxDecodesCompletely) {
  std::vector<std::string> Files = ptxFilesUnder(WSV_PTX_DIR);
  if (Files.empty())
    GTEST_SKIP() << "no reference-kernel PTX built in " << WSV_PTX_DIR
                 << " (build the wsv_ptx target)";
  std::map<SyncKind, unsigned> Kinds = checkFiles(Files);
  // Every reference kernel initializes, arrives on and waits on mbarriers.
  EXPECT_GT(Kinds[SyncKind::MbarrierInit], 0u);
  EXPECT_GT(Kinds[SyncKind::MbarrierTryWait], 0u);
}

} // namespace
