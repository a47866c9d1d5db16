// What the host needs to launch a Blackwell reference kernel. Each kernel publishes it in its PTX
// as the global `wsv_blackwell_launch`; the launcher (host/LaunchBlackwell.cpp) reads it from the
// loaded module, so the grid, shared memory and tensor-map boxes always match the file that runs.
// Plain C++: included by the kernels and by the host code.
//
// Every Blackwell GEMM computes D[M x N] = A[M x K] * B[N x K]^T, all row-major (K contiguous for
// A and B), and its entry points `<name>_f16` and `<name>_bf16` take, in this order: the tensor
// maps of A, B and D (__grid_constant__ CUtensorMap), a D pointer (unused), M, N, K (uint32_t).
// All tensor maps use CU_TENSOR_MAP_SWIZZLE_128B; A and B boxes are TileK (64) elements wide.
#pragma once
#include <stdint.h>

namespace wsv {

constexpr uint32_t BlackwellLaunchVersion = 1;

struct BlackwellLaunch {
  uint32_t Version;    // BlackwellLaunchVersion
  uint32_t TileM;      // output rows per CTA
  uint32_t TileN;      // output columns per CTA
  uint32_t TileK;      // K per k-tile: the width of the A and B boxes, elements
  uint32_t Threads;    // threads per CTA
  uint32_t ClusterM;   // CTAs per cluster, along M (the kernel declares it with __cluster_dims__)
  uint32_t SmemBytes;  // dynamic shared memory per CTA, bytes
  uint32_t Persistent; // 1: a 1-D grid of whole clusters, at most one CTA per SM; 0: one CTA
                       // per tile, blockIdx.x along M and blockIdx.y along N
  uint32_t BoxARows;   // TMA load box of A: BoxARows x TileK
  uint32_t BoxBRows;   // TMA load box of B: BoxBRows x TileK
  uint32_t BoxDRows;   // TMA store box of D: BoxDRows x BoxDCols
  uint32_t BoxDCols;
};

}  // namespace wsv

// Publishes the kernel's launch description (fields after Version, in declaration order).
#define WSV_BLACKWELL_LAUNCH(...)                                                       \
  extern "C" __device__ const wsv::BlackwellLaunch wsv_blackwell_launch = {             \
      wsv::BlackwellLaunchVersion, __VA_ARGS__}
