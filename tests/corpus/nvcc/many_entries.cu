// A large PTX file of the kind real kernel packages ship: many entries, most of them not
// warp-specialized, and a big initialized data table. It exercises a parser's speed and memory
// on several megabytes rather than any synchronization; one entry at the end has a real
// producer/consumer handoff so the file is not all noise.

constexpr int TABLE_SIZE = 1 << 16;

// Initialized global data: nvcc writes every element out in the PTX.
struct Table {
  unsigned v[TABLE_SIZE];
};
constexpr Table make_table() {
  Table t{};
  unsigned x = 2463534242u;
  for (int i = 0; i < TABLE_SIZE; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    t.v[i] = x;
  }
  return t;
}
// Not const: clang would move a const table into the 64 KiB constant bank, which it overflows.
__device__ Table lookup = make_table();

// Entries differing in a constant each, so none can be merged away.
template <int N>
__global__ void scale_entry(const unsigned *__restrict__ in, unsigned *__restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned x = in[i];
#pragma unroll
    for (int r = 0; r < 4; ++r)
      x = x * (2 * N + 1) + lookup.v[(x + N * 977 + r) & (TABLE_SIZE - 1)];
    out[i] = x;
  }
}

// Explicit instantiations, 16 x 16 of them.
#define WSV_ENTRY(N) template __global__ void scale_entry<N>(const unsigned *, unsigned *, int);
#define WSV_ENTRIES4(B) WSV_ENTRY(B) WSV_ENTRY(B + 1) WSV_ENTRY(B + 2) WSV_ENTRY(B + 3)
#define WSV_ENTRIES16(B) WSV_ENTRIES4(B) WSV_ENTRIES4(B + 4) WSV_ENTRIES4(B + 8) WSV_ENTRIES4(B + 12)
WSV_ENTRIES16(0)
WSV_ENTRIES16(16)
WSV_ENTRIES16(32)
WSV_ENTRIES16(48)
WSV_ENTRIES16(64)
WSV_ENTRIES16(80)
WSV_ENTRIES16(96)
WSV_ENTRIES16(112)
WSV_ENTRIES16(128)
WSV_ENTRIES16(144)
WSV_ENTRIES16(160)
WSV_ENTRIES16(176)
WSV_ENTRIES16(192)
WSV_ENTRIES16(208)
WSV_ENTRIES16(224)
WSV_ENTRIES16(240)

// The one handoff: warp 0 writes a value to shared memory and arrives on an mbarrier; warp 1
// waits on parity 0 and reads it.
__global__ void handoff_entry(unsigned *out) {
  alignas(8) __shared__ unsigned long long ready;
  __shared__ unsigned value;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&ready));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    value = lookup.v[blockIdx.x & (TABLE_SIZE - 1)];
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
  } else if (threadIdx.x == 32) {
    asm volatile("{\n\t.reg .pred P1;\nWAIT:\n\t"
                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], 0;\n\t"
                 "@!P1 bra WAIT;\n\t}" ::"r"(bar)
                 : "memory");
    out[blockIdx.x] = value;
  }
}
