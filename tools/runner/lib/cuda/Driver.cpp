#include "Driver.h"

namespace wsv {
namespace runner {

std::string DriverApi::errorText(CUresult R) const {
  const char *Text = nullptr;
  if (GetErrorString)
    GetErrorString(R, &Text);
  return "CUresult " + std::to_string(static_cast<int>(R)) + (Text ? std::string(": ") + Text : "");
}

Status DriverApi::check(CUresult R, const std::string &What) const {
  if (R == CUDA_SUCCESS)
    return Status::ok();
  return Status::error(What + ": " + errorText(R));
}

Status cudaCheck(cudaError_t E, const std::string &What) {
  if (E == cudaSuccess)
    return Status::ok();
  return Status::error(What + ": " + cudaGetErrorName(E) + " (" + cudaGetErrorString(E) + ")");
}

namespace {

template <typename Fn>
Status resolve(const char *Symbol, unsigned Version, Fn &Out) {
  void *Ptr = nullptr;
  cudaDriverEntryPointQueryResult Found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t E =
      cudaGetDriverEntryPointByVersion(Symbol, &Ptr, Version, cudaEnableDefault, &Found);
  if (E != cudaSuccess)
    return cudaCheck(E, std::string("resolving the driver entry ") + Symbol);
  if (Found != cudaDriverEntryPointSuccess || !Ptr)
    return Status::error(std::string("the CUDA driver has no entry ") + Symbol + " (version " +
                         std::to_string(Version) + "); update the driver");
  Out = reinterpret_cast<Fn>(Ptr);
  return Status::ok();
}

Expected<DriverApi> resolveAll() {
  DriverApi D;
  const Status Steps[] = {
      resolve("cuGetErrorString", 6000, D.GetErrorString),
      resolve("cuDriverGetVersion", 2020, D.DriverGetVersion),
      resolve("cuModuleLoadDataEx", 2010, D.ModuleLoadDataEx),
      resolve("cuModuleUnload", 2000, D.ModuleUnload),
      resolve("cuModuleGetFunction", 2000, D.ModuleGetFunction),
      resolve("cuModuleGetGlobal", 3020, D.ModuleGetGlobal),
      resolve("cuFuncSetAttribute", 9000, D.FuncSetAttribute),
      resolve("cuLaunchKernelEx", 11060, D.LaunchKernelEx),
      resolve("cuOccupancyMaxActiveClusters", 11070, D.OccupancyMaxActiveClusters),
      resolve("cuTensorMapEncodeTiled", 12000, D.TensorMapEncodeTiled),
  };
  for (const Status &S : Steps)
    if (S)
      return S;
  return D;
}

} // namespace

Expected<const DriverApi *> driverApi() {
  static Expected<DriverApi> Api = resolveAll();
  if (!Api)
    return Api.status();
  return &*Api;
}

} // namespace runner
} // namespace wsv
