// P2 - consumers that pre-arrive on every empty slot, a producer whose first k-tile is peeled
// out of its loop, and stage counters that wrap with a mask.
//
// Protocol
//   roles     consumer = warps 0-3 (tid 0-127); producer = tid 128 alone (warp 4's lane 0).
//   full[s]   4 stages, init 1: the producer's arrive.expect_tx(8192) and two 4096 B TMA loads.
//   empty[s]  init 1: consumer thread 0 arrives on every slot once before its loop (every slot
//             starts free: phase 0 completes at once), then after the consumers have read a
//             k-tile (bar.sync 1, 128 first).
//   phases    stage = (stage + 1) & 3, phase ^= (stage == 0). The producer issues k-tile 0
//             before its loop without waiting; for k-tile i >= 1 it waits empty[i % 4] for
//             parity (i / 4) & 1, starting at 0 (the pre-arrivals completed phase 0). The
//             consumer waits full[i % 4] for parity (i / 4) & 1.
//   trips     the producer waits K / 32 - 1 times, the consumer K / 32 (K >= 64).
#include "protocol_test.cuh"

using namespace ptest;

namespace {
constexpr uint32_t STAGES = 4, TILE = 64, TILE_K = 32;
constexpr uint32_t TILE_BYTES = TILE * TILE_K * 2;
}  // namespace

extern "C" __global__ void __launch_bounds__(160, 1)
    p2_peeled(const __grid_constant__ CUtensorMap tmap_a,
              const __grid_constant__ CUtensorMap tmap_b, float* out, uint32_t k) {
  __shared__ alignas(128) uint8_t tiles[STAGES][2][TILE_BYTES];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const uint32_t k_tiles = k / TILE_K;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);
      bar_init(smem_addr(&empty[s]), 1);
    }
    fence_bar_init();
  }
  __syncthreads();

  if (threadIdx.x == 128) {
    // k-tile 0: every slot is free, nothing to wait for.
    bar_arrive_expect_tx(smem_addr(&full[0]), 2 * TILE_BYTES);
    tma_load(smem_addr(tiles[0][0]), &tmap_a, smem_addr(&full[0]), 0, blockIdx.x * TILE);
    tma_load(smem_addr(tiles[0][1]), &tmap_b, smem_addr(&full[0]), 0, blockIdx.y * TILE);
    uint32_t stage = 1, phase = 0;
    for (uint32_t kt = 1; kt < k_tiles; ++kt) {
      bar_wait_asm(smem_addr(&empty[stage]), phase);
      const uint32_t bar = smem_addr(&full[stage]);
      bar_arrive_expect_tx(bar, 2 * TILE_BYTES);
      tma_load(smem_addr(tiles[stage][0]), &tmap_a, bar, kt * TILE_K, blockIdx.x * TILE);
      tma_load(smem_addr(tiles[stage][1]), &tmap_b, bar, kt * TILE_K, blockIdx.y * TILE);
      stage = (stage + 1) & (STAGES - 1);
      phase ^= stage == 0;
    }
  } else if (threadIdx.x < 128) {
    if (threadIdx.x == 0)
      for (uint32_t s = 0; s < STAGES; ++s) bar_arrive(smem_addr(&empty[s]));
    uint32_t stage = 0, phase = 0;
    float acc = 0.f;
    for (uint32_t kt = 0; kt < k_tiles; ++kt) {
      bar_wait_asm(smem_addr(&full[stage]), phase);
      acc += reinterpret_cast<const float*>(tiles[stage][0])[threadIdx.x];
      asm volatile("bar.sync 1, 128;" ::: "memory");
      if (threadIdx.x == 0) bar_arrive(smem_addr(&empty[stage]));
      stage = (stage + 1) & (STAGES - 1);
      phase ^= stage == 0;
    }
    out[blockIdx.x * 128 + threadIdx.x] = acc;
  }
}
