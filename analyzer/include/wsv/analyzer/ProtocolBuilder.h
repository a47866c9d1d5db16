//===- ProtocolBuilder.h - recover a kernel's protocol from its PTX ---------------===//
//
//   ptx::ParseResult R = ...;
//   std::unique_ptr<Protocol> P = buildProtocol(*R.M, *R.M->function("h2_bf16"));
//   printProtocol(*P, llvm::outs());            // ProtocolPrinter.h
//
// Building never fails: what cannot be resolved is an unknown with the reason inside the
// Protocol (and a note for what concerns the whole kernel). The module must outlive the
// Protocol (events point at its instructions through the analysis they keep).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/LaunchSpec.h"
#include "wsv/analyzer/Protocol.h"
#include "wsv/analyzer/Solver.h"
#include "wsv/ptx_parser/Module.h"

#include <map>
#include <memory>
#include <optional>

namespace wsv {
namespace analyzer {

struct ProtocolOptions {
  /// Ask Z3 where intervals and residues do not decide (thread counts of odd guards).
  bool UseSolver = true;
  /// A solver to share across kernels (creating a Z3 context takes milliseconds).
  Solver *SharedSolver = nullptr;
  /// Launch facts PTX does not state; when unset, the module's `wsv_kernel_info` is read.
  std::optional<LaunchSpec> Spec;
  /// CTAs per cluster (along x) the launch uses, for a kernel whose PTX states none
  /// (clang emits no `.reqnctapercluster` for __cluster_dims__; a launch attribute sets it):
  /// takes the place of Spec's. ClusterFrom says where it came from (`--cluster-size`).
  /// clusterSizeConflict() tells whether the kernel allows it.
  std::optional<unsigned> ClusterSize;
  std::string ClusterFrom;
  /// Notes per kernel from steps before the analysis (applyWarpDispatch, WarpDispatch.h):
  /// they join the protocol's notes, which every verdict lists among its assumptions.
  const std::map<std::string, std::vector<std::string>> *Notes = nullptr;
};

/// Why a launch with clusters of Size CTAs along x cannot run F (it states another
/// `.reqnctapercluster`, or one over y or z, which the model does not have; Size is 0 or
/// above 16); std::nullopt where it can.
std::optional<std::string> clusterSizeConflict(const ptx::Function &F, unsigned Size);

std::unique_ptr<Protocol> buildProtocol(const ptx::Module &M, const ptx::Function &F,
                                        const ProtocolOptions &Options = {});

} // namespace analyzer
} // namespace wsv
