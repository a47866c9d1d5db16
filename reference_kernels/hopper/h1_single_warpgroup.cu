// H1: one warpgroup does everything: thread 0 prefills a 4-stage TMA ring and refills each stage
// once the warpgroup's wgmma has read it (Tilus V2, TIRx Step 5: the pipeline before warp
// specialization).
//
// Protocol
//   roles     warpgroup = threads 0-127; thread 0 also issues every TMA load.
//   tile      128 x 128 of D per CTA (blockIdx.x: M tile, blockIdx.y: N tile), K in steps of 64,
//             a 4-stage ring of A (128 x 64) and B (128 x 64), 32 KiB per stage.
//   full[s]   init 1: thread 0's arrive.expect_tx(32768) plus the bytes of both TMA loads.
//   prefill   k-tiles 0..3 into stages 0..3 before the loop.
//   loop      k-tile i: everyone waits full[i % 4] for parity (i / 4) & 1; 8 wgmma m64n128k16;
//             commit; wait_group 0; bar.sync 1, 128 (every warp is done reading the stage); then
//             thread 0 refills the stage with k-tile i + 4.
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_bug.h"
#include "wsv_check.cuh"

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 128, TILE_N = 128, TILE_K = 64, STAGES = 4;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t THREADS = 128;
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + STAGES * 8;
constexpr uint32_t BAR_STAGE_FREE = 1;  // named barrier: the warpgroup finished reading a stage

enum role : uint32_t { ROLE_WARPGROUP };
enum barrier : uint32_t { BAR_FULL };

// BUG(mbarrier-tx-bytes): the expected bytes count the B tile twice
constexpr uint32_t EXPECT_BYTES = wsv_bug("mbarrier-tx-bytes") ? A_BYTES + 2 * B_BYTES : STAGE_BYTES;

template <elem E>
__device__ __forceinline__ void h1_gemm(const void* tma_a, const void* tma_b, const void*,
                                        uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {
  extern __shared__ uint8_t smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;  // 128B swizzle atoms: 1 KiB aligned
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto a_tile = [=](uint32_t s) { return base + s * STAGE_BYTES; };
  auto b_tile = [=](uint32_t s) { return base + s * STAGE_BYTES + A_BYTES; };
  auto full = [=](uint32_t s) { return bars + 8 * s; };
  const uint32_t k_tiles = k / TILE_K;
  auto load = [&](uint32_t i) {
    const uint32_t s = i % STAGES;
    mbarrier_arrive_expect_tx(full(s), EXPECT_BYTES);
    tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, blockIdx.x * TILE_M);
    tma_load_2d(b_tile(s), tma_b, full(s), i * TILE_K, blockIdx.y * TILE_N);
  };

  check_init();
  if (threadIdx.x == 0) {
    if constexpr (!wsv_bug("mbarrier-init-visibility")) {
      for (uint32_t s = 0; s < STAGES; ++s) mbarrier_init(full(s), 1);
      fence_mbarrier_init();
    }
    for (uint32_t i = 0; i < STAGES && i < k_tiles; ++i) load(i);
    if constexpr (wsv_bug("mbarrier-init-visibility")) {
      // BUG(mbarrier-init-visibility): the barriers are initialized after the prefill used them;
      // init resets the pending count and drops the prefill's arrivals
      for (uint32_t s = 0; s < STAGES; ++s) mbarrier_init(full(s), 1);
      fence_mbarrier_init();
    }
  }
  __syncthreads();

  float acc[2][64];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[h][j] = 0.f;

  for (uint32_t i = 0; i < k_tiles; ++i) {
    const uint32_t s = i % STAGES, round = i / STAGES;
    // BUG(smem-raw-wait): the first k-tile is read without waiting for its fill
    if (!wsv_bug("smem-raw-wait") || i > 0)
      mbarrier_wait_at(full(s), round & 1, {ROLE_WARPGROUP, BAR_FULL, s, i});
    // BUG(aligned-divergent): warp 3 skips the warpgroup-wide wgmma sequence
    if (!wsv_bug("aligned-divergent") || threadIdx.x / 32 < 3) {
      wgmma_fence_operands(acc[0]);
      wgmma_fence_operands(acc[1]);
      wgmma_fence();
#pragma unroll
      for (uint32_t kk = 0; kk < TILE_K / 16; ++kk) {
        const uint64_t db = wgmma_desc_sw128(b_tile(s) + 32 * kk);
        wgmma_m64n128k16<E>(acc[0], wgmma_desc_sw128(a_tile(s) + 32 * kk), db, 1);
        wgmma_m64n128k16<E>(acc[1], wgmma_desc_sw128(a_tile(s) + 64 * 128 + 32 * kk), db, 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
      wgmma_fence_operands(acc[0]);
      wgmma_fence_operands(acc[1]);
    }
    named_barrier_sync_at(BAR_STAGE_FREE, THREADS, {ROLE_WARPGROUP, 0, BAR_STAGE_FREE, i});
    if (threadIdx.x == 0 && i + STAGES < k_tiles) load(i + STAGES);
  }

  const uint32_t row0 = blockIdx.x * TILE_M, col0 = blockIdx.y * TILE_N;
  store_fragment<E, 128>(acc[0], d, n, row0, col0, threadIdx.x);
  store_fragment<E, 128>(acc[1], d, n, row0 + 64, col0, threadIdx.x);
}

}  // namespace

WSV_GEMM_ENTRIES(h1, h1_gemm, THREADS)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, /*ClusterM=*/1,
                SMEM_BYTES, /*Persistent=*/0, /*BoxARows=*/TILE_M, /*BoxBRows=*/TILE_N,
                /*BoxDRows=*/0, /*BoxDCols=*/0, WSV_TENSOR_MAPS, /*MinKTiles=*/1, "warpgroup",
                "full");
