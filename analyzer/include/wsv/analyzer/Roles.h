//===- Roles.h - threads partitioned into roles, described and named --------------===//
//
// A role is a set of threads that runs one sync skeleton. The protocol builder gives these
// functions the thread sets of the events after the roles split (ThreadSet.h, exact per CTA)
// and gets back:
//
//  - the shape of each set: every thread, at most one thread per warp (a leader: `tid == 0`,
//    an elected lane, lane 0 of each warp), or some other set;
//  - the partition of the CTA's threads by which of the other sets they belong to. Leaders do
//    not split roles: thread 0 releasing a stage acts for its warpgroup, an elected lane issues
//    for its warp, and the author thinks of both as that group's work;
//  - names authors use, from what a role does (producer: TMA loads; consumer: wgmma; mma:
//    tcgen05.mma; writeback: TMEM or registers to shared memory and a TMA store; idle: only
//    what every role does), and descriptions in warps and warpgroups
//    (`warp 7 (warpgroup 1 warp 3, tid 224..255)`).
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/ThreadSet.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"

#include <string>
#include <vector>

namespace wsv {
namespace analyzer {

constexpr unsigned WarpgroupSize = 128;

enum class ThreadShape : uint8_t {
  All,     ///< every thread of the CTA, unconditionally
  Leader,  ///< at most one thread in each warp (and not all threads)
  Partial, ///< any other known set
  Unknown, ///< the set could not be computed
};
const char *toString(ThreadShape S);

ThreadShape classifyThreads(const ThreadSet &S);

/// Every thread that may run the event: members, the threads of conditional groups, and the
/// candidates of elected lanes (the whole warp: which lane is elected is not known).
llvm::BitVector reachingThreads(const ThreadSet &S);

/// The threads of a CTA of BlockThreads, grouped by which of Splitting they are in: the
/// coarsest partition such that every set is a union of parts. Parts come ordered by their
/// lowest thread.
std::vector<llvm::BitVector> partitionThreads(unsigned BlockThreads,
                                              llvm::ArrayRef<llvm::BitVector> Splitting);

/// `warpgroup 1 (tid 128..255)`, `warp 4 (tid 128..159)`, `warp 7 (warpgroup 1 warp 3, tid
/// 224..255)`, `warps 5-6 (warpgroup 1 warps 1-2, tid 160..223)`, `tid 0`, `tid 128 every 128
/// (x2)`; BlockThreads says when a set is every thread (`all 160 threads`).
std::string describeThreads(const llvm::BitVector &Threads, unsigned BlockThreads);

/// A thread set in the same words, with elected lanes (`elected lane of warp 4`) and the
/// conditions of conditional parts.
std::string describeThreadSet(const ThreadSet &S);

/// What a role does, for naming it.
struct RoleActivity {
  bool TmaLoad = false;   ///< async copies into shared memory
  bool Wgmma = false;
  bool Tcgen05Mma = false;
  bool TmemLoad = false;  ///< tcgen05.ld
  bool SmemWrite = false; ///< st.shared / stmatrix
  bool TmaStore = false;
  bool WaitsOnLoads = false; ///< waits on a barrier that async copies complete
  bool Own = false;       ///< anything that not every role does
};

/// `producer`, `consumer` (wgmma, or waits for what the copies bring), `mma`, `mainloop` (TMA
/// and MMA in one role), `writeback`, `idle`; empty when none fits (the caller numbers it).
std::string roleName(const RoleActivity &A);

} // namespace analyzer
} // namespace wsv
