// H3: a producer warpgroup and two consumer warpgroups that share each B tile, with setmaxnreg
// moving registers from the producer to the consumers (TIRx Step 9's multi-consumer shape on
// Hopper: wgmma m64n256k16 per consumer).
//
// Protocol
//   roles     producer = warpgroup 0 (setmaxnreg.dec 40; warp 0's elected lane issues TMA);
//             consumer0, consumer1 = warpgroups 1 and 2 (setmaxnreg.inc 232).
//   tile      128 x 256 of D per CTA (blockIdx.x: M tile, blockIdx.y: N tile), K in steps of 64;
//             a 4-stage ring of A (128 x 64: consumer c reads rows 64c..64c+63) and B (256 x 64,
//             read by both), 48 KiB per stage.
//   full[s]   init 1: the producer's arrive.expect_tx(49152) plus the bytes of both loads.
//   empty[s]  init 2: one arrival per consumer warpgroup (its thread 0), after wait_group shows
//             that the wgmma group reading stage s completed.
//   phases    k-tile i: stage i % 4, round i / 4; producer waits empty for parity
//             ((i / 4) & 1) ^ 1, consumers wait full for parity (i / 4) & 1.
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_bug.h"
#include "wsv_check.cuh"

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 128, TILE_N = 256, TILE_K = 64, STAGES = 4, CONSUMERS = 2;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t THREADS = 128 * (1 + CONSUMERS);
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + 2 * STAGES * 8;

// BUG(mbarrier-arrival-count): empty[] expects every consumer thread, but one thread per
// consumer warpgroup arrives
constexpr uint32_t EMPTY_ARRIVALS = wsv_bug("mbarrier-arrival-count") ? 128 * CONSUMERS : CONSUMERS;

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER0, ROLE_CONSUMER1 };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

template <elem E>
__device__ __forceinline__ void h3_gemm(const void* tma_a, const void* tma_b, const void*,
                                        uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {
  extern __shared__ uint8_t smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;  // 128B swizzle atoms: 1 KiB aligned
  const uint32_t bars = base + STAGES * STAGE_BYTES;
  auto a_tile = [=](uint32_t s) { return base + s * STAGE_BYTES; };
  auto b_tile = [=](uint32_t s) { return base + s * STAGE_BYTES + A_BYTES; };
  auto full = [=](uint32_t s) { return bars + 8 * s; };
  auto empty = [=](uint32_t s) { return bars + 8 * (STAGES + s); };
  const uint32_t k_tiles = k / TILE_K;
  const uint32_t wg = threadIdx.x / 128, wg_thread = threadIdx.x % 128;

  check_init();
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), 1);
      mbarrier_init(empty(s), EMPTY_ARRIVALS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // BUG(setmaxnreg-nonuniform): the last producer warp keeps its registers, so the pool never
    // holds what the consumers' setmaxnreg.inc asks for
    if (!wsv_bug("setmaxnreg-nonuniform") || threadIdx.x / 32 != 3) setmaxnreg_dec<40>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      for (uint32_t i = 0; i < k_tiles; ++i) {
        const uint32_t s = i % STAGES, round = i / STAGES;
        mbarrier_wait_at(empty(s), (round & 1) ^ 1, {ROLE_PRODUCER, BAR_EMPTY, s, i});
        mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
        tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, blockIdx.x * TILE_M);
        tma_load_2d(b_tile(s), tma_b, full(s), i * TILE_K, blockIdx.y * TILE_N);
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const uint32_t c = wg - 1;
    const uint32_t me = ROLE_CONSUMER0 + c;
    float acc[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) acc[j] = 0.f;
    for (uint32_t i = 0; i < k_tiles; ++i) {
      const uint32_t s = i % STAGES, round = i / STAGES;
      mbarrier_wait_at(full(s), round & 1, {me, BAR_FULL, s, i});
      if constexpr (wsv_bug("smem-war-release")) {
        // BUG(smem-war-release): the stage is released before the wgmma that reads it is issued
        if (wg_thread == 0) mbarrier_arrive(empty(s));
      }
      wgmma_fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (uint32_t kk = 0; kk < TILE_K / 16; ++kk)
        wgmma_m64n256k16<E>(acc, wgmma_desc_sw128(a_tile(s) + c * 64 * 128 + 32 * kk),
                            wgmma_desc_sw128(b_tile(s) + 32 * kk), 1);
      wgmma_commit();
      wgmma_wait<1>();
      if (!wsv_bug("smem-war-release") && i > 0 && wg_thread == 0)
        mbarrier_arrive(empty((i - 1) % STAGES));
    }
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
    if (!wsv_bug("smem-war-release") && wg_thread == 0) mbarrier_arrive(empty((k_tiles - 1) % STAGES));
    store_fragment<E, 256>(acc, d, n, blockIdx.x * TILE_M + 64 * c, blockIdx.y * TILE_N, wg_thread);
  }
}

}  // namespace

WSV_GEMM_ENTRIES(h3, h3_gemm, THREADS)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, /*ClusterM=*/1,
                SMEM_BYTES, /*Persistent=*/0, /*BoxARows=*/TILE_M, /*BoxBRows=*/TILE_N,
                /*BoxDRows=*/0, /*BoxDCols=*/0, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer0,consumer1", "full,empty");
