// B4 - TIRx GEMM Step 8: a 2-CTA cluster and cta_group::2 MMAs, persistent (seed 001, "Step 8").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), fp16 or bf16 in and out, fp32 accumulator in
// TMEM. Clusters of CTA_GROUP = 2 CTAs (cbx = %cluster_ctarank); grid = one CTA per SM, 256
// threads per CTA. Each cluster walks 256 x 256 output tiles, tile = cluster id + i * #clusters;
// CTA cbx stages A rows (m_idx*2 + cbx)*128 and B rows (n_idx*2 + cbx)*128, and owns output rows
// (m_idx*2 + cbx)*128 .. +128, all 256 columns of the tile.
//
// Roles (wg_id = tid / 128, warp_id = tid / 32 % 4, lane_id = tid % 32), in both CTAs unless noted
//   TMA producer  wg 1, warp 3 (tid 224-255), one elected lane: loads its CTA's A and B halves
//                 with .cta_group::2; the bytes complete on CTA 0's tma2mma (via mapa)
//   MMA consumer  wg 1, warp 0 (tid 128-159), CTA 0 only, one elected lane: 4 UMMAs 256x256x16
//                 (.cta_group::2: operands from both CTAs, accumulator in both CTAs' TMEM)
//   writeback     wg 0 (tid 0-127), all threads: its CTA's 128 rows x 256 columns, in two
//                 128-column chunks
// Setup: tid 0 initializes every barrier, fence.mbarrier_init.release.cluster; wg 0 warp 0
//   allocates 512 TMEM columns with cta_group::2 (the same warp in both CTAs); cluster_sync.
//   (The seed writes cta_sync here; only a cluster barrier orders CTA 0's inits before CTA 1's
//   TMA bytes and before CTA 0's multicast commits reach CTA 1's barriers.)
// Barriers (init count: who arrives, per phase); only CTA 0's tma2mma and ld2mma are used
//   tma2mma[4]  1            CTA 0 producer arrive.expect_tx CTA_GROUP x 32768 = 65536 B;
//                            complete_tx from both CTAs' A 16384 B + B 16384 B
//   mma2tma[4]  1            CTA 0 MMA tcgen05.commit multicast, cta_mask 0b11 (both CTAs)
//   mma2ld      1            CTA 0 MMA tcgen05.commit multicast after the tile, cta_mask 0b11
//   ld2mma      128 x 2      every writeback thread of both CTAs arrives on CTA 0's (mapa rank 0)
//   named barrier 10, 128 threads: warpgroup_sync(10) inside each CTA's writeback warpgroup
// Stages and starting (stage, phase), carried across tiles (PIPE_DEPTH = 4):
//   producers wait mma2tma (0, 1); MMA waits tma2mma (0, 0), ld2mma (0, 1) once per tile;
//   writeback waits mma2ld (0, 0) once per tile.
// Trip counts: per tile, producers and MMA run K_TILES = K / 64; all roles visit the same tiles.
// Epilogue per 128-column chunk: tcgen05.ld, st.shared into Dsmem, fence.proxy.async,
//   warpgroup_sync(10), tid 0 two TMA stores + commit_group + wait_group 0, warpgroup_sync(10).
// Cleanup: cluster_sync (no CTA exits or frees TMEM while its peer may still use its barriers,
//   shared memory or TMEM), then wg 0 warp 0 relinquishes and deallocates with cta_group::2.
#include <cuda.h>

#include "epilogue.cuh"
#include "pipeline.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b4 {
using namespace wsv;
constexpr uint32_t CTA_GROUP = 2;
constexpr uint32_t BLK_M = 128, BLK_N = 128, BLK_K = 64;
constexpr uint32_t MMA_M = BLK_M * CTA_GROUP, MMA_N = BLK_N * CTA_GROUP;  // 256 x 256
constexpr uint32_t PIPE_DEPTH = 4;
constexpr uint32_t WG_NUMBER = 2;
constexpr uint32_t kThreads = WG_NUMBER * 128;
constexpr uint32_t F16_SIZE = 2;
constexpr uint32_t kTmemCols = 512;
constexpr uint32_t kEpiChunk = 128;  // columns per writeback chunk
constexpr uint32_t kEpiN = 64;       // columns per TMA store box (one 128 B swizzle row)
constexpr uint16_t kBothCtas = 0b11;
constexpr uint32_t kBytesA = BLK_M * BLK_K * F16_SIZE;  // 16384
constexpr uint32_t kBytesB = BLK_N * BLK_K * F16_SIZE;  // 16384
constexpr uint32_t kBytesEpi = BLK_M * kEpiN * F16_SIZE;
// Dynamic shared memory (1024 B aligned for the 128 B swizzle): Asmem, Bsmem, Dsmem.
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + PIPE_DEPTH * kBytesA;
constexpr uint32_t kSmemD = kSmemB + PIPE_DEPTH * kBytesB;
constexpr uint32_t kSmemBytes = kSmemD + BLK_M * kEpiChunk * F16_SIZE;  // 163840
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b4

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b4::BLK_M, /*TileN=*/b4::MMA_N,
    /*TileK=*/b4::BLK_K, /*Stages=*/b4::PIPE_DEPTH, /*Threads=*/b4::kThreads,
    /*ClusterM=*/b4::CTA_GROUP, /*SmemBytes=*/b4::kSmemBytes, /*Persistent=*/1,
    /*BoxARows=*/b4::BLK_M, /*BoxBRows=*/b4::BLK_N, /*BoxDRows=*/b4::BLK_M, /*BoxDCols=*/b4::kEpiN,
    /*TensorMaps=*/wsv::abi::TensorMapsAsParams, /*MinKTiles=*/1,
    /*Roles=*/"tma_producer,mma_consumer,writeback", /*Barriers=*/"tma2mma,mma2tma,mma2ld,ld2mma"};

template <typename T>
__device__ __forceinline__ void b4_tirx_step8(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                              const CUtensorMap* tmap_d, uint32_t M, uint32_t N,
                                              uint32_t K) {
  using namespace b4;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), MMA_M, MMA_N);
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t tma2mma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2tma[PIPE_DEPTH];
  __shared__ __align__(8) uint64_t mma2ld;
  __shared__ __align__(8) uint64_t ld2mma;
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
      mbarrier_init(smem_u32(&mma2tma[s]), 1);
    }
    mbarrier_init(smem_u32(&mma2ld), 1);
    // BUG(mbarrier-arrival-count): 128, but both CTAs' writeback threads (256) arrive per phase
    mbarrier_init(smem_u32(&ld2mma), wsv_bug("mbarrier-arrival-count") ? 128 : 128 * CTA_GROUP);
    fence_mbarrier_init();
  }
  // --- TMEM alloc (cooperative): wg 0 warp 0 of both CTAs, all 32 lanes ---
  if (wg_id == 0 && warp_id == 0) tmem_alloc<CTA_GROUP>(smem_u32(&tmem_addr_slot), kTmemCols);
  tcgen05_fence_before_thread_sync();
  if constexpr (wsv_bug("mbarrier-init-visibility"))
    // BUG(mbarrier-init-visibility): cta_sync, not cluster_sync: the peer may use them too early
    __syncthreads();
  else
    cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_addr_slot;

  // Cluster tiles: 256 x 256; the cluster (not the CTA) is the unit of the persistent schedule.
  const TileScheduler first_tile{blockIdx.x / CTA_GROUP, gridDim.x / CTA_GROUP, M / MMA_M,
                                 N / MMA_N};

  if (wg_id == 1) {
    if (warp_id == 3) {
      // === TMA producer (both CTAs) ===
      if (elect_one_sync()) {
        PipelineState<PIPE_DEPTH> tma_ps{0, 1};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          const int32_t m_st = (ts.m_idx() * CTA_GROUP + cbx) * BLK_M;
          const int32_t n_st = (ts.n_idx() * CTA_GROUP + cbx) * BLK_N;
#pragma unroll 1
          for (uint32_t k = 0; k < K_TILES; ++k) {
            mbarrier_wait(smem_u32(&mma2tma[tma_ps.stage]), tma_ps.phase);
            const uint32_t bar = smem_u32(&tma2mma[tma_ps.stage]);
            const uint32_t bar_cta0 = mapa_shared_cluster(bar, 0);
            tma_load_2d_2cta(a_smem + tma_ps.stage * kBytesA, tmap_a, bar_cta0, k * BLK_K, m_st);
            tma_load_2d_2cta(b_smem + tma_ps.stage * kBytesB, tmap_b, bar_cta0, k * BLK_K, n_st);
            // CTA 0's barrier receives both CTAs' bytes.
            // BUG(mbarrier-tx-bytes): expects one CTA's 32768 B; both CTAs complete 65536 B
            if (cbx == 0)
              mbarrier_arrive_expect_tx(bar, (wsv_bug("mbarrier-tx-bytes") ? 1 : CTA_GROUP) *
                                                 (kBytesA + kBytesB));
            tma_ps.advance();
          }
        }
      }
    } else if (warp_id == 0) {
      // === MMA consumer (CTA 0 issues for the pair) ===
      if (cbx == 0 && elect_one_sync()) {
        PipelineState<PIPE_DEPTH> mma_ps{0, 0};
        PipelineState<1> ld_ps{0, 1};
        for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
          mbarrier_wait(smem_u32(&ld2mma), ld_ps.phase);  // both CTAs' TMEM is free
          ld_ps.advance();
          tcgen05_fence_after_thread_sync();
#pragma unroll 1
          for (uint32_t k = 0; k < K_TILES; ++k) {
            mbarrier_wait(smem_u32(&tma2mma[mma_ps.stage]), mma_ps.phase);
            const uint64_t a_desc = umma_sdesc_sw128(a_smem + mma_ps.stage * kBytesA);
            const uint64_t b_desc = umma_sdesc_sw128(b_smem + mma_ps.stage * kBytesB);
#pragma unroll
            for (uint32_t kk = 0; kk < BLK_K / kUmmaK; ++kk)
              umma_f16<CTA_GROUP>(tmem, umma_sdesc_advance_k(a_desc, kk),
                                  umma_sdesc_advance_k(b_desc, kk), kIdesc, k != 0 || kk != 0);
            // BUG(cluster-multicast-mask): mask 0b1111 names CTAs 2 and 3 of a 2-CTA cluster
            umma_commit_multicast_2cta(smem_u32(&mma2tma[mma_ps.stage]),
                                       wsv_bug("cluster-multicast-mask") ? 0b1111 : kBothCtas);
            mma_ps.advance();
          }
          // BUG(mbarrier-no-arriver): mask 0b01, CTA 1's mma2ld never completes
          umma_commit_multicast_2cta(smem_u32(&mma2ld),
                                     wsv_bug("mbarrier-no-arriver") ? 0b01 : kBothCtas);
        }
      }
    }
  } else {
    // === Writeback (wg 0 of both CTAs): thread `row` reads TMEM lane `row` = its CTA's row ===
    PipelineState<1> wb_ps{0, 0};
    const uint32_t row = warp_id * 32 + lane_id;
    for (TileScheduler ts = first_tile; ts.valid(); ts.next_tile()) {
      mbarrier_wait(smem_u32(&mma2ld), wb_ps.phase);
      wb_ps.advance();
      tcgen05_fence_after_thread_sync();
      const int32_t m_st = (ts.m_idx() * CTA_GROUP + cbx) * BLK_M;
#pragma unroll 1
      for (uint32_t no = 0; no < MMA_N / kEpiChunk; ++no) {
        uint32_t acc[kEpiChunk / 32][32];
#pragma unroll
        for (uint32_t c = 0; c < kEpiChunk / 32; ++c)
          tmem_ld_32x32b_x32(tmem_addr(tmem, warp_id * 32, no * kEpiChunk + c * 32), acc[c]);
        tmem_ld_wait();
#pragma unroll
        for (uint32_t c = 0; c < kEpiChunk / 32; ++c)
          stage_row_sw128<T>(d_smem + c / 2 * kBytesEpi, row, c % 2, acc[c]);
        fence_proxy_async_shared();
        named_barrier_sync(10, 128);
        if (warp_id == 0 && lane_id == 0) {
          const int32_t n_st_epi = ts.n_idx() * MMA_N + no * kEpiChunk;
          for (uint32_t e = 0; e < kEpiChunk / kEpiN; ++e)
            tma_store_2d(tmap_d, d_smem + e * kBytesEpi, n_st_epi + e * kEpiN, m_st);
          bulk_commit_group();
          bulk_wait_group<0>();
        }
        named_barrier_sync(10, 128);
      }
      // This CTA's TMEM is free: arrive on CTA 0's ld2mma.
      // BUG(tcgen05-fence-missing): no tcgen05.fence::before_thread_sync: the arrive does not
      // order the writeback's tcgen05.ld before the next tile's MMAs, which overwrite TMEM
      if constexpr (!wsv_bug("tcgen05-fence-missing")) tcgen05_fence_before_thread_sync();
      mbarrier_arrive_cluster(smem_u32(&ld2mma), 0);
    }
  }

  // --- Cleanup ---
  tcgen05_fence_before_thread_sync();
  if constexpr (wsv_bug("cluster-exit-early"))
    // BUG(cluster-exit-early): cta_sync only: a CTA may exit while its peer still arrives on its
    // barriers or CTA 0's MMAs still use its shared memory and TMEM
    __syncthreads();
  else
    cluster_sync();
  if (wg_id == 0 && warp_id == 0) {
    tcgen05_fence_after_thread_sync();
    tmem_relinquish_alloc_permit<CTA_GROUP>();
    tmem_dealloc<CTA_GROUP>(tmem, kTmemCols);
  }
}

// Entry points, fp16 (the seed's type) and bf16: A, B and D share the element type. The parameter
// list is the one every reference GEMM takes; `d` is unused because D is written by TMA stores.
// Launched in clusters of CTA_GROUP CTAs along x (KernelInfo::ClusterM).
extern "C" __global__ void __launch_bounds__(b4::kThreads, 1)
    b4_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b4_tirx_step8<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b4::kThreads, 1)
    b4_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b4_tirx_step8<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
