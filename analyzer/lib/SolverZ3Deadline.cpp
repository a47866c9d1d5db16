//===- SolverZ3Deadline.cpp - One watch thread that interrupts late Z3 checks -------===//
#include "SolverZ3Deadline.h"

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace wsv::analyzer {

/// The deadlines alive, earliest first, and the thread that waits for the earliest. Made on
/// the first deadline and never destroyed: the thread is detached and may still wait while
/// static objects are destroyed at exit.
class Z3Watch {
public:
  static Z3Watch &get() {
    static Z3Watch *W = new Z3Watch;
    return *W;
  }

  void add(Z3Deadline *D) {
    std::lock_guard<std::mutex> Hold(Lock);
    if (!Started) {
      std::thread([this] { run(); }).detach();
      Started = true;
    }
    Alive.insert({D->At, D});
    Wake.notify_one();
  }

  /// After it returns the watch no longer touches D or its context: removal and interrupts
  /// both happen under Lock.
  void remove(Z3Deadline *D) {
    std::lock_guard<std::mutex> Hold(Lock);
    Alive.erase({D->At, D});
  }

private:
  using Clock = std::chrono::steady_clock;

  void run() {
    std::unique_lock<std::mutex> Hold(Lock);
    while (true) {
      if (Alive.empty()) {
        Wake.wait(Hold);
        continue;
      }
      auto First = Alive.begin();
      if (Clock::now() < First->first) {
        Wake.wait_until(Hold, First->first);
        continue;
      }
      Z3Deadline *D = First->second;
      Alive.erase(First);
      D->Fired = true;
      // Outside a check this does nothing; inside one it cancels just that check (Z3 undoes
      // the cancellation when the check returns). An interrupt that lands between two checks
      // of a loop (model counting, BMC) would be lost, so a fired deadline interrupts again
      // every 20 ms until its owner removes it.
      D->Context.interrupt();
      D->At = Clock::now() + std::chrono::milliseconds(20);
      Alive.insert({D->At, D});
    }
  }

  std::mutex Lock;
  std::condition_variable Wake;
  std::set<std::pair<Clock::time_point, Z3Deadline *>> Alive;
  bool Started = false;
};

Z3Deadline::Z3Deadline(z3::context &Context, unsigned Ms) : Context(Context) {
  if (Ms == 0 || Ms == ~0u)
    return;
  At = std::chrono::steady_clock::now() + std::chrono::milliseconds(Ms);
  Armed = true;
  Z3Watch::get().add(this);
}

Z3Deadline::Z3Deadline(z3::context &Context, std::chrono::steady_clock::time_point At)
    : Context(Context), At(At), Armed(true) {
  Z3Watch::get().add(this);
}

Z3Deadline::~Z3Deadline() {
  if (Armed)
    Z3Watch::get().remove(this);
}

} // namespace wsv::analyzer
