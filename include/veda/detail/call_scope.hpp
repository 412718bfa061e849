// CallScope: held by every veda call for its duration.
//
// It finds the running runtime (starting one with defaults on first use) and
// marks the call as in flight, so that shutdown() waits for it instead of
// tearing resources down underneath it. A call after shutdown() throws
// veda::Error. Nested scopes on one thread (a veda call inside a user
// function inside a veda call) cost one thread-local increment and use the
// outermost scope's runtime, which that scope keeps alive, also while a
// shutdown() on another thread waits for it. A call on one of veda's oneTBB
// workers (a user function's nested call) does the same through
// enter_runtime_slow() while shutdown() drains.
//
// Each thread marks its calls in a record of its own, not in a shared
// counter: the mark costs a store, not a locked instruction on a cache line
// every thread writes. The store must be ordered before the load of
// g_running; where the OS offers a process-wide barrier (Linux membarrier),
// shutdown() pays for that order and a call needs only a compiler fence.
//
// Thread-safety: designed for concurrent use; see src/runtime.cpp for the
// ordering argument.
#pragma once

#include <atomic>

namespace veda {
class Runtime;
namespace detail {

// One per thread that has made a veda call, on a cache line of its own.
// Records are never freed (a finished thread's is reused by a later one),
// so shutdown() reads them without a lock.
struct alignas(64) ThreadRecord {
  std::atomic<int> in_flight{0};  // 1 while the thread's outermost scope lives
  std::atomic<bool> owned{false};
  ThreadRecord* next = nullptr;   // the list of all records, newest first
};

extern std::atomic<Runtime*> g_running;  // non-null while a runtime runs
extern std::atomic<ThreadRecord*> g_records;  // every record, newest first
// The OS barrier is registered: a call orders its mark with a compiler fence.
extern std::atomic<bool> g_os_barrier;
inline thread_local int t_call_depth = 0;
inline thread_local Runtime* t_call_runtime = nullptr;  // the outermost scope's
inline thread_local ThreadRecord* t_record = nullptr;

// The calling thread's record, claimed on its first call.
ThreadRecord& claim_thread_record();
// Called with the scope marked in flight. Returns the running runtime with
// the scope still marked, or throws with the mark cleared.
Runtime& enter_runtime_slow();

class CallScope {
 public:
  CallScope() {
    if (t_call_depth++ > 0) {
      rt_ = t_call_runtime;
      return;
    }
    ThreadRecord* r = t_record;
    if (!r) r = &undo_depth_on_throw(claim_thread_record);
    r->in_flight.store(1, std::memory_order_relaxed);
    if (g_os_barrier.load(std::memory_order_relaxed)) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
    rt_ = g_running.load(std::memory_order_acquire);
    if (!rt_) rt_ = &undo_depth_on_throw(enter_runtime_slow);
    t_call_runtime = rt_;
  }
  ~CallScope() {
    if (--t_call_depth == 0) t_record->in_flight.store(0, std::memory_order_release);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  Runtime& runtime() const noexcept { return *rt_; }

 private:
  // A slow step that throws leaves the thread's depth as it found it.
  template <class T>
  static T& undo_depth_on_throw(T& (*step)()) {
    try {
      return step();
    } catch (...) {
      --t_call_depth;
      throw;
    }
  }
  Runtime* rt_;
};

}  // namespace detail
}  // namespace veda
