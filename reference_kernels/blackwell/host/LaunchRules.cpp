#include "LaunchRules.h"

#include <algorithm>

namespace wsv {
namespace blackwell {

std::optional<std::string> deviceRefusal(const std::string &Name, int Major, int Minor,
                                         const std::string &DeviceName) {
  if (Major == KernelMajor && Minor == KernelMinor)
    return std::nullopt;
  std::string Why = "kernel " + Name + " is built for sm_100a and this GPU (" + DeviceName +
                    ") is sm_" + std::to_string(Major * 10 + Minor);
  if (Major < KernelMajor)
    Why += ", an older architecture without tcgen05 and tensor memory";
  else
    Why += ": sm_100a code runs only on sm_100 (B200/GB200)";
  return Why;
}

std::optional<std::string> launchRefusal(const BlackwellLaunch &L) {
  if (L.Version != BlackwellLaunchVersion)
    return "launch description version " + std::to_string(L.Version) + ", expected " +
           std::to_string(BlackwellLaunchVersion);
  if (!L.TileM || !L.TileN || !L.TileK || !L.Threads || !L.ClusterM)
    return std::string("launch description has a zero tile, thread or cluster size");
  return std::nullopt;
}

std::optional<std::string> shapeRefusal(const BlackwellLaunch &L, uint32_t M, uint32_t N,
                                        uint32_t K) {
  const uint64_t RowQuantum = static_cast<uint64_t>(L.TileM) * L.ClusterM;
  auto Multiple = [](const char *Dim, uint64_t V, uint64_t Q, const char *What) {
    return std::string(Dim) + " = " + std::to_string(V) + " is not a positive multiple of " +
           std::to_string(Q) + " (" + What + ")";
  };
  if (M == 0 || M % RowQuantum)
    return Multiple("M", M, RowQuantum, L.ClusterM > 1 ? "tile rows x cluster size" : "tile rows");
  if (N == 0 || N % L.TileN)
    return Multiple("N", N, L.TileN, "tile columns");
  if (K == 0 || K % L.TileK)
    return Multiple("K", K, L.TileK, "k-tile width");
  return std::nullopt;
}

Grid gridFor(const BlackwellLaunch &L, uint32_t M, uint32_t N, uint32_t SmCount) {
  Grid G;
  const uint32_t TilesM = M / L.TileM, TilesN = N / L.TileN;
  if (!L.Persistent) {
    G.X = TilesM;
    G.Y = TilesN;
    return G;
  }
  const uint64_t Tiles = static_cast<uint64_t>(TilesM) * TilesN;
  const uint64_t Ctas = std::min<uint64_t>(std::max(SmCount, L.ClusterM), Tiles);
  G.X = static_cast<uint32_t>(std::max<uint64_t>(L.ClusterM, Ctas / L.ClusterM * L.ClusterM));
  return G;
}

} // namespace blackwell
} // namespace wsv
