#include "GemmModule.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace wsv {
namespace runner {

Expected<std::unique_ptr<HangCaptureBuffer>> HangCaptureBuffer::create(uint32_t Capacity) {
  std::unique_ptr<HangCaptureBuffer> B(new HangCaptureBuffer());
  const size_t Bytes = sizeof(abi::HangCapture) + (Capacity - 1) * sizeof(abi::HangRecord);
  void *Host = nullptr;
  if (Status S = cudaCheck(cudaHostAlloc(&Host, Bytes, cudaHostAllocMapped),
                           "allocating the host-mapped hang capture"))
    return S;
  B->Host = static_cast<abi::HangCapture *>(Host);
  void *Device = nullptr;
  if (Status S = cudaCheck(cudaHostGetDevicePointer(&Device, Host, 0),
                           "mapping the hang capture into the GPU's address space"))
    return S;
  B->Device = static_cast<abi::HangCapture *>(Device);
  B->Capacity = Capacity;
  B->reset();
  return B;
}

HangCaptureBuffer::~HangCaptureBuffer() {
  if (Host)
    cudaFreeHost(Host);
}

void HangCaptureBuffer::reset() {
  std::memset(static_cast<void *>(Host), 0,
              sizeof(abi::HangCapture) + (Capacity - 1) * sizeof(abi::HangRecord));
  Host->Magic = abi::HangCaptureMagic;
  Host->Capacity = Capacity;
}

Expected<std::unique_ptr<GemmModule>> GemmModule::load(const DriverApi &Driver,
                                                       const std::string &PtxPath) {
  std::ifstream In(PtxPath, std::ios::binary);
  if (!In)
    return Status::error("cannot read " + PtxPath);
  std::stringstream SS;
  SS << In.rdbuf();
  const std::string Ptx = SS.str();

  std::unique_ptr<GemmModule> M(new GemmModule(Driver));
  M->Path = PtxPath;
  // The JIT's error log says which PTX line it rejected; its info log carries ptxas's
  // performance warnings (wgmma serialized, setmaxnreg ignored), which hide or cost a protocol.
  std::vector<char> Log(16384, '\0'), Info(65536, '\0');
  CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_LOG_VERBOSE};
  void *Vals[] = {Log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(Log.size() - 1)),
                  Info.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(Info.size() - 1)),
                  reinterpret_cast<void *>(static_cast<uintptr_t>(1))};
  const CUresult R = Driver.ModuleLoadDataEx(&M->Module, Ptx.c_str(), 5, Opts, Vals);
  if (R != CUDA_SUCCESS)
    return Status::error("loading " + PtxPath + ": " + Driver.errorText(R) +
                         (Log[0] ? "\n" + std::string(Log.data()) : ""));
  std::string Line;
  for (const char *P = Info.data();; ++P) {
    if (*P == '\n' || *P == '\0') {
      if (Line.find("Performance Loss") != std::string::npos ||
          Line.find("warning") != std::string::npos)
        M->Warnings.push_back(Line);
      Line.clear();
      if (*P == '\0')
        break;
    } else {
      Line += *P;
    }
  }

  CUdeviceptr InfoPtr = 0;
  size_t InfoBytes = 0;
  if (Driver.ModuleGetGlobal(&InfoPtr, &InfoBytes, M->Module, "wsv_kernel_info") != CUDA_SUCCESS ||
      InfoBytes != sizeof(abi::KernelInfo))
    return Status::error(PtxPath + " does not publish wsv_kernel_info (a wsv_abi.h KernelInfo of " +
                         std::to_string(sizeof(abi::KernelInfo)) + " bytes)");
  if (Status S = cudaCheck(cudaMemcpy(&M->Info, reinterpret_cast<void *>(InfoPtr), InfoBytes,
                                      cudaMemcpyDeviceToHost),
                           "reading wsv_kernel_info"))
    return S;
  if (M->Info.Version != abi::KernelInfoVersion)
    return Status::error(PtxPath + " publishes KernelInfo version " +
                         std::to_string(M->Info.Version) + ", this runner reads version " +
                         std::to_string(abi::KernelInfoVersion));

  size_t Bytes = 0;
  // Only checked builds define these; a plain module simply has none.
  if (Driver.ModuleGetGlobal(&M->CaptureGlobal, &Bytes, M->Module, "wsv_hang_capture") ==
      CUDA_SUCCESS) {
    if (Status S = Driver.check(
            Driver.ModuleGetGlobal(&M->TimeoutGlobal, &Bytes, M->Module, "wsv_hang_timeout_ns"),
            PtxPath + ": checked build without wsv_hang_timeout_ns"))
      return S;
    if (Status S = Driver.check(
            Driver.ModuleGetGlobal(&M->NextGlobal, &Bytes, M->Module, "wsv_hang_next"),
            PtxPath + ": checked build without wsv_hang_next"))
      return S;
  } else {
    M->CaptureGlobal = 0;
  }
  return M;
}

GemmModule::~GemmModule() {
  if (MapsInGlobal)
    cudaFree(MapsInGlobal);
  if (Module)
    Driver.ModuleUnload(Module);
}

Status GemmModule::prepare(const std::string &Kernel, Dtype T) {
  CUfunction &F = Entry[static_cast<int>(T)];
  if (F)
    return Status::ok();
  const std::string Name = entryName(Kernel, T);
  if (Status S = Driver.check(Driver.ModuleGetFunction(&F, Module, Name.c_str()),
                              Path + ": no entry '" + Name + "'"))
    return S;
  return Driver.check(Driver.FuncSetAttribute(F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(Info.SmemBytes)),
                      "allowing " + std::to_string(Info.SmemBytes) + " bytes of shared memory for " +
                          Name);
}

static CUlaunchConfig launchConfig(const LaunchGeometry &G, cudaStream_t Stream,
                                   CUlaunchAttribute &ClusterAttr) {
  CUlaunchConfig C{};
  C.gridDimX = G.Grid[0];
  C.gridDimY = G.Grid[1];
  C.gridDimZ = G.Grid[2];
  C.blockDimX = G.Block[0];
  C.blockDimY = G.Block[1];
  C.blockDimZ = G.Block[2];
  C.sharedMemBytes = G.SmemBytes;
  C.hStream = reinterpret_cast<CUstream>(Stream);
  if (G.Cluster[0] * G.Cluster[1] * G.Cluster[2] > 1) {
    ClusterAttr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    ClusterAttr.value.clusterDim.x = G.Cluster[0];
    ClusterAttr.value.clusterDim.y = G.Cluster[1];
    ClusterAttr.value.clusterDim.z = G.Cluster[2];
    C.attrs = &ClusterAttr;
    C.numAttrs = 1;
  }
  return C;
}

Expected<uint32_t> GemmModule::residentCtas(Dtype T, const LaunchGeometry &G) {
  CUfunction F = Entry[static_cast<int>(T)];
  assert(F && "prepare() the entry first");
  LaunchGeometry One = G;
  One.Grid[0] = G.Cluster[0];
  One.Grid[1] = One.Grid[2] = 1;
  CUlaunchAttribute Attr{};
  CUlaunchConfig C = launchConfig(One, nullptr, Attr);
  if (G.Cluster[0] * G.Cluster[1] * G.Cluster[2] <= 1) {
    // The occupancy query for clusters wants a cluster attribute; a 1-CTA cluster stands for none.
    Attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    Attr.value.clusterDim.x = Attr.value.clusterDim.y = Attr.value.clusterDim.z = 1;
    C.attrs = &Attr;
    C.numAttrs = 1;
  }
  int Clusters = 0;
  if (Status S = Driver.check(Driver.OccupancyMaxActiveClusters(&Clusters, F, &C),
                              "asking how many clusters fit"))
    return S;
  return static_cast<uint32_t>(Clusters) * G.Cluster[0] * G.Cluster[1] * G.Cluster[2];
}

Status GemmModule::setGlobal(CUdeviceptr Global, const void *Value, size_t Bytes,
                             const char *Name) {
  return cudaCheck(cudaMemcpy(reinterpret_cast<void *>(Global), Value, Bytes,
                              cudaMemcpyHostToDevice),
                   std::string("setting ") + Name);
}

Status GemmModule::armCapture(const HangCaptureBuffer &Capture, uint64_t TimeoutNs) {
  if (!checked())
    return Status::error(Path + " is not a checked build (no wsv_hang_capture)");
  abi::HangCapture *Ptr = Capture.device();
  const unsigned long long Timeout = TimeoutNs;
  const unsigned Zero = 0;
  if (Status S = setGlobal(CaptureGlobal, &Ptr, sizeof Ptr, "wsv_hang_capture"))
    return S;
  if (Status S = setGlobal(TimeoutGlobal, &Timeout, sizeof Timeout, "wsv_hang_timeout_ns"))
    return S;
  return setGlobal(NextGlobal, &Zero, sizeof Zero, "wsv_hang_next");
}

namespace {

Status encode2d(const DriverApi &D, CUtensorMap &Map, Dtype T, const void *Base, uint64_t Cols,
                uint64_t Rows, uint32_t BoxCols, uint32_t BoxRows, const char *What) {
  const cuuint64_t Dims[2] = {Cols, Rows};
  const cuuint64_t Strides[1] = {Cols * 2}; // bytes between rows
  const cuuint32_t Box[2] = {BoxCols, BoxRows};
  const cuuint32_t ElemStrides[2] = {1, 1};
  // A box row of 128 bytes is swizzled to match wgmma's 128B layout and stmatrix's banks.
  const CUtensorMapSwizzle Swizzle =
      BoxCols * 2 == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
  const CUresult R = D.TensorMapEncodeTiled(
      &Map, T == Dtype::Bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      2, const_cast<void *>(Base), Dims, Strides, Box, ElemStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      Swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return D.check(R, std::string("encoding the tensor map of ") + What + " (" +
                        std::to_string(Rows) + "x" + std::to_string(Cols) + ", box " +
                        std::to_string(BoxRows) + "x" + std::to_string(BoxCols) + ")");
}

} // namespace

Status GemmModule::launch(Dtype T, const LaunchGeometry &G, const GemmOperands &X,
                          const Problem &P, cudaStream_t Stream) {
  CUfunction F = Entry[static_cast<int>(T)];
  assert(F && "prepare() the entry first");
  CUtensorMap Maps[3];
  std::memset(Maps, 0, sizeof Maps);
  if (Status S = encode2d(Driver, Maps[0], T, X.A, P.K, P.M, Info.TileK, Info.BoxARows, "A"))
    return S;
  if (Status S = encode2d(Driver, Maps[1], T, X.B, P.K, P.N, Info.TileK, Info.BoxBRows, "B"))
    return S;
  if (Info.BoxDRows)
    if (Status S = encode2d(Driver, Maps[2], T, X.D, P.N, P.M, Info.BoxDCols, Info.BoxDRows, "D"))
      return S;

  void *D = X.D;
  uint32_t M = P.M, N = P.N, K = P.K;
  const CUtensorMap *MapPtrs[3] = {nullptr, nullptr, nullptr};
  void *Params[7];
  if (Info.TensorMaps == abi::TensorMapsInGlobal) {
    if (!MapsInGlobal)
      if (Status S = cudaCheck(cudaMalloc(&MapsInGlobal, sizeof Maps), "allocating tensor maps"))
        return S;
    // Ordered on the stream, so a map is not rewritten under a launch still reading it.
    if (Status S = cudaCheck(cudaMemcpyAsync(MapsInGlobal, Maps, sizeof Maps,
                                             cudaMemcpyHostToDevice, Stream),
                             "copying tensor maps to the GPU"))
      return S;
    for (int I = 0; I < 3; ++I) {
      MapPtrs[I] = static_cast<const CUtensorMap *>(MapsInGlobal) + I;
      Params[I] = &MapPtrs[I];
    }
    if (Status S = cudaCheck(cudaStreamSynchronize(Stream), "copying tensor maps to the GPU"))
      return S;
  } else {
    for (int I = 0; I < 3; ++I)
      Params[I] = &Maps[I];
  }
  Params[3] = &D;
  Params[4] = &M;
  Params[5] = &N;
  Params[6] = &K;

  CUlaunchAttribute Attr{};
  CUlaunchConfig C = launchConfig(G, Stream, Attr);
  return Driver.check(Driver.LaunchKernelEx(&C, F, Params, nullptr),
                      "launching " + std::string(T == Dtype::Bf16 ? "bf16" : "f16") +
                          " entry of " + Path);
}

} // namespace runner
} // namespace wsv
