// P4 - synchronization inside .func calls (__noinline__ functions that take the barrier's
// address), elect.sync leaders in every consumer warp, a stage counter that wraps with %, and a
// named barrier among the consumers.
//
// Protocol
//   roles     consumer = warps 0-1 (tid 0-63); producer = warp 2 (tid 64-95), elected lane.
//   full[s]   3 stages, init 1: the producer's arrive.expect_tx(8192) and two 4096 B loads.
//   empty[s]  init 2: one elected lane of each consumer warp arrives (release(), a .func).
//   phases    stage = (stage + 1) % 3 and the phase flips when it returns to 0; the producer
//             starts at (0, 1) on empty, the consumer at (0, 0) on full; both wait in wait(),
//             a .func.
//   named     the consumers sync bar.sync 1, 64 before releasing a stage.
//   trips     K / 32 k-tiles in both roles.
#include "protocol_test.cuh"

using namespace ptest;

namespace {

constexpr uint32_t STAGES = 3, TILE = 64, TILE_K = 32;
constexpr uint32_t TILE_BYTES = TILE * TILE_K * 2;

__device__ __noinline__ void wait(uint32_t bar, uint32_t parity) { bar_wait(bar, parity); }
__device__ __noinline__ void release(uint32_t bar) { bar_arrive(bar); }

}  // namespace

extern "C" __global__ void __launch_bounds__(96, 1)
    p4_funcs(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
             float* out, uint32_t k) {
  __shared__ alignas(128) uint8_t tiles[STAGES][2][TILE_BYTES];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const uint32_t k_tiles = k / TILE_K;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);
      bar_init(smem_addr(&empty[s]), 2);
    }
    fence_bar_init();
  }
  __syncthreads();

  uint32_t stage = 0;
  if (threadIdx.x / 32 == 2) {
    if (elect_leader()) {
      uint32_t phase = 1;
      for (uint32_t kt = 0; kt < k_tiles; ++kt) {
        wait(smem_addr(&empty[stage]), phase);
        const uint32_t bar = smem_addr(&full[stage]);
        bar_arrive_expect_tx(bar, 2 * TILE_BYTES);
        tma_load(smem_addr(tiles[stage][0]), &tmap_a, bar, kt * TILE_K, blockIdx.x * TILE);
        tma_load(smem_addr(tiles[stage][1]), &tmap_b, bar, kt * TILE_K, blockIdx.y * TILE);
        stage = (stage + 1) % STAGES;
        if (stage == 0) phase ^= 1;
      }
    }
    return;
  }

  uint32_t phase = 0;
  float acc = 0.f;
  for (uint32_t kt = 0; kt < k_tiles; ++kt) {
    wait(smem_addr(&full[stage]), phase);
    acc += reinterpret_cast<const float*>(tiles[stage][0])[threadIdx.x];
    asm volatile("bar.sync 1, 64;" ::: "memory");
    if (elect_leader()) release(smem_addr(&empty[stage]));
    stage = (stage + 1) % STAGES;
    if (stage == 0) phase ^= 1;
  }
  out[blockIdx.x * 64 + threadIdx.x] = acc;
}
