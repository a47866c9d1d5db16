// The host-side rules for launching a Blackwell reference kernel, without CUDA: which GPUs may
// run it, which problem shapes it covers exactly, and the grid a shape needs. Kept apart from the
// CUDA calls so that they are unit-tested on machines without a GPU.
#pragma once

#include "launch.h"

#include <cstdint>
#include <optional>
#include <string>

namespace wsv {
namespace blackwell {

/// The compute capability every Blackwell reference kernel is built for: sm_100a code (tcgen05,
/// TMEM) runs on exactly this architecture.
constexpr int KernelMajor = 10, KernelMinor = 0;

/// Why a GPU of compute capability Major.Minor cannot run kernel `Name`, or nothing if it can.
std::optional<std::string> deviceRefusal(const std::string &Name, int Major, int Minor,
                                         const std::string &DeviceName);

/// Why the kernel cannot compute an M x N x K problem exactly, or nothing if it can: the kernels
/// have no edge handling, so M, N and K must be whole multiples of their tiles.
std::optional<std::string> shapeRefusal(const BlackwellLaunch &L, uint32_t M, uint32_t N,
                                        uint32_t K);

/// Why a launch description read from a PTX module is unusable, or nothing.
std::optional<std::string> launchRefusal(const BlackwellLaunch &L);

struct Grid {
  uint32_t X = 1, Y = 1;
};

/// The grid for a problem the kernel accepts: one CTA per output tile, or, for a persistent
/// kernel, min(tiles, SmCount) CTAs rounded down to whole clusters.
Grid gridFor(const BlackwellLaunch &L, uint32_t M, uint32_t N, uint32_t SmCount);

} // namespace blackwell
} // namespace wsv
