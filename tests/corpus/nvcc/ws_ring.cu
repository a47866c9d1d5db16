// A small warp-specialized persistent kernel, written to give the corpus real compiler output
// (nvcc for sm_90a and sm_100a, clang-19 for sm_90a) around a full/empty mbarrier ring.
//
// Protocol:
//   roles    warps 0-3 = consumer warpgroup (128 threads); warp 4 = producer, one elected lane
//   ring     STAGES = 4 buffers of STAGE_BYTES in shared memory; full[s] and empty[s] mbarriers
//   full[s]  count 1: the producer's arrive.expect_tx(STAGE_BYTES), completed by the bulk copy
//   empty[s] count 4: lane 0 of each consumer warp arrives after a __syncwarp, once the
//            warp has read the stage
//   phases   producer waits empty[s] starting at parity 1 (a fresh barrier's phase -1 counts as
//            completed), consumer waits full[s] starting at parity 0; both flip when s wraps
//   loop     persistent: tile = blockIdx.x, += gridDim.x; stage and phase carry across tiles
//
// Besides the protocol it holds what the corpus wants from a compiler: a called __noinline__
// function (.func), printf (vprintf), a dense switch, initialized global and constant data
// (including a pointer initializer), and 64-bit atomics.

constexpr int STAGES = 4;
constexpr int STAGE_BYTES = 4096;
constexpr int STAGE_WORDS = STAGE_BYTES / 4;
constexpr int CONSUMER_WARPS = 4;

__device__ const unsigned scale_table[8] = {1, 3, 5, 7, 11, 13, 17, 19};
__device__ const unsigned *scale_cursor = &scale_table[2];
__constant__ int bucket_offsets[4][2] = {{0, 1}, {2, 3}, {5, 8}, {13, 21}};
__device__ unsigned long long histogram[16];
__device__ unsigned long long grand_total;
__device__ unsigned long long largest_tile;

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  // The spin loop lives in the asm so that every call site gets its own scope and labels.
  asm volatile("{\n\t"
               ".reg .pred P1;\n"
               "WAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
               "@P1 bra DONE;\n\t"
               "bra WAIT;\n"
               "DONE:\n\t"
               "}" ::"r"(bar),
               "r"(parity)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void bulk_copy_to_shared(unsigned dst, const void *src, unsigned bytes,
                                                    unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
               "[%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

__device__ __forceinline__ bool elect_one() {
  unsigned leader;
  asm volatile("{\n\t"
               ".reg .b32 %%rx;\n\t"
               ".reg .pred %%px;\n\t"
               "elect.sync %%rx|%%px, -1;\n\t"
               "selp.u32 %0, 1, 0, %%px;\n\t"
               "}"
               : "=r"(leader));
  return leader != 0;
}

// Kept out of line so the PTX has a .func and a call with parameters and a return value; the
// dense switch is what compilers turn into a jump table (brx.idx) or a comparison tree.
__device__ __noinline__ unsigned bucket_of(unsigned long long sum) {
  switch (static_cast<unsigned>(sum >> 7) & 15u) {
  case 0: return 3;
  case 1: return 14;
  case 2: return 1;
  case 3: return 5;
  case 4: return 9;
  case 5: return 2;
  case 6: return 6;
  case 7: return 12;
  case 8: return 0;
  case 9: return 8;
  case 10: return 11;
  case 11: return 4;
  case 12: return 15;
  case 13: return 7;
  case 14: return 13;
  default: return 10;
  }
}

__global__ void __launch_bounds__(160, 1)
    ws_ring(const unsigned *__restrict__ input, unsigned long long *__restrict__ tile_sums,
            int num_tiles) {
  alignas(128) __shared__ unsigned buffers[STAGES][STAGE_WORDS];
  alignas(8) __shared__ unsigned long long full[STAGES];
  alignas(8) __shared__ unsigned long long empty[STAGES];

  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (num_tiles < 0) {
    if (threadIdx.x == 0)
      printf("ws_ring: block %d got num_tiles = %d\n", static_cast<int>(blockIdx.x), num_tiles);
    return;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(smem_addr(&full[s]), 1);
      mbarrier_init(smem_addr(&empty[s]), CONSUMER_WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  int stage = 0;
  unsigned phase = 0;
  if (warp == CONSUMER_WARPS) {
    // Producer: one elected lane fills the ring.
    if (elect_one()) {
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        mbarrier_wait(smem_addr(&empty[stage]), phase ^ 1);
        mbarrier_arrive_expect_tx(smem_addr(&full[stage]), STAGE_BYTES);
        bulk_copy_to_shared(smem_addr(buffers[stage]),
                            input + static_cast<long long>(tile) * STAGE_WORDS, STAGE_BYTES,
                            smem_addr(&full[stage]));
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // Consumers: sum each stage, release it, account for the tile.
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    mbarrier_wait(smem_addr(&full[stage]), phase);
    unsigned long long sum = 0;
    for (int i = threadIdx.x; i < STAGE_WORDS; i += 32 * CONSUMER_WARPS)
      sum += buffers[stage][i] * (*scale_cursor);
    for (int offset = 16; offset > 0; offset /= 2) {
      unsigned lo = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(sum), offset);
      unsigned hi = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(sum >> 32), offset);
      sum += (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    // Lane 0 releases the stage for its warp: __syncwarp orders the other lanes' reads
    // before the arrive (the shuffles above synchronize the lanes but, per the PTX memory
    // model, do not order memory).
    __syncwarp();
    if (lane == 0) {
      mbarrier_arrive(smem_addr(&empty[stage]));
      atomicAdd(&tile_sums[tile], sum);
      atomicAdd(&histogram[bucket_of(sum) + bucket_offsets[warp][tile & 1] % 2], 1ull);
      atomicMax(&largest_tile, sum);
      atomicAdd(&grand_total, sum);
    }
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1;
    }
  }
  if (threadIdx.x == 0) {
    unsigned long long seen = atomicCAS(&histogram[15], 0ull, 1ull);
    if (seen > (1ull << 40))
      printf("ws_ring: histogram bucket overflowed (%llu)\n", seen);
  }
}
