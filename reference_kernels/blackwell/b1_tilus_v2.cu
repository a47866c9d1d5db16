// B1 - Tilus Blackwell matmul V2: multi-stage software pipeline, one warp issues both TMA and MMA
// (seed 002, "BlackwellMatmulV2").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), fp16 (the seed's type) or bf16 in and out, fp32
// accumulator in TMEM.
// Grid (M/128, N/128), 128 threads (4 warps), one 128 x 128 output tile per CTA.
//
// Roles (warp_id = tid / 32)
//   warp 0 (tid 0-31)   TMA + MMA: the whole warp waits on the barriers; one elected lane issues
//                       arrive.expect_tx, the two TMA loads, a k-tile's 4 UMMAs, tcgen05.commit
//   warps 1-3 (32-127)  no work in the main loop, but every iteration ends in cta_sync for all 4
//   all 128 threads     epilogue; warp 0 (all lanes) allocates and deallocates 128 TMEM columns
// Barriers (init count: who arrives, per phase)
//   tma_barriers[4]  1  leader's arrive.expect_tx 32768 B; TMA complete_tx A 16384 B + B 16384 B
//   mma_barrier      1  tcgen05.commit after the k-tile's UMMAs
// Stages and phases (STAGES = 4)
//   prefill: k-tiles 0 .. STAGES-2 into stages 0 .. STAGES-2, no waits
//   iteration k = 0 .. K_TILES-1: preload k-tile k+STAGES-1 into preload_stage (only while it
//   exists: the seed also loads past the end and never waits for those loads, which would leave
//   TMA writes in flight when the CTA exits), wait tma_barriers[current_stage] with tma_phase
//   (starts 0, flips when current_stage wraps to 0), UMMAs, commit, wait mma_barrier with
//   mma_phase (starts 0, flips every iteration), cta_sync.
// Trip counts: K_TILES = K / 64 loads and K_TILES waits on the TMA barriers; K_TILES cta_syncs in
//   every warp.
// Epilogue, per 64-column slice (E_BLOCK_N = 64; the seed tunes it in [16, 64]): tcgen05.ld +
//   wait::ld, st.shared into s_c (128 x 64, 128 B swizzle), fence.proxy.async, cta_sync, tid 0
//   TMA store + commit_group + wait_group.read 0, cta_sync. Then cta_sync and warp 0 deallocates.
#include <cuda.h>

#include "epilogue.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b1 {
using namespace wsv;
constexpr uint32_t BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 64;
constexpr uint32_t STAGES = 4;
constexpr uint32_t E_BLOCK_N = 64;  // one 128 B swizzle row of 16-bit elements
constexpr uint32_t kThreads = 128;
constexpr uint32_t kTmemCols = BLOCK_N;  // fp32 accumulator: one column per output column
constexpr uint32_t kBytesA = BLOCK_M * BLOCK_K * 2;  // s_a[stage].nbytes = 16384
constexpr uint32_t kBytesB = BLOCK_N * BLOCK_K * 2;  // s_b[stage].nbytes = 16384
// Dynamic shared memory, 1024 B aligned, all in the 128 B swizzle: s_a[STAGES], s_b[STAGES], s_c.
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + STAGES * kBytesA;
constexpr uint32_t kSmemC = kSmemB + STAGES * kBytesB;
constexpr uint32_t kSmemBytes = kSmemC + BLOCK_M * E_BLOCK_N * 2;  // 147456
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b1

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b1::BLOCK_M, /*TileN=*/b1::BLOCK_N,
    /*TileK=*/b1::BLOCK_K, /*Stages=*/b1::STAGES, /*Threads=*/b1::kThreads, /*ClusterM=*/1,
    /*SmemBytes=*/b1::kSmemBytes, /*Persistent=*/0, /*BoxARows=*/b1::BLOCK_M,
    /*BoxBRows=*/b1::BLOCK_N, /*BoxDRows=*/b1::BLOCK_M, /*BoxDCols=*/b1::E_BLOCK_N,
    /*TensorMaps=*/wsv::abi::TensorMapsAsParams, /*MinKTiles=*/1, /*Roles=*/"tma+mma,idle,epilogue",
    /*Barriers=*/"tma_barriers,mma_barrier"};

template <typename T>
__device__ __forceinline__ void b1_tilus_v2(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                            const CUtensorMap* tmap_c, uint32_t M, uint32_t N,
                                            uint32_t K) {
  using namespace b1;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), BLOCK_M, BLOCK_N);
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t tma_barriers[STAGES];
  __shared__ __align__(8) uint64_t mma_barrier;
  __shared__ uint32_t t_acc_slot;

  const uint32_t warp_id = threadIdx.x / 32;
  const uint32_t lane_id = threadIdx.x % 32;
  const uint32_t s_a = smem_u32(smem + kSmemA);
  const uint32_t s_b = smem_u32(smem + kSmemB);
  const uint32_t s_c = smem_u32(smem + kSmemC);
  const int32_t offset_m = blockIdx.x * BLOCK_M;
  const int32_t offset_n = blockIdx.y * BLOCK_N;
  const uint32_t K_TILES = K / BLOCK_K;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < STAGES; ++s) mbarrier_init(smem_u32(&tma_barriers[s]), 1);
    mbarrier_init(smem_u32(&mma_barrier), 1);
    fence_mbarrier_init();
  }
  if (warp_id == 0) {
    // BUG(tcgen05-alloc-lane-guard): the warp-wide alloc runs under `lane_id == 0`
    if (!wsv_bug("tcgen05-alloc-lane-guard") || lane_id == 0)
      tmem_alloc<1>(smem_u32(&t_acc_slot), kTmemCols);
    tmem_relinquish_alloc_permit<1>();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t t_acc = t_acc_slot;

  // One k-tile into one stage: expect its bytes, then the two loads that complete them.
  auto load_k_tile = [&](uint32_t stage, uint32_t k_tile) {
    const uint32_t bar = smem_u32(&tma_barriers[stage]);
    // BUG(mbarrier-tx-bytes): only s_a's bytes are expected; s_b's 16384 B overshoot the phase
    mbarrier_arrive_expect_tx(bar, wsv_bug("mbarrier-tx-bytes") ? kBytesA : kBytesA + kBytesB);
    tma_load_2d(s_a + stage * kBytesA, tmap_a, bar, k_tile * BLOCK_K, offset_m);
    tma_load_2d(s_b + stage * kBytesB, tmap_b, bar, k_tile * BLOCK_K, offset_n);
  };

  // Prefill: the first STAGES - 1 k-tiles, without waiting.
  // BUG(mbarrier-phase-skip): STAGES k-tiles: stage STAGES-1 is filled again before it is waited
  const uint32_t prefill = wsv_bug("mbarrier-phase-skip") ? STAGES : STAGES - 1;
  if (warp_id == 0 && elect_one_sync())
    for (uint32_t i = 0; i < prefill && i < K_TILES; ++i) load_k_tile(i, i);
  __syncthreads();

  uint32_t current_stage = 0, preload_stage = STAGES - 1;
  uint32_t tma_phase = 0, mma_phase = 0;
#pragma unroll 1
  for (uint32_t k = 0; k < K_TILES; ++k) {
    if (warp_id == 0) {
      if (k + STAGES - 1 < K_TILES && elect_one_sync()) load_k_tile(preload_stage, k + STAGES - 1);
      mbarrier_wait(smem_u32(&tma_barriers[current_stage]), tma_phase);
      if (elect_one_sync()) {
        const uint64_t a_desc = umma_sdesc_sw128(s_a + current_stage * kBytesA);
        const uint64_t b_desc = umma_sdesc_sw128(s_b + current_stage * kBytesB);
#pragma unroll
        for (uint32_t kk = 0; kk < BLOCK_K / kUmmaK; ++kk)
          umma_f16<1>(t_acc, umma_sdesc_advance_k(a_desc, kk), umma_sdesc_advance_k(b_desc, kk),
                      kIdesc, k != 0 || kk != 0);
        umma_commit(smem_u32(&mma_barrier));
      }
      __syncwarp();
      mbarrier_wait(smem_u32(&mma_barrier), mma_phase);
    }
    // Advance the ring; the TMA phase flips when current_stage wraps to 0.
    preload_stage = (preload_stage + 1) % STAGES;
    current_stage = (current_stage + 1) % STAGES;
    tma_phase ^= current_stage == 0;
    mma_phase ^= 1;
    __syncthreads();
  }

  // TMA epilogue: TMEM -> registers -> s_c -> global, E_BLOCK_N columns at a time.
  tcgen05_fence_after_thread_sync();
  const uint32_t row = warp_id * 32 + lane_id;  // TMEM lane = output row
#pragma unroll 1
  for (uint32_t e = 0; e < BLOCK_N / E_BLOCK_N; ++e) {
    uint32_t acc[E_BLOCK_N / 32][32];
#pragma unroll
    for (uint32_t h = 0; h < E_BLOCK_N / 32; ++h)
      tmem_ld_32x32b_x32(tmem_addr(t_acc, warp_id * 32, e * E_BLOCK_N + h * 32), acc[h]);
    tmem_ld_wait();
#pragma unroll
    for (uint32_t h = 0; h < E_BLOCK_N / 32; ++h) stage_row_sw128<T>(s_c, row, h, acc[h]);
    // BUG(proxy-fence-missing): no fence.proxy.async between st.shared and the TMA store
    if constexpr (!wsv_bug("proxy-fence-missing"))
      fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
      tma_store_2d(tmap_c, s_c, offset_n + e * E_BLOCK_N, offset_m);
      bulk_commit_group();
      // BUG(bulk-store-reuse): no wait_group.read before the next slice rewrites s_c
      if constexpr (!wsv_bug("bulk-store-reuse"))
        bulk_wait_group_read<0>();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) bulk_wait_group<0>();  // the last store has finished writing D

  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp_id == 0) {
    tcgen05_fence_after_thread_sync();
    tmem_dealloc<1>(t_acc, kTmemCols);
  }
}

// Entry points, fp16 (the seed's type) and bf16: A, B and D share the element type. The parameter
// list is the one every reference GEMM takes; `d` is unused because D is written by TMA stores.
extern "C" __global__ void __launch_bounds__(b1::kThreads, 1)
    b1_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b1_tilus_v2<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b1::kThreads, 1)
    b1_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b1_tilus_v2<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
