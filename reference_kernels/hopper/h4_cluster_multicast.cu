// H4: H3's roles in a 2-CTA cluster. The two CTAs compute vertically adjacent 128 x 256 tiles
// that share one B tile: each loads its own A and half of B, multicasting that half into both
// CTAs, so every stage of either CTA is written by both producers (TIRx Step 8's cluster
// contract, on Hopper with TMA multicast).
//
// Protocol
//   cluster   2 CTAs along M (blockIdx.x = 2 * cluster + rank); rank r loads B rows
//             [128r, 128r + 128) of the tile and multicasts them (ctaMask 0b11).
//   roles     producer = warpgroup 0 (setmaxnreg.dec 40; warp 0's elected lane issues TMA);
//             consumer0, consumer1 = warpgroups 1 and 2 (setmaxnreg.inc 232).
//   full[s]   init 1: the local producer's arrive.expect_tx(49152) = A (16 KiB) + both B halves
//             (2 x 16 KiB, one from each CTA's multicast).
//   empty[s]  init 4 = 2 consumers x 2 CTAs: each consumer's thread 0 arrives on empty[s] of
//             both CTAs (mapa + remote arrive), since either producer overwrites stage s in both.
//   phases    as H3: stage i % 4; producer waits empty parity ((i / 4) & 1) ^ 1, consumers wait
//             full parity (i / 4) & 1.
//   cluster   barrier.cluster after the inits (no multicast or remote arrive may reach a barrier
//             before it is initialized) and before exit (no CTA leaves while its peer may still
//             arrive on its barriers or write its shared memory).
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_bug.h"
#include "wsv_check.cuh"

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 128, TILE_N = 256, TILE_K = 64, STAGES = 4, CONSUMERS = 2;
constexpr uint32_t CLUSTER = 2;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t B_HALF_ROWS = TILE_N / CLUSTER;
constexpr uint32_t B_HALF_BYTES = B_BYTES / CLUSTER;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t THREADS = 128 * (1 + CONSUMERS);
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + 2 * STAGES * 8;
// BUG(cluster-multicast-mask): the mask is built for a 3-CTA cluster; bit 2 names no CTA
constexpr uint16_t MULTICAST_MASK = wsv_bug("cluster-multicast-mask") ? 0b111 : 0b11;

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER0, ROLE_CONSUMER1 };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

template <elem E>
__device__ __forceinline__ void h4_gemm(const void* tma_a, const void* tma_b, const void*,
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
  const uint32_t rank = cluster_ctarank();

  check_init();
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), 1);
      mbarrier_init(empty(s), CONSUMERS * CLUSTER);
    }
    fence_mbarrier_init();
  }
  cluster_sync();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      for (uint32_t i = 0; i < k_tiles; ++i) {
        const uint32_t s = i % STAGES, round = i / STAGES;
        mbarrier_wait_at(empty(s), (round & 1) ^ 1, {ROLE_PRODUCER, BAR_EMPTY, s, i});
        mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
        tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, blockIdx.x * TILE_M);
        tma_load_2d_multicast(b_tile(s) + rank * B_HALF_BYTES, tma_b, full(s), i * TILE_K,
                              blockIdx.y * TILE_N + rank * B_HALF_ROWS, MULTICAST_MASK);
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const uint32_t c = wg - 1;
    const uint32_t me = ROLE_CONSUMER0 + c;
    auto release = [&](uint32_t s) {
      if (wg_thread == 0)
        for (uint32_t r = 0; r < CLUSTER; ++r) mbarrier_arrive_remote(empty(s), r);
    };
    float acc[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) acc[j] = 0.f;
    for (uint32_t i = 0; i < k_tiles; ++i) {
      const uint32_t s = i % STAGES, round = i / STAGES;
      mbarrier_wait_at(full(s), round & 1, {me, BAR_FULL, s, i});
      wgmma_fence_operands(acc);
      wgmma_fence();
#pragma unroll
      for (uint32_t kk = 0; kk < TILE_K / 16; ++kk)
        wgmma_m64n256k16<E>(acc, wgmma_desc_sw128(a_tile(s) + c * 64 * 128 + 32 * kk),
                            wgmma_desc_sw128(b_tile(s) + 32 * kk), 1);
      wgmma_commit();
      wgmma_wait<1>();
      if (i > 0) release((i - 1) % STAGES);
    }
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
    release((k_tiles - 1) % STAGES);
    store_fragment<E, 256>(acc, d, n, blockIdx.x * TILE_M + 64 * c, blockIdx.y * TILE_N, wg_thread);
  }
  // BUG(cluster-exit-early): no cluster barrier before exit; a CTA may leave while its peer still
  // arrives on its empty barriers
  if constexpr (!wsv_bug("cluster-exit-early")) cluster_sync();
}

}  // namespace

WSV_GEMM_CLUSTER_ENTRIES(h4, h4_gemm, THREADS, 2)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, CLUSTER,
                SMEM_BYTES, /*Persistent=*/0, /*BoxARows=*/TILE_M, /*BoxBRows=*/B_HALF_ROWS,
                /*BoxDRows=*/0, /*BoxDCols=*/0, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer0,consumer1", "full,empty");
