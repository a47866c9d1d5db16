// B5 - TIRx GEMM Step 9: two MMA consumers on a 2-CTA cluster, persistent (seed 001, "Step 9").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), fp16 or bf16 in and out, fp32 accumulator in
// TMEM. Clusters of CTA_GROUP = 2 CTAs (cbx = %cluster_ctarank); grid = one CTA per SM, 384
// threads per CTA (WG_NUMBER = 3). Each cluster walks 512 x 256 output tiles, tile = cluster id +
// i * #clusters. Per stage each CTA stages two A blocks (one per consumer c: rows
// (m_idx*4 + c*2 + cbx)*128) and one B block (rows (n_idx*2 + cbx)*128), shared by both consumers.
//
// Roles (wg_id = tid / 128, warp_id = tid / 32 % 4, lane_id = tid % 32), in both CTAs unless noted
//   TMA producer    wg 2, warp 3 (tid 352-383), one elected lane: 2 A blocks + 1 B block per
//                   stage with .cta_group::2; the bytes complete on CTA 0's tma2mma (via mapa)
//   MMA consumer c  wg 2, warp c (c = 0: tid 256-287, c = 1: tid 288-319), CTA 0 only, one
//                   elected lane: 4 UMMAs 256x256x16 per k-tile (.cta_group::2) on A block c and
//                   the shared B block, into TMEM columns [256c, 256c + 256)
//   writeback c     wg c (c = 0: tid 0-127, c = 1: tid 128-255), all threads: its CTA's 128 rows
//                   of consumer c's accumulator, in EPI_N = 64 column chunks
//   idle            wg 2, warp 2 (tid 320-351)
// Setup: tid 0 initializes every barrier, fence.mbarrier_init.release.cluster; wg 0 warp 0
//   allocates 512 TMEM columns with cta_group::2; cluster_sync (the seed writes cta_sync, see B4).
// Barriers (init count: who arrives, per phase); only CTA 0's tma2mma and ld2mma are used
//   tma2mma[4]   1            CTA 0 producer arrive.expect_tx
//                             CTA_GROUP x (2 x 16384 + 16384) = 98304 B; complete_tx from both CTAs
//   mma2tma[4]   NUM_CONSUMER both MMA consumers' tcgen05.commit multicast, cta_mask 0b11
//   mma2ld[2]    1            slot c: consumer c's commit multicast after the tile, cta_mask 0b11
//   ld2mma[2]    128 x 2      slot c: every thread of writeback c in both CTAs, on CTA 0's copy
//   named barrier 10 + c, 128 threads: warpgroup_sync(wg_id + 10) inside writeback c
// Stages and starting (stage, phase), carried across tiles (PIPE_DEPTH = 4):
//   producer waits mma2tma (0, 1); each consumer waits tma2mma (0, 0) and ld2mma[c] (0, 1) once
//   per tile; writeback c waits mma2ld[c] (0, 0) once per tile.
// Trip counts: per tile, producer and both consumers run K_TILES = K / 64; all roles visit the
//   same tiles (every thread advances its own copy of the scheduler).
// Epilogue per 64-column chunk: tcgen05.ld, tcgen05.wait::ld, st.shared into Dsmem[c],
//   fence.proxy.async, warpgroup_sync(10 + c), the warpgroup's first thread TMA-stores +
//   commit_group + wait_group 0, warpgroup_sync(10 + c). After the last chunk every thread
//   arrives on ld2mma[c]: only after its tcgen05.wait::ld, since a tcgen05.ld reads TMEM
//   until then and the arrive lets the next tile's MMAs overwrite it.
// Cleanup: cluster_sync, then wg 0 warp 0 relinquishes and deallocates with cta_group::2.
#include <cuda.h>

#include "epilogue.cuh"
#include "pipeline.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b5 {
using namespace wsv;
constexpr uint32_t CTA_GROUP = 2;
constexpr uint32_t NUM_CONSUMER = 2;
constexpr uint32_t BLK_M = 128, BLK_N = 128, BLK_K = 64;
constexpr uint32_t MMA_M = BLK_M * CTA_GROUP, MMA_N = BLK_N * CTA_GROUP;  // 256 x 256
constexpr uint32_t PIPE_DEPTH = 4;
constexpr uint32_t EPI_N = 64;  // columns per writeback chunk and TMA store box
constexpr uint32_t WG_NUMBER = 3;
constexpr uint32_t kThreads = WG_NUMBER * 128;
constexpr uint32_t F16_SIZE = 2;
constexpr uint16_t kBothCtas = 0b11;
constexpr uint32_t kBytesA = BLK_M * BLK_K * F16_SIZE;  // 16384, per consumer block
constexpr uint32_t kBytesB = BLK_N * BLK_K * F16_SIZE;  // 16384
constexpr uint32_t kBytesEpi = BLK_M * EPI_N * F16_SIZE;
// Dynamic shared memory (1024 B aligned for the 128 B swizzle):
// Asmem[PIPE_DEPTH][NUM_CONSUMER], Bsmem[PIPE_DEPTH], Dsmem[NUM_CONSUMER].
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + PIPE_DEPTH * NUM_CONSUMER * kBytesA;
constexpr uint32_t kSmemD = kSmemB + PIPE_DEPTH * kBytesB;
constexpr uint32_t kSmemBytes = kSmemD + NUM_CONSUMER * kBytesEpi;  // 229376
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b5

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b5::NUM_CONSUMER * b5::BLK_M,
    /*TileN=*/b5::MMA_N, /*TileK=*/b5::BLK_K, /*Stages=*/b5::PIPE_DEPTH, /*Threads=*/b5::kThreads,
    /*ClusterM=*/b5::CTA_GROUP, /*SmemBytes=*/b5::kSmemBytes, /*Persistent=*/1,
    /*BoxARows=*/b5::BLK_M, /*BoxBRows=*/b5::BLK_N, /*BoxDRows=*/b5::BLK_M, /*BoxDCols=*/b5::EPI_N,
    /*TensorMaps=*/wsv::abi::TensorMapsAsParams, /*MinKTiles=*/1,
    /*Roles=*/"tma_producer,mma_consumer0,mma_consumer1,writeback0,writeback1",
    /*Barriers=*/"tma2mma,mma2tma,mma2ld,ld2mma"};

template <typename T>
__device__ __forceinline__ void b5_tirx_step9(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                              const CUtensorMap* tmap_d, uint32_t M, uint32_t N,
                                              uint32_t K) {
  using namespace b5;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), MMA_M, MMA_N);
  // Each consumer's accumulator is MMA_N columns; together they fill TMEM's 512 columns.
  // BUG(tcgen05-alloc-exhaustion): 512 columns per consumer, 1024 in all
  constexpr uint32_t kTmemCols = wsv_bug("tcgen05-alloc-exhaustion") ? NUM_CONSUMER * 512
                                                                     : NUM_CONSUMER * MMA_N;
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t tma2mma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2tma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2ld[NUM_CONSUMER];
  __shared__ __align__(8) uint64_t ld2mma[NUM_CONSUMER];
  __shared__ uint32_t tmem_addr_slot;

  const uint32_t cbx = cluster_ctarank();
  const uint32_t wg_id = threadIdx.x / 128;
  const uint32_t warp_id = threadIdx.x / 32 % 4;
  const uint32_t lane_id = threadIdx.x % 32;
  const uint32_t a_smem = smem_u32(smem + kSmemA);
  const uint32_t b_smem = smem_u32(smem + kSmemB);
  const uint32_t d_smem = smem_u32(smem + kSmemD);
  const uint32_t K_TILES = K / BLK_K;

  // --- Barrier init (top level: thread 0 of each CTA) ---
  if (threadIdx.x < 1) {
    for (uint32_t s = 0; s < PIPE_DEPTH; ++s) {
      mbarrier_init(smem_u32(&tma2mma[s]), 1);
      // BUG(mbarrier-arrival-count): 1, but both consumers commit on every stage
      mbarrier_init(smem_u32(&mma2tma[s]), wsv_bug("mbarrier-arrival-count") ? 1 : NUM_CONSUMER);
    }
    for (uint32_t c = 0; c < NUM_CONSUMER; ++c) {
      mbarrier_init(smem_u32(&mma2ld[c]), 1);
      mbarrier_init(smem_u32(&ld2mma[c]), 128 * CTA_GROUP);  // both CTAs' writeback c threads
    }
    fence_mbarrier_init();
  }
  // --- TMEM alloc (cooperative): wg 0 warp 0 of both CTAs, all 32 lanes ---
  if (wg_id == 0 && warp_id == 0) tmem_alloc<CTA_GROUP>(smem_u32(&tmem_addr_slot), kTmemCols);
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_addr_slot;

  // Cluster tiles: 512 x 256 (NUM_CONSUMER x 256 rows).
  const TileScheduler first_tile{blockIdx.x / CTA_GROUP, gridDim.x / CTA_GROUP,
                                 M / (NUM_CONSUMER * MMA_M), N / MMA_N};

  if (wg_id == 2) {
    if (warp_id == 3) {
      // === TMA producer: 2 A blocks + 1 B block per stage ===
      if (elect_one_sync()) {
        PipelineState<PIPE_DEPTH> tma_ps{0, 1};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          const int32_t m_st = (ts.m_idx() * NUM_CONSUMER * CTA_GROUP + cbx) * BLK_M;
          const int32_t n_st = (ts.n_idx() * CTA_GROUP + cbx) * BLK_N;
#pragma unroll 1
          for (uint32_t k = 0; k < K_TILES; ++k) {
            mbarrier_wait(smem_u32(&mma2tma[tma_ps.stage]), tma_ps.phase);
            const uint32_t bar = smem_u32(&tma2mma[tma_ps.stage]);
            const uint32_t bar_cta0 = mapa_shared_cluster(bar, 0);
            for (uint32_t c = 0; c < NUM_CONSUMER; ++c)
              tma_load_2d_2cta(a_smem + (tma_ps.stage * NUM_CONSUMER + c) * kBytesA, tmap_a,
                               bar_cta0, k * BLK_K, m_st + c * CTA_GROUP * BLK_M);
            tma_load_2d_2cta(b_smem + tma_ps.stage * kBytesB, tmap_b, bar_cta0, k * BLK_K, n_st);
            // BUG(mbarrier-tx-bytes): Step 8's count, without the second consumer's A block
            constexpr uint32_t kABlocks = wsv_bug("mbarrier-tx-bytes") ? 1 : NUM_CONSUMER;
            if (cbx == 0)
              mbarrier_arrive_expect_tx(bar, CTA_GROUP * (kABlocks * kBytesA + kBytesB));
            tma_ps.advance();
          }
        }
      }
    } else if (warp_id < NUM_CONSUMER) {
      // === MMA consumer `warp_id`: A block warp_id, TMEM columns [warp_id * MMA_N, +MMA_N) ===
      if (cbx == 0 && elect_one_sync()) {
        const uint32_t c = warp_id;
        PipelineState<PIPE_DEPTH> mma_ps{0, 0};
        PipelineState<1> ld_ps{0, 1};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          mbarrier_wait(smem_u32(&ld2mma[c]), ld_ps.phase);
          ld_ps.advance();
          tcgen05_fence_after_thread_sync();
#pragma unroll 1
          for (uint32_t k = 0; k < K_TILES; ++k) {
            mbarrier_wait(smem_u32(&tma2mma[mma_ps.stage]), mma_ps.phase);
            const uint64_t a_desc =
                umma_sdesc_sw128(a_smem + (mma_ps.stage * NUM_CONSUMER + c) * kBytesA);
            const uint64_t b_desc = umma_sdesc_sw128(b_smem + mma_ps.stage * kBytesB);
#pragma unroll
            for (uint32_t kk = 0; kk < BLK_K / kUmmaK; ++kk)
              umma_f16<CTA_GROUP>(tmem + c * MMA_N, umma_sdesc_advance_k(a_desc, kk),
                                  umma_sdesc_advance_k(b_desc, kk), kIdesc, k != 0 || kk != 0);
            umma_commit_multicast_2cta(smem_u32(&mma2tma[mma_ps.stage]), kBothCtas);
            mma_ps.advance();
          }
          umma_commit_multicast_2cta(smem_u32(&mma2ld[c]), kBothCtas);
        }
      }
    }
  } else {
    // === Writeback `wg_id` (both CTAs): consumer wg_id's accumulator, TMEM lane = CTA row ===
    PipelineState<1> wb_ps{0, 0};
    const uint32_t row = warp_id * 32 + lane_id;
    const uint32_t dsmem = d_smem + wg_id * kBytesEpi;
    // BUG(named-barrier-id-collision): both writeback warpgroups sync on barrier 10
    const uint32_t wg_barrier = wsv_bug("named-barrier-id-collision") ? 10 : wg_id + 10;
    for (TileScheduler ts = first_tile; ts.valid();) {
      mbarrier_wait(smem_u32(&mma2ld[wg_id]), wb_ps.phase);
      wb_ps.advance();
      tcgen05_fence_after_thread_sync();
      const int32_t m_st_epi = (ts.m_idx() * NUM_CONSUMER * CTA_GROUP + wg_id * CTA_GROUP + cbx) *
                               BLK_M;
#pragma unroll 1
      for (uint32_t i = 0; i < MMA_N / EPI_N; ++i) {
        uint32_t acc[EPI_N / 32][32];
#pragma unroll
        for (uint32_t h = 0; h < EPI_N / 32; ++h)
          tmem_ld_32x32b_x32(tmem_addr(tmem, warp_id * 32, wg_id * MMA_N + i * EPI_N + h * 32),
                             acc[h]);
        // BUG(accumulator-early-read): with the last chunk's loads issued, the writeback frees
        // the accumulator before tcgen05.wait::ld; the next tile's MMA may overwrite them
        if (wsv_bug("accumulator-early-read") && i + 1 == MMA_N / EPI_N) {
          tcgen05_fence_before_thread_sync();
          mbarrier_arrive_cluster(smem_u32(&ld2mma[wg_id]), 0);
        }
        tmem_ld_wait();
#pragma unroll
        for (uint32_t h = 0; h < EPI_N / 32; ++h) stage_row_sw128<T>(dsmem, row, h, acc[h]);
        fence_proxy_async_shared();
        named_barrier_sync(wg_barrier, 128);
        if (warp_id == 0 && lane_id == 0) {
          tma_store_2d(tmap_d, dsmem, ts.n_idx() * MMA_N + i * EPI_N, m_st_epi);
          bulk_commit_group();
          bulk_wait_group<0>();
        }
        named_barrier_sync(wg_barrier, 128);
      }
      if (!wsv_bug("accumulator-early-read")) {
        tcgen05_fence_before_thread_sync();
        // BUG(cluster-multicast-mask): the arrival goes to rank CTA_GROUP, outside the cluster
        mbarrier_arrive_cluster(smem_u32(&ld2mma[wg_id]),
                                wsv_bug("cluster-multicast-mask") ? CTA_GROUP : 0);
      }
      // BUG(mbarrier-trip-count): only the warpgroup's first thread advances its scheduler
      if (!wsv_bug("mbarrier-trip-count") || (warp_id == 0 && lane_id == 0)) ts.next_tile();
    }
  }

  // --- Cleanup ---
  auto free_tmem = [&] {
    if (wg_id == 0 && warp_id == 0) {
      tcgen05_fence_after_thread_sync();
      tmem_relinquish_alloc_permit<CTA_GROUP>();
      tmem_dealloc<CTA_GROUP>(tmem, kTmemCols);
    }
  };
  tcgen05_fence_before_thread_sync();
  // BUG(tmem-dealloc-early): wg 0 frees TMEM before the cluster_sync, writeback 1 may still read
  if constexpr (wsv_bug("tmem-dealloc-early")) free_tmem();
  cluster_sync();
  if constexpr (!wsv_bug("tmem-dealloc-early")) free_tmem();
}

// Entry points, fp16 (the seed's type) and bf16: A, B and D share the element type. The parameter
// list is the one every reference GEMM takes; `d` is unused because D is written by TMA stores.
// Launched in clusters of CTA_GROUP CTAs along x (KernelInfo::ClusterM).
extern "C" __global__ void __launch_bounds__(b5::kThreads, 1)
    b5_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b5_tirx_step9<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b5::kThreads, 1)
    b5_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b5_tirx_step9<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
