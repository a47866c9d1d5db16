// What a checked kernel left in its hang capture, in words: which role, warp and CTA waits on
// which barrier slot for which parity. Pure host code over the wsv_abi.h record layout, so it is
// unit-tested with synthetic captures.
#pragma once

#include "wsv_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wsv {
namespace runner {

/// Splits KernelInfo's comma-separated name lists ("producer,consumer").
std::vector<std::string> splitNames(const char *List, size_t MaxLen);

/// One warp inside a wait when the capture was taken.
struct StuckWait {
  abi::SyncOp Op = abi::OpNone;
  uint32_t RoleId = 0;
  std::string Role;
  uint32_t BarrierId = 0;
  std::string Barrier;  ///< mbarrier name; empty for named barriers
  uint32_t Index = 0;   ///< mbarrier slot, or named barrier id
  uint32_t Parity = 0;  ///< parity waited for, or named barrier thread count
  uint32_t Iteration = 0;
  uint32_t Cta[3] = {0, 0, 0};
  uint32_t ClusterRank = 0;
  uint32_t Warp = 0;
  uint32_t Sm = 0;
  uint64_t SinceNs = 0;
  uint64_t CapturedNs = 0;
  bool Reporter = false;

  /// "empty[0] parity 0" or "bar.sync 1 (256 threads)"
  std::string what() const;
};

/// Waits that share role, operation, barrier, slot and parity, over all CTAs that reported.
struct WaitGroup {
  StuckWait First;            ///< the earliest-starting member
  uint32_t Ctas = 0;          ///< distinct CTAs
  std::vector<uint32_t> Warps; ///< distinct warp indices, sorted
  uint32_t MinIteration = 0, MaxIteration = 0;
};

struct HangReport {
  std::vector<std::string> Roles;    ///< KernelInfo::Roles
  std::vector<std::string> Barriers; ///< KernelInfo::Barriers
  std::vector<StuckWait> Waits;      ///< in capture order
  uint32_t Dropped = 0;              ///< records that did not fit the capture
  uint64_t TimeoutNs = 0;

  bool empty() const { return Waits.empty(); }
  std::vector<WaitGroup> groups() const;
  /// Roles with no warp inside a wait: finished, or blocked where no wait is instrumented.
  std::vector<std::string> silentRoles() const;
  /// Several lines: one per wait group, then the silent roles.
  std::string summary() const;
};

/// Reads the valid records of a capture (Capacity of them at most).
HangReport readHangCapture(const abi::HangCapture &Capture, const abi::KernelInfo &Info,
                           uint64_t TimeoutNs);

} // namespace runner
} // namespace wsv
