#include "Memory.h"

#include <thread>

namespace wsv {
namespace runner {

Expected<DeviceBuffer> DeviceBuffer::allocate(size_t Bytes, const char *What) {
  DeviceBuffer B;
  if (Status S = cudaCheck(cudaMalloc(&B.Ptr, Bytes),
                           std::string("allocating ") + std::to_string(Bytes) + " bytes for " + What))
    return S;
  B.Bytes = Bytes;
  return B;
}

Status uploadRandom(DeviceBuffer &Buf, uint64_t Count, Dtype T, uint64_t Seed) {
  std::vector<uint16_t> Host(Count);
  fillRandomGrid(Host.data(), Count, T, Seed, std::max(1u, std::thread::hardware_concurrency()));
  return cudaCheck(cudaMemcpy(Buf.get(), Host.data(), Count * sizeof(uint16_t),
                              cudaMemcpyHostToDevice),
                   "uploading random inputs");
}

Status poison(DeviceBuffer &Buf, cudaStream_t Stream) {
  // 0xFF bytes make 0xFFFF elements: NaN in bf16 and in f16.
  static_assert(PoisonBits == 0xFFFF, "poison is a byte pattern");
  return cudaCheck(cudaMemsetAsync(Buf.get(), 0xFF, Buf.bytes(), Stream), "poisoning the output");
}

} // namespace runner
} // namespace wsv
