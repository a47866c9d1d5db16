// The CUDA driver API, reached through the runtime's cudaGetDriverEntryPointByVersion (the
// current form of cudaGetDriverEntryPoint) rather than by linking libcuda: the build then needs
// no driver, so it links on CI machines that have the toolkit and no GPU. Each entry is asked for
// at the ABI version whose prototype cudaTypedefs.h names.
#pragma once

#include "wsv/runner/Status.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <string>

namespace wsv {
namespace runner {

struct DriverApi {
  PFN_cuGetErrorString_v6000 GetErrorString = nullptr;
  PFN_cuDriverGetVersion_v2020 DriverGetVersion = nullptr;
  PFN_cuModuleLoadDataEx_v2010 ModuleLoadDataEx = nullptr;
  PFN_cuModuleUnload_v2000 ModuleUnload = nullptr;
  PFN_cuModuleGetFunction_v2000 ModuleGetFunction = nullptr;
  PFN_cuModuleGetGlobal_v3020 ModuleGetGlobal = nullptr;
  PFN_cuFuncSetAttribute_v9000 FuncSetAttribute = nullptr;
  PFN_cuLaunchKernelEx_v11060 LaunchKernelEx = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 OccupancyMaxActiveClusters = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 TensorMapEncodeTiled = nullptr;

  /// "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure"
  std::string errorText(CUresult R) const;
  /// Status for a driver call: success, or "<what>: <error text>".
  Status check(CUresult R, const std::string &What) const;
};

/// Resolves every entry once per process (after the runtime has created its context).
Expected<const DriverApi *> driverApi();

/// Status for a runtime call: success, or "<what>: <cudaGetErrorString>".
Status cudaCheck(cudaError_t E, const std::string &What);

} // namespace runner
} // namespace wsv
