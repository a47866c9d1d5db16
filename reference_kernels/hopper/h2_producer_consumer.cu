// H2: one TMA producer warp + one consumer warpgroup talking through full/empty barriers
// (Tilus V3, CuTeDSL 1-CTA warp specialization, the SM90 producer/consumer notes).
//
// Protocol
//   roles     consumer = warps 0-3 (one warpgroup); producer = warp 4, one elected lane.
//   tile      128 x 128 of D per CTA (blockIdx.x: M tile, blockIdx.y: N tile), K in steps of 64,
//             a 4-stage ring of A (128 x 64) and B (128 x 64), 32 KiB per stage.
//   full[s]   init 1: the producer's arrive.expect_tx(32768) plus the bytes of both TMA loads.
//   empty[s]  init 1: thread 0 arrives once the wgmma group that read stage s has completed.
//   phases    k-tile i uses stage s = i % 4 and round r = i / 4. The producer waits
//             empty[s] for parity (r & 1) ^ 1 (it starts at 1: on the first round every stage is
//             free); the consumer waits full[s] for parity r & 1 (it starts at 0).
//   consumer  wait full[s]; 8 wgmma m64n128k16; commit; wait_group 1 (the previous group is
//             done) and release its stage; after the loop wait_group 0, release, store D.
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
constexpr uint32_t THREADS = 160;
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + 2 * STAGES * 8;

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

template <elem E>
__device__ __forceinline__ void h2_gemm(const void* tma_a, const void* tma_b, const void*,
                                        uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {
  extern __shared__ uint8_t smem[];
  // 128-byte swizzled tiles must start on 1024-byte boundaries.
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto a_tile = [=](uint32_t s) { return base + s * STAGE_BYTES; };
  auto b_tile = [=](uint32_t s) { return base + s * STAGE_BYTES + A_BYTES; };
  auto full = [=](uint32_t s) { return bars + 8 * s; };
  auto empty = [=](uint32_t s) { return bars + 8 * (STAGES + s); };
  const uint32_t k_tiles = k / TILE_K;
  const uint32_t warp = threadIdx.x / 32;

  check_init();
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), 1);
      mbarrier_init(empty(s), 1);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (warp == 4) {
    if (elect_one_sync()) {
      // BUG(mbarrier-trip-count): the producer loads one k-tile fewer than the consumer waits for
      const uint32_t loads = wsv_bug("mbarrier-trip-count") ? k_tiles - 1 : k_tiles;
      for (uint32_t i = 0; i < loads; ++i) {
        const uint32_t s = i % STAGES, round = i / STAGES;
        // BUG(mbarrier-initial-phase): the producer starts at parity 0, like the consumer
        const uint32_t parity = wsv_bug("mbarrier-initial-phase") ? round & 1 : (round & 1) ^ 1;
        mbarrier_wait_at(empty(s), parity, {ROLE_PRODUCER, BAR_EMPTY, s, i});
        mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
        tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, blockIdx.x * TILE_M);
        tma_load_2d(b_tile(s), tma_b, full(s), i * TILE_K, blockIdx.y * TILE_N);
      }
    }
    return;
  }

  float acc[2][64];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[h][j] = 0.f;

  for (uint32_t i = 0; i < k_tiles; ++i) {
    const uint32_t s = i % STAGES, round = i / STAGES;
    mbarrier_wait_at(full(s), round & 1, {ROLE_CONSUMER, BAR_FULL, s, i});
    if constexpr (wsv_bug("barrier-divergent")) {
      // BUG(barrier-divergent): a CTA-wide barrier inside the consumer branch; the producer warp
      // never reaches it
      __syncthreads();
    }
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
    wgmma_wait<1>();
    // BUG(mbarrier-no-arriver): the consumer never releases a stage, so nothing completes empty[]
    if (!wsv_bug("mbarrier-no-arriver") && i > 0 && threadIdx.x == 0)
      mbarrier_arrive(empty((i - 1) % STAGES));
  }
  // BUG(accumulator-early-read): the epilogue reads the accumulators without waiting for the last
  // wgmma group
  if constexpr (!wsv_bug("accumulator-early-read")) wgmma_wait<0>();
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  if (!wsv_bug("mbarrier-no-arriver") && threadIdx.x == 0)
    mbarrier_arrive(empty((k_tiles - 1) % STAGES));

  const uint32_t row0 = blockIdx.x * TILE_M, col0 = blockIdx.y * TILE_N;
  store_fragment<E, 128>(acc[0], d, n, row0, col0, threadIdx.x);
  store_fragment<E, 128>(acc[1], d, n, row0 + 64, col0, threadIdx.x);
}

}  // namespace

WSV_GEMM_ENTRIES(h2, h2_gemm, THREADS)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, /*ClusterM=*/1,
                SMEM_BYTES, /*Persistent=*/0, /*BoxARows=*/TILE_M, /*BoxBRows=*/TILE_N,
                /*BoxDRows=*/0, /*BoxDCols=*/0, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer", "full,empty");
