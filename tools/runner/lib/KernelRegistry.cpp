#include "wsv/runner/KernelRegistry.h"

#include "Families.h"

#include <algorithm>

namespace wsv {
namespace runner {

LaunchGeometry gemmGeometry(const abi::KernelInfo &Info, const Problem &P, uint32_t ResidentCtas) {
  LaunchGeometry G;
  const uint32_t Cluster = std::max(1u, Info.ClusterM);
  G.Block[0] = Info.Threads;
  G.Cluster[0] = Cluster;
  G.SmemBytes = Info.SmemBytes;
  const uint32_t TilesM = P.M / Info.TileM, TilesN = P.N / Info.TileN;
  if (Info.Persistent) {
    const uint64_t Tiles = static_cast<uint64_t>(TilesM) * TilesN;
    const uint64_t Ctas = std::min<uint64_t>(std::max(ResidentCtas, Cluster), Tiles);
    G.Grid[0] = static_cast<uint32_t>(std::max<uint64_t>(Cluster, Ctas / Cluster * Cluster));
  } else {
    G.Grid[0] = TilesM;
    G.Grid[1] = TilesN;
  }
  return G;
}

namespace {

// One entry per kernel family; a new family adds its function here.
using FamilyFn = std::vector<KernelSpec> (*)();
const FamilyFn Families[] = {
    hopperKernelSpecs,
    blackwellKernelSpecs,
};

} // namespace

const std::vector<KernelSpec> &kernelSpecs() {
  static const std::vector<KernelSpec> All = [] {
    std::vector<KernelSpec> Out;
    for (FamilyFn F : Families)
      for (KernelSpec &S : F())
        Out.push_back(std::move(S));
    return Out;
  }();
  return All;
}

const KernelSpec *findKernelSpec(const std::string &Name) {
  for (const KernelSpec &S : kernelSpecs())
    if (S.Name == Name)
      return &S;
  return nullptr;
}

std::optional<std::string> deviceRefusal(const KernelSpec &Spec, int Major, int Minor,
                                         const std::string &DeviceName) {
  const unsigned Have = static_cast<unsigned>(Major * 10 + Minor);
  if (Have == Spec.ComputeCapability)
    return std::nullopt;
  const std::string Need = "sm_" + std::to_string(Spec.ComputeCapability) + "a";
  const std::string Got = "sm_" + std::to_string(Have);
  std::string Why = "kernel " + Spec.Name + " is built for " + Need + " and this GPU (" +
                    DeviceName + ") is " + Got;
  if (Have < Spec.ComputeCapability)
    Why += ", an older architecture without the instructions it uses";
  else
    Why += ": " + Need + " code runs only on that architecture";
  return Why;
}

} // namespace runner
} // namespace wsv
