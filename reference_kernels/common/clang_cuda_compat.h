// The CUDA device-side names the reference kernels use, for clang-19 compiling with -nocudainc
// -nocudalib (cmake/WsvKernels.cmake forces this header in): clang 19 cannot parse CUDA 13's
// headers, so it sees none of them. nvcc builds never include this file.
//
// Only the plain kernels are built with clang; the checked builds (wsv_check.cuh: atomics,
// __activemask, __ffs) are nvcc-only, so nothing here stands in for those.
#pragma once

#if !defined(__clang__) || !defined(__CUDA__)
#error "clang_cuda_compat.h is for clang compiling CUDA"
#endif

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

// threadIdx, blockIdx, blockDim, gridDim come from clang's own header, not the toolkit's.
#include <__clang_cuda_builtin_vars.h>

#include <stddef.h>
#include <stdint.h>

// __syncthreads is a clang builtin (bar.sync 0).

// Casting to the shared address space (3) is clang's spelling of cvta.to.shared.
__device__ __forceinline__ size_t __cvta_generic_to_shared(const void* p) {
  return (size_t)(const __attribute__((address_space(3))) void*)p;
}
