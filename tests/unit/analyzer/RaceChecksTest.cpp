// The race checks (smem-war-release, smem-raw-wait, tcgen05-commit-multi-thread,
// proxy-fence-missing, bulk-store-reuse, accumulator-early-read):
//  - on the lit inputs of tests/lit/checks/<check>/: the findings of every race check are
//    exactly the ones the CHECK lines expect (the same files `wsv lint` runs through lit);
//  - on the committed corpus of compiler output: no error or warning;
//  - on the reference kernels the build generates (the manifest kernels.json): no error or
//    warning on a correct kernel (nvcc, clang and instrumented builds) or on the protocol test
//    kernels, and each seeded variant of these checks flagged by its own check and by no other
//    race check.
#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/WarpDispatch.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "gtest/gtest.h"

#include <set>
#include <tuple>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

const char *const RaceChecks[] = {"smem-war-release",       "smem-raw-wait",
                                  "tcgen05-commit-multi-thread", "proxy-fence-missing",
                                  "bulk-store-reuse",       "accumulator-early-read"};

bool isRaceCheck(llvm::StringRef Name) {
  for (const char *C : RaceChecks)
    if (Name == C)
      return true;
  return false;
}

/// Error and warning findings of the race checks on every entry of a PTX file; false when the
/// file is missing or does not parse.
bool lint(const std::string &Path, std::vector<Finding> &Out) {
  if (!llvm::sys::fs::exists(Path))
    return false;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed) {
    llvm::consumeError(Parsed.takeError());
    return false;
  }
  // As `wsv lint` does: Triton's warp dispatch through shared memory resolved first.
  KernelNotes Notes;
  applyWarpDispatch(*Parsed, Notes);
  llvm::Expected<CheckSelection> Sel = CheckSelection::parse(
      "-*,smem-war-release,smem-raw-wait,tcgen05-commit-multi-thread,proxy-fence-missing,"
      "bulk-store-reuse,accumulator-early-read");
  EXPECT_TRUE(static_cast<bool>(Sel));
  if (!Sel) {
    llvm::consumeError(Sel.takeError());
    return false;
  }
  for (const ptx::Function *F : Parsed->M->functions()) {
    if (!F->isDefinition() || !F->isEntry())
      continue;
    std::unique_ptr<Protocol> P = buildProtocol(*Parsed->M, *F);
    for (Finding &Fd : runChecks(*P, *Sel))
      if (Fd.Level != Severity::Remark)
        Out.push_back(std::move(Fd));
  }
  return true;
}

std::string describe(const std::vector<Finding> &Fs) {
  std::string Out;
  for (const Finding &F : Fs) {
    const CudaFrame *K = F.Where.kernelFrame();
    Out += "  ptx " + std::to_string(F.Where.PtxLine) + " (cuda " +
           (K ? std::to_string(K->Line) : std::string("?")) + ") [" + F.Check +
           "] " + F.Message + "\n";
  }
  return Out;
}

struct Manifest {
  llvm::json::Value Root = nullptr;
  bool load() {
    auto Buf = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/kernels.json");
    if (!Buf)
      return false;
    auto V = llvm::json::parse((*Buf)->getBuffer());
    if (!V) {
      llvm::consumeError(V.takeError());
      return false;
    }
    Root = std::move(*V);
    return true;
  }
  const llvm::json::Array *kernels() const {
    const llvm::json::Object *O = Root.getAsObject();
    return O ? O->getArray("kernels") : nullptr;
  }
};

std::string ptxPath(llvm::StringRef File) { return std::string(WSV_PTX_DIR) + "/" + File.str(); }

std::string litChecksDir() { return WSV_LIT_CHECKS_DIR; }

/// (PTX line, severity, check) of each finding a lit input's CHECK lines expect.
std::set<std::tuple<unsigned, std::string, std::string>> expected(llvm::StringRef Text) {
  std::set<std::tuple<unsigned, std::string, std::string>> Out;
  llvm::Regex Check(R"(// CHECK: :\[\[@LINE-1\]\]:[^ ]*: (error|warning): .*\[([a-z0-9-]+)\]$)");
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n');
  for (unsigned I = 0; I < Lines.size(); ++I) {
    llvm::SmallVector<llvm::StringRef, 3> M;
    if (Check.match(Lines[I].rtrim(), &M))
      Out.insert({I, M[1].str(), M[2].str()}); // line I + 1 is the CHECK, so I is @LINE-1
  }
  return Out;
}

TEST(RaceChecksTest, LitInputsGetExactlyTheirCheckLines) {
  unsigned Files = 0;
  for (const char *C : RaceChecks) {
    std::string Dir = litChecksDir() + "/" + C;
    std::error_code EC;
    unsigned Buggy = 0, Clean = 0;
    for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
         It.increment(EC)) {
      if (llvm::sys::path::extension(It->path()) != ".ptx")
        continue;
      auto Buf = llvm::MemoryBuffer::getFile(It->path());
      ASSERT_TRUE(static_cast<bool>(Buf)) << It->path();
      auto Want = expected((*Buf)->getBuffer());
      std::vector<Finding> Fs;
      ASSERT_TRUE(lint(It->path(), Fs)) << It->path() << " does not parse";
      std::set<std::tuple<unsigned, std::string, std::string>> Got;
      for (const Finding &F : Fs)
        Got.insert({F.Where.PtxLine, toString(F.Level), F.Check});
      EXPECT_EQ(Got, Want) << It->path() << ":\n" << describe(Fs);
      ++(Want.empty() ? Clean : Buggy);
      ++Files;
    }
    EXPECT_GT(Buggy, 0u) << C << " has no buggy lit input in " << Dir;
    EXPECT_GT(Clean, 0u) << C << " has no clean lit input in " << Dir;
  }
  EXPECT_GT(Files, 0u);
}

TEST(RaceChecksTest, CorrectReferenceKernelsAreClean) {
  Manifest M;
  if (!M.load() || !M.kernels())
    GTEST_SKIP() << "no kernels.json in " << WSV_PTX_DIR << " (build wsv_ptx)";
  unsigned Linted = 0;
  for (const llvm::json::Value &K : *M.kernels()) {
    const llvm::json::Object *O = K.getAsObject();
    for (const char *Key : {"ptx", "checked_ptx", "clang_ptx"}) {
      std::optional<llvm::StringRef> File = O->getString(Key);
      if (!File)
        continue;
      std::vector<Finding> Fs;
      if (!lint(ptxPath(*File), Fs))
        continue;
      ++Linted;
      EXPECT_TRUE(Fs.empty()) << File->str() << " is correct but:\n" << describe(Fs);
    }
  }
  EXPECT_GT(Linted, 0u);
}

TEST(RaceChecksTest, ProtocolTestKernelsAreClean) {
  std::string Dir = std::string(WSV_PTX_DIR) + "/../ptx-protocol";
  std::error_code EC;
  unsigned Linted = 0;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    if (llvm::sys::path::extension(It->path()) != ".ptx")
      continue;
    std::vector<Finding> Fs;
    if (!lint(It->path(), Fs))
      continue;
    ++Linted;
    EXPECT_TRUE(Fs.empty()) << It->path() << " is correct but:\n" << describe(Fs);
  }
  if (!Linted)
    GTEST_SKIP() << "no protocol test kernels in " << Dir;
}

TEST(RaceChecksTest, CorpusKernelsAreClean) {
  // Real compiler output (nvcc, clang, Triton's warp specialization with aliased shared
  // memory, switch-driven partitions and unresolved barriers): what cannot be decided there
  // is a remark, never an error.
  std::error_code EC;
  unsigned Linted = 0;
  for (llvm::sys::fs::recursive_directory_iterator It(WSV_CORPUS_DIR, EC), End;
       It != End && !EC; It.increment(EC)) {
    if (llvm::sys::path::extension(It->path()) != ".ptx")
      continue;
    std::vector<Finding> Fs;
    if (!lint(It->path(), Fs))
      continue;
    ++Linted;
    EXPECT_TRUE(Fs.empty()) << It->path() << ":\n" << describe(Fs);
  }
  EXPECT_GT(Linted, 0u);
}

TEST(RaceChecksTest, EachVariantIsFlaggedByItsCheckOnly) {
  Manifest M;
  if (!M.load() || !M.kernels())
    GTEST_SKIP() << "no kernels.json in " << WSV_PTX_DIR << " (build wsv_ptx)";
  unsigned Variants = 0;
  for (const llvm::json::Value &K : *M.kernels()) {
    const llvm::json::Array *Vs = K.getAsObject()->getArray("variants");
    if (!Vs)
      continue;
    for (const llvm::json::Value &V : *Vs) {
      const llvm::json::Object *O = V.getAsObject();
      llvm::StringRef Bug = O->getString("bug").value_or("");
      if (!isRaceCheck(Bug))
        continue;
      for (const char *Key : {"ptx", "checked_ptx"}) {
        std::optional<llvm::StringRef> File = O->getString(Key);
        if (!File)
          continue;
        std::vector<Finding> Fs;
        if (!lint(ptxPath(*File), Fs))
          continue;
        ++Variants;
        std::set<std::string> Checks;
        bool Error = false;
        for (const Finding &F : Fs) {
          Checks.insert(F.Check);
          Error |= F.Check == Bug && F.Level == Severity::Error;
        }
        EXPECT_TRUE(Error) << File->str() << " is not flagged by " << Bug.str() << ":\n"
                           << describe(Fs);
        EXPECT_EQ(Checks.size(), 1u) << File->str() << " is flagged by other race checks:\n"
                                     << describe(Fs);
        for (const Finding &F : Fs)
          EXPECT_NE(F.Where.kernelFrame(), nullptr)
              << File->str() << ": the finding has no CUDA line:\n" << describe({F});
      }
    }
  }
  if (!Variants)
    GTEST_SKIP() << "no variants of the race checks in " << WSV_PTX_DIR;
}

} // namespace
