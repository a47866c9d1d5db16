// wsv-blackwell-launch: runs one Blackwell reference kernel (b1-b6) from its PTX on an sm_100 GPU
// and compares D with a CPU reference. The PTX is the file the build wrote and wsv
// verifies (a bug variant with --ptx); the grid, cluster, shared memory and tensor-map boxes come
// from the launch description the PTX publishes (launch.h).
//
//   wsv-blackwell-launch <b1..b6> [--ptx FILE] [--dtype bf16|fp16] [--m M] [--n N] [--k K]
//                                 [--timeout-s S]
//
// Exit codes: 0 correct result; 1 wrong result, launch failure or a kernel still running after
// the timeout; 2 usage error, unusable PTX, or no GPU that can run sm_100a code.
//
// Inputs are multiples of 1/8 in [-1, 1]: exact in bf16 and fp16, and every product and partial
// sum (multiples of 1/64 below K) is exact in fp32 for K < 2^18, whatever the summation order.
// The only rounding left is the final fp32 -> 16-bit conversion, so each element must be within
// one unit in the last place of the output type (2^-7 relative for bf16, 2^-10 for fp16).
#include "LaunchRules.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef WSV_PTX_DIR
#define WSV_PTX_DIR "."
#endif

namespace {

using namespace wsv;
using namespace wsv::blackwell;

enum Exit { ExitPass = 0, ExitFail = 1, ExitUsage = 2 };

struct Options {
  std::string Kernel;
  std::string Ptx;
  bool Bf16 = true;
  uint32_t M = 1024, N = 1024, K = 1024;
  double TimeoutS = 10;
};

const char *Usage =
    "usage: wsv-blackwell-launch <b1|b2|b3|b4|b5|b6> [--ptx FILE] [--dtype bf16|fp16]\n"
    "                            [--m M] [--n N] [--k K] [--timeout-s S]\n";

bool parseOptions(int Argc, char **Argv, Options &O) {
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Value = [&]() -> const char * { return I + 1 < Argc ? Argv[++I] : nullptr; };
    const char *V = nullptr;
    if (A == "--ptx" && (V = Value()))
      O.Ptx = V;
    else if (A == "--dtype" && (V = Value()) && (!strcmp(V, "bf16") || !strcmp(V, "fp16")))
      O.Bf16 = !strcmp(V, "bf16");
    else if (A == "--m" && (V = Value()))
      O.M = static_cast<uint32_t>(strtoul(V, nullptr, 10));
    else if (A == "--n" && (V = Value()))
      O.N = static_cast<uint32_t>(strtoul(V, nullptr, 10));
    else if (A == "--k" && (V = Value()))
      O.K = static_cast<uint32_t>(strtoul(V, nullptr, 10));
    else if (A == "--timeout-s" && (V = Value()))
      O.TimeoutS = strtod(V, nullptr);
    else if (A.size() == 2 && A[0] == 'b' && A[1] >= '1' && A[1] <= '6' && O.Kernel.empty())
      O.Kernel = A;
    else
      return false;
  }
  if (O.Kernel.empty())
    return false;
  if (O.Ptx.empty())
    O.Ptx = std::string(WSV_PTX_DIR) + "/" + O.Kernel + ".ptx";
  return true;
}

// Driver API entry points, looked up through the runtime so that the program starts (and says
// why it cannot run) on machines without a driver.
struct Driver {
  decltype(&cuModuleLoadDataEx) ModuleLoadDataEx = nullptr;
  decltype(&cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&cuModuleGetGlobal) ModuleGetGlobal = nullptr;
  decltype(&cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&cuLaunchKernelEx) LaunchKernelEx = nullptr;
  decltype(&cuTensorMapEncodeTiled) TensorMapEncodeTiled = nullptr;

  bool load() {
    return get("cuModuleLoadDataEx", ModuleLoadDataEx) &&
           get("cuModuleGetFunction", ModuleGetFunction) &&
           get("cuModuleGetGlobal", ModuleGetGlobal) &&
           get("cuFuncSetAttribute", FuncSetAttribute) &&
           get("cuLaunchKernelEx", LaunchKernelEx) &&
           get("cuTensorMapEncodeTiled", TensorMapEncodeTiled);
  }
  template <typename Fn> bool get(const char *Name, Fn &Out) {
    void *P = nullptr;
    cudaDriverEntryPointQueryResult Q;
    if (cudaGetDriverEntryPointByVersion(Name, &P, 12000, cudaEnableDefault, &Q) != cudaSuccess ||
        Q != cudaDriverEntryPointSuccess || !P) {
      fprintf(stderr, "error: the CUDA driver has no %s\n", Name);
      return false;
    }
    Out = reinterpret_cast<Fn>(P);
    return true;
  }
};

bool cuOk(CUresult R, const char *What) {
  if (R == CUDA_SUCCESS)
    return true;
  fprintf(stderr, "error: %s failed (CUresult %d)\n", What, static_cast<int>(R));
  return false;
}

bool rtOk(cudaError_t R, const char *What) {
  if (R == cudaSuccess)
    return true;
  fprintf(stderr, "error: %s failed: %s\n", What, cudaGetErrorString(R));
  return false;
}

float fromBits(bool Bf16, uint16_t B) {
  if (Bf16) {
    __nv_bfloat16_raw R;
    R.x = B;
    return __bfloat162float(__nv_bfloat16(R));
  }
  __half_raw R;
  R.x = B;
  return __half2float(__half(R));
}

uint16_t toBits(bool Bf16, float V) {
  if (Bf16)
    return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(V)).x;
  return static_cast<__half_raw>(__float2half_rn(V)).x;
}

// A row-major [Rows x Cols] 16-bit tensor, Cols contiguous, as a 2-D tensor map with a
// BoxRows x BoxCols box and the 128 B swizzle every Blackwell kernel's shared layout assumes.
bool encodeMap(const Driver &D, CUtensorMap &Map, bool Bf16, void *Base, uint64_t Rows,
               uint64_t Cols, uint32_t BoxRows, uint32_t BoxCols) {
  const cuuint64_t Dims[2] = {Cols, Rows};
  const cuuint64_t Strides[1] = {Cols * 2};
  const cuuint32_t Box[2] = {BoxCols, BoxRows};
  const cuuint32_t ElemStrides[2] = {1, 1};
  return cuOk(D.TensorMapEncodeTiled(
                  &Map, Bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                  2, Base, Dims, Strides, Box, ElemStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
              "cuTensorMapEncodeTiled");
}

int run(const Options &O) {
  int Count = 0;
  const cudaError_t CountErr = cudaGetDeviceCount(&Count);
  if (CountErr != cudaSuccess || Count == 0) {
    fprintf(stderr, "error: no CUDA GPU to run %s on (%s)\n", O.Kernel.c_str(),
            CountErr != cudaSuccess ? cudaGetErrorString(CountErr) : "no devices");
    return ExitUsage;
  }
  cudaDeviceProp Prop;
  if (!rtOk(cudaGetDeviceProperties(&Prop, 0), "cudaGetDeviceProperties"))
    return ExitFail;
  if (auto Why = deviceRefusal(O.Kernel, Prop.major, Prop.minor, Prop.name)) {
    fprintf(stderr, "error: %s\n", Why->c_str());
    return ExitUsage;
  }
  std::ifstream In(O.Ptx);
  if (!In) {
    fprintf(stderr, "error: cannot read %s\n", O.Ptx.c_str());
    return ExitUsage;
  }
  std::stringstream Text;
  Text << In.rdbuf();
  const std::string Ptx = Text.str();

  Driver D;
  if (!rtOk(cudaSetDevice(0), "cudaSetDevice") || !rtOk(cudaFree(nullptr), "context creation") ||
      !D.load())
    return ExitFail;
  CUmodule Module;
  if (!cuOk(D.ModuleLoadDataEx(&Module, Ptx.c_str(), 0, nullptr, nullptr),
            "loading the PTX (JIT to sm_100a)"))
    return ExitUsage;
  BlackwellLaunch L;
  CUdeviceptr LaunchPtr;
  size_t LaunchSize = 0;
  if (!cuOk(D.ModuleGetGlobal(&LaunchPtr, &LaunchSize, Module, "wsv_blackwell_launch"),
            "finding wsv_blackwell_launch in the PTX") ||
      LaunchSize != sizeof(L) ||
      !rtOk(cudaMemcpy(&L, reinterpret_cast<void *>(LaunchPtr), sizeof(L), cudaMemcpyDeviceToHost),
            "reading the launch description"))
    return ExitUsage;
  if (auto Why = launchRefusal(L)) {
    fprintf(stderr, "error: %s: %s\n", O.Ptx.c_str(), Why->c_str());
    return ExitUsage;
  }
  if (auto Why = shapeRefusal(L, O.M, O.N, O.K)) {
    fprintf(stderr, "error: %s cannot compute %ux%ux%u: %s\n", O.Kernel.c_str(), O.M, O.N, O.K,
            Why->c_str());
    return ExitUsage;
  }
  const std::string Entry = O.Kernel + (O.Bf16 ? "_bf16" : "_f16");
  CUfunction Fn;
  if (!cuOk(D.ModuleGetFunction(&Fn, Module, Entry.c_str()), Entry.c_str()) ||
      !cuOk(D.FuncSetAttribute(Fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, L.SmemBytes),
            "setting the dynamic shared memory size"))
    return ExitUsage;

  // Inputs on the 1/8 grid; D starts as NaN (0xFFFF) so that unwritten elements fail.
  const uint64_t SizeA = uint64_t(O.M) * O.K, SizeB = uint64_t(O.N) * O.K,
                 SizeD = uint64_t(O.M) * O.N;
  std::vector<float> A(SizeA), B(SizeB);
  std::vector<uint16_t> ABits(SizeA), BBits(SizeB), DBits(SizeD, 0xFFFF);
  std::mt19937 Rng(1234);
  std::uniform_int_distribution<int> Q(-8, 8);
  for (uint64_t I = 0; I < SizeA; ++I)
    ABits[I] = toBits(O.Bf16, A[I] = Q(Rng) / 8.0f);
  for (uint64_t I = 0; I < SizeB; ++I)
    BBits[I] = toBits(O.Bf16, B[I] = Q(Rng) / 8.0f);
  void *DevA = nullptr, *DevB = nullptr, *DevD = nullptr;
  if (!rtOk(cudaMalloc(&DevA, SizeA * 2), "cudaMalloc") ||
      !rtOk(cudaMalloc(&DevB, SizeB * 2), "cudaMalloc") ||
      !rtOk(cudaMalloc(&DevD, SizeD * 2), "cudaMalloc") ||
      !rtOk(cudaMemcpy(DevA, ABits.data(), SizeA * 2, cudaMemcpyHostToDevice), "copy A") ||
      !rtOk(cudaMemcpy(DevB, BBits.data(), SizeB * 2, cudaMemcpyHostToDevice), "copy B") ||
      !rtOk(cudaMemcpy(DevD, DBits.data(), SizeD * 2, cudaMemcpyHostToDevice), "copy D"))
    return ExitFail;
  alignas(64) CUtensorMap MapA, MapB, MapD;
  if (!encodeMap(D, MapA, O.Bf16, DevA, O.M, O.K, L.BoxARows, L.TileK) ||
      !encodeMap(D, MapB, O.Bf16, DevB, O.N, O.K, L.BoxBRows, L.TileK) ||
      !encodeMap(D, MapD, O.Bf16, DevD, O.M, O.N, L.BoxDRows, L.BoxDCols))
    return ExitFail;

  // Clusters come from the kernel's __cluster_dims__ (.reqnctapercluster), not from the launch.
  const Grid G = gridFor(L, O.M, O.N, static_cast<uint32_t>(Prop.multiProcessorCount));
  CUlaunchConfig Config = {};
  Config.gridDimX = G.X;
  Config.gridDimY = G.Y;
  Config.gridDimZ = 1;
  Config.blockDimX = L.Threads;
  Config.blockDimY = Config.blockDimZ = 1;
  Config.sharedMemBytes = L.SmemBytes;
  cudaStream_t Stream;
  cudaEvent_t Start, Stop;
  if (!rtOk(cudaStreamCreate(&Stream), "cudaStreamCreate") ||
      !rtOk(cudaEventCreate(&Start), "cudaEventCreate") ||
      !rtOk(cudaEventCreate(&Stop), "cudaEventCreate"))
    return ExitFail;
  Config.hStream = Stream;
  void *DPtr = DevD;
  uint32_t M = O.M, N = O.N, K = O.K;
  void *Args[] = {&MapA, &MapB, &MapD, &DPtr, &M, &N, &K};
  printf("%s %s %ux%ux%u: grid %ux%u, %u threads, cluster %u, %u B dynamic shared memory\n",
         Entry.c_str(), O.Ptx.c_str(), O.M, O.N, O.K, G.X, G.Y, L.Threads, L.ClusterM,
         L.SmemBytes);
  if (!rtOk(cudaEventRecord(Start, Stream), "cudaEventRecord") ||
      !cuOk(D.LaunchKernelEx(&Config, Fn, Args, nullptr), "cuLaunchKernelEx") ||
      !rtOk(cudaEventRecord(Stop, Stream), "cudaEventRecord"))
    return ExitFail;

  // A deadlocked kernel never finishes: poll instead of blocking forever.
  const auto Deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(O.TimeoutS);
  cudaError_t State;
  while ((State = cudaStreamQuery(Stream)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > Deadline) {
      fprintf(stderr, "error: %s still running after %.1f s: a hang (run `wsv verify` on %s)\n",
              Entry.c_str(), O.TimeoutS, O.Ptx.c_str());
      return ExitFail;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!rtOk(State, "the kernel"))
    return ExitFail;
  float Ms = 0;
  cudaEventElapsedTime(&Ms, Start, Stop);
  if (!rtOk(cudaMemcpy(DBits.data(), DevD, SizeD * 2, cudaMemcpyDeviceToHost), "copy D back"))
    return ExitFail;

  const double Ulp = O.Bf16 ? 1.0 / 128 : 1.0 / 1024;
  uint64_t Bad = 0, FirstBad = SizeD;
  for (uint32_t R = 0; R < O.M; ++R)
    for (uint32_t C = 0; C < O.N; ++C) {
      float Sum = 0;
      for (uint32_t I = 0; I < O.K; ++I)
        Sum += A[uint64_t(R) * O.K + I] * B[uint64_t(C) * O.K + I];
      const double Got = fromBits(O.Bf16, DBits[uint64_t(R) * O.N + C]);
      // A NaN (an element the kernel never wrote) fails this comparison too.
      if (!(std::fabs(Got - Sum) <= Ulp * std::fabs(Sum) + 1e-6) && Bad++ == 0)
        FirstBad = uint64_t(R) * O.N + C;
    }
  printf("%.3f ms, %.1f TFLOP/s (one cold launch)\n", Ms, 2.0 * O.M * O.N * O.K / (Ms * 1e9));
  if (Bad) {
    printf("FAIL: %llu of %llu elements off the reference by more than an ulp; first at row "
           "%llu, column %llu\n",
           static_cast<unsigned long long>(Bad), static_cast<unsigned long long>(SizeD),
           static_cast<unsigned long long>(FirstBad / O.N),
           static_cast<unsigned long long>(FirstBad % O.N));
    return ExitFail;
  }
  printf("PASS: all %llu elements match the reference\n", static_cast<unsigned long long>(SizeD));
  return ExitPass;
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  if (!parseOptions(Argc, Argv, O)) {
    fputs(Usage, stderr);
    return ExitUsage;
  }
  return run(O);
}
