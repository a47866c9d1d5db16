//===- AsyncGroups.h - reference model of async operations and their groups ----------===//
//
// Three PTX mechanisms track asynchronous work issued by a thread:
//  - wgmma.commit_group / wgmma.wait_group N: wgmma.mma_async operations of a warpgroup are
//    batched into groups; wait_group N returns once every group but the N most recent has
//    completed (its shared-memory reads done and accumulators written).
//  - cp.async.bulk.commit_group / cp.async.bulk.wait_group{.read} N: bulk stores (TMA stores)
//    of a thread, batched the same way; `.read` waits only until the sources have been read,
//    so the staging buffer may be rewritten, not until the writes are visible.
//  - tcgen05.commit.mbarrier::arrive::one [bar]: the mbarrier gets one arrival once every
//    earlier async tcgen05 operation of the issuing thread has completed; a commit with
//    nothing in flight arrives at once (the "empty commit group" of a non-elected lane).
// Operations complete in any order (the scheduler of a simulation chooses); the models only
// say which waits may pass and which arrivals are due. Operations carry a caller-chosen id so a
// caller can map them to the buffers they read.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "llvm/ADT/SmallVector.h"

namespace wsv {
namespace models {

/// Groups of async operations issued by one thread or warpgroup (wgmma or bulk stores).
class AsyncGroupQueue {
public:
  /// An operation joins the open (not yet committed) group.
  void issue(uint32_t OpId);
  /// commit_group: closes the open group; an empty group is legal and completes trivially.
  void commit();
  /// The operation's source reads are done (bulk stores: the staging buffer may be reused).
  bool completeRead(uint32_t OpId);
  /// The operation is complete (reads and writes); implies completeRead.
  bool complete(uint32_t OpId);

  /// wait_group N (ReadOnly: wait_group.read N) would return now.
  bool waitPasses(uint32_t N, bool ReadOnly = false) const;
  /// Completes (ReadOnly: finishes the reads of) every operation that wait_group N waits for,
  /// so that it passes: a simulation that lets operations complete only when something waits
  /// for them uses this.
  void retire(uint32_t N, bool ReadOnly = false);
  /// Completes every operation, committed or not.
  void completeAll();

  /// Operations not yet complete, in issue order (uncommitted ones included).
  std::vector<uint32_t> inFlight() const;
  /// Operations whose reads may still be in progress.
  std::vector<uint32_t> readsInFlight() const;
  /// The same without building a list (an explorer asks for them in every state): F(Id) for
  /// each operation in flight, or (Reads) whose reads may be, in issue order.
  template <typename Fn> void forEachInFlight(Fn F, bool Reads = false) const {
    for (const Op &O : Ops)
      if (!(Reads ? O.ReadDone : O.Done))
        F(O.Id);
  }
  /// The first operation in flight (Reads: whose reads may be) that Pred accepts.
  template <typename Fn>
  std::optional<uint32_t> findInFlight(Fn Pred, bool Reads = false) const {
    for (const Op &O : Ops)
      if (!(Reads ? O.ReadDone : O.Done) && Pred(O.Id))
        return O.Id;
    return std::nullopt;
  }
  std::optional<uint32_t> firstInFlight() const {
    return findInFlight([](uint32_t) { return true; });
  }
  /// Operations issued since the last commit: nothing can wait for them.
  size_t uncommitted() const { return Ops.size() - committedEnd(); }
  /// Committed groups that still hold an operation in flight (the finished oldest ones are
  /// dropped: no wait_group can tell them from absent ones).
  size_t committedGroups() const { return Ends.size(); }

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    Out.put(Ops.size());
    for (const Op &O : Ops)
      Out.put(uint64_t(O.Id) << 2 | uint64_t(O.ReadDone) << 1 | O.Done);
    Out.put(Ends.size());
    for (uint32_t E : Ends)
      Out.put(E);
  }
  template <typename R> void load(R &In) {
    Ops.resize(In.get());
    for (Op &O : Ops) {
      uint64_t V = In.get();
      O = {static_cast<uint32_t>(V >> 2), (V >> 1 & 1) != 0, (V & 1) != 0};
    }
    Ends.resize(In.get());
    for (uint32_t &E : Ends)
      E = static_cast<uint32_t>(In.get());
  }

private:
  struct Op {
    uint32_t Id;
    bool ReadDone = false;
    bool Done = false;
  };
  Op *find(uint32_t OpId);
  void dropFinished();
  size_t committedEnd() const { return Ends.empty() ? 0 : Ends.back(); }

  // One flat list, so that copying a queue (an explorer copies every state it steps from)
  // needs no allocation while a few groups are in flight.
  llvm::SmallVector<Op, 8> Ops;        ///< committed groups' operations, oldest first, then
                                       ///< the open group's
  llvm::SmallVector<uint32_t, 4> Ends; ///< per committed group: the end of its part of Ops
};

/// tcgen05.commit bookkeeping of one issuing thread.
class Tcgen05CommitTracker {
public:
  /// An async tcgen05 operation (mma, cp, shift) was issued by this thread.
  void issue(uint32_t OpId);
  /// tcgen05.commit: returns true when the arrival is due at once (nothing in flight).
  bool commit(uint32_t CommitId);
  /// An operation completed; returns the commits whose arrival is now due, oldest first.
  std::vector<uint32_t> complete(uint32_t OpId);
  /// Completes every operation the oldest pending commit waits for (every operation in
  /// flight when no commit is pending); returns the commits now due, oldest first.
  std::vector<uint32_t> completeOldest();

  const std::vector<uint32_t> &inFlight() const { return InFlight; }
  size_t pendingCommits() const { return Commits.size(); }
  /// Whether an operation in flight was issued after the last commit: a commit now then
  /// waits for it, whatever completes first.
  bool uncommittedInFlight() const {
    for (uint32_t Op : InFlight)
      if (Commits.empty() || std::find(Commits.back().Waiting.begin(),
                                       Commits.back().Waiting.end(),
                                       Op) == Commits.back().Waiting.end())
        return true;
    return false;
  }
  /// Calls F with the id of every commit whose arrival is still due, oldest first.
  template <typename Fn> void forEachPendingCommit(Fn F) const {
    for (const Commit &C : Commits)
      F(C.Id);
  }

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    Out.put(InFlight.size());
    for (uint32_t Id : InFlight)
      Out.put(Id);
    Out.put(Commits.size());
    for (const Commit &C : Commits) {
      Out.put(C.Id);
      Out.put(C.Waiting.size());
      for (uint32_t Id : C.Waiting)
        Out.put(Id);
    }
  }
  template <typename R> void load(R &In) {
    InFlight.resize(In.get());
    for (uint32_t &Id : InFlight)
      Id = static_cast<uint32_t>(In.get());
    Commits.resize(In.get());
    for (Commit &C : Commits) {
      C.Id = static_cast<uint32_t>(In.get());
      C.Waiting.resize(In.get());
      for (uint32_t &Id : C.Waiting)
        Id = static_cast<uint32_t>(In.get());
    }
  }

private:
  struct Commit {
    uint32_t Id;
    std::vector<uint32_t> Waiting; ///< operations that must complete before the arrival
  };
  std::vector<uint32_t> InFlight;
  std::vector<Commit> Commits;
};

} // namespace models
} // namespace wsv
