// The mbarrier deadlock checks on the reference kernels: silent on every correct kernel
// (nvcc, clang and instrumented builds), and each bug-<check> variant of these checks
// flagged by exactly that check, at its `// BUG(<check>)` mark or the statement after it.
#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/analyzer/Solver.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

const char *const MbarrierChecks[] = {
    "mbarrier-arrival-count", "mbarrier-init-visibility", "mbarrier-trip-count",
    "mbarrier-initial-phase", "mbarrier-tx-bytes",        "mbarrier-no-arriver",
    "mbarrier-phase-skip"};

/// Source lines after a `// BUG(...)` mark that still count as its statement: the mark's
/// comment may take two lines, and the statement after it may compute a phase or stage
/// that the wait a few lines on uses.
constexpr unsigned MarkWindow = 8;

/// Variants whose bug is in no instruction near the mark, so the finding is at the
/// instruction that depends on it elsewhere: a constexpr count (h1, h3) used by the
/// arrive or init further down, a release that is missing (h2: the finding is at the wait
/// it starves), inits and fills inside helper functions of the same file (b1's lambda, b3's
/// init_barriers), a missing fence (b2: the finding is at the init it should follow), and a
/// tile scheduler advanced by one thread (b5: the mark is the loop's increment; the finding is
/// at the loop whose trip count depends on the thread).
const char *const AwayFromMark[] = {
    "h1/mbarrier-tx-bytes",    "h3/mbarrier-arrival-count", "h2/mbarrier-no-arriver",
    "b1/mbarrier-phase-skip",  "b3/mbarrier-init-visibility",
    "b2/mbarrier-init-visibility", "b5/mbarrier-trip-count"};

bool isMbarrierCheck(llvm::StringRef Name) {
  return llvm::is_contained(MbarrierChecks, Name);
}

/// Every finding of the checks Globs selects (all of the above by default) on every entry
/// of a PTX file.
std::vector<Finding> lintMbarrier(const std::string &Path,
                                  llvm::StringRef Globs = "-*,mbarrier-arrival-count,"
                                                          "mbarrier-init-visibility,"
                                                          "mbarrier-trip-count,"
                                                          "mbarrier-initial-phase,"
                                                          "mbarrier-tx-bytes,"
                                                          "mbarrier-no-arriver,"
                                                          "mbarrier-phase-skip") {
  std::vector<Finding> Out;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed) {
    ADD_FAILURE() << Path << ": " << llvm::toString(Parsed.takeError());
    return Out;
  }
  static std::unique_ptr<Solver> Z3 = Solver::createZ3();
  llvm::Expected<CheckSelection> Sel = CheckSelection::parse(Globs);
  EXPECT_TRUE(static_cast<bool>(Sel));
  if (!Sel) {
    llvm::consumeError(Sel.takeError());
    return Out;
  }
  ProtocolOptions Options;
  Options.SharedSolver = Z3.get();
  for (const ptx::Function *F : Parsed->M->functions()) {
    if (!F->isDefinition() || !F->isEntry())
      continue;
    std::unique_ptr<Protocol> P = buildProtocol(*Parsed->M, *F, Options);
    for (Finding &Fd : runChecks(*P, *Sel, Z3.get()))
      Out.push_back(std::move(Fd));
  }
  return Out;
}

struct Variant {
  std::string Bug, Ptx, CheckedPtx;
};
struct KernelEntry {
  std::string Name, Source, Ptx, CheckedPtx, ClangPtx;
  std::vector<Variant> Variants;
};

std::vector<KernelEntry> manifest() {
  std::vector<KernelEntry> Out;
  auto Buf = llvm::MemoryBuffer::getFile(std::string(WSV_PTX_DIR) + "/kernels.json");
  if (!Buf)
    return Out;
  llvm::Expected<llvm::json::Value> V = llvm::json::parse((*Buf)->getBuffer());
  if (!V) {
    llvm::consumeError(V.takeError());
    return Out;
  }
  const llvm::json::Array *Ks = V->getAsObject()->getArray("kernels");
  for (const llvm::json::Value &K : *Ks) {
    const llvm::json::Object &O = *K.getAsObject();
    KernelEntry E;
    E.Name = O.getString("name").value_or("").str();
    E.Source = O.getString("source").value_or("").str();
    E.Ptx = O.getString("ptx").value_or("").str();
    E.CheckedPtx = O.getString("checked_ptx").value_or("").str();
    E.ClangPtx = O.getString("clang_ptx").value_or("").str();
    if (const llvm::json::Array *Vs = O.getArray("variants"))
      for (const llvm::json::Value &VV : *Vs) {
        const llvm::json::Object &VO = *VV.getAsObject();
        E.Variants.push_back({VO.getString("bug").value_or("").str(),
                              VO.getString("ptx").value_or("").str(),
                              VO.getString("checked_ptx").value_or("").str()});
      }
    Out.push_back(std::move(E));
  }
  return Out;
}

/// The source line of `// BUG(<Check>)` in the kernel's source, 0 when absent.
unsigned markLine(const std::string &Source, const std::string &Check) {
  auto Buf = llvm::MemoryBuffer::getFile(std::string(WSV_SOURCE_DIR) + "/" + Source);
  if (!Buf)
    return 0;
  llvm::StringRef Text = (*Buf)->getBuffer();
  unsigned Line = 1;
  std::string Needle = "// BUG(" + Check + ")";
  for (size_t I = 0; I < Text.size(); ++I) {
    if (Text.substr(I).starts_with(Needle))
      return Line;
    if (Text[I] == '\n')
      ++Line;
  }
  return 0;
}

std::string describe(const std::vector<Finding> &Fs) {
  std::string Out;
  for (const Finding &F : Fs) {
    const CudaFrame *C = F.Where.kernelFrame();
    Out += "  " + F.Kernel + ":" + std::to_string(F.Where.PtxLine) + " (cuda " +
           (C ? std::to_string(C->Line) : std::string("-")) + ") " + toString(F.Level) + ": " +
           F.Message + " [" + F.Check + "]\n";
  }
  return Out;
}

bool serious(const Finding &F) { return F.Level != Severity::Remark; }

class MbarrierReferenceTest : public ::testing::Test {
protected:
  void SetUp() override {
    Kernels = manifest();
    if (Kernels.empty())
      GTEST_SKIP() << "no kernels.json in " << WSV_PTX_DIR << " (build wsv_ptx)";
  }
  std::vector<KernelEntry> Kernels;
};

TEST_F(MbarrierReferenceTest, CorrectKernelsAreSilent) {
  for (const KernelEntry &K : Kernels)
    for (const std::string &File : {K.Ptx, K.CheckedPtx, K.ClangPtx}) {
      if (File.empty())
        continue;
      std::vector<Finding> Fs = lintMbarrier(std::string(WSV_PTX_DIR) + "/" + File);
      std::vector<Finding> Bad;
      for (const Finding &F : Fs)
        if (serious(F))
          Bad.push_back(F);
      EXPECT_TRUE(Bad.empty()) << File << ":\n" << describe(Bad);
    }
}

// The protocol layer's test kernels (tests/protocol/kernels): correct pipelines in the shapes
// real code has (a tile scheduler in a .func, a peeled producer, an unrolled ring).
TEST(MbarrierProtocolKernelsTest, AreSilent) {
  std::string Dir = std::string(WSV_PTX_DIR) + "/../ptx-protocol";
  std::error_code EC;
  unsigned Seen = 0;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    if (!llvm::StringRef(It->path()).ends_with(".ptx"))
      continue;
    ++Seen;
    std::vector<Finding> Bad;
    for (const Finding &F : lintMbarrier(It->path()))
      if (serious(F))
        Bad.push_back(F);
    EXPECT_TRUE(Bad.empty()) << It->path() << ":\n" << describe(Bad);
  }
  if (!Seen)
    GTEST_SKIP() << "no protocol test kernels in " << Dir << " (build wsv_ptx_protocol)";
}

TEST_F(MbarrierReferenceTest, EachVariantIsFlaggedByItsCheckAtItsMark) {
  unsigned Seen = 0;
  for (const KernelEntry &K : Kernels)
    for (const Variant &V : K.Variants) {
      if (!isMbarrierCheck(V.Bug)) {
        // Other checks' bugs are theirs to report: these checks stay silent on them.
        for (const std::string &File : {V.Ptx, V.CheckedPtx}) {
          // The manifest may name variants this build has not generated yet.
          if (File.empty() || !llvm::sys::fs::exists(std::string(WSV_PTX_DIR) + "/" + File))
            continue;
          std::vector<Finding> Bad;
          for (const Finding &F : lintMbarrier(std::string(WSV_PTX_DIR) + "/" + File))
            if (serious(F))
              Bad.push_back(F);
          EXPECT_TRUE(Bad.empty()) << File << " (a bug of " << V.Bug << "):\n" << describe(Bad);
        }
        continue;
      }
      unsigned Mark = markLine(K.Source, V.Bug);
      for (const std::string &File : {V.Ptx, V.CheckedPtx}) {
        if (File.empty())
          continue;
        ++Seen;
        std::vector<Finding> Fs = lintMbarrier(std::string(WSV_PTX_DIR) + "/" + File);
        bool Flagged = false, AtMark = false;
        std::vector<Finding> Others;
        for (const Finding &F : Fs) {
          if (!serious(F))
            continue;
          if (F.Check != V.Bug) {
            Others.push_back(F);
            continue;
          }
          Flagged = true;
          const CudaFrame *C = F.Where.kernelFrame();
          AtMark |= C && C->Line >= Mark && C->Line <= Mark + MarkWindow;
        }
        EXPECT_TRUE(Flagged) << File << " is not flagged by " << V.Bug << ":\n" << describe(Fs);
        EXPECT_TRUE(Others.empty()) << File << " is also flagged by other checks:\n"
                                    << describe(Others);
        if (Flagged && !llvm::is_contained(AwayFromMark, K.Name + "/" + V.Bug)) {
          EXPECT_TRUE(AtMark) << File << ": not at the BUG mark (line " << Mark << "):\n"
                              << describe(Fs);
        }
      }
    }
  EXPECT_GT(Seen, 0u);
}

//===- lit inputs (tests/lit/checks/<check>/), read here until `wsv lint` runs them ---===//

/// The lines `// CHECK: :[[@LINE-1]]:...: error: ... [check]` point at, with their check.
std::multiset<std::pair<unsigned, std::string>> expectedErrors(llvm::StringRef Text) {
  std::multiset<std::pair<unsigned, std::string>> Out;
  llvm::Regex Re("CHECK: *:\\[\\[@LINE-([0-9]+)\\]\\]:[^ ]*: error: .*\\[([a-z0-9-]+)\\]");
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n');
  for (unsigned I = 0; I < Lines.size(); ++I) {
    llvm::SmallVector<llvm::StringRef, 3> M;
    unsigned Back = 0;
    if (Re.match(Lines[I], &M) && !M[1].getAsInteger(10, Back))
      Out.insert({I + 1 - Back, M[2].str()});
  }
  return Out;
}

std::vector<std::string> litInputs() {
  std::vector<std::string> Files;
  for (const char *C : MbarrierChecks) {
    std::error_code EC;
    std::string Dir = std::string(WSV_SOURCE_DIR) + "/tests/lit/checks/" + C;
    for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
         It.increment(EC))
      if (llvm::StringRef(It->path()).ends_with(".ptx"))
        Files.push_back(It->path());
  }
  std::sort(Files.begin(), Files.end());
  return Files;
}

class MbarrierLitTest : public ::testing::TestWithParam<std::string> {};

// Each input's errors are exactly its CHECK lines (the RUN line selects one check), and no
// other mbarrier check has an error or warning on it either.
TEST_P(MbarrierLitTest, FindingsMatchCheckLines) {
  const std::string &Path = GetParam();
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  ASSERT_TRUE(static_cast<bool>(Buf)) << Path;
  std::multiset<std::pair<unsigned, std::string>> Want = expectedErrors((*Buf)->getBuffer());
  std::multiset<std::pair<unsigned, std::string>> Got;
  std::vector<Finding> Fs = lintMbarrier(Path);
  for (const Finding &F : Fs)
    if (serious(F))
      Got.insert({F.Where.PtxLine, F.Check});
  EXPECT_EQ(Want, Got) << Path << ":\n" << describe(Fs);
}

std::string litName(const ::testing::TestParamInfo<std::string> &Info) {
  std::string Name = (llvm::sys::path::filename(llvm::sys::path::parent_path(Info.param)) +
                      "_" + llvm::sys::path::stem(Info.param))
                         .str();
  for (char &C : Name)
    if (!llvm::isAlnum(C))
      C = '_';
  return Name;
}

INSTANTIATE_TEST_SUITE_P(Inputs, MbarrierLitTest, ::testing::ValuesIn(litInputs()), litName);

} // namespace
