// CallScope: held by every veda call for its duration.
//
// It finds the running runtime (starting one with defaults on first use) and
// registers the call as in flight, so that shutdown() waits for it instead of
// tearing resources down underneath it. A call after shutdown() throws
// veda::Error. Nested scopes on one thread (a veda call inside a user
// function inside a veda call) cost one thread-local increment and use the
// outermost scope's runtime, which that scope keeps alive, also while a
// shutdown() on another thread waits for it. A call on one of veda's oneTBB
// workers (a user function's nested call) does the same through
// enter_runtime_slow() while shutdown() drains.
//
// Thread-safety: designed for concurrent use; see src/runtime.cpp for the
// ordering argument.
#pragma once

#include <atomic>

namespace veda {
class Runtime;
namespace detail {

extern std::atomic<Runtime*> g_running;      // non-null while a runtime runs
extern std::atomic<long> g_calls_in_flight;  // outermost scopes on all threads
inline thread_local int t_call_depth = 0;
inline thread_local Runtime* t_call_runtime = nullptr;  // the outermost scope's

// Called with the scope counted in g_calls_in_flight. Returns the running
// runtime with the scope still counted, or throws with it no longer counted.
Runtime& enter_runtime_slow();

class CallScope {
 public:
  CallScope() {
    if (t_call_depth++ > 0) {
      rt_ = t_call_runtime;
      return;
    }
    g_calls_in_flight.fetch_add(1, std::memory_order_seq_cst);
    rt_ = g_running.load(std::memory_order_seq_cst);
    if (!rt_) rt_ = &enter();
    t_call_runtime = rt_;
  }
  ~CallScope() {
    if (--t_call_depth == 0) g_calls_in_flight.fetch_sub(1, std::memory_order_release);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  Runtime& runtime() const noexcept { return *rt_; }

 private:
  static Runtime& enter() {
    try {
      return enter_runtime_slow();
    } catch (...) {
      --t_call_depth;
      throw;
    }
  }
  Runtime* rt_;
};

}  // namespace detail
}  // namespace veda
