// The list of reference kernels the build produced: build/ptx/kernels.json (written by
// cmake/WsvKernels.cmake), with the PTX file of every kernel, variant and flavor.
#pragma once

#include "wsv/runner/Status.h"

#include <string>
#include <vector>

namespace wsv {
namespace runner {

struct ManifestVariant {
  std::string Bug;        ///< check name the variant seeds
  std::string Ptx;        ///< file name inside the PTX folder
  std::string CheckedPtx; ///< empty when the kernel has no checked build
};

struct ManifestKernel {
  std::string Name;   ///< "h2"
  std::string Arch;   ///< "sm_90a"
  std::string Source; ///< repository-relative .cu
  std::string Ptx, CheckedPtx, ClangPtx;
  std::vector<ManifestVariant> Variants;

  const ManifestVariant *variant(const std::string &Bug) const;
  /// 90 for sm_90a, 100 for sm_100a; 0 when Arch does not parse.
  unsigned computeCapability() const;
};

struct Manifest {
  std::string PtxDir; ///< the folder the files are in
  std::vector<ManifestKernel> Kernels;

  const ManifestKernel *kernel(const std::string &Name) const;
  std::string path(const std::string &File) const { return PtxDir + "/" + File; }
};

/// Parses kernels.json text; PtxDir is where its files are.
Expected<Manifest> parseManifest(const std::string &Text, const std::string &PtxDir);
/// Reads <PtxDir>/kernels.json.
Expected<Manifest> readManifest(const std::string &PtxDir);
/// `wsv kernels --format json`: every kernel with its variants, absolute PTX paths, and whether
/// `wsv run` has a launch spec for it ("wsv-kernels/1", like kernels.json plus those fields).
std::string catalogJson(const Manifest &M);
/// `wsv kernels`: one line per kernel, then its variants.
std::string catalogText(const Manifest &M);

/// <directory of this executable>/../ptx: where the build that made `wsv` put the PTX.
std::string defaultPtxDir();

} // namespace runner
} // namespace wsv
