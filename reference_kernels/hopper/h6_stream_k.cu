// H6: H5 with the last, partial wave split stream-K and a deferred epilogue. The tiles that do
// not fill a whole wave of clusters are cut into even k-shares, one per cluster, and partial sums
// of a tile meet through global memory; and D of a tile leaves while the next tile's wgmma run,
// from a rounded copy in registers. At 8192^3 the last wave is half empty in H5 and this kernel
// is about 2.5% faster; at 4096^3 a hand-over costs more than it saves and stream-K stays off
// (PERF.md, versions 11-15).
//
// Protocol
//   cluster   C = 2 CTAs along M, as H5: rank r loads A rows of its own tile and B rows
//             [128r, 128(r+1)) of the shared B tile, multicast to both (ctaMask 0b11).
//   schedule  G clusters; rem = tiles % G. Stream-K runs when rem >= G / 2, the grid has at most
//             132 CTAs and each cluster's share saves H6_SK_MIN_SAVING k-tiles (a share is
//             rem k_tiles / G k-tiles instead of k_tiles); then the first tiles - rem tiles run
//             whole as in H5 (cluster tile t = cluster id, + G, ...; grouped order), and the
//             rem x k_tiles k-tiles of the last rem tiles are cut into shares, cluster w taking
//             [w rem k_tiles / G, (w + 1) rem k_tiles / G): at most two pieces, each a k-range of
//             one tile. Otherwise every tile runs whole.
//   roles     producer = warpgroup 0 (setmaxnreg.dec 40; warp 0's elected lane issues TMA for every
//             whole tile and piece in order); consumer0, consumer1 = warpgroups 1 and 2
//             (setmaxnreg.inc 232), rows 64c..64c+63 of each.
//   full[s]   init 1: arrive.expect_tx(49152) = A 16 KiB + 2 multicast B halves of 16 KiB.
//   empty[s]  init 2C = 2 consumers x C CTAs; each consumer's thread 0 arrives on every CTA's.
//   phases    one count per role runs over all tiles and pieces: stage it % 4, parity
//             (it / 4) & 1 (producer: empty parity ^ 1), never reset; it is computed from the
//             unit (the k-tiles of the cluster's units before it), not carried.
//   epilogue  deferred: at the end of a tile (or of the piece that finishes it) each consumer
//             rounds its 64 x 256 accumulators to E into 64 packed registers; chunk j of them
//             (64 x 64) is stored right after the wgmma of k-tile j of the consumer's next tile
//             or piece are issued, through B = 2 staging buffers of 8 KiB (128B swizzle): thread
//             0 waits bulk wait_group.read B - 1; bar.sync 2 + c, 128; stmatrix;
//             fence.proxy.async; bar.sync 2 + c, 128; thread 0 issues the TMA store and
//             commit_group. Chunks left over (a unit of fewer than 4 k-tiles) go at the end of
//             that unit, and the last tile's before exit; then wait_group 0, barrier.cluster.
//   hand-over a piece that starts past k-tile 0 stores its fp32 partial sum to its consumer's
//             slot in global memory, bar.sync 2 + c, 128, and thread 0 sets the slot's flag
//             (st.release.gpu). The piece that starts at k-tile 0 is the last of its cluster's
//             share: for each later cluster whose share starts inside the tile, thread 0 waits
//             for the flag of the slot of the same rank and consumer (ld.acquire.gpu) and clears
//             it, bar.sync 2 + c, 128, and the consumer adds the partial sum. Slots and flags are
//             module globals: one launch at a time per loaded module, and a launch that traps can
//             leave a flag set for the next.
#include "gemm_common.cuh"
#include "ptx_sync.cuh"
#include "wsv_check.cuh"

#ifndef H6_GROUP
#define H6_GROUP 8
#endif
// Handing a partial sum over costs about 15 k-tiles of time (PERF.md, version 11), so stream-K
// runs only where it shortens every cluster's last wave by at least this many k-tiles (0: wherever
// the last wave is at least half full; the checks use that).
#ifndef H6_SK_MIN_SAVING
#define H6_SK_MIN_SAVING 32
#endif

namespace {

using namespace wsv;

constexpr uint32_t TILE_M = 128, TILE_N = 256, TILE_K = 64, STAGES = 4, CONSUMERS = 2;
constexpr uint32_t CLUSTER = 2, GROUP = H6_GROUP;
constexpr uint32_t A_BYTES = TILE_M * TILE_K * elem_bytes;
constexpr uint32_t B_BYTES = TILE_N * TILE_K * elem_bytes;
constexpr uint32_t B_PART_ROWS = TILE_N / CLUSTER;   // B rows each CTA loads and multicasts
constexpr uint32_t B_PART_BYTES = B_BYTES / CLUSTER;
constexpr uint16_t MULTICAST_ALL = (1u << CLUSTER) - 1;
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
constexpr uint32_t CHUNK = 64;                                   // D columns per TMA store
constexpr uint32_t CHUNKS = TILE_N / CHUNK;                      // per consumer and tile
constexpr uint32_t CHUNK_BYTES = 64 * CHUNK * elem_bytes;        // 64 rows x 64 columns
constexpr uint32_t BUFFERS = 2;                                  // staging buffers per consumer
constexpr uint32_t STAGING_BYTES = CONSUMERS * BUFFERS * CHUNK_BYTES;
constexpr uint32_t THREADS = 128 * (1 + CONSUMERS);
constexpr uint32_t SMEM_BYTES = 1024 + STAGES * STAGE_BYTES + STAGING_BYTES + 2 * STAGES * 8;
constexpr uint32_t BAR_EPILOGUE = 2;  // named barriers 2 and 3: one per consumer warpgroup
static_assert(SMEM_BYTES + 1024 <= 232448, "shared memory: 227 KiB per CTA, 1 KiB kept for the "
                                           "checked build's static state");

enum role : uint32_t { ROLE_PRODUCER, ROLE_CONSUMER0, ROLE_CONSUMER1 };
enum barrier : uint32_t { BAR_FULL, BAR_EMPTY };

// Partial sums of stream-K pieces, one 64 x 256 fp32 slot per consumer of each CTA (a cluster
// hands over at most one piece, its first), laid out [float4 q][thread] so that each store and
// load of a warp covers 512 contiguous bytes; and one flag per slot, 1 while the slot holds a
// partial sum. Sized for 132 SMs (H100, H200); a larger grid runs without stream-K.
constexpr uint32_t SK_MAX_CTAS = 132;
__device__ float4 sk_partials[SK_MAX_CTAS * CONSUMERS * 32 * 128];
__device__ uint32_t sk_flags[SK_MAX_CTAS * CONSUMERS];

__device__ __forceinline__ void flag_release(uint32_t* flag) {
  asm volatile("st.release.gpu.global.u32 [%0], 1;" ::"l"(flag) : "memory");
}

// Waits for the flag, then clears it for the next launch (nothing else reads it in this one).
__device__ __forceinline__ void flag_acquire_and_reset(uint32_t* flag) {
  uint32_t v;
  do {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  } while (v == 0);
  asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" ::"l"(flag) : "memory");
}

// The work of the launch: dp_tiles tiles run whole, round robin over the clusters, then the
// sk_tiles * k_tiles k-tiles of the last sk_tiles tiles shared out evenly.
struct schedule {
  uint32_t dp_tiles, sk_tiles, k_tiles, clusters;
  // First k-tile of cluster w's share, counted from the first stream-K tile.
  __device__ __forceinline__ uint32_t begin(uint32_t w) const {
    return w * (sk_tiles * k_tiles) / clusters;
  }
  // Calls f(tile, kb, ke, it0, pending) for each whole tile of cluster w, then for each of its
  // pieces: at most two, since a share is shorter than a tile: [lo, split) up to the end of
  // lo's tile, and the rest from k-tile 0 of the next. it0 counts the k-tiles of the cluster's
  // earlier units (the ring's position); pending is the first chunk of the tile held before
  // the unit still to be stored (CHUNKS: none): every unit stores the rest of them by its end,
  // and a unit that ends a tile (kb == 0) holds that tile's D for the next one.
  // Every value here, and every loop's trip count, is a closed form of the launch and the
  // loops' iteration numbers (a walk q += ke - kb, or counters carried from unit to unit,
  // have none), which is what wsv's explorer needs to run the schedule.
  template <class F>
  __device__ __forceinline__ void for_each(uint32_t w, F&& f) const {
    for (uint32_t t = w, n = 0; t < dp_tiles; t += clusters, ++n)
      f(t, 0u, k_tiles, n * k_tiles, n == 0 ? CHUNKS : 0u);
    const uint32_t whole = wholes(w);
    const uint32_t lo = begin(w), hi = begin(w + 1);
    const uint32_t split = min(hi, (lo / k_tiles + 1) * k_tiles);
    const uint32_t pieces = (lo < hi ? 1u : 0u) + (split < hi ? 1u : 0u);
    for (uint32_t p = 0; p < pieces; ++p) {
      const uint32_t q = p == 0 ? lo : split, e = p == 0 ? split : hi;
      // Piece 1 follows piece 0, which starts past k-tile 0 and holds nothing.
      f(dp_tiles + q / k_tiles, q % k_tiles, q % k_tiles + (e - q), whole * k_tiles + (q - lo),
        p == 0 && whole > 0 ? 0u : CHUNKS);
    }
  }
  // Whole tiles of cluster w.
  __device__ __forceinline__ uint32_t wholes(uint32_t w) const {
    return w < dp_tiles ? (dp_tiles - w + clusters - 1) / clusters : 0u;
  }
  // The first chunk still to store after cluster w's last unit: 0 when that unit held a tile
  // (a whole tile, or a piece from k-tile 0), else CHUNKS.
  __device__ __forceinline__ uint32_t pending_at_end(uint32_t w) const {
    const uint32_t lo = begin(w), hi = begin(w + 1);
    if (lo < hi) return lo % k_tiles == 0 || (lo / k_tiles + 1) * k_tiles < hi ? 0u : CHUNKS;
    return wholes(w) > 0 ? 0u : CHUNKS;
  }
  // One past the last cluster whose share begins before k-tile tile_end of the stream-K
  // k-tiles: begin(v) < tile_end exactly when v * sk_tiles * k_tiles < tile_end * clusters.
  // (In closed form for the same reason; a loop with that test as a second exit has none.)
  __device__ __forceinline__ uint32_t shares_before(uint32_t tile_end) const {
    const uint32_t total = sk_tiles * k_tiles;
    return min(clusters, (tile_end * clusters + total - 1) / total);
  }
};

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
  const uint32_t cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const uint32_t wg = threadIdx.x / 128, wg_thread = threadIdx.x % 128;
  const uint32_t rank = cluster_ctarank();
  const uint32_t rem = tiles % clusters;
  const bool stream_k = gridDim.x <= SK_MAX_CTAS && 2 * rem >= clusters &&
                        k_tiles * (clusters - rem) >= H6_SK_MIN_SAVING * clusters;
  const uint32_t sk_tiles = stream_k ? rem : 0;
  const schedule work = {tiles - sk_tiles, sk_tiles, k_tiles, clusters};

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
      work.for_each(cluster, [&](uint32_t t, uint32_t kb, uint32_t ke, uint32_t it0, uint32_t) {
        uint32_t tm, tn;
        tile_coords(t, tiles_m, tiles_n, tm, tn);
        const uint32_t row = (tm * CLUSTER + rank) * TILE_M, col = tn * TILE_N + rank * B_PART_ROWS;
        for (uint32_t i = kb; i < ke; ++i) {
          const uint32_t it = it0 + (i - kb);
          const uint32_t s = it % STAGES, parity = (it / STAGES) & 1;
          mbarrier_wait_at(empty(s), parity ^ 1, {ROLE_PRODUCER, BAR_EMPTY, s, it});
          mbarrier_arrive_expect_tx(full(s), STAGE_BYTES);
          tma_load_2d(a_tile(s), tma_a, full(s), i * TILE_K, row);
          tma_load_2d_multicast(b_tile(s) + rank * B_PART_BYTES, tma_b, full(s), i * TILE_K, col,
                                MULTICAST_ALL);
        }
      });
    }
  } else {
    setmaxnreg_inc<232>();
    const uint32_t c = wg - 1;
    const uint32_t me = ROLE_CONSUMER0 + c;
    const uint32_t bar_id = BAR_EPILOGUE + c;
    const bool leader = wg_thread == 0;
    const uint32_t warp = wg_thread / 32, lane = wg_thread % 32;
    // stmatrix: lane l addresses row (l % 8) + 8 ((l / 8) % 2) and column 8 (l / 16) of a
    // 16x16 block.
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
    // The last tile's D in E, packed in pairs (held[h] = acc[2h], acc[2h + 1]), and its place.
    uint32_t held[64];
    uint32_t held_row0 = 0, held_col0 = 0;
    // Stores chunk j of the held tile through staging buffer j % BUFFERS (a tile's chunks all
    // go out before the next tile is held, so the buffers alternate across tiles too).
    auto store_chunk = [&](uint32_t j, uint32_t it) {
#pragma unroll
      for (uint32_t jj = 0; jj < CHUNKS; ++jj) {
        if (jj != j) continue;  // constant register indices: one copy per chunk
        const uint32_t buf = staging + (BUFFERS * c + jj % BUFFERS) * CHUNK_BYTES;
        if (leader) bulk_wait_group_read<BUFFERS - 1>();
        named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it});
#pragma unroll
        for (uint32_t q = 0; q < CHUNK / 16; ++q) {
          const uint32_t g = (CHUNK / 8) * jj + 2 * q;  // first of the two 8-column groups
          const uint32_t col = 16 * q + 8 * st_col8;
          const uint32_t addr = buf + st_row * 128 + (((col / 8) ^ (st_row % 8)) * 16);
          stmatrix_x4(addr, held[2 * g], held[2 * g + 1], held[2 * g + 2], held[2 * g + 3]);
        }
        fence_proxy_async_shared();
        named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it});
        if (leader) {
          tma_store_2d(tma_d, buf, held_col0 + CHUNK * jj, held_row0);
          bulk_commit_group();
        }
      }
    };

    work.for_each(cluster, [&](uint32_t t, uint32_t kb, uint32_t ke, uint32_t it0,
                               uint32_t pending) {
      for (uint32_t i = kb; i < ke; ++i) {
        const uint32_t it = it0 + (i - kb);
        const uint32_t s = it % STAGES, parity = (it / STAGES) & 1;
        mbarrier_wait_at(full(s), parity, {me, BAR_FULL, s, it});
        wgmma_fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (uint32_t kk = 0; kk < TILE_K / 16; ++kk)
          wgmma_m64n256k16<E>(acc, wgmma_desc_sw128(a_tile(s) + c * 64 * 128 + 32 * kk),
                              wgmma_desc_sw128(b_tile(s) + 32 * kk), i > kb || kk > 0);
        wgmma_commit();
        // The wgmma just issued keep the tensor cores busy while a chunk of the last tile goes out.
        if (pending + (i - kb) < CHUNKS) store_chunk(pending + (i - kb), it);
        wgmma_wait<1>();
        if (i > kb) release((it - 1) % STAGES);
      }
      const uint32_t it_end = it0 + (ke - kb);
      wgmma_wait<0>();
      wgmma_fence_operands(acc);
      release((it_end - 1) % STAGES);
      // Chunks left over (the unit had fewer than CHUNKS k-tiles) go before held is reused.
      for (uint32_t j = pending + (ke - kb); j < CHUNKS; ++j) store_chunk(j, it_end);

      if (kb > 0) {  // a piece past k-tile 0: hand the partial sum over
        const uint32_t slot = blockIdx.x * CONSUMERS + c;
        float4* part = sk_partials + slot * 32 * 128 + wg_thread;
#pragma unroll
        for (uint32_t q = 0; q < 32; ++q)
          __stcg(part + q * 128,
                 make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
        // Every thread's stores happen before the leader's release (bar.sync, then
        // st.release.gpu), as CUTLASS's generic barrier orders its workspace.
        named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it_end});
        if (leader) flag_release(sk_flags + slot);
        return;
      }
      if (t >= work.dp_tiles) {  // a piece from k-tile 0: add the later clusters' partial sums
        const uint32_t tile_end = (t - work.dp_tiles + 1) * k_tiles;
        const uint32_t last = work.shares_before(tile_end);
        for (uint32_t w = cluster + 1; w < last; ++w) {
          if (work.begin(w) == work.begin(w + 1)) continue;  // an empty share wrote nothing
          const uint32_t slot = (w * CLUSTER + rank) * CONSUMERS + c;
          if (leader) flag_acquire_and_reset(sk_flags + slot);
          named_barrier_sync_at(bar_id, 128, {me, 0, bar_id, it_end});
          const float4* part = sk_partials + slot * 32 * 128 + wg_thread;
#pragma unroll
          for (uint32_t q = 0; q < 32; ++q) {
            const float4 v = __ldcg(part + q * 128);
            acc[4 * q] += v.x;
            acc[4 * q + 1] += v.y;
            acc[4 * q + 2] += v.z;
            acc[4 * q + 3] += v.w;
          }
        }
      }
      // Hold the tile: D rounded into held, stored during the next unit's k-tiles.
      uint32_t tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
#pragma unroll
      for (uint32_t h = 0; h < 64; ++h) held[h] = pack2<E>(acc[2 * h], acc[2 * h + 1]);
      held_row0 = (tm * CLUSTER + rank) * TILE_M + 64 * c;
      held_col0 = tn * TILE_N;
    });
    for (uint32_t j = work.pending_at_end(cluster); j < CHUNKS; ++j) store_chunk(j, 0);
    if (leader) bulk_wait_group<0>();
  }
  cluster_sync();
}

}  // namespace

WSV_GEMM_CLUSTER_ENTRIES(h6, h6_gemm, THREADS, 2)

WSV_KERNEL_INFO(abi::KernelInfoVersion, TILE_M, TILE_N, TILE_K, STAGES, THREADS, CLUSTER,
                SMEM_BYTES, /*Persistent=*/1, /*BoxARows=*/TILE_M, /*BoxBRows=*/B_PART_ROWS,
                /*BoxDRows=*/64, /*BoxDCols=*/CHUNK, WSV_TENSOR_MAPS, /*MinKTiles=*/1,
                "producer,consumer0,consumer1", "full,empty");
