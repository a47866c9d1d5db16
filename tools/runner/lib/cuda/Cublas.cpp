#include "Cublas.h"

#include <dlfcn.h>

#include <string>

namespace wsv {
namespace runner {

/// cuBLAS is loaded when a run first needs it, not when `wsv` starts: libcublasLt alone maps
/// hundreds of megabytes, which every `wsv parse` or `wsv lint` would otherwise pay for.
struct CublasApi {
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  // The C entry point; cublas_api.h also declares a C++ overload taking a cudaDataType.
  cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                           const void *, const void *, cudaDataType, int, const void *,
                           cudaDataType, int, const void *, void *, cudaDataType, int,
                           cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusName) StatusName = nullptr;
  decltype(&cublasGetStatusString) StatusString = nullptr;
};

namespace {

template <typename Fn> bool resolve(void *Lib, const char *Name, Fn &Out) {
  Out = reinterpret_cast<Fn>(dlsym(Lib, Name));
  return Out != nullptr;
}

Expected<const CublasApi *> loadCublas() {
  static CublasApi Api;
  static std::string Error;
  static bool Loaded = [] {
    // The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), then the toolkit wsv was
    // built against, where CUDA installs do not register their libraries with the loader.
    void *Lib = dlopen("libcublas.so." WSV_CUBLAS_SOVERSION, RTLD_NOW | RTLD_LOCAL);
    if (!Lib)
      Lib = dlopen(WSV_CUDA_LIBRARY_DIR "/libcublas.so." WSV_CUBLAS_SOVERSION,
                   RTLD_NOW | RTLD_LOCAL);
    if (!Lib) {
      const char *Why = dlerror();
      Error = std::string("cannot load cuBLAS (libcublas.so." WSV_CUBLAS_SOVERSION "): ") +
              (Why ? Why : "unknown error");
      return false;
    }
    if (!resolve(Lib, "cublasCreate_v2", Api.Create) ||
        !resolve(Lib, "cublasDestroy_v2", Api.Destroy) ||
        !resolve(Lib, "cublasSetStream_v2", Api.SetStream) ||
        !resolve(Lib, "cublasGemmEx", Api.GemmEx) ||
        !resolve(Lib, "cublasGetStatusName", Api.StatusName) ||
        !resolve(Lib, "cublasGetStatusString", Api.StatusString)) {
      Error = "the cuBLAS library found lacks a function wsv needs (a version older than "
              "CUDA " WSV_CUBLAS_SOVERSION "?)";
      return false;
    }
    return true;
  }();
  if (!Loaded)
    return Status::error(Error);
  return &Api;
}

Status cublasCheck(const CublasApi &Api, cublasStatus_t S, const std::string &What) {
  if (S == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(What + ": " + Api.StatusName(S) + " (" + Api.StatusString(S) + ")");
}

} // namespace

Expected<std::unique_ptr<Cublas>> Cublas::create(cudaStream_t Stream) {
  Expected<const CublasApi *> Api = loadCublas();
  if (!Api)
    return Api.takeError();
  std::unique_ptr<Cublas> C(new Cublas());
  C->Api = *Api;
  if (Status S = cublasCheck(*C->Api, C->Api->Create(&C->Handle), "creating the cuBLAS handle"))
    return S;
  if (Status S = cublasCheck(*C->Api, C->Api->SetStream(C->Handle, Stream),
                             "setting the cuBLAS stream"))
    return S;
  return C;
}

Cublas::~Cublas() {
  if (Handle)
    Api->Destroy(Handle);
}

Status Cublas::gemm(const Problem &P, const void *A, const void *B, void *D, bool Fp32Out) {
  // Row-major D (M x N) is column-major D^T (N x M) = B (N x K, row-major: K x N col-major,
  // transposed) times A^T (A row-major is K x M col-major, used as is).
  const float Alpha = 1.0f, Beta = 0.0f;
  const cudaDataType_t In = P.Type == Dtype::Bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const cudaDataType_t Out = Fp32Out ? CUDA_R_32F : In;
  return cublasCheck(*Api,
                     Api->GemmEx(Handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(P.N),
                                 static_cast<int>(P.M), static_cast<int>(P.K), &Alpha, B, In,
                                 static_cast<int>(P.K), A, In, static_cast<int>(P.K), &Beta, D,
                                 Out, static_cast<int>(P.N), CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx " + P.str());
}

} // namespace runner
} // namespace wsv
