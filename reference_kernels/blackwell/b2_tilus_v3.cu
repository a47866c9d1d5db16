// B2 - Tilus Blackwell matmul V3: warp specialization, a TMA warp and an MMA warp
// (seed 000, "BlackwellMatmulV3").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), fp16 (the seed's type) or bf16 in and out, fp32
// accumulator in TMEM.
// Grid (M/128, N/128), 128 threads (4 warps), one 128 x 128 output tile per CTA.
//
// Roles (thread groups of the seed)
//   TMA warp   tid 0-31   the whole warp waits on empty_barriers; one elected lane issues
//                         arrive.expect_tx on full_barriers and the two TMA loads
//   MMA warp   tid 32-63  the whole warp waits on full_barriers; one elected lane issues the 4
//                         UMMAs of a k-tile and tcgen05.commit on empty_barriers[stage]; after the
//                         loop it commits the flush barrier and the warp waits for it
//   warps 2-3  tid 64-127 no role until the epilogue
//   all 128 threads: epilogue; warp 0 (all lanes) allocates and deallocates 128 TMEM columns
// Barriers (init count: who arrives, per phase)
//   full_barriers[4]   1  TMA leader's arrive.expect_tx 32768 B; TMA complete_tx 16384 B + 16384 B
//   empty_barriers[4]  1  MMA leader's tcgen05.commit (the stage's UMMAs have read it)
//   flush_barrier      1  MMA leader's tcgen05.commit after the last k-tile; waited with parity 0
// Stages and phases (STAGES = 4): stage advances by one per k-tile, the phase flips when the
//   stage wraps to 0. TMA warp: producer_phase starts at 1 (the first STAGES waits on empty pass,
//   every slot starts empty). MMA warp: consumer_phase starts at 0 (blocks until the first fill).
// Trip counts: both warps run K_TILES = K / 64 iterations.
// After the flush wait, cta_sync; epilogue as in B1 (64-column slices: tcgen05.ld, st.shared,
//   fence.proxy.async, cta_sync, TMA store + commit_group + wait_group.read 0, cta_sync); then
//   cta_sync and warp 0 deallocates.
#include <cuda.h>

#include "epilogue.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b2 {
using namespace wsv;
constexpr uint32_t BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 64;
constexpr uint32_t STAGES = 4;
constexpr uint32_t E_BLOCK_N = 64;  // one 128 B swizzle row of 16-bit elements
constexpr uint32_t kThreads = 128;
constexpr uint32_t kTmemCols = BLOCK_N;
constexpr uint32_t kBytesA = BLOCK_M * BLOCK_K * 2;  // 16384
constexpr uint32_t kBytesB = BLOCK_N * BLOCK_K * 2;  // 16384
// Dynamic shared memory, 1024 B aligned, all in the 128 B swizzle: s_a[STAGES], s_b[STAGES], s_c.
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + STAGES * kBytesA;
constexpr uint32_t kSmemC = kSmemB + STAGES * kBytesB;
constexpr uint32_t kSmemBytes = kSmemC + BLOCK_M * E_BLOCK_N * 2;  // 147456
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b2

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b2::BLOCK_M, /*TileN=*/b2::BLOCK_N,
    /*TileK=*/b2::BLOCK_K, /*Stages=*/b2::STAGES, /*Threads=*/b2::kThreads, /*ClusterM=*/1,
    /*SmemBytes=*/b2::kSmemBytes, /*Persistent=*/0, /*BoxARows=*/b2::BLOCK_M,
    /*BoxBRows=*/b2::BLOCK_N, /*BoxDRows=*/b2::BLOCK_M, /*BoxDCols=*/b2::E_BLOCK_N,
    /*TensorMaps=*/wsv::abi::TensorMapsAsParams, /*MinKTiles=*/1, /*Roles=*/"tma,mma,epilogue",
    /*Barriers=*/"full_barriers,empty_barriers,flush_barrier"};

template <typename T>
__device__ __forceinline__ void b2_tilus_v3(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                            const CUtensorMap* tmap_c, uint32_t M, uint32_t N,
                                            uint32_t K) {
  using namespace b2;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), BLOCK_M, BLOCK_N);
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t full_barriers[STAGES];
  __shared__ __align__(8) uint64_t empty_barriers[STAGES];
  __shared__ __align__(8) uint64_t flush_barrier;
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
    for (uint32_t s = 0; s < STAGES; ++s) {
      mbarrier_init(smem_u32(&full_barriers[s]), 1);
      mbarrier_init(smem_u32(&empty_barriers[s]), 1);
    }
    mbarrier_init(smem_u32(&flush_barrier), 1);
    // The TMA unit (async proxy) completes bytes on full_barriers: it must see the inits.
    // BUG(mbarrier-init-visibility): no fence.mbarrier_init before the async proxy uses them
    if constexpr (!wsv_bug("mbarrier-init-visibility"))
      fence_mbarrier_init();
  }
  if (warp_id == 0) {
    tmem_alloc<1>(smem_u32(&t_acc_slot), kTmemCols);
    tmem_relinquish_alloc_permit<1>();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t t_acc = t_acc_slot;

  if (warp_id == 0) {
    // === TMA warp (producer) ===
    uint32_t stage = 0;
    // BUG(mbarrier-initial-phase): producer_phase starts at 0, the same as the consumer's
    uint32_t producer_phase = wsv_bug("mbarrier-initial-phase") ? 0 : 1;
    const bool leader = elect_one_sync();
#pragma unroll 1
    for (uint32_t k = 0; k < K_TILES; ++k) {
      mbarrier_wait(smem_u32(&empty_barriers[stage]), producer_phase);
      if (leader) {
        const uint32_t bar = smem_u32(&full_barriers[stage]);
        mbarrier_arrive_expect_tx(bar, kBytesA + kBytesB);
        tma_load_2d(s_a + stage * kBytesA, tmap_a, bar, k * BLOCK_K, offset_m);
        tma_load_2d(s_b + stage * kBytesB, tmap_b, bar, k * BLOCK_K, offset_n);
      }
      __syncwarp();
      stage = (stage + 1) % STAGES;
      producer_phase ^= stage == 0;
    }
  } else if (warp_id == 1) {
    // === MMA warp (consumer) ===
    uint32_t stage = 0;
    uint32_t consumer_phase = 0;
    // One lane issues every UMMA and every commit: a commit tracks its own thread's UMMAs.
    const bool leader = elect_one_sync();
#pragma unroll 1
    for (uint32_t k = 0; k < K_TILES; ++k) {
      mbarrier_wait(smem_u32(&full_barriers[stage]), consumer_phase);
      if (leader) {
        const uint64_t a_desc = umma_sdesc_sw128(s_a + stage * kBytesA);
        const uint64_t b_desc = umma_sdesc_sw128(s_b + stage * kBytesB);
#pragma unroll
        for (uint32_t kk = 0; kk < BLOCK_K / kUmmaK; ++kk)
          umma_f16<1>(t_acc, umma_sdesc_advance_k(a_desc, kk), umma_sdesc_advance_k(b_desc, kk),
                      kIdesc, k != 0 || kk != 0);
      }
      // The commit marks the stage consumed once the UMMAs above have read it. Only the issuing
      // lane has UMMAs in flight: a commit from any other lane arrives at once.
      // BUG(tcgen05-commit-multi-thread): all 32 lanes commit, 31 empty groups arrive at once
      if (wsv_bug("tcgen05-commit-multi-thread") || leader)
        umma_commit(smem_u32(&empty_barriers[stage]));
      __syncwarp();
      stage = (stage + 1) % STAGES;
      consumer_phase ^= stage == 0;
    }
    // Drain: wait for every UMMA in flight before the accumulator is read.
    // BUG(accumulator-early-read): no flush barrier, the epilogue reads TMEM under running UMMAs
    if constexpr (!wsv_bug("accumulator-early-read")) {
      if (leader) umma_commit(smem_u32(&flush_barrier));
      __syncwarp();
      mbarrier_wait(smem_u32(&flush_barrier), 0);
    }
  }
  __syncthreads();

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
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
      tma_store_2d(tmap_c, s_c, offset_n + e * E_BLOCK_N, offset_m);
      bulk_commit_group();
      bulk_wait_group_read<0>();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) bulk_wait_group<0>();  // no store in flight when the CTA exits

  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp_id == 0) {
    tcgen05_fence_after_thread_sync();
    tmem_dealloc<1>(t_acc, kTmemCols);
  }
}

// Entry points, fp16 (the seed's type) and bf16: A, B and D share the element type. The parameter
// list is the one every reference GEMM takes; `d` is unused because D is written by TMA stores.
extern "C" __global__ void __launch_bounds__(b2::kThreads, 1)
    b2_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b2_tilus_v3<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b2::kThreads, 1)
    b2_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b2_tilus_v3<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
