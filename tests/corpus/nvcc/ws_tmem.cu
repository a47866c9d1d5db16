// A Blackwell (sm_100a) warp-specialized tile in the Tilus V3 shape, written to give the corpus
// nvcc's output around tcgen05: TMEM allocation, MMA issue and commit, and tcgen05.ld in an
// epilogue warpgroup. It is compiled for its PTX only (no Blackwell GPU runs it), so the shared
// memory descriptors and the instruction descriptor are plausible constants, not tuned ones.
//
// Protocol:
//   roles    warp 0 = load warp (one elected lane); warp 1 = MMA warp (allocates TMEM for the
//            CTA, one elected lane issues); warps 4-7 = epilogue warpgroup (128 threads, each
//            warp reads its quarter of TMEM lanes: 32 * (warp % 4)); warps 2-3 only take part in
//            the CTA barriers
//   barriers full (count 1: arrive.expect_tx + bulk copy bytes of A and B),
//            mma_done (count 1: tcgen05.commit arrives once every MMA before it completed);
//            single use, so both are waited on at parity 0
//   TMEM     128 columns, allocated by warp 1 before the first CTA barrier and freed by warp 1
//            after the last one, which follows every tcgen05.ld (tcgen05.fence around it)

constexpr unsigned TILE_BYTES = 128 * 64 * 2; // one 128x64 f16 operand
constexpr unsigned TMEM_COLUMNS = 128;
constexpr unsigned K_STEPS = 4;                // 64 / 16 elements of K per MMA
constexpr unsigned INSTR_DESC = 0x08200490u;   // f16 x f16 -> f32, M = 128, N = 128, K-major

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  asm volatile("{\n\t"
               ".reg .pred P1;\n"
               "LAB_WAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, 10000000;\n\t"
               "@P1 bra DONE;\n\t"
               "bra LAB_WAIT;\n"
               "DONE:\n\t"
               "}" ::"r"(bar),
               "r"(parity)
               : "memory");
}

__device__ __forceinline__ bool elect_one() {
  unsigned leader;
  asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(leader));
  return leader != 0;
}

// Shared memory matrix descriptor: start address >> 4, leading and stride byte offsets >> 4,
// 128-byte swizzle (PTX ISA, tcgen05 shared memory descriptor).
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) | (1ull << 16) |
         (64ull << 32) | (1ull << 46) | (2ull << 61);
}

__global__ void __launch_bounds__(256, 1)
    ws_tmem(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
            float *__restrict__ c) {
  alignas(1024) __shared__ unsigned short tile_a[128 * 64];
  alignas(1024) __shared__ unsigned short tile_b[128 * 64];
  alignas(8) __shared__ unsigned long long full;
  alignas(8) __shared__ unsigned long long mma_done;
  __shared__ unsigned tmem_base;

  const unsigned warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full)));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&mma_done)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (warp == 1) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                     smem_addr(&tmem_base)),
                 "n"(TMEM_COLUMNS)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const unsigned tmem = tmem_base;

  if (warp == 0) {
    if (elect_one()) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full)),
                   "r"(2 * TILE_BYTES)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                   "%2, [%3];" ::"r"(smem_addr(tile_a)),
                   "l"(a + blockIdx.x * 128 * 64), "r"(TILE_BYTES), "r"(smem_addr(&full))
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                   "%2, [%3];" ::"r"(smem_addr(tile_b)),
                   "l"(b + blockIdx.y * 128 * 64), "r"(TILE_BYTES), "r"(smem_addr(&full))
                   : "memory");
    }
  } else if (warp == 1) {
    mbarrier_wait(smem_addr(&full), 0);
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (elect_one()) {
      for (unsigned k = 0; k < K_STEPS; ++k) {
        const unsigned long long desc_a = smem_desc(smem_addr(tile_a) + k * 32);
        const unsigned long long desc_b = smem_desc(smem_addr(tile_b) + k * 32);
        asm volatile("{\n\t.reg .pred accumulate;\n\t"
                     "setp.ne.u32 accumulate, %4, 0;\n\t"
                     "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, accumulate;\n\t}" ::"r"(
                         tmem),
                     "l"(desc_a), "l"(desc_b), "r"(INSTR_DESC), "r"(k)
                     : "memory");
      }
      asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::
                       "r"(smem_addr(&mma_done))
                   : "memory");
    }
  } else if (warp >= 4) {
    mbarrier_wait(smem_addr(&mma_done), 0);
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const unsigned lane_base = (32 * (warp % 4)) << 16;
    const unsigned row = 32 * (warp % 4) + threadIdx.x % 32;
    for (unsigned column = 0; column < TMEM_COLUMNS; column += 8) {
      unsigned v[8];
      asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
                   : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]),
                     "=r"(v[6]), "=r"(v[7])
                   : "r"(tmem + lane_base + column));
      asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
      float *out = c + ((blockIdx.y * gridDim.x + blockIdx.x) * 128 + row) * 128 + column;
      for (int i = 0; i < 8; ++i)
        out[i] = __uint_as_float(v[i]);
    }
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 1) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem),
                 "n"(TMEM_COLUMNS)
                 : "memory");
  }
}
