// The few CUDA device-side names the corpus kernels use, for clang-19 compiling with
// -nocudainc -nocudalib: clang 19 cannot parse CUDA 13's headers, so it gets none of them and
// this header instead. nvcc builds never see this file.
#pragma once

#if !defined(__clang__) || !defined(__CUDA__)
#error "corpus_clang_compat.h is only for clang compiling CUDA"
#endif

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
// clang 19 has no cluster_dims attribute: its PTX has no .reqnctapercluster and the cluster
// shape comes from the launch alone.
#define __cluster_dims__(...)

// threadIdx, blockIdx, blockDim, gridDim: clang's own header, independent of the toolkit.
#include <__clang_cuda_builtin_vars.h>

typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef __SIZE_TYPE__ size_t;

// clang lowers a device-side printf to vprintf like nvcc does, given this declaration.
extern "C" __device__ int printf(const char *, ...);

// __syncthreads is a clang builtin already (bar.sync 0).

__device__ __forceinline__ unsigned __shfl_xor_sync(unsigned mask, unsigned value, int lane_mask) {
  return __nvvm_shfl_sync_bfly_i32(mask, value, lane_mask, 0x1f);
}

__device__ __forceinline__ void __syncwarp(unsigned mask = 0xffffffffu) {
  __nvvm_bar_warp_sync(mask);
}

// A cast to the shared address space is how clang spells cvta.to.shared.
__device__ __forceinline__ size_t __cvta_generic_to_shared(const void *p) {
  return (size_t)(const __attribute__((address_space(3))) void *)p;
}

__device__ __forceinline__ unsigned atomicAdd(unsigned *address, unsigned value) {
  return (unsigned)__nvvm_atom_add_gen_i((int *)address, (int)value);
}

__device__ __forceinline__ unsigned long long atomicAdd(unsigned long long *address,
                                                        unsigned long long value) {
  return __nvvm_atom_add_gen_ll((long long *)address, (long long)value);
}

__device__ __forceinline__ unsigned long long atomicMax(unsigned long long *address,
                                                        unsigned long long value) {
  return __nvvm_atom_max_gen_ull(address, value);
}

__device__ __forceinline__ unsigned long long atomicCAS(unsigned long long *address,
                                                        unsigned long long expected,
                                                        unsigned long long desired) {
  return __nvvm_atom_cas_gen_ll((long long *)address, (long long)expected, (long long)desired);
}
