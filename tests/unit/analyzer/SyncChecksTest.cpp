// The barrier, TMEM, cluster and alignment checks (barrier-divergent, named-barrier-count,
// named-barrier-id-collision, tcgen05-alloc-exhaustion, tcgen05-alloc-lane-guard,
// tmem-dealloc-early, aligned-divergent, cluster-exit-early, cluster-multicast-mask,
// mbarrier-reuse, setmaxnreg-nonuniform):
//  - on the lit inputs of tests/lit/checks/<check>/, whose CHECK lines say which finding
//    each line must get (the same files `wsv lint` runs on through lit);
//  - on the reference kernels' PTX: no error or warning on a correct kernel (nvcc, clang
//    and checked builds) or on another check's variant, and every bug variant of these
//    checks flagged by exactly its own check, at the lines of its `// BUG(<check>)` mark.
#include "wsv/analyzer/Checks.h"
#include "wsv/analyzer/ProtocolBuilder.h"
#include "wsv/ptx_parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace wsv;
using namespace wsv::analyzer;

namespace {

const char *const SyncChecks[] = {
    "barrier-divergent",        "named-barrier-count",      "named-barrier-id-collision",
    "tcgen05-alloc-exhaustion", "tcgen05-alloc-lane-guard", "tmem-dealloc-early",
    "aligned-divergent",        "cluster-exit-early",       "cluster-multicast-mask",
    "mbarrier-reuse",           "setmaxnreg-nonuniform",
};

bool isSyncCheck(llvm::StringRef Name) {
  return llvm::is_contained(llvm::ArrayRef<const char *>(SyncChecks), Name);
}

std::string syncGlobs() {
  std::string Globs = "-*";
  for (const char *C : SyncChecks)
    Globs += std::string(",") + C;
  return Globs;
}

/// Findings of the checks Globs selects on every entry of a PTX file.
std::vector<Finding> lintFile(const std::string &Path, Solver *S,
                              const std::string &Globs = syncGlobs()) {
  std::vector<Finding> Out;
  auto Parsed = ptx::parseFile(Path, [](const ptx::Diagnostic &) {});
  if (!Parsed) {
    ADD_FAILURE() << Path << ": " << llvm::toString(Parsed.takeError());
    return Out;
  }
  ProtocolOptions Options;
  Options.SharedSolver = S;
  llvm::Expected<CheckSelection> Selection = CheckSelection::parse(Globs);
  if (!Selection) {
    ADD_FAILURE() << Globs << ": " << llvm::toString(Selection.takeError());
    return Out;
  }
  for (const ptx::Function *F : Parsed->M->functions()) {
    if (!F->isDefinition() || !F->isEntry())
      continue;
    std::unique_ptr<Protocol> P = buildProtocol(*Parsed->M, *F, Options);
    if (!P) {
      ADD_FAILURE() << Path << ": no protocol for " << F->name().str();
      continue;
    }
    for (Finding &Fd : runChecks(*P, *Selection, S))
      Out.push_back(std::move(Fd));
  }
  return Out;
}

std::string show(const Finding &F) {
  std::string S = F.File + ":" + std::to_string(F.Where.PtxLine) + ": " + toString(F.Level) + ": " +
                  F.Message + " [" + F.Check + "]";
  if (const CudaFrame *K = F.Where.kernelFrame())
    S += " (" + llvm::sys::path::filename(K->File).str() + ":" + std::to_string(K->Line) + ")";
  return S;
}

std::vector<std::string> listFiles(const std::string &Dir, llvm::StringRef Suffix) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).ends_with(Suffix))
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

//===- lit inputs ------------------------------------------------------------------===//

/// `// CHECK: :[[@LINE-1]]:5: error: ... [check-name]` under the line it is about.
struct Expected {
  unsigned Line;
  std::string Level;
  std::string Check;
  std::string Pattern; ///< the rest of the CHECK line as a regex over `<message> [<check>]`
  bool operator<(const Expected &O) const {
    return std::tie(Line, Level, Check) < std::tie(O.Line, O.Level, O.Check);
  }
};

/// FileCheck's pattern syntax: literal text with `{{regex}}` parts.
std::string fileCheckRegex(llvm::StringRef Text) {
  std::string Out;
  while (!Text.empty()) {
    size_t Open = Text.find("{{");
    Out += llvm::Regex::escape(Text.substr(0, Open));
    if (Open == llvm::StringRef::npos)
      break;
    size_t Close = Text.find("}}", Open + 2);
    if (Close == llvm::StringRef::npos)
      break;
    Out += "(" + Text.substr(Open + 2, Close - Open - 2).str() + ")";
    Text = Text.substr(Close + 2);
  }
  return Out;
}

/// The `--checks='...'` of the RUN line, as `wsv lint` will get it.
std::string runLineGlobs(llvm::StringRef Text) {
  llvm::Regex Re("RUN:.*--checks='([^']*)'");
  llvm::SmallVector<llvm::StringRef, 2> M;
  if (Re.match(Text, &M))
    return M[1].str();
  return syncGlobs();
}

std::vector<Expected> expectations(llvm::StringRef Text) {
  std::vector<Expected> Out;
  llvm::Regex Re("CHECK[^:]*: *:\\[\\[@LINE-([0-9]+)\\]\\]:[^ ]*: "
                 "(error|warning|remark): (.*\\[([a-z0-9-]+)\\])");
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n');
  for (unsigned I = 0; I < Lines.size(); ++I) {
    llvm::SmallVector<llvm::StringRef, 4> M;
    if (!Re.match(Lines[I], &M))
      continue;
    unsigned Back = 0;
    M[1].getAsInteger(10, Back);
    Out.push_back(Expected{I + 1 - Back, M[2].str(), M[4].str(), fileCheckRegex(M[3])});
  }
  return Out;
}

class SyncChecksLit : public ::testing::TestWithParam<std::string> {};

TEST_P(SyncChecksLit, FindingsMatchCheckLines) {
  const std::string &Path = GetParam();
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  ASSERT_TRUE(static_cast<bool>(Buffer)) << Path;
  std::vector<Expected> Want = expectations((*Buffer)->getBuffer());
  std::unique_ptr<Solver> S = Solver::createZ3();
  std::multiset<Expected> Got;
  for (const Finding &F : lintFile(Path, S.get(), runLineGlobs((*Buffer)->getBuffer()))) {
    // --implicit-check-not=error: and =warning: every error and warning must be expected;
    // remarks only where a CHECK line names them.
    Expected E{F.Where.PtxLine, toString(F.Level), F.Check, {}};
    std::string Text = F.Message + " [" + F.Check + "]";
    bool Wanted = std::find_if(Want.begin(), Want.end(), [&](const Expected &W) {
                    return !(W < E) && !(E < W) && llvm::Regex(W.Pattern).match(Text);
                  }) != Want.end();
    EXPECT_TRUE(Wanted || F.Level == Severity::Remark) << "unexpected: " << show(F);
    if (Wanted)
      Got.insert(E);
  }
  for (const Expected &W : Want)
    EXPECT_TRUE(Got.count(W)) << Path << ":" << W.Line << ": expected " << W.Level << " ["
                              << W.Check << "]";
  // A file without CHECK lines is a clean case: it must have been silent (checked above).
}

std::vector<std::string> litInputs() {
  std::vector<std::string> Files;
  for (const char *C : SyncChecks)
    for (std::string &F : listFiles(std::string(WSV_LIT_CHECKS_DIR) + "/" + C, ".ptx"))
      Files.push_back(std::move(F));
  return Files;
}

std::string testName(const ::testing::TestParamInfo<std::string> &Info) {
  llvm::SmallString<64> Dir = llvm::sys::path::parent_path(Info.param);
  std::string Name =
      (llvm::sys::path::filename(Dir) + "_" + llvm::sys::path::stem(Info.param)).str();
  for (char &C : Name)
    if (!llvm::isAlnum(C))
      C = '_';
  return Name;
}

INSTANTIATE_TEST_SUITE_P(Inputs, SyncChecksLit, ::testing::ValuesIn(litInputs()), testName);

//===- reference kernels ----------------------------------------------------------===//

/// The lines of a `// BUG(<check>)` comment and of the statement after it, in the kernel
/// source the finding's CUDA frames name.
std::pair<unsigned, unsigned> bugLines(const std::string &Source, llvm::StringRef Check) {
  auto Buffer = llvm::MemoryBuffer::getFile(Source);
  if (!Buffer)
    return {0, 0};
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  (*Buffer)->getBuffer().split(Lines, '\n');
  std::string Mark = ("// BUG(" + Check + ")").str();
  for (unsigned I = 0; I < Lines.size(); ++I) {
    if (!Lines[I].contains(Mark))
      continue;
    unsigned J = I + 1;
    while (J < Lines.size() && Lines[J].trim().starts_with("//"))
      ++J;
    // The statement after the comment ends at the first line closing it.
    while (J < Lines.size() && !Lines[J].rtrim().ends_with(";") && !Lines[J].rtrim().ends_with("{"))
      ++J;
    return {I + 1, J + 1};
  }
  return {0, 0};
}

bool atBugMark(const Finding &F) {
  auto At = [&](const SourceRef &S) {
    for (const CudaFrame &Frame : S.Cuda) {
      auto [First, Last] = bugLines(Frame.File, F.Check);
      if (First && Frame.Line >= First && Frame.Line <= Last)
        return true;
    }
    return false;
  };
  if (At(F.Where))
    return true;
  // A note may point at the line the wrong value comes from.
  return llvm::any_of(F.Notes, [&](const FindingNote &N) { return At(N.Where); });
}

/// Whether the statement after a `// BUG(<check>)` mark has no instruction of its own in the
/// variant: a constant the buggy instruction uses (`const uint32_t bar_threads = ...`), or a
/// statement the variant removes (`if constexpr (!wsv_bug(...)) cluster_sync();`). Then the
/// finding can only be at the first instruction that depends on it.
bool markHasNoInstruction(const Finding &F) {
  for (const CudaFrame &Frame : F.Where.Cuda) {
    auto [First, Last] = bugLines(Frame.File, F.Check);
    if (!First)
      continue;
    auto Buffer = llvm::MemoryBuffer::getFile(Frame.File);
    if (!Buffer)
      continue;
    llvm::SmallVector<llvm::StringRef, 0> Lines;
    (*Buffer)->getBuffer().split(Lines, '\n');
    for (unsigned L = First; L <= Last && L <= Lines.size(); ++L) {
      llvm::StringRef Text = Lines[L - 1].trim();
      if (Text.starts_with("//"))
        continue;
      return Text.starts_with("const ") || Text.starts_with("constexpr ") ||
             Text.contains("if constexpr (!wsv_bug(");
    }
  }
  return false;
}

TEST(SyncChecksReference, CleanKernelsAndTheirVariants) {
  // WSV_TEST_PTX_DIR points the test at the PTX of another build of the kernels.
  const char *Override = std::getenv("WSV_TEST_PTX_DIR");
  std::string Dir = Override ? Override : WSV_PTX_DIR;
  std::vector<std::string> Files = listFiles(Dir, ".ptx");
  if (Files.empty())
    GTEST_SKIP() << "no reference PTX in " << Dir << " (build wsv_ptx)";
  std::unique_ptr<Solver> S = Solver::createZ3();
  unsigned Variants = 0, Clean = 0;
  for (const std::string &Path : Files) {
    llvm::StringRef Stem = llvm::sys::path::filename(Path);
    Stem.consume_back(".ptx");
    Stem.consume_back(".checked");
    Stem.consume_back(".clang");
    llvm::StringRef Check;
    if (size_t Bug = Stem.find(".bug-"); Bug != llvm::StringRef::npos)
      Check = Stem.substr(Bug + 5);
    std::vector<Finding> Fs = lintFile(Path, S.get());
    if (!Check.empty() && !isSyncCheck(Check)) {
      // Another check's variant: none of these checks may claim its bug.
      for (const Finding &F : Fs)
        EXPECT_EQ(F.Level, Severity::Remark) << "variant of " << Check.str() << ": " << show(F);
      continue;
    }
    if (Check.empty()) {
      ++Clean;
      for (const Finding &F : Fs)
        EXPECT_EQ(F.Level, Severity::Remark) << "correct kernel: " << show(F);
      continue;
    }
    ++Variants;
    bool Caught = false;
    for (const Finding &F : Fs) {
      if (F.Level == Severity::Remark)
        continue;
      EXPECT_EQ(F.Check, Check.str()) << "another check fires on the variant: " << show(F);
      if (F.Check != Check || F.Level != Severity::Error)
        continue;
      Caught = true;
      if (!markHasNoInstruction(F)) {
        EXPECT_TRUE(atBugMark(F)) << "not at the BUG mark: " << show(F);
      }
    }
    EXPECT_TRUE(Caught) << Path << ": no error from " << Check.str();
  }
  EXPECT_GT(Clean, 0u);
  EXPECT_GT(Variants, 0u);
}

} // namespace
