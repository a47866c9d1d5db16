// P3 - a fixed number of k-tiles and fully unrolled loops: every stage index and parity is a
// constant in the PTX.
//
// Protocol
//   roles     consumer = warps 0-3 (tid 0-127); producer = warp 4 (tid 128-159), elected lane.
//   full[s]   2 stages, init 1: the producer's arrive.expect_tx(8192) and two 4096 B loads.
//   empty[s]  init 1: consumer thread 0 arrives once the warpgroup has read the stage.
//   phases    k-tile i uses stage i % 2; the producer waits empty for ((i / 2) & 1) ^ 1, the
//             consumer waits full for (i / 2) & 1.
//   trips     K_TILES = 8 k-tiles in both roles, whatever K is.
#include "protocol_test.cuh"

using namespace ptest;

namespace {
constexpr uint32_t STAGES = 2, K_TILES = 8, TILE = 64, TILE_K = 32;
constexpr uint32_t TILE_BYTES = TILE * TILE_K * 2;
}  // namespace

extern "C" __global__ void __launch_bounds__(160, 1)
    p3_unrolled(const __grid_constant__ CUtensorMap tmap_a,
                const __grid_constant__ CUtensorMap tmap_b, float* out) {
  __shared__ alignas(128) uint8_t tiles[STAGES][2][TILE_BYTES];
  __shared__ uint64_t full[STAGES], empty[STAGES];

  if (threadIdx.x == 0) {
#pragma unroll
    for (uint32_t s = 0; s < STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);
      bar_init(smem_addr(&empty[s]), 1);
    }
    fence_bar_init();
  }
  __syncthreads();

  if (threadIdx.x / 32 == 4) {
    if (elect_leader()) {
#pragma unroll
      for (uint32_t kt = 0; kt < K_TILES; ++kt) {
        const uint32_t s = kt % STAGES, parity = ((kt / STAGES) & 1) ^ 1;
        bar_wait(smem_addr(&empty[s]), parity);
        bar_arrive_expect_tx(smem_addr(&full[s]), 2 * TILE_BYTES);
        tma_load(smem_addr(tiles[s][0]), &tmap_a, smem_addr(&full[s]), kt * TILE_K, blockIdx.x * TILE);
        tma_load(smem_addr(tiles[s][1]), &tmap_b, smem_addr(&full[s]), kt * TILE_K, blockIdx.y * TILE);
      }
    }
    return;
  }

  float acc = 0.f;
#pragma unroll
  for (uint32_t kt = 0; kt < K_TILES; ++kt) {
    const uint32_t s = kt % STAGES;
    bar_wait(smem_addr(&full[s]), (kt / STAGES) & 1);
    acc += reinterpret_cast<const float*>(tiles[s][1])[threadIdx.x];
    asm volatile("bar.sync 1, 128;" ::: "memory");
    if (threadIdx.x == 0) bar_arrive(smem_addr(&empty[s]));
  }
  out[blockIdx.x * 128 + threadIdx.x] = acc;
}
