// H5: the fastest kernel, H4's 2-CTA cluster made persistent. One CTA per SM walks cluster tiles
// in a grouped order, ring stages and phases run on across tiles, and each consumer writes its
// rows through stmatrix into a swizzled staging buffer that a TMA store copies out (TIRx Step 7's
// persistent writeback, with wgmma instead of TMEM).
//
// Protocol
//   cluster   C = 2 CTAs along M, as H4: rank r loads A rows of its own tile and B rows
//             [256r/C, 256(r+1)/C) of the shared B tile, multicast to all (ctaMask 2^C - 1).
//   schedule  cluster tile t = cluster id, + number of clusters, ...; t -> (tm, tn) in groups of
//             GROUP tile rows; CTA rank r computes D rows 128 (C tm + r), columns 256 tn.
//   roles     producer = warpgroup 0 (setmaxnreg.dec 40; warp 0's elected lane issues TMA);
//             consumer0, consumer1 = warpgroups 1 and 2 (setmaxnreg.inc 232), rows 64c..64c+63.
//   full[s]   init 1: arrive.expect_tx(49152) = A 16 KiB + C multicast B parts of 32/C KiB.
//   empty[s]  init 2C = 2 consumers x C CTAs; each consumer's thread 0 arrives on every CTA's.
//   phases    one counter per role runs over all tiles: stage it % 4, parity (it / 4) & 1
//             (producer: empty parity ^ 1), never reset at a tile boundary.
//   epilogue  per consumer, 4 chunks of 64 x 64 through B = 2 staging buffers of 8 KiB (128B
//             swizzle): thread 0 waits bulk wait_group.read B - 1 (the store that last read this
//             buffer is done);
//             bar.sync 2 + c, 128; stmatrix; fence.proxy.async; bar.sync 2 + c, 128; thread 0
//             issues the TMA store and commit_group. Before exit: wait_group 0, barrier.cluster.
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_bug.h"
#include "wsv_check.cuh"

#ifndef H5_STAGES
#define H5_STAGES 4
#endif
// CTAs per cluster sharing each B tile (2 or 4; PERF.md compares them).
#ifndef H5_CLUSTER
#define H5_CLUSTER 2
#endif
#ifndef H5_GROUP
#define H5_GROUP 8
#endif
// Staging buffers per consumer: with 4 a tile's four chunks never wait for a store, at the price
// of a pipeline stage (PERF.md).
#ifndef H5_STAGING_BUFFERS
#define H5_STAGING_BUFFERS 2
#endif
// 1: stmatrix + TMA store (the protocol above); 2: plain stores from registers (PERF.md compares
// them); 0, for measurement only: D is left unwritten, to time the kernel without an epilogue.
#ifndef H5_EPILOGUE
#define H5_EPILOGUE 1
#endif

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 128, TILE_N = 256, TILE_K = 64, STAGES = H5_STAGES, CONSUMERS = 2;
constexpr uint32_t CLUSTER = H5_CLUSTER, GROUP = H5_GROUP;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t B_PART_ROWS = TILE_N / CLUSTER;   // B rows each CTA loads and multicasts
constexpr uint32_t B_PART_BYTES = B_BYTES / CLUSTER;
constexpr uint16_t MULTICAST_ALL = (1u << CLUSTER) - 1;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t CHUNK = 64;                                   // D columns per TMA store
constexpr uint32_t CHUNK_BYTES = 64 * CHUNK * elem_bytes;        // 64 rows x 64 columns
constexpr uint32_t BUFFERS = H5_STAGING_BUFFERS;                 // staging buffers per consumer
constexpr uint32_t STAGING_BYTES = CONSUMERS * BUFFERS * CHUNK_BYTES;
constexpr uint32_t THREADS = 128 * (1 + CONSUMERS);
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + STAGING_BYTES + 2 * STAGES * 8;
constexpr uint32_t BAR_EPILOGUE = 2;  // named barriers 2 and 3: one per consumer warpgroup
static_assert(SMEM_BYTES + 1024 <= 232448, "shared memory: 227 KiB per CTA, 1 KiB kept for the "
                                           "checked build's static state");

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER0, ROLE_CONSUMER1 };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

// Cluster tile t in groups of GROUP tile rows, column by column inside a group, so the clusters
// running at once share A rows and B columns in L2.
__device__ __forceinline__ void tile_coords(uint32_t t, uint32_t tiles_m, uint32_t tiles_n,
                                            uint32_t& tm, uint32_t& tn) {
  const uint32_t per_group = GROUP * tiles_n;
  const uint32_t first = t / per_group * GROUP;
  const uint32_t rows = min(GROUP, tiles_m - first);
  const uint32_t r = t % per_group;
  tm = first + r % rows;
  tn = r / rows;
}

template <elem E>
__device__ __forceinline__ void h5_gemm(const void* tma_a, const void* tma_b, const void* tma_d,
                                        uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {
  extern __shared__ uint8_t smem[];
  const uint32_t base = (smem_u32(smem) + 1023) & ~1023u;  // 128B swizzle atoms: 1 KiB aligned
  const uint32_t staging = base + STAGES * STAGE_BYTES;
  const uint32_t bars = staging + STAGING_BYTES;
  auto a_tile = [=](uint32_t s) { return base + s * STAGE_BYTES; };
  auto b_tile = [=](uint32_t s) { return base + s * STAGE_BYTES + A_BYTES; };
  auto full = [=](uint32_t s) { return bars + 8 * s; };
  auto empty = [=](uint32_t s) { return bars + 8 * (STAGES + s); };
  const uint32_t k_tiles = k / TILE_K;
  const uint32_t tiles_m = m / (TILE_M * CLUSTER), tiles_n = n / TILE_N;
  const uint32_t tiles = tiles_m * tiles_n;
  const uint32_t first_tile = blockIdx.x / CLUSTER, tile_step = gridDim.x / CLUSTER;
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
      tma_prefetch_descriptor(tma_a);
      tma_prefetch_descriptor(tma_b);
      uint32_t it = 0;
      for (uint32_t t = first_tile; t < tiles; t += tile_step) {
        uint32_t tm, tn;
        tile_coords(t, tiles_m, tiles_n, tm, tn);
        const uint32_t row = (tm * CLUSTER + rank) * TILE_M, col = tn * TILE_N + rank * B_PART_ROWS;
        for (uint32_t i = 0; i < k_tiles; ++i, ++it) {
          const uint32_t s = it % STAGES, parity = (it / STAGES) & 1;
          mbarrier_wait_at(empty(s), parity ^ 1, {ROLE_PRODUCER, BAR_EMPTY, s, it});
          mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
          tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, row);
          tma_load_2d_multicast(b_tile(s) + rank * B_PART_BYTES, tma_b, full(s), i * TILE_K, col,
                                MULTICAST_ALL);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const uint32_t c = wg - 1;
    const uint32_t me = ROLE_CONSUMER0 + c;
    // BUG(named-barrier-id-collision): both consumer warpgroups sync their epilogue on one id
    const uint32_t bar_id = wsv_bug("named-barrier-id-collision") ? BAR_EPILOGUE : BAR_EPILOGUE + c;
    // BUG(named-barrier-count): the epilogue barrier counts both consumers' threads, but only this
    // warpgroup uses its id
    const uint32_t bar_threads = wsv_bug("named-barrier-count") ? 256 : 128;
    const bool leader = wg_thread == 0;
    const uint32_t warp = wg_thread / 32, lane = wg_thread % 32;
    // stmatrix: lane l addresses row (l % 8) + 8 ((l / 8) % 2) and column 8 (l / 16) of a 16x16 block.
    const uint32_t st_row = 16 * warp + lane % 8 + 8 * ((lane / 8) % 2);
    const uint32_t st_col8 = lane / 16;
    auto release = [&](uint32_t s) {
      if (leader)
        for (uint32_t r = 0; r < CLUSTER; ++r) mbarrier_arrive_remote(empty(s), r);
    };
    if (leader) tma_prefetch_descriptor(tma_d);

    float acc[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) acc[j] = 0.f;
    uint32_t it = 0, chunk = 0;
    for (uint32_t t = first_tile; t < tiles; t += tile_step) {
      uint32_t tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      // BUG(mbarrier-phase-skip): the consumers restart the ring at stage 0, parity 0 on every
      // tile while the producer carries on; a phase or two apart, parity waits pass early
      if constexpr (wsv_bug("mbarrier-phase-skip")) it = 0;
      for (uint32_t i = 0; i < k_tiles; ++i, ++it) {
        const uint32_t s = it % STAGES, parity = (it / STAGES) & 1;
        mbarrier_wait_at(full(s), parity, {me, BAR_FULL, s, it});
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (uint32_t kk = 0; kk < TILE_K / 16; ++kk)
          wgmma_m64n256k16<E>(acc, wgmma_desc_sw128(a_tile(s) + c * 64 * 128 + 32 * kk),
                              wgmma_desc_sw128(b_tile(s) + 32 * kk), i > 0 || kk > 0);
        wgmma_commit();
        wgmma_wait<1>();
        if (i > 0) release((it - 1) % STAGES);
      }
      wgmma_wait<0>();
      wgmma_fence_operands(acc);
      release((it - 1) % STAGES);

      if constexpr (H5_EPILOGUE == 2)
        store_fragment<E, 256>(acc, d, n, (tm * CLUSTER + rank) * TILE_M + 64 * c, tn * TILE_N,
                               wg_thread);
      if constexpr (H5_EPILOGUE == 0) {
        // Keep every accumulator live (ptxas drops wgmma whose results nothing reads) at the cost
        // of a sum; the store never happens for finite inputs.
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < 128; ++j) sum += acc[j];
        if (__float_as_uint(sum) == 0x7fc00001u) d[0] = 1;
      }
      if constexpr (H5_EPILOGUE == 1) {
        const uint32_t row0 = (tm * CLUSTER + rank) * TILE_M + 64 * c, col0 = tn * TILE_N;
#pragma unroll
        for (uint32_t j = 0; j < TILE_N / CHUNK; ++j, ++chunk) {
          // BUG(bulk-store-reuse): one staging buffer, rewritten by the next chunk without waiting
          // for the TMA store that reads it
          const uint32_t slot = wsv_bug("bulk-store-reuse") ? 0 : chunk % BUFFERS;
          const uint32_t buf = staging + (BUFFERS * c + slot) * CHUNK_BYTES;
          if (!wsv_bug("bulk-store-reuse") && leader) bulk_wait_group_read<BUFFERS - 1>();
          named_barrier_sync_at(bar_id, bar_threads, {me, 0, bar_id, it});
#pragma unroll
          for (uint32_t q = 0; q < CHUNK / 16; ++q) {
            const uint32_t g = (CHUNK / 8) * j + 2 * q;  // first of the two 8-column groups
            const uint32_t col = 16 * q + 8 * st_col8;
            const uint32_t addr = buf + st_row * 128 + (((col / 8) ^ (st_row % 8)) * 16);
            stmatrix_x4(addr, pack2<E>(acc[4 * g], acc[4 * g + 1]),
                        pack2<E>(acc[4 * g + 2], acc[4 * g + 3]),
                        pack2<E>(acc[4 * g + 4], acc[4 * g + 5]),
                        pack2<E>(acc[4 * g + 6], acc[4 * g + 7]));
          }
          // BUG(proxy-fence-missing): stmatrix writes reach the TMA store (async proxy) unfenced
          if constexpr (!wsv_bug("proxy-fence-missing")) fence_proxy_async_shared();
          named_barrier_sync_at(bar_id, bar_threads, {me, 0, bar_id, it});
          if (leader) {
            tma_store_2d(tma_d, buf, col0 + CHUNK * j, row0);
            bulk_commit_group();
          }
        }
      }
    }
    if (leader) bulk_wait_group<0>();
  }
  cluster_sync();
}

}  // namespace

WSV_GEMM_CLUSTER_ENTRIES(h5, h5_gemm, THREADS, H5_CLUSTER)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, CLUSTER,
                SMEM_BYTES, /*Persistent=*/1, /*BoxARows=*/TILE_M, /*BoxBRows=*/B_PART_ROWS,
                /*BoxDRows=*/64, /*BoxDCols=*/CHUNK, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer0,consumer1", "full,empty");
