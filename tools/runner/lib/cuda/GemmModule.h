// One reference GEMM's PTX, loaded through the driver: its published KernelInfo, its bf16 and
// f16 entries, tensor maps built from the KernelInfo boxes, the launch (clusters and large shared
// memory included) and, for checked builds, the hang capture.
#pragma once

#include "Driver.h"

#include "wsv/runner/KernelRegistry.h"

#include <memory>
#include <string>
#include <vector>

namespace wsv {
namespace runner {

/// A HangCapture in host-mapped memory: written by the GPU, readable after the kernel traps.
class HangCaptureBuffer {
public:
  static Expected<std::unique_ptr<HangCaptureBuffer>> create(uint32_t Capacity);
  ~HangCaptureBuffer();
  void reset(); ///< clears the records before a launch
  const abi::HangCapture &host() const { return *Host; }
  abi::HangCapture *device() const { return Device; }

private:
  HangCaptureBuffer() = default;
  abi::HangCapture *Host = nullptr;
  abi::HangCapture *Device = nullptr;
  uint32_t Capacity = 0;
};

/// Device addresses of one problem's operands.
struct GemmOperands {
  const void *A = nullptr; ///< M x K
  const void *B = nullptr; ///< N x K
  void *D = nullptr;       ///< M x N
};

class GemmModule {
public:
  /// Loads (JIT-compiles) the PTX file and reads its wsv_kernel_info.
  static Expected<std::unique_ptr<GemmModule>> load(const DriverApi &Driver,
                                                    const std::string &PtxPath);
  ~GemmModule();

  const abi::KernelInfo &info() const { return Info; }
  const std::string &path() const { return Path; }
  /// ptxas warnings from the JIT (performance losses, ignored setmaxnreg), one per line.
  const std::vector<std::string> &jitWarnings() const { return Warnings; }
  /// Whether the PTX is an instrumented build (it defines wsv_hang_capture).
  bool checked() const { return CaptureGlobal != 0; }
  std::string entryName(const std::string &Kernel, Dtype T) const { return Kernel + entrySuffix(T); }

  /// Looks up `<kernel>_bf16|_f16` and allows its dynamic shared memory.
  Status prepare(const std::string &Kernel, Dtype T);
  /// CTAs of this entry that fit on the GPU at once, clusters counted (for persistent grids).
  Expected<uint32_t> residentCtas(Dtype T, const LaunchGeometry &G);
  /// Points the module's capture globals at Capture and zeroes its slot counter.
  Status armCapture(const HangCaptureBuffer &Capture, uint64_t TimeoutNs);
  /// Enqueues one launch on Stream.
  Status launch(Dtype T, const LaunchGeometry &G, const GemmOperands &X, const Problem &P,
                cudaStream_t Stream);

private:
  GemmModule(const DriverApi &D) : Driver(D) {}
  Status setGlobal(CUdeviceptr Global, const void *Value, size_t Bytes, const char *Name);

  const DriverApi &Driver;
  std::string Path;
  CUmodule Module = nullptr;
  CUfunction Entry[2] = {nullptr, nullptr}; ///< by Dtype
  abi::KernelInfo Info{};
  CUdeviceptr CaptureGlobal = 0, TimeoutGlobal = 0, NextGlobal = 0;
  void *MapsInGlobal = nullptr; ///< three tensor maps, for builds that read them from memory
  std::vector<std::string> Warnings;
};

} // namespace runner
} // namespace wsv
