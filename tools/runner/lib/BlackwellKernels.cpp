// The Blackwell reference GEMMs (reference_kernels/blackwell/), sm_100a. Their tiles, stages,
// threads, clusters and shared memory come from the KernelInfo each PTX publishes; here is what
// the PTX cannot say. They were compiled and assembled but never run: no sm_100 GPU was available
// while they were written, so on any other GPU `wsv run` refuses them (deviceRefusal).
#include "Families.h"

namespace wsv {
namespace runner {

std::vector<KernelSpec> blackwellKernelSpecs() {
  return {
      {"b1", "Tilus V2: one warp issues TMA and tcgen05.mma, TMA barrier per stage + MMA barrier",
       100, gemmGeometry},
      {"b2", "Tilus V3: TMA warp + MMA warp, full/empty, tcgen05.commit on empty, flush barrier",
       100, gemmGeometry},
      {"b3", "TIRx Step 7: tma2mma/mma2tma/mma2ld/ld2mma, writeback warpgroup, persistent", 100,
       gemmGeometry},
      {"b4", "TIRx Step 8: 2-CTA cta_group::2 MMA, multicast commits, cluster sync (256x256)", 100,
       gemmGeometry},
      {"b5", "TIRx Step 9: two MMA consumers on a 2-CTA cluster, per-consumer slots (512x256)",
       100, gemmGeometry},
      {"b6", "CuTeDSL 1-CTA warp specialization, accumulator pipeline, try_wait peeking", 100,
       gemmGeometry},
  };
}

} // namespace runner
} // namespace wsv
