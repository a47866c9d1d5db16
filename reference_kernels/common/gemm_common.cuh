// What every reference GEMM shares: its parameter list, the two entry points per kernel (bf16 and
// f16), the KernelInfo it publishes for the runner, and the plain-store epilogue of a wgmma
// accumulator fragment. D[M x N] = A[M x K] * B[N x K]^T, all row-major (wsv_abi.h).
#pragma once
#include <stdint.h>

#include "wgmma.cuh"
#include "wsv_abi.h"

namespace wsv {

// CUtensorMap's size and alignment, without the driver header (clang builds have none).
struct alignas(64) tensor_map {
  uint64_t opaque[16];
};

constexpr uint32_t elem_bytes = 2;  // bf16 and f16

}  // namespace wsv

// Tensor maps travel as __grid_constant__ parameters, whose address TMA may use; clang 19 lacks
// the attribute and copies by-value structs to local memory, so its builds pass pointers to maps
// in global memory instead (KernelInfo::TensorMaps says which).
#if defined(__clang__) && !defined(__NVCC__)
#define WSV_TMAP_PARAM(name) const wsv::tensor_map* name
#define WSV_TMAP_ADDR(name) static_cast<const void*>(name)
#define WSV_TENSOR_MAPS wsv::abi::TensorMapsInGlobal
#else
#define WSV_TMAP_PARAM(name) const __grid_constant__ wsv::tensor_map name
#define WSV_TMAP_ADDR(name) static_cast<const void*>(&name)
#define WSV_TENSOR_MAPS wsv::abi::TensorMapsAsParams
#endif

// Defines `<name>_bf16` and `<name>_f16`, each calling body<elem>(a, b, d_map, d, m, n, k) where
// the maps are generic addresses TMA can use. ATTRS adds launch attributes to both entries.
#define WSV_GEMM_ENTRIES_WITH(name, body, threads, ATTRS)                                        \
  extern "C" __global__ void __launch_bounds__(threads, 1) ATTRS                                 \
      name##_bf16(WSV_TMAP_PARAM(tma_a), WSV_TMAP_PARAM(tma_b), WSV_TMAP_PARAM(tma_d),           \
                  uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {                             \
    body<wsv::elem::bf16>(WSV_TMAP_ADDR(tma_a), WSV_TMAP_ADDR(tma_b), WSV_TMAP_ADDR(tma_d), d,  \
                          m, n, k);                                                              \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(threads, 1) ATTRS                                 \
      name##_f16(WSV_TMAP_PARAM(tma_a), WSV_TMAP_PARAM(tma_b), WSV_TMAP_PARAM(tma_d),            \
                 uint16_t* d, uint32_t m, uint32_t n, uint32_t k) {                              \
    body<wsv::elem::f16>(WSV_TMAP_ADDR(tma_a), WSV_TMAP_ADDR(tma_b), WSV_TMAP_ADDR(tma_d), d,   \
                         m, n, k);                                                               \
  }

#define WSV_NO_ATTRS
#define WSV_GEMM_ENTRIES(name, body, threads) WSV_GEMM_ENTRIES_WITH(name, body, threads, WSV_NO_ATTRS)
// Cluster kernels state their shape in the PTX (.reqnctapercluster), so the analyzer and the
// launch agree on it.
#define WSV_GEMM_CLUSTER_ENTRIES(name, body, threads, cluster_x) \
  WSV_GEMM_ENTRIES_WITH(name, body, threads, __cluster_dims__(cluster_x, 1, 1))

// The module's self-description, read by the runner (wsv_abi.h KernelInfo).
#define WSV_KERNEL_INFO(...) \
  extern "C" __device__ const wsv::abi::KernelInfo wsv_kernel_info = {__VA_ARGS__}

namespace wsv {

// Stores one warpgroup's m64nN accumulator fragment at rows [row0, row0 + 64), columns
// [col0, col0 + N) of D (leading dimension ld elements). Thread t of the warpgroup holds rows
// 16*(t/32) + (t%32)/4 (+8) and column pairs 8*j + 2*(t%4) (9.7.15.5 "Matrix D fragment").
template <elem E, int N>
__device__ __forceinline__ void store_fragment(const float (&acc)[N / 2], uint16_t* d, uint32_t ld,
                                               uint32_t row0, uint32_t col0, uint32_t wg_thread) {
  const uint32_t warp = wg_thread / 32, lane = wg_thread % 32;
  const uint32_t row = row0 + 16 * warp + lane / 4;
  const uint32_t col = col0 + 2 * (lane % 4);
  uint16_t* top = d + static_cast<uint64_t>(row) * ld + col;
  uint16_t* bottom = top + static_cast<uint64_t>(8) * ld;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    *reinterpret_cast<uint32_t*>(top + 8 * j) = pack2<E>(acc[4 * j], acc[4 * j + 1]);
    *reinterpret_cast<uint32_t*>(bottom + 8 * j) = pack2<E>(acc[4 * j + 2], acc[4 * j + 3]);
  }
}

}  // namespace wsv
