//===- Mbarrier.h - reference model of one mbarrier object ---------------------------===//
//
// The mbarrier state machine of the PTX ISA ("Parallel Synchronization and Communication
// Instructions: mbarrier"), written as plain C++ so that proofs and counterexamples can be
// cross-checked against it. One object models one 64-bit barrier in shared memory:
//
//   init(n)          expected = pending = n, phase 0, tx-count 0
//   arrive(c)        pending -= c
//   arriveDrop(c)    pending -= c and expected -= c (for every later phase)
//   expectTx(b)      tx-count += b
//   completeTx(b)    tx-count -= b (an async copy's complete_tx::bytes)
//   the current phase completes when pending == 0 and tx-count == 0:
//                    phase += 1, pending = expected
//   testWaitParity(p)  true once the phase with parity p has completed, i.e. while the
//                      current phase's parity differs from p
//
// Every operation that the ISA leaves undefined (use before init, an arrival that would take
// pending below zero, counts out of range) is reported as a Violation and leaves the state
// unchanged, so a caller can turn it into a finding instead of simulating garbage.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace wsv {
namespace models {

/// What went wrong in an operation the PTX ISA does not define.
enum class MbarrierViolation {
  None,
  NotInitialized,   ///< used before init or after inval
  CountOutOfRange,  ///< init/arrive count outside [1, MaxCount]
  PendingUnderflow, ///< more arrivals than the phase has pending
  ExpectedUnderflow,///< arrive_drop below zero expected arrivals
  TxOutOfRange,     ///< tx-count would leave [-MaxTxCount, MaxTxCount]
  ReinitWhileInUse, ///< init on a barrier whose current phase has partial progress
};

const char *toString(MbarrierViolation V);

class Mbarrier {
public:
  /// Largest expected/pending arrival count: 2^20 - 1.
  static constexpr uint32_t MaxCount = (1u << 20) - 1;
  /// Bound of the tx-count in either direction: 2^20 - 1 bytes.
  static constexpr int64_t MaxTxCount = (1 << 20) - 1;

  MbarrierViolation init(uint32_t Count);
  MbarrierViolation inval();
  MbarrierViolation arrive(uint32_t Count = 1);
  MbarrierViolation arriveDrop(uint32_t Count = 1);
  MbarrierViolation expectTx(uint32_t Bytes);
  /// arrive.expect_tx: the tx-count rises before the arrival is counted, so the arrival
  /// cannot complete a phase whose bytes have not landed.
  MbarrierViolation arriveExpectTx(uint32_t Bytes, uint32_t Count = 1);
  MbarrierViolation completeTx(uint32_t Bytes);
  /// cp.async.mbarrier.arrive without .noinc raises the pending count by one when issued, so
  /// that its later asynchronous arrival leaves the phase's count unchanged.
  MbarrierViolation incrementPending(uint32_t Count = 1);

  /// The state an arrive returns: which phase the arrival belonged to.
  uint64_t arrivalToken() const { return CompletedPhases; }
  /// try_wait / test_wait with a state token: has the phase the token came from completed?
  bool testWaitToken(uint64_t Token) const { return CompletedPhases > Token; }

  /// try_wait.parity / test_wait.parity: has the phase with this parity completed?
  bool testWaitParity(uint32_t Parity) const { return currentParity() != (Parity & 1); }

  bool initialized() const { return Initialized; }
  uint32_t currentParity() const { return static_cast<uint32_t>(CompletedPhases & 1); }
  uint64_t completedPhases() const { return CompletedPhases; }
  uint32_t pending() const { return Pending; }
  uint32_t expected() const { return Expected; }
  int64_t txCount() const { return TxCount; }

  friend bool operator==(const Mbarrier &A, const Mbarrier &B) {
    return A.Initialized == B.Initialized && A.Expected == B.Expected && A.Pending == B.Pending &&
           A.TxCount == B.TxCount && A.CompletedPhases == B.CompletedPhases;
  }

  /// The state as a sequence of integers (Out.put), and back (In.get): an explorer keeps
  /// the states waiting to be expanded packed.
  template <typename W> void save(W &Out) const {
    Out.put(Initialized);
    Out.put(Expected);
    Out.put(Pending);
    Out.putSigned(TxCount);
    Out.put(CompletedPhases);
  }
  template <typename R> void load(R &In) {
    Initialized = In.get() != 0;
    Expected = static_cast<uint32_t>(In.get());
    Pending = static_cast<uint32_t>(In.get());
    TxCount = In.getSigned();
    CompletedPhases = In.get();
  }

private:
  void completeIfDone();

  bool Initialized = false;
  uint32_t Expected = 0;        ///< arrivals each later phase waits for
  uint32_t Pending = 0;         ///< arrivals the current phase still waits for
  int64_t TxCount = 0;          ///< bytes still to land on the current phase (may dip below 0)
  uint64_t CompletedPhases = 0; ///< phases completed since init; parity is its low bit
};

} // namespace models
} // namespace wsv
