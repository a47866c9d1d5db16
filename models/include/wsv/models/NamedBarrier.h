//===- NamedBarrier.h - reference model of a CTA's named barriers --------------------===//
//
// bar.sync / bar.arrive / barrier.sync{.aligned} / barrier.arrive (PTX ISA, "Parallel
// Synchronization and Communication Instructions: bar, barrier"). A CTA has sixteen barriers,
// ids 0..15. Arrival is counted per warp: a warp executing the instruction marks the arrival of
// all its non-exited threads, so thread counts are multiples of the warp size. An instance
// completes when the arrived threads reach its thread count; sync-ers wait for that, arrive-ers
// do not. Every participant of one instance must name the same thread count.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace wsv {
namespace models {

enum class NamedBarrierViolation {
  None,
  IdOutOfRange,  ///< barrier id outside 0..15
  BadCount,      ///< thread count zero or not a multiple of the warp size
  CountMismatch, ///< participants of one instance name different thread counts
};

const char *toString(NamedBarrierViolation V);

class NamedBarrier {
public:
  static constexpr uint32_t NumIds = 16;
  static constexpr uint32_t WarpSize = 32;

  /// Marks `ArrivingThreads` threads (a whole number of warps) as arrived on an instance of
  /// `ThreadCount` threads. `Ticket` receives the instance this arrival belongs to; a sync-er
  /// may continue once passed(Ticket).
  NamedBarrierViolation arrive(uint32_t ThreadCount, uint32_t ArrivingThreads, uint64_t &Ticket);

  bool passed(uint64_t Ticket) const { return Completed > Ticket; }
  uint32_t arrived() const { return Arrived; }
  uint32_t threadCount() const { return Count; }
  uint64_t completedInstances() const { return Completed; }

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    Out.put(Count);
    Out.put(Arrived);
    Out.put(Completed);
  }
  template <typename R> void load(R &In) {
    Count = static_cast<uint32_t>(In.get());
    Arrived = static_cast<uint32_t>(In.get());
    Completed = In.get();
  }

private:
  uint32_t Count = 0;     ///< thread count of the instance in progress, 0 when idle
  uint32_t Arrived = 0;   ///< threads arrived on the instance in progress
  uint64_t Completed = 0; ///< instances completed so far
};

/// The sixteen named barriers of one CTA.
class NamedBarrierFile {
public:
  NamedBarrierViolation arrive(uint32_t Id, uint32_t ThreadCount, uint32_t ArrivingThreads,
                               uint64_t &Ticket);
  bool passed(uint32_t Id, uint64_t Ticket) const {
    return Id < NamedBarrier::NumIds && Barriers[Id].passed(Ticket);
  }
  const NamedBarrier &get(uint32_t Id) const { return Barriers[Id]; }

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    for (const NamedBarrier &B : Barriers)
      B.save(Out);
  }
  template <typename R> void load(R &In) {
    for (NamedBarrier &B : Barriers)
      B.load(In);
  }

private:
  NamedBarrier Barriers[NamedBarrier::NumIds];
};

} // namespace models
} // namespace wsv
