//===- LaunchSpec.h - what PTX does not say about a launch ------------------------===//
//
// A TMA copy moves one box of its tensor map, and the box lives in the CUtensorMap the host
// builds, not in the PTX; the cluster shape may come from a launch attribute rather than
// `.reqnctapercluster`. A LaunchSpec carries such facts for one kernel, with where they came
// from, so every byte count the protocol derives from them can say so.
//
// The reference kernels publish theirs in the module: one `wsv_kernel_info` global holding a
// wsv::abi::KernelInfo (reference_kernels/common/wsv_abi.h), whose layout this file reads
// field by field (version 1). Their entries take (tensor map A, tensor map B, tensor map D,
// D, M, N, K) and move 16-bit elements (bf16 or fp16).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/ptx_parser/Ast.h"
#include "wsv/ptx_parser/Module.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

struct LaunchSpec {
  std::string Origin;                  ///< `wsv_kernel_info`, or where else it came from
  std::optional<unsigned> ClusterSize; ///< CTAs per cluster
  std::optional<unsigned> BlockThreads;
  /// Dynamic shared memory per CTA the launch asks for, in bytes.
  std::optional<unsigned> DynamicSmemBytes;
  /// Display names of the entry's parameters by index (`K` rather than `h2_bf16_param_6`).
  std::vector<std::string> ParamNames;
  /// Bytes of one box of the tensor map passed as parameter Index (directly or through a
  /// pointer to a copy in global memory).
  std::map<unsigned, uint64_t> TensorBoxBytes;
  /// The fewest K tiles the kernel's protocol handles, when it says.
  std::optional<unsigned> MinKTiles;
  std::optional<unsigned> TileK;
};

/// The launch description a module publishes for entry F (the reference kernels'
/// `wsv_kernel_info`); std::nullopt when it has none, or one this code does not read.
std::optional<LaunchSpec> readKernelInfo(const ptx::Module &M, const ptx::Function &F);

} // namespace analyzer
} // namespace wsv
