// The Hopper reference GEMMs (reference_kernels/hopper/), sm_90a. Their tiles, stages, threads,
// clusters and shared memory come from the KernelInfo each PTX publishes; here is what the PTX
// cannot say.
#include "Families.h"

namespace wsv {
namespace runner {

std::vector<KernelSpec> hopperKernelSpecs() {
  return {
      {"h1", "single warpgroup, prefilled TMA ring, wgmma (128x128x64, 4 stages)", 90,
       gemmGeometry},
      {"h2", "TMA producer warp + consumer warpgroup, full/empty barriers (128x128x64)", 90,
       gemmGeometry},
      {"h3", "producer warpgroup + two consumer warpgroups with setmaxnreg (128x256x64)", 90,
       gemmGeometry},
      {"h4", "2-CTA cluster, TMA multicast of B, remote empty arrivals (2x 128x256x64)", 90,
       gemmGeometry},
      {"h5", "persistent clusters, phases across tiles, stmatrix + TMA-store epilogue", 90,
       gemmGeometry},
      {"h6", "h5 with stream-K for the last partial wave and a deferred epilogue", 90,
       gemmGeometry},
  };
}

} // namespace runner
} // namespace wsv
