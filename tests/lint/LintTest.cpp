// wsv lint's driver and renderers with a check-shaped double (registered here only, never in
// the catalog): it reports an error at every mbarrier.init with a note at the kernel's first
// wait, so the text, JSON, SARIF and baseline code see real findings from real protocols
// whatever checks the catalog has.
#include "wsv/LintDriver.h"
#include "report/Diagnostics.h"
#include "report/LintJson.h"
#include "report/Sarif.h"

#include "wsv/analyzer/Checks.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

using namespace wsv;
using nlohmann::json;

namespace {

void initDouble(analyzer::CheckContext &Ctx) {
  const analyzer::Protocol &P = Ctx.protocol();
  const analyzer::Event *FirstWait = nullptr;
  for (const analyzer::Event &E : P.Events)
    if (E.Kind == analyzer::EventKind::Wait && !FirstWait)
      FirstWait = &E;
  for (const analyzer::Event &E : P.Events) {
    if (E.Kind != analyzer::EventKind::Init)
      continue;
    analyzer::Finding &F =
        Ctx.report(analyzer::Severity::Error, "barrier initialized here, a test finding", E);
    if (FirstWait)
      F.Notes.push_back({"the first wait", FirstWait->Where});
  }
}

const analyzer::CheckInfo DoubleInfo = {"test-double", analyzer::CheckCategory::Deadlock,
                                        "a test double", initDouble};

lint::LintOptions doubleOptions(unsigned Jobs = 1) {
  lint::LintOptions O;
  O.Jobs = Jobs;
  O.Run = [](const analyzer::Protocol &P, analyzer::Solver &S) {
    std::vector<analyzer::Finding> Out;
    analyzer::CheckContext Ctx(P, DoubleInfo, &S, Out);
    DoubleInfo.Run(Ctx);
    std::stable_sort(Out.begin(), Out.end());
    return Out;
  };
  return O;
}

/// A scratch folder with a CUDA file and a PTX file whose .loc points into it.
class LintTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wsv-lint-test", Dir));
    Cu = path("tiny.cu");
    write(Cu, "// a kernel\n__global__ void tiny() {\n  if (threadIdx.x == 0)\n"
              "    mbarrier_init(&bar, 1);\n  mbarrier_wait(&bar, 0);\n}\n");
    Ptx = path("tiny.ptx");
    write(Ptx, tinyPtx(0));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  /// Extra blank lines before the kernel move every finding down without changing it.
  std::string tinyPtx(unsigned Shift, unsigned Inits = 1) {
    std::string S = ".version 8.0\n.target sm_90a\n.address_size 64\n.file 1 \"" + Cu + "\"\n";
    S += std::string(Shift, '\n');
    S += ".shared .align 8 .b64 bar[4];\n"
         ".visible .entry tiny()\n{\n"
         "  .reg .b32 %r<4>;\n  .reg .pred %p<3>;\n  .reg .b64 %rd<2>;\n"
         "  .loc 1 3 3\n"
         "  mov.u32 %r1, %tid.x;\n"
         "  setp.ne.u32 %p1, %r1, 0;\n"
         "  @%p1 bra SKIP;\n"
         "  .loc 1 4 5\n";
    for (unsigned I = 0; I < Inits; ++I)
      S += "  mbarrier.init.shared::cta.b64 [bar+" + std::to_string(8 * I) + "], 1;\n";
    S += "SKIP:\n"
         "  bar.sync 0;\n"
         "  .loc 1 5 3\n"
         "  mov.u32 %r2, 0;\n"
         "WAIT:\n"
         "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], %r2;\n"
         "  @!%p2 bra WAIT;\n"
         "  ret;\n}\n";
    return S;
  }
  std::string path(llvm::StringRef Name) {
    llvm::SmallString<128> P(Dir);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }
  static void write(const std::string &Path, const std::string &Text) {
    std::ofstream(Path, std::ios::binary) << Text;
  }
  static std::vector<report::LintInput> lint(std::vector<std::string> Paths,
                                             const lint::LintOptions &O) {
    std::vector<report::LintInput> Out;
    for (auto &Produced : lint::lintPaths(Paths, O))
      for (auto &In : Produced)
        Out.push_back(std::move(In));
    return Out;
  }
  static std::string text(const std::vector<report::LintInput> &Inputs) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    report::CudaSources Cuda;
    for (const report::LintInput &In : Inputs)
      report::printText(In, OS, /*Colors=*/false, Cuda);
    OS << report::summaryLine(report::countFindings(Inputs)) << '\n';
    return S;
  }

  llvm::SmallString<128> Dir;
  std::string Cu, Ptx;
};

unsigned lineOf(const std::string &Text, llvm::StringRef Needle) {
  size_t At = Text.find(Needle.str());
  return At == std::string::npos ? 0 : 1 + std::count(Text.begin(), Text.begin() + At, '\n');
}

TEST_F(LintTest, TextHasPositionCaretNotesAndTheCudaLine) {
  auto Inputs = lint({Ptx}, doubleOptions());
  ASSERT_EQ(Inputs.size(), 1u);
  ASSERT_EQ(Inputs[0].Status, report::InputStatus::Checked);
  ASSERT_EQ(Inputs[0].Findings.size(), 1u);
  std::string Out = text(Inputs);
  unsigned InitLine = lineOf(tinyPtx(0), "mbarrier.init");
  unsigned WaitLine = lineOf(tinyPtx(0), "mbarrier.try_wait");
  std::string Expected =
      Ptx + ":" + std::to_string(InitLine) +
      ":3: error: barrier initialized here, a test finding [test-double]\n"
      "  mbarrier.init.shared::cta.b64 [bar+0], 1;\n"
      "  ^\n" +
      Ptx + ":" + std::to_string(WaitLine) +
      ":3: note: the first wait (from tiny.cu:5)\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], %r2;\n"
      "  ^\n" +
      Cu + ":4:5: note: from this CUDA source line\n"
           "    mbarrier_init(&bar, 1);\n"
           "    ^\n"
           "1 error, 0 warnings in 1 file\n";
  EXPECT_EQ(Out, Expected);
}

TEST_F(LintTest, UnreadableCudaSourceKeepsThePosition) {
  llvm::sys::fs::remove(Cu);
  std::string Out = text(lint({Ptx}, doubleOptions()));
  EXPECT_NE(Out.find(Cu + ":4:5: note: from this CUDA source line\n1 error"), std::string::npos)
      << Out;
}

TEST_F(LintTest, ParseErrorsAndUnreadableFilesAreBadInputs) {
  std::string Bad = path("bad.ptx");
  write(Bad, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
             "  ld.shared.u32 %r1, [%r2+4;\n}\n");
  auto Inputs = lint({Bad, path("missing.ptx"), Ptx}, doubleOptions(2));
  ASSERT_EQ(Inputs.size(), 3u);
  EXPECT_EQ(Inputs[0].Status, report::InputStatus::ParseError);
  ASSERT_FALSE(Inputs[0].ParseDiagnostics.empty());
  EXPECT_EQ(Inputs[0].ParseDiagnostics[0].Line, 6u);
  EXPECT_EQ(Inputs[1].Status, report::InputStatus::Unreadable);
  EXPECT_FALSE(Inputs[1].Error.empty());
  EXPECT_EQ(Inputs[2].Status, report::InputStatus::Checked);
  report::LintTotals T = report::countFindings(Inputs);
  EXPECT_EQ(T.BadInputs, 2u);
  EXPECT_EQ(T.Errors, 1u);
  std::string Out = text(Inputs);
  EXPECT_NE(Out.find(Bad + ":6:"), std::string::npos) << Out;
  EXPECT_NE(Out.find("1 error, 0 warnings in 3 files (2 not checked"), std::string::npos) << Out;
}

TEST_F(LintTest, KernelFilterAndFilesWithoutEntries) {
  lint::LintOptions O = doubleOptions();
  O.Kernel = "other";
  auto Inputs = lint({Ptx}, O);
  EXPECT_EQ(Inputs[0].Status, report::InputStatus::NoKernel);
  EXPECT_TRUE(Inputs[0].Findings.empty());
  O.Kernel = "tiny";
  EXPECT_EQ(lint({Ptx}, O)[0].Findings.size(), 1u);
}

TEST_F(LintTest, JsonDocument) {
  auto Inputs = lint({Ptx}, doubleOptions());
  json J = report::lintToJson(Inputs, report::countFindings(Inputs), "9.9");
  EXPECT_EQ(J["schema"], "wsv-lint/1");
  EXPECT_EQ(J["inputs"][0]["status"], "checked");
  EXPECT_EQ(J["inputs"][0]["kernels"], json::array({"tiny"}));
  const json &F = J["findings"][0];
  EXPECT_EQ(F["check"], "test-double");
  EXPECT_EQ(F["severity"], "error");
  EXPECT_EQ(F["kernel"], "tiny");
  EXPECT_EQ(F["file"], Ptx);
  EXPECT_EQ(F["line"], lineOf(tinyPtx(0), "mbarrier.init"));
  EXPECT_EQ(F["column"], 3);
  EXPECT_EQ(F["cuda"][0]["file"], Cu);
  EXPECT_EQ(F["cuda"][0]["line"], 4);
  EXPECT_EQ(F["notes"][0]["line"], lineOf(tinyPtx(0), "mbarrier.try_wait"));
  EXPECT_EQ(J["summary"]["errors"], 1);
  EXPECT_EQ(J["summary"]["files"], 1);
}

TEST_F(LintTest, BaselineIgnoresLinesButNotMessagesOrCounts) {
  auto Before = lint({Ptx}, doubleOptions());
  std::string Base = path("base.json");
  write(Base, report::lintToJson(Before, report::countFindings(Before), "1").dump());
  // Lines above the finding move it; a second init is a second finding of the same text.
  write(Ptx, tinyPtx(/*Shift=*/7, /*Inits=*/2));
  auto After = lint({Ptx}, doubleOptions());
  ASSERT_EQ(After[0].Findings.size(), 2u);
  llvm::Expected<report::Baseline> B = report::Baseline::load(Base);
  ASSERT_TRUE(static_cast<bool>(B)) << llvm::toString(B.takeError());
  EXPECT_EQ(B->apply(After), 1u);
  EXPECT_EQ(After[0].Findings.size(), 1u);

  write(Base, "{\"schema\": \"wsv-protocol/1\", \"findings\": []}");
  llvm::Expected<report::Baseline> Wrong = report::Baseline::load(Base);
  ASSERT_FALSE(static_cast<bool>(Wrong));
  EXPECT_NE(llvm::toString(Wrong.takeError()).find("not a 'wsv lint --format json' output"),
            std::string::npos);
}

TEST_F(LintTest, SarifStructure) {
  auto Inputs = lint({Ptx}, doubleOptions());
  json S = report::lintToSarif(Inputs, {std::string(Dir), "9.9"});
  EXPECT_EQ(S["version"], "2.1.0");
  const json &Run = S["runs"][0];
  EXPECT_EQ(Run["tool"]["driver"]["name"], "wsv");
  EXPECT_EQ(Run["tool"]["driver"]["rules"].size(), analyzer::allChecks().size());
  for (const json &Rule : Run["tool"]["driver"]["rules"]) {
    EXPECT_TRUE(Rule["shortDescription"]["text"].is_string());
    EXPECT_TRUE(Rule["help"]["text"].is_string());
  }
  EXPECT_EQ(Run["originalUriBaseIds"]["SRCROOT"]["uri"],
            "file://" + std::string(Dir) + "/");
  const json &R = Run["results"][0];
  EXPECT_EQ(R["ruleId"], "test-double");
  EXPECT_FALSE(R.contains("ruleIndex")); // the double is not in the catalog
  EXPECT_EQ(R["level"], "error");
  const json &Loc = R["locations"][0]["physicalLocation"];
  EXPECT_EQ(Loc["artifactLocation"]["uri"], "tiny.ptx");
  EXPECT_EQ(Loc["artifactLocation"]["uriBaseId"], "SRCROOT");
  EXPECT_EQ(Loc["region"]["startLine"], lineOf(tinyPtx(0), "mbarrier.init"));
  EXPECT_EQ(Loc["region"]["startColumn"], 3);
  ASSERT_EQ(R["relatedLocations"].size(), 2u);
  EXPECT_EQ(R["relatedLocations"][1]["physicalLocation"]["artifactLocation"]["uri"], "tiny.cu");
  EXPECT_EQ(R["relatedLocations"][1]["physicalLocation"]["region"]["startLine"], 4);
  std::string Fingerprint = R["partialFingerprints"]["wsvFinding/v1"];
  EXPECT_EQ(Fingerprint.size(), 16u);

  // The fingerprint follows the baseline's key: not the line.
  write(Ptx, tinyPtx(/*Shift=*/3));
  auto Moved = lint({Ptx}, doubleOptions());
  json S2 = report::lintToSarif(Moved, {std::string(Dir), "9.9"});
  EXPECT_EQ(S2["runs"][0]["results"][0]["partialFingerprints"]["wsvFinding/v1"], Fingerprint);
  EXPECT_NE(S2["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"],
            Loc["region"]["startLine"]);

  // Outside the root: an absolute file URI.
  json S3 = report::lintToSarif(Inputs, {"/nonexistent-root", "9.9"});
  std::string Uri = S3["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
                      ["artifactLocation"]["uri"];
  EXPECT_EQ(Uri, "file://" + Ptx);
}

TEST_F(LintTest, SarifReportsBadInputsAsNotifications) {
  auto Inputs = lint({path("missing.ptx")}, doubleOptions());
  json S = report::lintToSarif(Inputs, {std::string(Dir), "9.9"});
  const json &Inv = S["runs"][0]["invocations"][0];
  EXPECT_EQ(Inv["executionSuccessful"], false);
  EXPECT_EQ(Inv["toolExecutionNotifications"][0]["level"], "error");
  EXPECT_EQ(Inv["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]
               ["artifactLocation"]["uri"],
            "missing.ptx");
}

TEST_F(LintTest, OrderDoesNotDependOnWorkers) {
  std::vector<std::string> Paths;
  for (unsigned I = 0; I < 12; ++I) {
    Paths.push_back(path("k" + std::to_string(I) + ".ptx"));
    write(Paths.back(), tinyPtx(I % 3, 1 + I % 4));
  }
  // The reference kernels too when this build made them: real protocols, real solver use.
  for (const char *K : {"h1", "h2", "h3", "h4", "h5", "b1", "b2", "b3", "b4", "b5", "b6"}) {
    std::string P = std::string(WSV_PTX_DIR) + "/" + K + ".ptx";
    if (llvm::sys::fs::exists(P))
      Paths.push_back(P);
  }
  auto One = lint(Paths, doubleOptions(1));
  auto Four = lint(Paths, doubleOptions(4));
  std::string A = report::lintToJson(One, report::countFindings(One), "1").dump();
  std::string B = report::lintToJson(Four, report::countFindings(Four), "1").dump();
  EXPECT_EQ(A, B);
  // One finding per init: 1 + I % 4 in file I.
  unsigned Tiny = 0;
  for (size_t I = 0; I < 12; ++I)
    Tiny += One[I].Findings.size();
  EXPECT_EQ(Tiny, 30u);
}

TEST(CuobjdumpOutput, SplitsPtxSectionsAndNamesThemByArch) {
  const char *Out = "\nFatbin elf code:\n================\narch = sm_90a\ncode version = [1,7]\n"
                    "host = linux\ncompile_size = 64bit\n\n"
                    "Fatbin ptx code:\n================\narch = sm_90a\ncode version = [8,8]\n"
                    "host = linux\ncompile_size = 64bit\ncompressed\nptxasOptions = \n\n"
                    "//\n// Generated by NVIDIA NVVM Compiler\n\n.version 8.8\n.target sm_90a\n"
                    "\nFatbin ptx code:\n================\narch = sm_80\ncode version = [8,8]\n"
                    "host = linux\ncompile_size = 64bit\n\n.version 8.8\n.target sm_80\n";
  auto Sections = lint::splitCuobjdumpPtx(Out);
  ASSERT_EQ(Sections.size(), 2u);
  EXPECT_EQ(Sections[0].first, "sm_90a");
  EXPECT_EQ(Sections[0].second,
            "//\n// Generated by NVIDIA NVVM Compiler\n\n.version 8.8\n.target sm_90a\n\n");
  EXPECT_EQ(Sections[1].first, "sm_80");
  EXPECT_EQ(Sections[1].second, ".version 8.8\n.target sm_80\n");
  EXPECT_TRUE(lint::splitCuobjdumpPtx("Fatbin elf code:\n===\narch = sm_90a\n").empty());
}

TEST(CudaBinary, RecognizesElfAndFatbinaries) {
  EXPECT_TRUE(lint::isCudaBinary(llvm::StringRef("\x7f" "ELF\x02\x01", 6)));
  EXPECT_TRUE(lint::isCudaBinary(llvm::StringRef("\x50\xed\x55\xba\x01\x00", 6)));
  EXPECT_FALSE(lint::isCudaBinary(".version 8.0\n"));
  EXPECT_FALSE(lint::isCudaBinary(""));
}

TEST(CamelName, FollowsTheCheckFileNames) {
  EXPECT_EQ(report::camelName("mbarrier-tx-bytes"), "MbarrierTxBytes");
  EXPECT_EQ(report::camelName("tcgen05-alloc-lane-guard"), "Tcgen05AllocLaneGuard");
}

} // namespace
