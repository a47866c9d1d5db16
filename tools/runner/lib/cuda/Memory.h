// Device allocations that free themselves, and the uploads of random inputs and poisoned outputs.
#pragma once

#include "Driver.h"

#include "wsv/runner/Gemm.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wsv {
namespace runner {

class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&O) noexcept : Ptr(O.Ptr), Bytes(O.Bytes) { O.Ptr = nullptr; }
  DeviceBuffer &operator=(DeviceBuffer &&O) noexcept {
    if (this != &O) {
      release();
      Ptr = O.Ptr;
      Bytes = O.Bytes;
      O.Ptr = nullptr;
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }
  static Expected<DeviceBuffer> allocate(size_t Bytes, const char *What);

  void *get() const { return Ptr; }
  size_t bytes() const { return Bytes; }

private:
  void release() {
    // Nothing to report to: after a kernel trap every free fails, and the process ends anyway.
    if (Ptr)
      cudaFree(Ptr);
    Ptr = nullptr;
  }
  void *Ptr = nullptr;
  size_t Bytes = 0;
};

/// Fills Buf (Count 16-bit elements) with a fresh random draw on the grid of gridValueBits.
Status uploadRandom(DeviceBuffer &Buf, uint64_t Count, Dtype T, uint64_t Seed);
/// Sets every element to PoisonBits.
Status poison(DeviceBuffer &Buf, cudaStream_t Stream);

} // namespace runner
} // namespace wsv
