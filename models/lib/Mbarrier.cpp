//===- Mbarrier.cpp - reference model of one mbarrier object -------------------------===//
#include "wsv/models/Mbarrier.h"

namespace wsv {
namespace models {

const char *toString(MbarrierViolation V) {
  switch (V) {
  case MbarrierViolation::None:
    return "none";
  case MbarrierViolation::NotInitialized:
    return "mbarrier used before init or after inval";
  case MbarrierViolation::CountOutOfRange:
    return "arrival count outside [1, 2^20-1]";
  case MbarrierViolation::PendingUnderflow:
    return "more arrivals than the current phase has pending";
  case MbarrierViolation::ExpectedUnderflow:
    return "arrive_drop lowers the expected count below zero";
  case MbarrierViolation::TxOutOfRange:
    return "tx-count outside [-(2^20-1), 2^20-1]";
  case MbarrierViolation::ReinitWhileInUse:
    return "mbarrier re-initialized while its current phase is in progress";
  }
  return "unknown";
}

MbarrierViolation Mbarrier::init(uint32_t Count) {
  if (Count == 0 || Count > MaxCount)
    return MbarrierViolation::CountOutOfRange;
  // Re-initializing a barrier that other threads are mid-way through is the mbarrier-reuse bug;
  // a barrier that is idle (no arrivals, no bytes pending) may be initialized again.
  if (Initialized && (Pending != Expected || TxCount != 0))
    return MbarrierViolation::ReinitWhileInUse;
  Initialized = true;
  Expected = Pending = Count;
  TxCount = 0;
  CompletedPhases = 0;
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::inval() {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  *this = Mbarrier();
  return MbarrierViolation::None;
}

void Mbarrier::completeIfDone() {
  if (Pending != 0 || TxCount != 0)
    return;
  ++CompletedPhases;
  Pending = Expected;
}

MbarrierViolation Mbarrier::arrive(uint32_t Count) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (Count == 0 || Count > MaxCount)
    return MbarrierViolation::CountOutOfRange;
  if (Count > Pending)
    return MbarrierViolation::PendingUnderflow;
  Pending -= Count;
  completeIfDone();
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::arriveDrop(uint32_t Count) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (Count == 0 || Count > MaxCount)
    return MbarrierViolation::CountOutOfRange;
  if (Count > Pending)
    return MbarrierViolation::PendingUnderflow;
  if (Count > Expected)
    return MbarrierViolation::ExpectedUnderflow;
  Expected -= Count;
  Pending -= Count;
  completeIfDone();
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::expectTx(uint32_t Bytes) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (TxCount + static_cast<int64_t>(Bytes) > MaxTxCount)
    return MbarrierViolation::TxOutOfRange;
  TxCount += Bytes;
  // Raising the tx-count can also finish a phase whose bytes arrived early (negative tx-count).
  completeIfDone();
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::arriveExpectTx(uint32_t Bytes, uint32_t Count) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (Count == 0 || Count > MaxCount)
    return MbarrierViolation::CountOutOfRange;
  if (Count > Pending)
    return MbarrierViolation::PendingUnderflow;
  if (TxCount + static_cast<int64_t>(Bytes) > MaxTxCount)
    return MbarrierViolation::TxOutOfRange;
  TxCount += Bytes;
  Pending -= Count;
  completeIfDone();
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::completeTx(uint32_t Bytes) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (TxCount - static_cast<int64_t>(Bytes) < -MaxTxCount)
    return MbarrierViolation::TxOutOfRange;
  TxCount -= Bytes;
  completeIfDone();
  return MbarrierViolation::None;
}

MbarrierViolation Mbarrier::incrementPending(uint32_t Count) {
  if (!Initialized)
    return MbarrierViolation::NotInitialized;
  if (Count == 0 || Pending + static_cast<uint64_t>(Count) > MaxCount)
    return MbarrierViolation::CountOutOfRange;
  Pending += Count;
  return MbarrierViolation::None;
}

} // namespace models
} // namespace wsv
