#include "wsv/runner/Plan.h"

namespace wsv {
namespace runner {

const char *flavorName(PtxFlavor F) {
  switch (F) {
  case PtxFlavor::Plain:
    return "plain";
  case PtxFlavor::Checked:
    return "checked";
  case PtxFlavor::Clang:
    return "clang";
  }
  return "plain";
}

static std::string variantList(const ManifestKernel &K) {
  std::string S;
  for (const ManifestVariant &V : K.Variants)
    S += (S.empty() ? "" : ", ") + V.Bug;
  return S.empty() ? "none" : S;
}

static Expected<Job> planOne(const RunOptions &O, const Manifest &M, const ManifestKernel &K,
                             bool FromAll) {
  Job J;
  J.Kernel = K.Name;
  J.Spec = findKernelSpec(K.Name);
  J.FromAll = FromAll;
  J.Variant = O.Bug;
  J.Flavor = O.flavor();
  if (!J.Spec)
    return Status::error("kernel " + K.Name + " (" + K.Arch +
                         ") has PTX but no launch spec in the runner's kernel registry");
  std::string Plain = K.Ptx, Checked = K.CheckedPtx;
  if (!O.Bug.empty()) {
    const ManifestVariant *V = K.variant(O.Bug);
    if (!V)
      return Status::error("kernel " + K.Name + " has no variant '" + O.Bug +
                           "'; its variants: " + variantList(K));
    Plain = V->Ptx;
    Checked = V->CheckedPtx;
  }
  switch (J.Flavor) {
  case PtxFlavor::Plain:
    J.Ptx = Plain;
    break;
  case PtxFlavor::Checked:
    if (Checked.empty())
      return Status::error("kernel " + K.Name + " has no checked build (wsv_kernel CHECKED)");
    J.Ptx = Checked;
    if (O.Bench)
      J.PlainPtx = M.path(Plain);
    break;
  case PtxFlavor::Clang:
    if (!O.Bug.empty())
      return Status::error("the clang build has no seeded variants");
    if (K.ClangPtx.empty())
      return Status::error("kernel " + K.Name + " has no clang build (wsv_kernel CLANG, "
                           "and clang++-19 at configure time)");
    J.Ptx = K.ClangPtx;
    break;
  }
  J.Ptx = O.PtxFile.empty() ? M.path(J.Ptx) : O.PtxFile;
  return J;
}

Expected<std::vector<Job>> planJobs(const RunOptions &O, const Manifest &M) {
  std::vector<Job> Jobs;
  if (O.Kernels.size() == 1 && O.Kernels[0] == "all") {
    for (const ManifestKernel &K : M.Kernels) {
      if (!findKernelSpec(K.Name))
        continue; // PTX-only kernels (no launch spec) are analyzed, not run
      if (!O.Bug.empty() && !K.variant(O.Bug))
        continue;
      // `all --check` / `all --clang` means every kernel that has that build.
      if ((O.Check && K.CheckedPtx.empty()) || (O.Clang && K.ClangPtx.empty()))
        continue;
      Expected<Job> J = planOne(O, M, K, /*FromAll=*/true);
      if (!J)
        return J.takeError();
      Jobs.push_back(*J);
    }
    if (Jobs.empty())
      return Status::error(!O.Bug.empty() ? "no kernel has the variant '" + O.Bug + "'"
                                          : std::string("no runnable kernel in the manifest") +
                                                (O.Check   ? " has a checked build"
                                                 : O.Clang ? " has a clang build"
                                                           : ""));
    return Jobs;
  }
  for (const std::string &Name : O.Kernels) {
    const ManifestKernel *K = M.kernel(Name);
    if (!K) {
      std::string Known;
      for (const ManifestKernel &MK : M.Kernels)
        Known += (Known.empty() ? "" : ", ") + MK.Name;
      return Status::error("unknown kernel '" + Name + "' (known: " + Known + ")");
    }
    Expected<Job> J = planOne(O, M, *K, /*FromAll=*/false);
    if (!J)
      return J.takeError();
    Jobs.push_back(*J);
  }
  return Jobs;
}

} // namespace runner
} // namespace wsv
