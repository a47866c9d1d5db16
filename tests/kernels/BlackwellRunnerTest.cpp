// The Blackwell kernels as `wsv run` sees them: each has a launch spec for sm_100a only, and the
// KernelInfo its PTX publishes gives the grids, clusters and shared memory the design says.
#include "wsv/runner/Gemm.h"
#include "wsv/runner/KernelRegistry.h"
#include "wsv/runner/Manifest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

using namespace wsv::runner;

namespace {

const char *const Blackwell[] = {"b1", "b2", "b3", "b4", "b5", "b6"};

// The KernelInfo initializer nvcc wrote into <kernel>.ptx (`.b8 wsv_kernel_info[N] = {...}`,
// trailing zero bytes left out).
wsv::abi::KernelInfo kernelInfoFromPtx(const std::string &Kernel) {
  wsv::abi::KernelInfo Info;
  std::memset(&Info, 0, sizeof Info);
  std::ifstream In(std::string(WSV_PTX_DIR) + "/" + Kernel + ".ptx");
  std::stringstream Text;
  Text << In.rdbuf();
  const std::string Ptx = Text.str();
  std::smatch M;
  const std::regex Init(R"(wsv_kernel_info\[(\d+)\]\s*=\s*\{([^}]*)\})");
  EXPECT_TRUE(std::regex_search(Ptx, M, Init)) << Kernel << ".ptx publishes no wsv_kernel_info";
  if (M.empty())
    return Info;
  EXPECT_EQ(std::stoul(M[1]), sizeof(wsv::abi::KernelInfo));
  std::vector<unsigned char> Bytes;
  std::stringstream List(M[2]);
  for (std::string B; std::getline(List, B, ',');)
    Bytes.push_back(static_cast<unsigned char>(std::stoul(B)));
  std::memcpy(&Info, Bytes.data(), std::min(Bytes.size(), sizeof Info));
  return Info;
}

} // namespace

TEST(BlackwellSpecs, EveryKernelRunsOnSm100Only) {
  for (const char *Name : Blackwell) {
    const KernelSpec *Spec = findKernelSpec(Name);
    ASSERT_NE(Spec, nullptr) << Name;
    EXPECT_EQ(Spec->ComputeCapability, 100u) << Name;
    EXPECT_FALSE(deviceRefusal(*Spec, 10, 0, "NVIDIA B200")) << Name;
    auto OnHopper = deviceRefusal(*Spec, 9, 0, "NVIDIA H100 80GB HBM3");
    ASSERT_TRUE(OnHopper) << Name;
    EXPECT_EQ(*OnHopper, "kernel " + std::string(Name) +
                             " is built for sm_100a and this GPU (NVIDIA H100 80GB HBM3) is "
                             "sm_90, an older architecture without the instructions it uses");
  }
}

TEST(BlackwellSpecs, EveryKernelIsInTheManifestForSm100a) {
  Expected<Manifest> M = readManifest(WSV_PTX_DIR);
  ASSERT_TRUE(static_cast<bool>(M)) << M.status().message();
  for (const char *Name : Blackwell) {
    const ManifestKernel *K = M->kernel(Name);
    ASSERT_NE(K, nullptr) << Name;
    EXPECT_EQ(K->Arch, "sm_100a");
    EXPECT_EQ(K->computeCapability(), 100u);
    EXPECT_FALSE(K->Variants.empty()) << Name << " has no seeded-bug variant";
  }
}

TEST(BlackwellKernelInfo, OneTilePerCtaKernels) {
  for (const char *Name : {"b1", "b2", "b6"}) {
    const wsv::abi::KernelInfo Info = kernelInfoFromPtx(Name);
    EXPECT_EQ(Info.Version, wsv::abi::KernelInfoVersion) << Name;
    EXPECT_EQ(Info.TensorMaps, wsv::abi::TensorMapsAsParams) << Name;
    Problem P{1024, 512, 256, Dtype::Bf16};
    EXPECT_FALSE(shapeRefusal(Info, P)) << Name;
    const LaunchGeometry G = gemmGeometry(Info, P, 148);
    EXPECT_EQ(G.Grid[0], 8u) << Name;  // 1024 / 128 rows
    EXPECT_EQ(G.Grid[1], 4u) << Name;  // 512 / 128 columns
    EXPECT_EQ(G.Block[0], 128u) << Name;
    EXPECT_EQ(G.Cluster[0], 1u) << Name;
    // A 64-element (128 B) box row: the runner encodes the 128 B swizzle the UMMA descriptors and
    // the epilogue assume.
    EXPECT_EQ(Info.TileK * 2, 128u) << Name;
    EXPECT_EQ(Info.BoxDCols * 2, 128u) << Name;
  }
}

TEST(BlackwellKernelInfo, PersistentKernels) {
  struct Expect {
    const char *Name;
    uint32_t Threads, Cluster, RowQuantum, TileN;
  };
  // Step 7: 128 x 128 per CTA; Step 8: 256 x 256 per 2-CTA cluster; Step 9: 512 x 256.
  for (const Expect &E : {Expect{"b3", 256, 1, 128, 128}, Expect{"b4", 256, 2, 256, 256},
                          Expect{"b5", 384, 2, 512, 256}}) {
    const wsv::abi::KernelInfo Info = kernelInfoFromPtx(E.Name);
    EXPECT_EQ(Info.Persistent, 1u) << E.Name;
    EXPECT_EQ(Info.TileM * Info.ClusterM, E.RowQuantum) << E.Name;
    EXPECT_EQ(Info.TileN, E.TileN) << E.Name;
    const Problem Smallest = smallestProblem(Info, Dtype::F16);
    EXPECT_EQ(Smallest.M, E.RowQuantum) << E.Name;
    EXPECT_FALSE(shapeRefusal(Info, Smallest)) << E.Name;
    EXPECT_TRUE(shapeRefusal(Info, Problem{E.RowQuantum / 2, E.TileN, 64, Dtype::F16}))
        << E.Name;
    // 4096 x 4096 has more tiles than a B200's 148 SMs: one CTA per SM, whole clusters.
    const LaunchGeometry G = gemmGeometry(Info, Problem{4096, 4096, 4096, Dtype::F16}, 148);
    EXPECT_EQ(G.Grid[0], 148u) << E.Name;
    EXPECT_EQ(G.Grid[1], 1u) << E.Name;
    EXPECT_EQ(G.Block[0], E.Threads) << E.Name;
    EXPECT_EQ(G.Cluster[0], E.Cluster) << E.Name;
    EXPECT_LE(G.SmemBytes, 227u * 1024) << E.Name;
  }
}
