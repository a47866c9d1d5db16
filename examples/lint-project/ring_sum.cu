// ring_sum: sums tiles of a vector, one tile per iteration, through a two-stage ring.
//
// Protocol:
//   roles     producer = warp 0, lane 0 (1 thread); consumers = warps 1..4 (128 threads)
//   barriers  full[2]  init 1: the producer's arrive.expect_tx, completed by the bulk copy's
//                      TILE_BYTES
//             empty[2] init 4: one arrival per consumer warp, after the warp read the stage
//   parities  producer waits empty[s] from parity 1 (the first round passes: the stage is
//             free); consumers wait full[s] from parity 0; both flip when s wraps
#include <cstdint>

#ifndef SEED_BUG
#define SEED_BUG 0
#endif

constexpr uint32_t STAGES = 2;
constexpr uint32_t TILE = 1024;                    // floats per tile
constexpr uint32_t TILE_BYTES = TILE * sizeof(float);
constexpr uint32_t CONSUMER_WARPS = 4;

__device__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// A 1-D bulk copy global -> shared that completes `bytes` on the barrier.
__device__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

__global__ void __launch_bounds__(160) ring_sum(const float* in, float* out, uint32_t tiles) {
  __shared__ alignas(128) float stage[STAGES][TILE];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      mbarrier_init(smem_u32(&full[s]), 1);
      mbarrier_init(smem_u32(&empty[s]), CONSUMER_WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warp == 0) {
    if (lane == 0) {
      for (uint32_t i = 0; i < tiles; ++i) {
        const uint32_t s = i % STAGES;
        // BUG(mbarrier-initial-phase): SEED_BUG starts the producer at parity 0, like the
        // consumers, so it waits for a release that never comes
        const uint32_t parity = ((i / STAGES) & 1) ^ (SEED_BUG ? 0u : 1u);
        mbarrier_wait(smem_u32(&empty[s]), parity);
        mbarrier_arrive_expect_tx(smem_u32(&full[s]), TILE_BYTES);
        bulk_load(smem_u32(stage[s]), in + size_t(i) * TILE, TILE_BYTES, smem_u32(&full[s]));
      }
    }
  } else {
    float acc = 0.f;
    for (uint32_t i = 0; i < tiles; ++i) {
      const uint32_t s = i % STAGES;
      mbarrier_wait(smem_u32(&full[s]), (i / STAGES) & 1);
      const uint32_t t = threadIdx.x - 32;
#pragma unroll
      for (uint32_t j = 0; j < TILE / (32 * CONSUMER_WARPS); ++j)
        acc += stage[s][j * 32 * CONSUMER_WARPS + t];
      __syncwarp();  // every lane of the warp is done with the stage before it is released
      if (lane == 0)
        mbarrier_arrive(smem_u32(&empty[s]));
    }
    out[blockIdx.x * 32 * CONSUMER_WARPS + threadIdx.x - 32] = acc;
  }
}
