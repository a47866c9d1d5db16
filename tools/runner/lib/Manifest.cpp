#include "wsv/runner/Manifest.h"

#include "wsv/runner/KernelRegistry.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace wsv {
namespace runner {

const ManifestVariant *ManifestKernel::variant(const std::string &Bug) const {
  for (const ManifestVariant &V : Variants)
    if (V.Bug == Bug)
      return &V;
  return nullptr;
}

unsigned ManifestKernel::computeCapability() const {
  unsigned Value = 0;
  size_t I = Arch.rfind("sm_", 0) == 0 ? 3 : Arch.size();
  bool Any = false;
  for (; I < Arch.size() && Arch[I] >= '0' && Arch[I] <= '9'; ++I) {
    Value = Value * 10 + static_cast<unsigned>(Arch[I] - '0');
    Any = true;
  }
  return Any ? Value : 0;
}

const ManifestKernel *Manifest::kernel(const std::string &Name) const {
  for (const ManifestKernel &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

Expected<Manifest> parseManifest(const std::string &Text, const std::string &PtxDir) {
  using nlohmann::json;
  json Doc = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (Doc.is_discarded() || !Doc.is_object())
    return Status::error("kernels.json is not a JSON object");
  if (Doc.value("schema", "") != "wsv-kernels/1")
    return Status::error("kernels.json has schema '" + Doc.value("schema", "") +
                         "', expected 'wsv-kernels/1'");
  Manifest M;
  M.PtxDir = PtxDir;
  if (!Doc.contains("kernels") || !Doc["kernels"].is_array())
    return Status::error("kernels.json has no 'kernels' array");
  for (const json &K : Doc["kernels"]) {
    if (!K.is_object() || !K.contains("name") || !K["name"].is_string())
      return Status::error("kernels.json lists a kernel without a name");
    ManifestKernel MK;
    MK.Name = K["name"];
    MK.Arch = K.value("arch", "");
    MK.Source = K.value("source", "");
    MK.Ptx = K.value("ptx", "");
    MK.CheckedPtx = K.value("checked_ptx", "");
    MK.ClangPtx = K.value("clang_ptx", "");
    if (K.contains("variants") && K["variants"].is_array())
      for (const json &V : K["variants"]) {
        if (!V.is_object())
          continue;
        MK.Variants.push_back(
            {V.value("bug", ""), V.value("ptx", ""), V.value("checked_ptx", "")});
      }
    M.Kernels.push_back(std::move(MK));
  }
  return M;
}

Expected<Manifest> readManifest(const std::string &PtxDir) {
  const std::string Path = PtxDir + "/kernels.json";
  std::ifstream In(Path);
  if (!In)
    return Status::error("cannot read " + Path + " (build the kernels first, or pass --ptx-dir)");
  std::stringstream SS;
  SS << In.rdbuf();
  return parseManifest(SS.str(), PtxDir);
}

static bool fileExists(const std::string &Path) { return access(Path.c_str(), R_OK) == 0; }

std::string catalogJson(const Manifest &M) {
  using nlohmann::json;
  auto File = [&](const std::string &Name) -> json {
    if (Name.empty())
      return nullptr;
    return M.path(Name);
  };
  json Kernels = json::array();
  for (const ManifestKernel &K : M.Kernels) {
    const KernelSpec *Spec = findKernelSpec(K.Name);
    json Variants = json::array();
    for (const ManifestVariant &V : K.Variants)
      Variants.push_back({{"bug", V.Bug}, {"ptx", File(V.Ptx)}, {"checked_ptx", File(V.CheckedPtx)}});
    Kernels.push_back({{"name", K.Name},
                       {"arch", K.Arch},
                       {"source", K.Source},
                       {"summary", Spec ? json(Spec->Summary) : json(nullptr)},
                       {"runnable", Spec != nullptr},
                       {"ptx", File(K.Ptx)},
                       {"ptx_exists", fileExists(M.path(K.Ptx))},
                       {"checked_ptx", File(K.CheckedPtx)},
                       {"clang_ptx", File(K.ClangPtx)},
                       {"variants", Variants}});
  }
  json Doc = {{"schema", "wsv-kernels/1"}, {"ptx_dir", M.PtxDir}, {"kernels", Kernels}};
  return Doc.dump(2) + "\n";
}

std::string catalogText(const Manifest &M) {
  std::ostringstream OS;
  OS << "PTX in " << M.PtxDir << "\n";
  for (const ManifestKernel &K : M.Kernels) {
    const KernelSpec *Spec = findKernelSpec(K.Name);
    OS << K.Name << "  " << K.Arch << "  " << K.Source
       << (Spec ? "  (runs: " + Spec->Summary + ")" : "  (PTX only)") << "\n";
    OS << "  ptx: " << K.Ptx;
    if (!K.CheckedPtx.empty())
      OS << ", " << K.CheckedPtx;
    if (!K.ClangPtx.empty())
      OS << ", " << K.ClangPtx;
    OS << "\n";
    if (!K.Variants.empty()) {
      OS << "  variants:";
      for (const ManifestVariant &V : K.Variants)
        OS << " " << V.Bug;
      OS << "\n";
    }
  }
  return OS.str();
}

std::string defaultPtxDir() {
  char Buf[4096];
  const ssize_t Len = readlink("/proc/self/exe", Buf, sizeof Buf - 1);
  if (Len <= 0)
    return "ptx";
  std::string Exe(Buf, static_cast<size_t>(Len));
  const size_t Slash = Exe.rfind('/');
  const std::string BinDir = Slash == std::string::npos ? "." : Exe.substr(0, Slash);
  return BinDir + "/../ptx";
}

} // namespace runner
} // namespace wsv
