//===- ThreadSet.h - the threads of a CTA that satisfy a predicate, counted -------===//
//
// Roles are sets of threads. A ThreadSet is exact over one CTA of a given launch shape: the
// predicate is evaluated for every thread id (a CTA has at most 1024 threads), so
// `%tid.x / 128 == 1` is tid 128..255 and `%laneid == 0 && %tid.x < 128` is lane 0 of warps
// 0..3, whatever arithmetic the compiler used. Three things cannot be decided per thread, and
// the set says which:
//
//  - elect.sync: one lane of each warp that executes it is elected, which one is not
//    specified (only that the choice is deterministic). The set holds "one elected lane in
//    each of these warps"; it counts one thread per warp.
//  - Conditions on CTA-uniform values (%cluster_ctarank == 0, a kernel parameter): the threads
//    are in the set when the condition holds. Where the condition only involves the CTA's
//    place in its cluster, the solver counts the CTAs of a cluster for which it holds.
//  - Anything else (a value loaded from memory, %warpid, which is not stable across a warp's
//    life): the set is unknown, with the reason.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Expr.h"
#include "wsv/ptx_parser/Ast.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace wsv {
namespace analyzer {

constexpr unsigned WarpSize = 32;

/// The shape thread sets are counted in.
struct LaunchShape {
  unsigned BlockX = 0, BlockY = 1, BlockZ = 1; ///< threads per CTA
  unsigned ClusterSize = 1;                    ///< CTAs per cluster
  /// CTAs per cluster along x: CUDA launches whole clusters only, so %nctaid.x is a multiple
  /// of it (`.reqnctapercluster`'s first dimension, or the launch description's cluster).
  unsigned ClusterX = 1;
  /// Whether the block size is a maximum (.maxntid) the kernel may be launched below.
  bool BlockIsMaximum = false;

  unsigned threads() const { return BlockX * BlockY * BlockZ; }
  /// What every launch guarantees of the grid: `ClusterX <= %nctaid.x` and `%nctaid.x %
  /// ClusterX == 0` (true without a cluster).
  const Expr *gridFacts(ExprContext &Ctx) const;
  /// From `.reqntid` (exact) or `.maxntid` (an upper bound, taken as the launch), and
  /// `.reqnctapercluster`; std::nullopt when the function states no block size.
  static std::optional<LaunchShape> fromFunction(const ptx::Function &F);
  /// `.reqnctapercluster`'s first dimension; 1 without it. Known even where the function
  /// states no block size.
  static unsigned clusterX(const ptx::Function &F);
};

/// Threads [First, First + Length), repeated Count times, Stride apart.
struct ThreadRun {
  unsigned First = 0, Length = 0, Stride = 0, Count = 1;
};

class ThreadSet {
public:
  /// One lane elected by elect.sync in each of Warps, from Candidates (the threads that
  /// execute the elect.sync and pass the rest of the predicate). Excluded: the set is
  /// everything but the elected lane (a `!elected` guard).
  struct ElectedGroup {
    const Expr *Atom = nullptr;
    llvm::BitVector Candidates;
    llvm::SmallVector<unsigned, 4> Warps;
    bool Excluded = false;
    /// A condition on CTA-uniform values the election also needs; nullptr when none.
    const Expr *Condition = nullptr;
  };
  /// Threads that are in the set when Condition (on CTA-uniform values) holds.
  struct ConditionalGroup {
    const Expr *Condition = nullptr;
    llvm::BitVector Threads;
    /// CTAs of a cluster where Condition holds, when the solver could count them.
    std::optional<uint64_t> CtasWhereTrue;
    unsigned ClusterSize = 1;
  };

  ThreadSet() = default;
  explicit ThreadSet(unsigned BlockThreads) : Members(BlockThreads) {}
  static ThreadSet unknown(std::string Reason);

  unsigned blockThreads() const { return Members.size(); }
  /// Threads in the set for every value of the leaves the predicate mentions.
  const llvm::BitVector &members() const { return Members; }
  llvm::ArrayRef<ElectedGroup> elected() const { return Elected; }
  llvm::ArrayRef<ConditionalGroup> conditional() const { return Conditional; }
  bool isUnknown() const { return !Reason.empty(); }
  const std::string &reason() const { return Reason; }
  /// Known and independent of anything but the thread id (elected lanes count one each).
  bool isExact() const;
  /// The number of threads, when exact.
  std::optional<unsigned> count() const;
  /// Members as runs: `lane 0 of warps 0..3` is {0, 1, 32, 4}.
  llvm::SmallVector<ThreadRun, 4> runs() const;

  /// `tid 128..255 (128 threads)`, `one elected lane of warp 3 (1 thread)`, ...
  void print(llvm::raw_ostream &OS) const;
  std::string str() const;

  // Built by GuardAnalysis::threadSet.
  llvm::BitVector Members;
  llvm::SmallVector<ElectedGroup, 1> Elected;
  llvm::SmallVector<ConditionalGroup, 1> Conditional;
  std::string Reason;
};

} // namespace analyzer
} // namespace wsv
