// H6: H5 as a ping-pong. Each consumer warpgroup owns whole tiles of 64 x 256 (one m64n256k16
// accumulator set) and the two consumers take the cluster's tiles in turn, so that one writes its
// tile out while the other's wgmma keep the tensor cores busy (CUTLASS's
// KernelTmaWarpSpecializedPingpong). H5's consumers share a 128 x 256 tile and both stop the tensor
// cores for their epilogue (about 3% at 4096^3, PERF.md). The price: a stage carries 64 rows of A
// for 256 columns of B, so B's bytes per flop double in shared memory and L2, and the bytes into
// each SM per tensor-core cycle go from 48 to 80 B/clk, above what an SM takes in (about 64):
// measured 5-13% slower than H5 (PERF.md, version 10). Kept as a correct ping-pong protocol.
//
// Protocol
//   cluster   C = 2 CTAs along M: rank r loads A rows of its own tile and B rows
//             [256r/C, 256(r+1)/C) of the shared B tile, multicast to all (ctaMask 2^C - 1).
//   schedule  cluster tile t = cluster id, + number of clusters, ...; t -> (tm, tn) in groups of
//             GROUP tile rows; CTA rank r computes D rows 64 (C tm + r), columns 256 tn. The j-th
//             tile of the cluster's sequence belongs to consumer j % 2.
//   roles     producer = warpgroup 0 (setmaxnreg.dec 40; warp 0's elected lane issues TMA for
//             every tile in sequence order); consumer0, consumer1 = warpgroups 1 and 2
//             (setmaxnreg.inc 232), each the whole 64 rows of its own tiles.
//   full[s]   init 1: arrive.expect_tx(40960) = A 8 KiB + C multicast B parts of 32/C KiB.
//   empty[s]  init C = 1 consumer x C CTAs; the tile's consumer's thread 0 arrives on every CTA's.
//   phases    the ring runs over the cluster's tile sequence: the producer's counter `it` counts
//             every k-tile it loads; the consumer of tile j starts at it = j k_tiles and skips the
//             other consumer's tiles. Stage it % S, parity (it / S) & 1 (producer: empty parity
//             ^ 1).
//   order     a parity wait tells only the current phase from the one before, so the consumer of
//             tile j + 1 may wait on its first stage only once every earlier stage has completed:
//             the consumer of tile j, past its last full wait, does bar.arrive 4 + (1 - c), 256;
//             the consumer of tile j + 1 does bar.sync 4 + c, 256 before its first full wait
//             (consumer0 skips it for its first tile; no arrive after the cluster's last tile).
//             The mainloops therefore take turns, and each epilogue runs under the other
//             consumer's wgmma.
//   epilogue  per consumer, 4 chunks of 64 x 64 through B staging buffers of 8 KiB of its own
//             (128B swizzle): thread 0 waits bulk wait_group.read B - 1 (the store that last
//             read this buffer is done); bar.sync 2 + c, 128; stmatrix; fence.proxy.async;
//             bar.sync 2 + c, 128; thread 0 issues the TMA store and commit_group. Before exit:
//             wait_group 0, barrier.cluster.
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_check.cuh"

// A k-tile is half of H5's work, so the ring needs more stages for the same latency cover; five
// of 40 KiB leave room for one staging buffer per consumer.
#ifndef H6_STAGES
#define H6_STAGES 5
#endif
#ifndef H6_STAGING_BUFFERS
#define H6_STAGING_BUFFERS 1
#endif
// Groups of 16 tile rows of 128 cover the same 2048 rows of A as H5's groups of 8.
#ifndef H6_GROUP
#define H6_GROUP 16
#endif

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 64, TILE_N = 256, TILE_K = 64, STAGES = H6_STAGES, CONSUMERS = 2;
constexpr uint32_t CLUSTER = 2, GROUP = H6_GROUP;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t B_PART_ROWS = TILE_N / CLUSTER;   // B rows each CTA loads and multicasts
constexpr uint32_t B_PART_BYTES = B_BYTES / CLUSTER;
constexpr uint16_t MULTICAST_ALL = (1u << CLUSTER) - 1;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t CHUNK = 64;                                   // D columns per TMA store
constexpr uint32_t CHUNK_BYTES = TILE_M * CHUNK * elem_bytes;    // 64 rows x 64 columns
constexpr uint32_t BUFFERS = H6_STAGING_BUFFERS;                 // staging buffers per consumer
constexpr uint32_t STAGING_BYTES = CONSUMERS * BUFFERS * CHUNK_BYTES;
constexpr uint32_t THREADS = 128 * (1 + CONSUMERS);
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + STAGING_BYTES + 2 * STAGES * 8;
constexpr uint32_t BAR_EPILOGUE = 2;  // named barriers 2 and 3: one per consumer warpgroup
constexpr uint32_t BAR_ORDER = 4;     // named barriers 4 and 5: consumer c may start its mainloop
static_assert(STAGE_BYTES % 1024 == 0 && A_BYTES % 1024 == 0, "128B swizzle atoms: 1 KiB aligned");
static_assert(SMEM_BYTES + 1024 <= 232448, "shared memory: 227 KiB per CTA, 1 KiB kept for the "
                                           "checked build's static state");

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER0, ROLE_CONSUMER1 };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

// Cluster tile t in groups of GROUP tile rows, column by column inside a group, so the clusters
// running at once share A rows and B columns in L2 (as H5).
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
__device__ __forceinline__ void h6_gemm(const void* tma_a, const void* tma_b, const void* tma_d,
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
      mbarrier_init(empty(s), CLUSTER);  // one consumer per tile, on each CTA
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
    const uint32_t bar_id = BAR_EPILOGUE + c;
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
    uint32_t chunk = 0;
    // This consumer's tiles are the cluster's tiles c, c + 2, c + 4, ...: tile j of the sequence
    // starts at ring position j k_tiles.
    for (uint32_t j = c, t = first_tile + c * tile_step; t < tiles; j += 2, t += 2 * tile_step) {
      uint32_t tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      uint32_t it = j * k_tiles;
      if (j > 0) named_barrier_sync_at(BAR_ORDER + c, 256, {me, 0, BAR_ORDER + c, it});
      for (uint32_t i = 0; i < k_tiles; ++i, ++it) {
        const uint32_t s = it % STAGES, parity = (it / STAGES) & 1;
        mbarrier_wait_at(full(s), parity, {me, BAR_FULL, s, it});
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (uint32_t kk = 0; kk < TILE_K / 16; ++kk)
          wgmma_m64n256k16<E>(acc, wgmma_desc_sw128(a_tile(s) + 32 * kk),
                              wgmma_desc_sw128(b_tile(s) + 32 * kk), i > 0 || kk > 0);
        wgmma_commit();
        wgmma_wait<1>();
        if (i > 0) release((it - 1) % STAGES);
      }
      // Every stage up to this tile's last has completed: the next tile's consumer may wait.
      if (t + tile_step < tiles) named_barrier_arrive(BAR_ORDER + (1 - c), 256);
      wgmma_wait<0>();
      wgmma_fence_operands(acc);
      release((it - 1) % STAGES);

      const uint32_t row0 = (tm * CLUSTER + rank) * TILE_M, col0 = tn * TILE_N;
#pragma unroll
      for (uint32_t q4 = 0; q4 < TILE_N / CHUNK; ++q4, ++chunk) {
        const uint32_t buf = staging + (BUFFERS * c + chunk % BUFFERS) * CHUNK_BYTES;
        if (leader) bulk_wait_group_read<BUFFERS - 1>();
        named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it});
#pragma unroll
        for (uint32_t q = 0; q < CHUNK / 16; ++q) {
          const uint32_t g = (CHUNK / 8) * q4 + 2 * q;  // first of the two 8-column groups
          const uint32_t col = 16 * q + 8 * st_col8;
          const uint32_t addr = buf + st_row * 128 + (((col / 8) ^ (st_row % 8)) * 16);
          stmatrix_x4(addr, pack2<E>(acc[4 * g], acc[4 * g + 1]),
                      pack2<E>(acc[4 * g + 2], acc[4 * g + 3]),
                      pack2<E>(acc[4 * g + 4], acc[4 * g + 5]),
                      pack2<E>(acc[4 * g + 6], acc[4 * g + 7]));
        }
        fence_proxy_async_shared();
        named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it});
        if (leader) {
          tma_store_2d(tma_d, buf, col0 + CHUNK * q4, row0);
          bulk_commit_group();
        }
      }
    }
    if (leader) bulk_wait_group<0>();
  }
  cluster_sync();
}

}  // namespace

WSV_GEMM_CLUSTER_ENTRIES(h6, h6_gemm, THREADS, 2)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, CLUSTER,
                SMEM_BYTES, /*Persistent=*/1, /*BoxARows=*/TILE_M, /*BoxBRows=*/B_PART_ROWS,
                /*BoxDRows=*/TILE_M, /*BoxDCols=*/CHUNK, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer0,consumer1", "full,empty");
