#include "Cublas.h"

#include <string>

namespace wsv {
namespace runner {

static Status cublasCheck(cublasStatus_t S, const std::string &What) {
  if (S == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(What + ": " + cublasGetStatusName(S) + " (" + cublasGetStatusString(S) +
                       ")");
}

Expected<std::unique_ptr<Cublas>> Cublas::create(cudaStream_t Stream) {
  std::unique_ptr<Cublas> C(new Cublas());
  if (Status S = cublasCheck(cublasCreate(&C->Handle), "creating the cuBLAS handle"))
    return S;
  if (Status S = cublasCheck(cublasSetStream(C->Handle, Stream), "setting the cuBLAS stream"))
    return S;
  return C;
}

Cublas::~Cublas() {
  if (Handle)
    cublasDestroy(Handle);
}

Status Cublas::gemm(const Problem &P, const void *A, const void *B, void *D, bool Fp32Out) {
  // Row-major D (M x N) is column-major D^T (N x M) = B (N x K, row-major: K x N col-major,
  // transposed) times A^T (A row-major is K x M col-major, used as is).
  const float Alpha = 1.0f, Beta = 0.0f;
  const cudaDataType_t In = P.Type == Dtype::Bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cudaDataType_t Out = Fp32Out ? CUDA_R_32F : In;
  return cublasCheck(cublasGemmEx(Handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(P.N),
                                  static_cast<int>(P.M), static_cast<int>(P.K), &Alpha, B, In,
                                  static_cast<int>(P.K), A, In, static_cast<int>(P.K), &Beta, D,
                                  Out, static_cast<int>(P.N), CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx " + P.str());
}

} // namespace runner
} // namespace wsv
