// cuBLAS as the reference and the speed bar: D = A * B^T with the same bf16/f16 inputs, fp32
// accumulation (CUBLAS_COMPUTE_32F), and either fp32 output (the reference the check compares
// with) or the kernel's own output type (what the benchmark times).
#pragma once

#include "wsv/runner/Gemm.h"
#include "wsv/runner/Status.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

namespace wsv {
namespace runner {

struct CublasApi;

/// A cuBLAS handle on a stream. The library is opened on first use (see Cublas.cpp).
class Cublas {
public:
  static Expected<std::unique_ptr<Cublas>> create(cudaStream_t Stream);
  ~Cublas();
  /// Row-major D[M x N] = A[M x K] * B[N x K]^T; D is fp32 when Fp32Out, else P.Type.
  Status gemm(const Problem &P, const void *A, const void *B, void *D, bool Fp32Out);

private:
  Cublas() = default;
  const CublasApi *Api = nullptr;
  cublasHandle_t Handle = nullptr;
};

} // namespace runner
} // namespace wsv
