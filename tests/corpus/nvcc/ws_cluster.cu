// A two-CTA cluster with a producer warpgroup and two consumer warpgroups, written to give the
// corpus compiler output for the cluster-level synchronization forms (sm_90a and later).
//
// Protocol:
//   cluster  2 CTAs (launched with cluster dims 2x1x1); rank r copies its half of each tile
//   roles    warpgroup 0 = producer (one elected thread of warp 0), setmaxnreg.dec 40;
//            warpgroups 1 and 2 = consumers, setmaxnreg.inc 232
//   ring     STAGES = 2; full[s] count 1 (arrive.expect_tx + bulk copy bytes);
//            empty[s] count 4 = 2 consumer warpgroups x 2 CTAs: the leader of each consumer
//            warpgroup arrives on its own CTA's empty[s] and, through mapa, on the peer's
//   phases   producer waits empty[s] from parity 1, consumers wait full[s] from parity 0
//   named    barrier 1 (256 threads) joins the two consumer warpgroups after each tile;
//            barrier 2 + w (128 threads) lets consumer warpgroup w pick its leader's result up
//   exit     barrier.cluster arrive/wait before any CTA leaves, so no peer arrives on a barrier
//            of a CTA that has exited

constexpr int STAGES = 2;
constexpr int STAGE_WORDS = 2048;
constexpr unsigned STAGE_BYTES = STAGE_WORDS * 4;

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ bool mbarrier_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{\n\t"
               ".reg .pred P1;\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%1], %2, 1000000;\n\t"
               "selp.b32 %0, 1, 0, P1;\n\t"
               "}"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

__device__ __forceinline__ void mbarrier_arrive_local_and_peer(unsigned bar, unsigned peer) {
  asm volatile("{\n\t"
               ".reg .b32 remAddr32;\n\t"
               "mbarrier.arrive.shared::cta.b64 _, [%0];\n\t"
               "mapa.shared::cluster.u32 remAddr32, %0, %1;\n\t"
               "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remAddr32];\n\t"
               "}" ::"r"(bar),
               "r"(peer)
               : "memory");
}

__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    ws_cluster(const unsigned *__restrict__ input, unsigned *__restrict__ output, int k_tiles) {
  alignas(128) __shared__ unsigned tiles[STAGES][STAGE_WORDS];
  alignas(8) __shared__ unsigned long long full[STAGES];
  alignas(8) __shared__ unsigned long long empty[STAGES];
  __shared__ unsigned results[2];

  const unsigned warpgroup = threadIdx.x / 128;
  const unsigned rank = cluster_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;" ::"r"(smem_addr(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x < 32) {
      unsigned is_leader;
      asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\t"
                   "selp.u32 %0, 1, 0, p;\n\t}"
                   : "=r"(is_leader));
      if (is_leader) {
        unsigned phase = 1;
        for (int k = 0; k < k_tiles; ++k) {
          const int s = k % STAGES;
          mbarrier_wait(smem_addr(&empty[s]), phase);
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                           smem_addr(&full[s])),
                       "r"(STAGE_BYTES)
                       : "memory");
          const unsigned *src = input + (static_cast<long long>(k) * 2 + rank) * STAGE_WORDS;
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
                       "[%1], %2, [%3];" ::"r"(smem_addr(tiles[s])),
                       "l"(src), "r"(STAGE_BYTES), "r"(smem_addr(&full[s]))
                       : "memory");
          if (s == STAGES - 1)
            phase ^= 1;
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const unsigned consumer = warpgroup - 1;
    unsigned phase = 0;
    unsigned acc = 0;
    for (int k = 0; k < k_tiles; ++k) {
      const int s = k % STAGES;
      mbarrier_wait(smem_addr(&full[s]), phase);
      for (int i = threadIdx.x - 128; i < STAGE_WORDS; i += 256)
        acc += tiles[s][i] ^ static_cast<unsigned>(k);
      named_barrier_sync(1, 256);
      if (threadIdx.x % 128 == 0)
        mbarrier_arrive_local_and_peer(smem_addr(&empty[s]), rank ^ 1);
      if (s == STAGES - 1)
        phase ^= 1;
    }
    if (threadIdx.x % 128 == 0)
      results[consumer] = 0;
    named_barrier_sync(2 + consumer, 128);
    atomicAdd(&results[consumer], acc);
    named_barrier_sync(2 + consumer, 128);
    if (threadIdx.x % 128 == 0)
      output[(blockIdx.x * 2 + consumer)] = results[consumer];
  }
  cluster_sync();
}
