// P1 - persistent producer/consumer: a static tile scheduler in a .func, and a pipeline state
// that wraps with a compare and runs on across tiles.
//
// Protocol
//   roles     consumer = warps 0-3 (tid 0-127); producer = warp 4 (tid 128-159), elected lane.
//   schedule  64 x 64 output tiles, tile = blockIdx.x, then next_tile() = + gridDim.x while
//             tile < (M / 64) * (N / 64); next_tile is __noinline__ (a .func call in PTX).
//   full[s]   3 stages, init 1: the producer's arrive.expect_tx(8192) and two 4096 B TMA loads.
//   empty[s]  init 4: lane 0 of each consumer warp arrives once it has read the stage.
//   phases    one PipelineState {index, phase} per role, never reset at a tile boundary:
//             index = index + 1 == 3 ? 0 : index + 1, phase flips when it wraps. The producer
//             starts at (0, 1) on empty, the consumer at (0, 0) on full.
//   trips     per tile K / 32 k-tiles in both roles.
#include "protocol_test.cuh"

using namespace ptest;

namespace {

constexpr uint32_t STAGES = 3, TILE = 64, TILE_K = 32;
constexpr uint32_t TILE_BYTES = TILE * TILE_K * 2;

struct PipelineState {
  uint32_t index, phase;
  __device__ void advance() {
    if (++index == STAGES) {
      index = 0;
      phase ^= 1;
    }
  }
};

__device__ __noinline__ uint32_t next_tile(uint32_t tile) { return tile + gridDim.x; }

}  // namespace

extern "C" __global__ void __launch_bounds__(160, 1)
    p1_persistent(const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b, float* out, uint32_t m, uint32_t n,
                  uint32_t k) {
  __shared__ alignas(128) uint8_t tiles[STAGES][2][TILE_BYTES];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t k_tiles = k / TILE_K, tiles_n = n / TILE, num_tiles = (m / TILE) * tiles_n;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);
      bar_init(smem_addr(&empty[s]), 4);
    }
    fence_bar_init();
  }
  __syncthreads();

  if (warp == 4) {
    if (elect_leader()) {
      PipelineState st{0, 1};
      for (uint32_t tile = blockIdx.x; tile < num_tiles; tile = next_tile(tile)) {
        for (uint32_t kt = 0; kt < k_tiles; ++kt) {
          bar_wait(smem_addr(&empty[st.index]), st.phase);
          const uint32_t bar = smem_addr(&full[st.index]);
          bar_arrive_expect_tx(bar, 2 * TILE_BYTES);
          tma_load(smem_addr(tiles[st.index][0]), &tmap_a, bar, kt * TILE_K, (tile / tiles_n) * TILE);
          tma_load(smem_addr(tiles[st.index][1]), &tmap_b, bar, kt * TILE_K, (tile % tiles_n) * TILE);
          st.advance();
        }
      }
    }
    return;
  }

  PipelineState st{0, 0};
  for (uint32_t tile = blockIdx.x; tile < num_tiles; tile = next_tile(tile)) {
    float acc = 0.f;
    for (uint32_t kt = 0; kt < k_tiles; ++kt) {
      bar_wait(smem_addr(&full[st.index]), st.phase);
      acc += reinterpret_cast<const float*>(tiles[st.index][0])[threadIdx.x] *
             reinterpret_cast<const float*>(tiles[st.index][1])[threadIdx.x];
      __syncwarp();
      if (lane == 0) bar_arrive(smem_addr(&empty[st.index]));
      st.advance();
    }
    out[tile * 128 + threadIdx.x] = acc;
  }
}
