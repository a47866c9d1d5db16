// B6 - CuTeDSL warp-specialized 1-CTA mainloop with an accumulator pipeline and try_wait peeking
// (seed 004, "Warp specialisation" and "Peeking").
//
// D[M,N] = A[M,K] (K-major) x B[N,K]^T (K-major), bf16 (the seed's examples) or fp16 in and out,
// fp32 accumulator in TMEM. Grid (M/128, N/128), 128 threads, one 128 x 128 tile per CTA.
//
// Roles (warp_idx = tid / 32)
//   TMA warp (tma_warp_id 0, tid 0-31)  ab pipeline producer: the whole warp acquires (peeked
//       try_wait, else wait on ab_empty); one elected lane issues arrive.expect_tx and the loads
//   MMA warp (mma_warp_id 1, tid 32-63) acc pipeline producer and ab pipeline consumer: the
//       whole warp acquires acc_empty, then per k-tile waits ab_full (peeked); one elected lane
//       issues the 4 UMMAs and releases the stage with tcgen05.commit on ab_empty; after the
//       loop the elected lane commits acc_full. The MMA warp (all lanes) allocates and frees
//       128 TMEM columns.
//   epilogue (all 4 warps, tid 0-127) acc pipeline consumer: waits acc_full, tcgen05.ld, releases
//       acc_empty, stages D, one TMA store. Warps 2-3 start here; warps 0-1 after their loops.
// Pipelines (init count: who arrives, per phase)
//   ab_full[4]   1    TMA leader arrive.expect_tx 32768 B; TMA complete_tx A 16384 B + B 16384 B
//   ab_empty[4]  1    MMA leader tcgen05.commit (ab_full.release())
//   acc_full     1    MMA leader tcgen05.commit after the last k-tile (acc_empty.commit())
//   acc_empty    128  every epilogue thread (acc_full.release())
// Stages and starting (stage, phase): ab producer (0, 1), ab consumer (0, 0) over AB_STAGES = 4;
//   acc producer (0, 1), acc consumer (0, 0) over ACC_STAGES = 1.
// Peeking: a role try_waits (one non-blocking test) on the barrier it will wait on next, right
//   after finishing the previous k-tile; when the peek already saw the phase complete, the
//   blocking wait is skipped. After the last k-tile the status is set to true (nothing to peek).
// Trip counts: both pipeline roles run K_TILES = K / 64 k-tiles.
// Epilogue: 128 columns per thread, fence.proxy.async, cta_sync, tid 0 stores two 64-column
//   boxes + commit_group + wait_group.read 0; cta_sync, then the MMA warp deallocates.
#include <cuda.h>

#include "epilogue.cuh"
#include "pipeline.cuh"
#include "tcgen05.cuh"
#include "wsv_abi.h"
#include "wsv_bug.h"

namespace b6 {
using namespace wsv;
constexpr uint32_t BM = 128, BN = 128, BK = 64;
constexpr uint32_t AB_STAGES = 4;
constexpr uint32_t ACC_STAGES = 1;
constexpr uint32_t kThreads = 128;
constexpr uint32_t tma_warp_id = 0, mma_warp_id = 1;
constexpr uint32_t kTmemCols = BN;
constexpr uint32_t kEpiN = 64;  // columns per TMA store box (one 128 B swizzle row)
constexpr uint32_t kBytesA = BM * BK * 2;  // 16384
constexpr uint32_t kBytesB = BN * BK * 2;  // 16384
constexpr uint32_t kBytesEpi = BM * kEpiN * 2;
// Dynamic shared memory (1024 B aligned for the 128 B swizzle): sA, sB, sD.
constexpr uint32_t kSmemA = 0;
constexpr uint32_t kSmemB = kSmemA + AB_STAGES * kBytesA;
constexpr uint32_t kSmemD = kSmemB + AB_STAGES * kBytesB;
constexpr uint32_t kSmemBytes = kSmemD + BM * BN * 2;  // 163840
static_assert(kSmemBytes <= 227 * 1024, "sm_100 allows 227 KB of dynamic shared memory per CTA");
}  // namespace b6

// What `wsv run` reads from this PTX to launch it (reference_kernels/common/wsv_abi.h).
extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {
    /*Version=*/wsv::abi::KernelInfoVersion, /*TileM=*/b6::BM, /*TileN=*/b6::BN, /*TileK=*/b6::BK,
    /*Stages=*/b6::AB_STAGES, /*Threads=*/b6::kThreads, /*ClusterM=*/1,
    /*SmemBytes=*/b6::kSmemBytes, /*Persistent=*/0, /*BoxARows=*/b6::BM, /*BoxBRows=*/b6::BN,
    /*BoxDRows=*/b6::BM, /*BoxDCols=*/b6::kEpiN, /*TensorMaps=*/wsv::abi::TensorMapsAsParams,
    /*MinKTiles=*/1, /*Roles=*/"tma,mma,epilogue",
    /*Barriers=*/"ab_full,ab_empty,acc_full,acc_empty"};

template <typename T>
__device__ __forceinline__ void b6_cutedsl_ws(const CUtensorMap* tmap_a, const CUtensorMap* tmap_b,
                                              const CUtensorMap* tmap_d, uint32_t M, uint32_t N,
                                              uint32_t K) {
  using namespace b6;
  constexpr uint32_t kIdesc = umma_idesc_f16(umma_input<T>(), umma_input<T>(), BM, BN);
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t ab_full[AB_STAGES];
  __shared__ __align__(8) uint64_t ab_empty[AB_STAGES];
  __shared__ __align__(8) uint64_t acc_full[ACC_STAGES];
  __shared__ __align__(8) uint64_t acc_empty[ACC_STAGES];
  __shared__ uint32_t tmem_addr_slot;

  const uint32_t warp_idx = threadIdx.x / 32;
  const uint32_t lane_idx = threadIdx.x % 32;
  const uint32_t sA = smem_u32(smem + kSmemA);
  const uint32_t sB = smem_u32(smem + kSmemB);
  const uint32_t sD = smem_u32(smem + kSmemD);
  const int32_t m_offset = blockIdx.x * BM;
  const int32_t n_offset = blockIdx.y * BN;
  const uint32_t num_k_tiles = K / BK;

  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < AB_STAGES; ++s) {
      mbarrier_init(smem_u32(&ab_full[s]), 1);
      mbarrier_init(smem_u32(&ab_empty[s]), 1);
    }
    mbarrier_init(smem_u32(&acc_full[0]), 1);
    mbarrier_init(smem_u32(&acc_empty[0]), kThreads);
    fence_mbarrier_init();
  }
  if (warp_idx == mma_warp_id) {
    tmem_alloc<1>(smem_u32(&tmem_addr_slot), kTmemCols);
    tmem_relinquish_alloc_permit<1>();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tCtAcc = tmem_addr_slot;

  if (warp_idx == tma_warp_id) {
    // === TMA warp: ab pipeline producer ===
    // BUG(mbarrier-initial-phase): the producer starts at phase 0, like the consumer
    PipelineState<AB_STAGES> ab_producer{0, wsv_bug("mbarrier-initial-phase") ? 0u : 1u};
    const bool leader = elect_one_sync();
    bool peek_ab_empty = mbarrier_try_wait_parity(smem_u32(&ab_empty[0]), ab_producer.phase);
#pragma unroll 1
    for (uint32_t k_tile = 0; k_tile < num_k_tiles; ++k_tile) {
      if (!peek_ab_empty)
        mbarrier_wait(smem_u32(&ab_empty[ab_producer.stage]), ab_producer.phase);
      if (leader) {
        const uint32_t bar = smem_u32(&ab_full[ab_producer.stage]);
        mbarrier_arrive_expect_tx(bar, kBytesA + kBytesB);
        tma_load_2d(sA + ab_producer.stage * kBytesA, tmap_a, bar, k_tile * BK, m_offset);
        tma_load_2d(sB + ab_producer.stage * kBytesB, tmap_b, bar, k_tile * BK, n_offset);
      }
      __syncwarp();
      ab_producer.advance();
      // Peek at the stage of k-tile k_tile + 1.
      peek_ab_empty = true;
      if (k_tile + 1 < num_k_tiles)
        peek_ab_empty =
            mbarrier_try_wait_parity(smem_u32(&ab_empty[ab_producer.stage]), ab_producer.phase);
    }
  } else if (warp_idx == mma_warp_id) {
    // === MMA warp: acc pipeline producer, ab pipeline consumer ===
    PipelineState<AB_STAGES> ab_consumer{0, 0};
    PipelineState<ACC_STAGES> acc_producer{0, 1};
    // BUG(smem-raw-wait): the peek status is taken as "full" without looking at the barrier
    auto peek_full = [&] {
      return wsv_bug("smem-raw-wait") ||
             mbarrier_try_wait_parity(smem_u32(&ab_full[ab_consumer.stage]), ab_consumer.phase);
    };
    // One lane issues every UMMA and every commit: a commit tracks its own thread's UMMAs.
    const bool leader = elect_one_sync();
    bool peek_ab_full = peek_full();
    mbarrier_wait(smem_u32(&acc_empty[acc_producer.stage]), acc_producer.phase);
    tcgen05_fence_after_thread_sync();
#pragma unroll 1
    for (uint32_t k_tile = 0; k_tile < num_k_tiles; ++k_tile) {
      if (!peek_ab_full) mbarrier_wait(smem_u32(&ab_full[ab_consumer.stage]), ab_consumer.phase);
      const uint32_t empty = smem_u32(&ab_empty[ab_consumer.stage]);
      if (leader) {
        const uint64_t a_desc = umma_sdesc_sw128(sA + ab_consumer.stage * kBytesA);
        const uint64_t b_desc = umma_sdesc_sw128(sB + ab_consumer.stage * kBytesB);
#pragma unroll
        for (uint32_t k_block = 0; k_block < BK / kUmmaK; ++k_block)
          umma_f16<1>(tCtAcc, umma_sdesc_advance_k(a_desc, k_block),
                      umma_sdesc_advance_k(b_desc, k_block), kIdesc, k_tile != 0 || k_block != 0);
      }
      // ab_full.release(): the stage is free once the UMMAs above have read it.
      if constexpr (wsv_bug("smem-war-release")) {
        // BUG(smem-war-release): a thread arrive releases the stage while the UMMAs still read it
        if (leader) mbarrier_arrive(empty);
      } else {
        // BUG(tcgen05-commit-multi-thread): every lane commits; 31 empty groups arrive at once
        if (wsv_bug("tcgen05-commit-multi-thread") || leader) umma_commit(empty);
      }
      ab_consumer.advance();
      peek_ab_full = true;
      if (k_tile + 1 < num_k_tiles) peek_ab_full = peek_full();
    }
    // acc_empty.commit(): the accumulator is complete once every UMMA above has finished.
    if (leader) umma_commit(smem_u32(&acc_full[acc_producer.stage]));
    acc_producer.advance();
  }

  // === Epilogue (all 4 warps): acc pipeline consumer ===
  PipelineState<ACC_STAGES> acc_consumer{0, 0};
  // BUG(accumulator-early-read): the epilogue reads TMEM without waiting on acc_full
  if constexpr (!wsv_bug("accumulator-early-read"))
    mbarrier_wait(smem_u32(&acc_full[acc_consumer.stage]), acc_consumer.phase);
  tcgen05_fence_after_thread_sync();
  const uint32_t row = warp_idx * 32 + lane_idx;  // TMEM lane = output row
  uint32_t acc[BN / 32][32];
#pragma unroll
  for (uint32_t c = 0; c < BN / 32; ++c)
    tmem_ld_32x32b_x32(tmem_addr(tCtAcc, warp_idx * 32, c * 32), acc[c]);
  tmem_ld_wait();
  tcgen05_fence_before_thread_sync();
  mbarrier_arrive(smem_u32(&acc_empty[acc_consumer.stage]));  // acc_full.release()
  acc_consumer.advance();
#pragma unroll
  for (uint32_t c = 0; c < BN / 32; ++c)
    stage_row_sw128<T>(sD + c / 2 * kBytesEpi, row, c % 2, acc[c]);
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    for (uint32_t e = 0; e < BN / kEpiN; ++e)
      tma_store_2d(tmap_d, sD + e * kBytesEpi, n_offset + e * kEpiN, m_offset);
    bulk_commit_group();
    bulk_wait_group_read<0>();  // sD stays valid until the stores have read it
  }

  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp_idx == mma_warp_id) {
    tcgen05_fence_after_thread_sync();
    tmem_dealloc<1>(tCtAcc, kTmemCols);
  }
}

// Entry points, bf16 (the seed's examples) and fp16: A, B and D share the element type. The
// parameter list is the one every reference GEMM takes; `d` is unused (D is written by TMA).
extern "C" __global__ void __launch_bounds__(b6::kThreads, 1)
    b6_bf16(const __grid_constant__ CUtensorMap tmap_a,
            const __grid_constant__ CUtensorMap tmap_b,
            const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
            uint32_t K) {
  b6_cutedsl_ws<__nv_bfloat16>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}

extern "C" __global__ void __launch_bounds__(b6::kThreads, 1)
    b6_f16(const __grid_constant__ CUtensorMap tmap_a,
           const __grid_constant__ CUtensorMap tmap_b,
           const __grid_constant__ CUtensorMap tmap_d, uint16_t* d, uint32_t M, uint32_t N,
           uint32_t K) {
  b6_cutedsl_ws<__half>(&tmap_a, &tmap_b, &tmap_d, M, N, K);
}
