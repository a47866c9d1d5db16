// The kernels `wsv run` can launch. A kernel's PTX comes from the manifest and describes its own
// tiles, stages, threads, cluster and shared memory (wsv_abi.h KernelInfo); its KernelSpec here
// adds what the PTX cannot say: which GPU it runs on and how a problem maps to a grid.
//
// Each family lives in its own file and returns its specs (HopperKernels.cpp: h1-h5). Adding a
// family means one file with a `std::vector<KernelSpec> <family>KernelSpecs()` function and one
// line in KernelRegistry.cpp's family table. A spec whose GPU is not the one present is refused
// with a message naming both, before any module is loaded.
#pragma once

#include "wsv/runner/Gemm.h"

#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace runner {

struct LaunchGeometry {
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint32_t Cluster[3] = {1, 1, 1};
  uint32_t SmemBytes = 0; ///< dynamic shared memory per CTA
};

/// Maps a problem to a launch. ResidentCtas is how many CTAs of this kernel fit on the GPU at
/// once (clusters included); persistent kernels size their grid from it.
using GeometryFn = LaunchGeometry (*)(const abi::KernelInfo &Info, const Problem &P,
                                      uint32_t ResidentCtas);

/// The reference GEMMs' mapping: blockIdx.x walks M tiles and blockIdx.y N tiles, clusters of
/// ClusterM CTAs along x; a persistent kernel gets min(ResidentCtas, tiles) CTAs, rounded down to
/// whole clusters.
LaunchGeometry gemmGeometry(const abi::KernelInfo &Info, const Problem &P, uint32_t ResidentCtas);

struct KernelSpec {
  std::string Name;    ///< as in kernels.json ("h2")
  std::string Summary; ///< one line for `wsv kernels`
  /// The one compute capability the PTX runs on, major*10+minor: "a" targets (sm_90a,
  /// sm_100a) use features that later GPUs do not promise.
  unsigned ComputeCapability = 90;
  GeometryFn Geometry = gemmGeometry;
};

/// Every registered kernel, families in table order.
const std::vector<KernelSpec> &kernelSpecs();
const KernelSpec *findKernelSpec(const std::string &Name);

/// Why this GPU cannot run the kernel (another architecture), or nothing.
std::optional<std::string> deviceRefusal(const KernelSpec &Spec, int Major, int Minor,
                                         const std::string &DeviceName);

} // namespace runner
} // namespace wsv
