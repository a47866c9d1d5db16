#include "wsv/runner/KernelRegistry.h"
#include "wsv/runner/Manifest.h"
#include "wsv/runner/Plan.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace wsv;
using namespace wsv::runner;

namespace {

const char ManifestText[] = R"({
  "schema": "wsv-kernels/1",
  "ptx_dir": "/somewhere/else",
  "kernels": [
    {"name": "h2", "arch": "sm_90a", "source": "reference_kernels/hopper/h2.cu",
     "ptx": "h2.ptx", "checked_ptx": "h2.checked.ptx", "clang_ptx": "h2.clang.ptx",
     "variants": [
      {"bug": "mbarrier-initial-phase", "ptx": "h2.bug-mbarrier-initial-phase.ptx",
       "checked_ptx": "h2.bug-mbarrier-initial-phase.checked.ptx"}]},
    {"name": "h4", "arch": "sm_90a", "source": "reference_kernels/hopper/h4.cu",
     "ptx": "h4.ptx", "checked_ptx": "h4.checked.ptx", "variants": []},
    {"name": "x9", "arch": "sm_100a", "source": "elsewhere/x9.cu", "ptx": "x9.ptx",
     "variants": []}
  ]
})";

Manifest manifest() {
  Expected<Manifest> M = parseManifest(ManifestText, "/ptx");
  EXPECT_TRUE(M) << M.status().message();
  return *M;
}

RunOptions options(std::vector<std::string> Kernels) {
  RunOptions O;
  O.Kernels = std::move(Kernels);
  return O;
}

} // namespace

TEST(Manifest, Parses) {
  const Manifest M = manifest();
  EXPECT_EQ(M.PtxDir, "/ptx"); // where it was read from wins over the recorded build folder
  ASSERT_EQ(M.Kernels.size(), 3u);
  const ManifestKernel *H2 = M.kernel("h2");
  ASSERT_NE(H2, nullptr);
  EXPECT_EQ(H2->computeCapability(), 90u);
  EXPECT_EQ(M.kernel("x9")->computeCapability(), 100u);
  ASSERT_NE(H2->variant("mbarrier-initial-phase"), nullptr);
  EXPECT_EQ(H2->variant("nope"), nullptr);
  EXPECT_EQ(M.path(H2->Ptx), "/ptx/h2.ptx");
}

TEST(Manifest, RejectsOtherSchemasAndGarbage) {
  Expected<Manifest> Bad = parseManifest(R"({"schema": "wsv-kernels/9", "kernels": []})", "/p");
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.status().message().find("wsv-kernels/9"), std::string::npos);
  EXPECT_FALSE(parseManifest("not json", "/p"));
  EXPECT_FALSE(parseManifest(R"({"schema": "wsv-kernels/1"})", "/p"));
}

TEST(Manifest, CatalogJsonHasAbsolutePathsAndRunnability) {
  const nlohmann::json J = nlohmann::json::parse(catalogJson(manifest()));
  EXPECT_EQ(J["schema"], "wsv-kernels/1");
  ASSERT_EQ(J["kernels"].size(), 3u);
  EXPECT_EQ(J["kernels"][0]["ptx"], "/ptx/h2.ptx");
  EXPECT_EQ(J["kernels"][0]["runnable"], true);
  EXPECT_EQ(J["kernels"][0]["variants"][0]["checked_ptx"],
            "/ptx/h2.bug-mbarrier-initial-phase.checked.ptx");
  EXPECT_TRUE(J["kernels"][1]["clang_ptx"].is_null());
  EXPECT_EQ(J["kernels"][2]["runnable"], false); // no launch spec registered for x9
  EXPECT_NE(catalogText(manifest()).find("variants: mbarrier-initial-phase"), std::string::npos);
}

TEST(Plan, PicksTheFileOfEachFlavorAndVariant) {
  const Manifest M = manifest();
  RunOptions O = options({"h2"});
  Expected<std::vector<Job>> J = planJobs(O, M);
  ASSERT_TRUE(J) << J.status().message();
  ASSERT_EQ(J->size(), 1u);
  EXPECT_EQ((*J)[0].Ptx, "/ptx/h2.ptx");
  EXPECT_NE((*J)[0].Spec, nullptr);

  O.Check = true;
  O.Bug = "mbarrier-initial-phase";
  O.Bench = true;
  J = planJobs(O, M);
  ASSERT_TRUE(J) << J.status().message();
  EXPECT_EQ((*J)[0].Ptx, "/ptx/h2.bug-mbarrier-initial-phase.checked.ptx");
  EXPECT_EQ((*J)[0].PlainPtx, "/ptx/h2.bug-mbarrier-initial-phase.ptx");
  EXPECT_EQ((*J)[0].Variant, "mbarrier-initial-phase");

  RunOptions C = options({"h2"});
  C.Clang = true;
  J = planJobs(C, M);
  ASSERT_TRUE(J);
  EXPECT_EQ((*J)[0].Ptx, "/ptx/h2.clang.ptx");

  RunOptions F = options({"h2"});
  F.PtxFile = "/tmp/tuned.ptx";
  J = planJobs(F, M);
  ASSERT_TRUE(J);
  EXPECT_EQ((*J)[0].Ptx, "/tmp/tuned.ptx");
}

TEST(Plan, ExplainsWhatIsMissing) {
  const Manifest M = manifest();
  struct Case {
    RunOptions O;
    const char *Expect;
  };
  RunOptions Unknown = options({"h7"});
  RunOptions NoVariant = options({"h2"});
  NoVariant.Bug = "smem-raw-wait";
  RunOptions NoClang = options({"h4"});
  NoClang.Clang = true;
  RunOptions NoSpec = options({"x9"});
  RunOptions NoneHasIt = options({"all"});
  NoneHasIt.Bug = "bulk-store-reuse";
  for (const Case &C : {Case{Unknown, "unknown kernel 'h7' (known: h2, h4, x9)"},
                        Case{NoVariant, "its variants: mbarrier-initial-phase"},
                        Case{NoClang, "has no clang build"},
                        Case{NoSpec, "no launch spec"},
                        Case{NoneHasIt, "no kernel has the variant 'bulk-store-reuse'"}}) {
    Expected<std::vector<Job>> J = planJobs(C.O, M);
    ASSERT_FALSE(J) << C.Expect;
    EXPECT_NE(J.status().message().find(C.Expect), std::string::npos) << J.status().message();
  }
}

TEST(Plan, AllRunsEveryKernelWithASpec) {
  Expected<std::vector<Job>> J = planJobs(options({"all"}), manifest());
  ASSERT_TRUE(J);
  ASSERT_EQ(J->size(), 2u); // x9 has PTX only
  EXPECT_TRUE((*J)[0].FromAll);
  // With --check or --clang, `all` means the kernels that have that build.
  RunOptions Checked = options({"all"});
  Checked.Check = true;
  J = planJobs(Checked, manifest());
  ASSERT_TRUE(J) << J.status().message();
  EXPECT_EQ(J->size(), 2u);
  RunOptions Clang = options({"all"});
  Clang.Clang = true;
  J = planJobs(Clang, manifest());
  ASSERT_TRUE(J) << J.status().message();
  ASSERT_EQ(J->size(), 1u);
  EXPECT_EQ((*J)[0].Kernel, "h2");
  RunOptions O = options({"all"});
  O.Bug = "mbarrier-initial-phase";
  J = planJobs(O, manifest());
  ASSERT_TRUE(J);
  ASSERT_EQ(J->size(), 1u); // only kernels with that variant
  EXPECT_EQ((*J)[0].Kernel, "h2");
}

TEST(Registry, HopperKernelsRunOnSm90Only) {
  for (const char *Name : {"h1", "h2", "h3", "h4", "h5"}) {
    const KernelSpec *S = findKernelSpec(Name);
    ASSERT_NE(S, nullptr) << Name;
    EXPECT_EQ(S->ComputeCapability, 90u);
    EXPECT_FALSE(deviceRefusal(*S, 9, 0, "NVIDIA H100 80GB HBM3"));
    std::optional<std::string> Old = deviceRefusal(*S, 8, 0, "NVIDIA A100");
    ASSERT_TRUE(Old);
    EXPECT_NE(Old->find("built for sm_90a and this GPU (NVIDIA A100) is sm_80"), std::string::npos)
        << *Old;
    EXPECT_NE(Old->find("older architecture"), std::string::npos);
    std::optional<std::string> Newer = deviceRefusal(*S, 10, 0, "NVIDIA B200");
    ASSERT_TRUE(Newer);
    EXPECT_NE(Newer->find("runs only on that architecture"), std::string::npos) << *Newer;
  }
  EXPECT_EQ(findKernelSpec("h9"), nullptr);
}

TEST(Registry, GemmGeometry) {
  wsv::abi::KernelInfo I;
  std::memset(&I, 0, sizeof I);
  I.TileM = 128;
  I.TileN = 256;
  I.TileK = 64;
  I.Threads = 384;
  I.ClusterM = 2;
  I.SmemBytes = 200000;
  Problem P;
  P.M = 1024;
  P.N = 768;
  P.K = 64;
  LaunchGeometry G = gemmGeometry(I, P, 0);
  EXPECT_EQ(G.Grid[0], 8u);
  EXPECT_EQ(G.Grid[1], 3u);
  EXPECT_EQ(G.Cluster[0], 2u);
  EXPECT_EQ(G.Block[0], 384u);
  EXPECT_EQ(G.SmemBytes, 200000u);
  // Persistent: as many CTAs as fit, whole clusters, never more than there are tiles.
  I.Persistent = 1;
  G = gemmGeometry(I, P, 131);
  EXPECT_EQ(G.Grid[0], 24u); // 8 x 3 tiles
  EXPECT_EQ(G.Grid[1], 1u);
  P.M = P.N = 8192;
  G = gemmGeometry(I, P, 131);
  EXPECT_EQ(G.Grid[0], 130u);
  G = gemmGeometry(I, P, 0);
  EXPECT_EQ(G.Grid[0], 2u); // at least one cluster
}
