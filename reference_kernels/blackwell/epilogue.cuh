// Epilogue data movement for the Blackwell reference kernels: fp32 accumulator columns (from
// tcgen05.ld) are rounded to 16-bit and written to the shared-memory staging tile that a TMA
// store then reads. Only data movement lives here; the synchronization around it (tcgen05.wait,
// fence.proxy.async, barriers, bulk groups) stays in the kernels, where the protocol is read.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace wsv {

// Two fp32 values (raw bits from TMEM) rounded to one packed pair of Out (`lo` in bits 0-15).
template <typename Out>
__device__ __forceinline__ uint32_t pack_pair(uint32_t lo, uint32_t hi) {
  const float a = __uint_as_float(lo), b = __uint_as_float(hi);
  if constexpr (std::is_same_v<Out, __half>) {
    const __half2 v = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    static_assert(std::is_same_v<Out, __nv_bfloat16>, "fp16 or bf16 output");
    const __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c,
                                             uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}

// Writes 32 accumulator columns of one row into a staging tile laid out as TMA's
// CU_TENSOR_MAP_SWIZZLE_128B expects: rows of 128 B (64 16-bit columns), and the 16 B chunk c of
// row r stored at chunk c ^ (r % 8). `atom` is the 1024 B aligned start of the 64-column tile;
// `half` selects columns 0-31 (chunks 0-3) or 32-63 (chunks 4-7).
template <typename Out>
__device__ __forceinline__ void stage_row_sw128(uint32_t atom, uint32_t row, uint32_t half,
                                                const uint32_t (&acc)[32]) {
  const uint32_t row_addr = atom + row * 128;
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i) {
    const uint32_t chunk = (half * 4 + i) ^ (row % 8);
    st_shared_v4(row_addr + chunk * 16, pack_pair<Out>(acc[8 * i + 0], acc[8 * i + 1]),
                 pack_pair<Out>(acc[8 * i + 2], acc[8 * i + 3]),
                 pack_pair<Out>(acc[8 * i + 4], acc[8 * i + 5]),
                 pack_pair<Out>(acc[8 * i + 6], acc[8 * i + 7]));
  }
}

}  // namespace wsv
