//===- NamedBarrier.cpp - reference model of a CTA's named barriers ------------------===//
#include "wsv/models/NamedBarrier.h"

namespace wsv {
namespace models {

const char *toString(NamedBarrierViolation V) {
  switch (V) {
  case NamedBarrierViolation::None:
    return "none";
  case NamedBarrierViolation::IdOutOfRange:
    return "named barrier id outside 0..15";
  case NamedBarrierViolation::BadCount:
    return "thread count is zero or not a multiple of the warp size";
  case NamedBarrierViolation::CountMismatch:
    return "participants of one barrier instance name different thread counts";
  }
  return "unknown";
}

NamedBarrierViolation NamedBarrier::arrive(uint32_t ThreadCount, uint32_t ArrivingThreads,
                                           uint64_t &Ticket) {
  if (ThreadCount == 0 || ThreadCount % WarpSize != 0 || ArrivingThreads == 0 ||
      ArrivingThreads % WarpSize != 0)
    return NamedBarrierViolation::BadCount;
  if (Count != 0 && Count != ThreadCount)
    return NamedBarrierViolation::CountMismatch;
  // Warps beyond the count would belong to no instance: the hardware behaviour is undefined.
  if (Arrived + ArrivingThreads > ThreadCount)
    return NamedBarrierViolation::CountMismatch;
  Count = ThreadCount;
  Arrived += ArrivingThreads;
  Ticket = Completed;
  if (Arrived == Count) {
    ++Completed;
    Arrived = 0;
    Count = 0;
  }
  return NamedBarrierViolation::None;
}

NamedBarrierViolation NamedBarrierFile::arrive(uint32_t Id, uint32_t ThreadCount,
                                               uint32_t ArrivingThreads, uint64_t &Ticket) {
  if (Id >= NamedBarrier::NumIds)
    return NamedBarrierViolation::IdOutOfRange;
  return Barriers[Id].arrive(ThreadCount, ArrivingThreads, Ticket);
}

} // namespace models
} // namespace wsv
