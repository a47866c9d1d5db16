//===- SolverZ3Deadline.h - A wall-clock limit on Z3 checks, without Z3's timer -----===//
//
// Z3 4.8 (Debian 12's libz3) runs its `timeout` parameter on a pool of timer threads whose
// bookkeeping races when several threads arm and expire timers at once (a compare-exchange
// whose expected value is one static shared by every timer): a check can then wait for good
// on a timer that never fires, or free a timer twice. Re-arming it at every depth of the
// bounded search corrupted the heap in our runs, and a whole test run once stood still for
// fifteen minutes. So no query sets `timeout`: a Z3Deadline registers its context with one
// watch thread of ours, which interrupts the context's running check once the deadline
// passes (Z3_interrupt, made for calls from another thread), and again every 20 ms until the
// Z3Deadline is destroyed: an interrupt that lands between two checks of a loop is lost. The
// check then answers unknown, and timedOut() says why.
//
//===----------------------------------------------------------------------------------===//
#ifndef WSV_ANALYZER_LIB_SOLVERZ3DEADLINE_H
#define WSV_ANALYZER_LIB_SOLVERZ3DEADLINE_H

#include <atomic>
#include <chrono>

#include <z3++.h>

namespace wsv::analyzer {

/// While alive, every check on Context that runs past Ms milliseconds from construction is
/// interrupted. Ms = 0 or ~0u: no limit. Not copyable: the watch holds its address.
class Z3Deadline {
public:
  Z3Deadline(z3::context &Context, unsigned Ms);
  Z3Deadline(z3::context &Context, std::chrono::steady_clock::time_point At);
  ~Z3Deadline();
  Z3Deadline(const Z3Deadline &) = delete;
  Z3Deadline &operator=(const Z3Deadline &) = delete;

  /// Whether the watch interrupted the context (a check that answered unknown for that
  /// reason says "canceled").
  bool timedOut() const { return Fired.load(); }

private:
  friend class Z3Watch;
  z3::context &Context;
  std::chrono::steady_clock::time_point At;
  bool Armed = false;
  std::atomic<bool> Fired{false};
};

} // namespace wsv::analyzer

#endif
