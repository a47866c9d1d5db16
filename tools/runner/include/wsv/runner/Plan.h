// Turns `wsv run` options and the manifest into jobs: one per kernel (and seeded variant), each
// with the PTX file that runs. Pure host code: unknown kernels, variants and flavors are reported
// here, before any GPU work.
#pragma once

#include "wsv/runner/KernelRegistry.h"
#include "wsv/runner/Manifest.h"
#include "wsv/runner/RunOptions.h"

#include <string>
#include <vector>

namespace wsv {
namespace runner {

struct Job {
  const KernelSpec *Spec = nullptr;
  std::string Kernel;
  std::string Variant;  ///< seeded bug, or empty
  PtxFlavor Flavor = PtxFlavor::Plain;
  std::string Ptx;      ///< the file that runs
  std::string PlainPtx; ///< with --check --bench: the plain build, timed for the overhead
  bool FromAll = false; ///< named through `all`: a GPU it cannot run on skips it, quietly
};

const char *flavorName(PtxFlavor F); ///< plain, checked, clang

Expected<std::vector<Job>> planJobs(const RunOptions &Options, const Manifest &M);

} // namespace runner
} // namespace wsv
