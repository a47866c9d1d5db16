// B3 - TIRx GEMM Step 7: warp specialization + pipeline, persistent (seed 001, "Step 7").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), fp16 (the seed's type) or bf16 in and out, fp32
// accumulator in TMEM.
// Grid = one CTA per SM, 256 threads (WG_NUMBER = 2). Each CTA walks 128 x 128 output tiles:
// tile = blockIdx.x, blockIdx.x + gridDim.x, ... (the same sequence in every role).
//
// Roles (wg_id = tid / 128, warp_id = tid / 32 % 4, lane_id = tid % 32)
//   TMA producer  wg 1, warp 3 (tid 224-255), one elected lane: loads A and B tiles
//   MMA consumer  wg 1, warp 0 (tid 128-159), one elected lane: 4 UMMAs 128x128x16 per k-tile
//   writeback     wg 0 (tid 0-127), all 128 threads: TMEM -> registers -> Dsmem -> TMA store
//   idle          wg 1, warps 1-2 (tid 160-223)
// Setup: tid 0 initializes every barrier (top level, no role guard), fence.mbarrier_init;
//   wg 0 warp 0 (all 32 lanes) allocates 512 TMEM columns; then cta_sync (bar.sync 0).
// Barriers (init count: who arrives, per phase)
//   tma2mma[2]  1    producer arrive.expect_tx 32768 B; TMA complete_tx A 16384 B + B 16384 B
//   mma2tma[2]  1    MMA tcgen05.commit after the stage's UMMAs (stage free again)
//   mma2ld      1    MMA tcgen05.commit after the tile's last k-tile (accumulator ready)
//   ld2mma      128  all writeback threads, after tcgen05.wait::ld (TMEM free again)
//   named barrier 10, 128 threads: warpgroup_sync(10) inside the writeback warpgroup only
// Stages and starting (stage, phase), carried across tiles:
//   producer waits mma2tma (0, 1); MMA waits tma2mma (0, 0) over PIPE_DEPTH = 2 stages and
//   ld2mma (0, 1) once per tile; writeback waits mma2ld (0, 0) once per tile.
// Trip counts: per tile, producer and MMA both run K_TILES = K / 64 k-tiles.
// Epilogue per tile: 128 fp32 columns per thread, fence.proxy.async, warpgroup_sync(10), tid 0
//   issues two TMA stores (64 columns each), cp.async.bulk.commit_group + wait_group 0,
//   warpgroup_sync(10) before Dsmem is rewritten.
// Cleanup: tcgen05.fence::before_thread_sync, cta_sync, then wg 0 warp 0 (the allocating warp,
//   all lanes) relinquishes the allocation permit and deallocates the 512 columns.
#include <cuda.h>

#include "epilogue.cuh"
#include "pipeline.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b3 {
using namespace wsv;
constexpr uint32_t BLK_M = 128, BLK_N = 128, BLK_K = 64;
constexpr uint32_t PIPE_DEPTH = 2;
constexpr uint32_t WG_NUMBER = 2;
constexpr uint32_t kThreads = WG_NUMBER * 128;
constexpr uint32_t F16_SIZE = 2;
constexpr uint32_t kTmemCols = 512;
constexpr uint32_t kEpiN = 64;  // columns per TMA store box (one 128 B swizzle row)
constexpr uint32_t kBytesA = BLK_M * BLK_K * F16_SIZE;  // 16384
constexpr uint32_t kBytesB = BLK_N * BLK_K * F16_SIZE;  // 16384
constexpr uint32_t kStageTxBytes = kBytesA + kBytesB;   // 32768 per stage on tma2mma
constexpr uint32_t kBytesEpi = BLK_M * kEpiN * F16_SIZE;
// Dynamic shared memory (1024 B aligned for the 128 B swizzle): Asmem, Bsmem, Dsmem.
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + PIPE_DEPTH * kBytesA;
constexpr uint32_t kSmemD = kSmemB + PIPE_DEPTH * kBytesB;
constexpr uint32_t kSmemBytes = kSmemD + BLK_M * BLK_N * F16_SIZE;  // 98304
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b3

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b3::BLK_M, /*TileN=*/b3::BLK_N,
    /*TileK=*/b3::BLK_K, /*Stages=*/b3::PIPE_DEPTH, /*Threads=*/b3::kThreads, /*ClusterM=*/1,
    /*SmemBytes=*/b3::kSmemBytes, /*Persistent=*/1, /*BoxARows=*/b3::BLK_M, /*BoxBRows=*/b3::BLK_N,
    /*BoxDRows=*/b3::BLK_M, /*BoxDCols=*/b3::kEpiN, /*TensorMaps=*/wsv::abi::TensorMapsAsParams,
    /*MinKTiles=*/1, /*Roles=*/"tma_producer,mma_consumer,writeback",
    /*Barriers=*/"tma2mma,mma2tma,mma2ld,ld2mma"};

template <typename T>
__device__ __forceinline__ void b3_tirx_step7(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                            const CUtensorMap* tmap_d, uint32_t M, uint32_t N,
                                            uint32_t K) {
  using namespace b3;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), BLK_M, BLK_N);
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t tma2mma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2tma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2ld;
  __shared__ __align__(8) uint64_t ld2mma;
  __shared__ uint32_t tmem_addr_slot;

  const uint32_t wg_id = threadIdx.x / 128;
  const uint32_t warp_id = threadIdx.x / 32 % 4;
  const uint32_t lane_id = threadIdx.x % 32;
  const uint32_t a_smem = smem_u32(smem + kSmemA);
  const uint32_t b_smem = smem_u32(smem + kSmemB);
  const uint32_t d_smem = smem_u32(smem + kSmemD);
  const uint32_t K_TILES = K / BLK_K;

  // --- Barrier init (top level: thread 0 of the CTA, before the cta_sync) ---
  auto init_barriers = [&] {
    for (uint32_t s = 0; s < PIPE_DEPTH; ++s) {
      mbarrier_init(smem_u32(&tma2mma[s]), 1);
      mbarrier_init(smem_u32(&mma2tma[s]), 1);
    }
    mbarrier_init(smem_u32(&mma2ld), 1);
    mbarrier_init(smem_u32(&ld2mma), 128);  // all 128 writeback threads arrive
    fence_mbarrier_init();
  };
  if (!wsv_bug("mbarrier-init-visibility") && threadIdx.x < 1) init_barriers();
  // --- TMEM alloc: wg 0 warp 0, all 32 lanes ---
  if (wg_id == 0 && warp_id == 0) tmem_alloc<1>(smem_u32(&tmem_addr_slot), kTmemCols);
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_addr_slot;

  const TileScheduler first_tile{blockIdx.x, gridDim.x, M / BLK_M, N / BLK_N};

  if (wg_id == 1) {
    // BUG(mbarrier-init-visibility): the init moved into the wg 1 branch, after the cta_sync
    if (wsv_bug("mbarrier-init-visibility") && threadIdx.x == 128) init_barriers();
    if (warp_id == 3) {
      // === TMA producer ===
      if (elect_one_sync()) {
        // Phase 1: the first PIPE_DEPTH waits on mma2tma pass (every stage starts empty).
        // BUG(mbarrier-initial-phase): the producer starts at phase 0, like the MMA consumer
        PipelineState<PIPE_DEPTH> tma_ps{0, wsv_bug("mbarrier-initial-phase") ? 0u : 1u};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          // BUG(mbarrier-phase-skip): the producer's stage and phase restart on every tile
          if constexpr (wsv_bug("mbarrier-phase-skip")) tma_ps = {0, 1};
          const int32_t m_st = ts.m_idx() * BLK_M, n_st = ts.n_idx() * BLK_N;
#pragma unroll 1
          for (uint32_t k = 0; k < K_TILES; ++k) {
            mbarrier_wait(smem_u32(&mma2tma[tma_ps.stage]), tma_ps.phase);
            const uint32_t bar = smem_u32(&tma2mma[tma_ps.stage]);
            tma_load_2d(a_smem + tma_ps.stage * kBytesA, tmap_a, bar, k * BLK_K, m_st);
            tma_load_2d(b_smem + tma_ps.stage * kBytesB, tmap_b, bar, k * BLK_K, n_st);
            mbarrier_arrive_expect_tx(bar, kStageTxBytes);
            tma_ps.advance();
          }
        }
      }
    } else if (warp_id == 0) {
      // === MMA consumer ===
      if (elect_one_sync()) {
        PipelineState<PIPE_DEPTH> mma_ps{0, 0};
        PipelineState<1> ld_ps{0, 1};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          // Wait for TMEM to be free from the previous tile's writeback.
          // BUG(accumulator-early-read): no ld2mma wait, the MMA overwrites TMEM being read
          if constexpr (!wsv_bug("accumulator-early-read"))
            mbarrier_wait(smem_u32(&ld2mma), ld_ps.phase);
          ld_ps.advance();
          tcgen05_fence_after_thread_sync();
          // BUG(mbarrier-trip-count): the MMA runs K_TILES - 1 k-tiles, the producer K_TILES
          const uint32_t mma_k_tiles = wsv_bug("mbarrier-trip-count") ? K_TILES - 1 : K_TILES;
#pragma unroll 1
          for (uint32_t k = 0; k < mma_k_tiles; ++k) {
            mbarrier_wait(smem_u32(&tma2mma[mma_ps.stage]), mma_ps.phase);
            const uint64_t a_desc = umma_sdesc_sw128(a_smem + mma_ps.stage * kBytesA);
            const uint64_t b_desc = umma_sdesc_sw128(b_smem + mma_ps.stage * kBytesB);
#pragma unroll
            for (uint32_t kk = 0; kk < BLK_K / kUmmaK; ++kk)
              umma_f16<1>(tmem, umma_sdesc_advance_k(a_desc, kk), umma_sdesc_advance_k(b_desc, kk),
                          kIdesc, k != 0 || kk != 0);
            umma_commit(smem_u32(&mma2tma[mma_ps.stage]));  // stage free once these UMMAs finish
            mma_ps.advance();
          }
          umma_commit(smem_u32(&mma2ld));  // accumulator ready once every UMMA of the tile is done
        }
      }
    }
  } else {
    // === Writeback (wg 0): thread `row` reads TMEM lane `row`, which holds output row `row`
    PipelineState<1> wb_ps{0, 0};
    const uint32_t row = warp_id * 32 + lane_id;
    for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
      mbarrier_wait(smem_u32(&mma2ld), wb_ps.phase);
      wb_ps.advance();
      tcgen05_fence_after_thread_sync();
      uint32_t acc[BLK_N / 32][32];
#pragma unroll
      for (uint32_t c = 0; c < BLK_N / 32; ++c)
        tmem_ld_32x32b_x32(tmem_addr(tmem, warp_id * 32, c * 32), acc[c]);
      tmem_ld_wait();
      tcgen05_fence_before_thread_sync();
      // Signal TMEM free: every writeback thread arrives.
      // BUG(mbarrier-arrival-count): only warp 0 lane 0 arrives on ld2mma (init 128)
      if (!wsv_bug("mbarrier-arrival-count") || (warp_id == 0 && lane_id == 0))
        mbarrier_arrive(smem_u32(&ld2mma));
#pragma unroll
      for (uint32_t c = 0; c < BLK_N / 32; ++c)
        stage_row_sw128<T>(d_smem + c / 2 * kBytesEpi, row, c % 2, acc[c]);
      // Dsmem writes must be visible to the TMA store (async proxy) before thread 0 issues it.
      // BUG(proxy-fence-missing): no fence.proxy.async between st.shared and the TMA store
      if constexpr (!wsv_bug("proxy-fence-missing"))
        fence_proxy_async_shared();
      if constexpr (wsv_bug("barrier-divergent"))
        // BUG(barrier-divergent): cta_sync (bar.sync 0, all 256 threads) inside the wg 0 branch
        __syncthreads();
      else
        // BUG(named-barrier-count): warpgroup_sync(10) for 256 threads, only wg 0's 128 come
        named_barrier_sync(10, wsv_bug("named-barrier-count") ? 256 : 128);
      if (warp_id == 0 && lane_id == 0) {
        const int32_t m_st = ts.m_idx() * BLK_M, n_st = ts.n_idx() * BLK_N;
        for (uint32_t e = 0; e < BLK_N / kEpiN; ++e)
          tma_store_2d(tmap_d, d_smem + e * kBytesEpi, n_st + e * kEpiN, m_st);
        // BUG(bulk-store-reuse): no commit_group + wait_group before the next tile rewrites Dsmem
        if constexpr (!wsv_bug("bulk-store-reuse")) {
          bulk_commit_group();
          bulk_wait_group<0>();
        }
      }
      named_barrier_sync(10, 128);
    }
  }

  // --- Cleanup ---
  tcgen05_fence_before_thread_sync();
  __syncthreads();  // every role is done with TMEM before it is freed
  // BUG(mbarrier-reuse): tid 0 reuses mma2ld's bytes for a done flag without mbarrier.inval
  if (wsv_bug("mbarrier-reuse") && threadIdx.x == 0) *reinterpret_cast<volatile uint32_t*>(&mma2ld) = 1;
  if (wg_id == 0 && warp_id == 0) {
    tcgen05_fence_after_thread_sync();
    tmem_relinquish_alloc_permit<1>();
    // BUG(tcgen05-alloc-lane-guard): the warp-wide dealloc runs under `lane_id == 0`
    if (!wsv_bug("tcgen05-alloc-lane-guard") || lane_id == 0)
      tmem_dealloc<1>(tmem, kTmemCols);
  }
}

// Entry points, fp16 (the seed's type) and bf16: A, B and D share the element type. The parameter
// list is the one every reference GEMM takes; `d` is unused because D is written by TMA stores.
extern "C" __global__ void __launch_bounds__(b3::kThreads, 1)
    b3_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b3_tirx_step7<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b3::kThreads, 1)
    b3_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b3_tirx_step7<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
