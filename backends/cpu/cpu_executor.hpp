// CpuExecutor: veda's oneTBB worker pool.
//
// One task_arena with Config::threads() slots, created and warmed up when the
// runtime starts, so that the first parallel call does not pay for starting
// threads (a cold pool costs ~0.4-2 ms to get its second thread running).
// Optionally pins workers to cores through a task_scheduler_observer.
// It also remembers when the last parallel region ended: after the workers
// have gone to sleep, the next parallel call pays a wake-up that the cost
// model adds to its TBB prediction.
//
// Thread-safety: execute() may be called from any number of threads at once.
#pragma once

#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace veda::detail {

class CpuExecutor {
 public:
  CpuExecutor(int threads, bool pin_workers);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  int threads() const noexcept { return threads_; }
  bool pinned() const noexcept { return observer_ != nullptr; }
  tbb::task_arena& arena() noexcept { return arena_; }

  // Runs f inside the arena (f typically calls tbb::parallel_for) and notes
  // when it finished, for the wake-up model.
  template <class F>
  void execute(F&& f) {
    arena_.execute(std::forward<F>(f));
    note_parallel_end();
  }

  // Nanoseconds since the last parallel region ended (large if never).
  std::int64_t idle_ns() const noexcept;
  void note_parallel_end() noexcept;

  // Starts every worker thread and waits until each has run a task.
  void warm_up();

  // memcpy that splits copies of a megabyte or more across the workers.
  void copy(void* dst, const void* src, std::size_t bytes);

 private:
  class Pinning;
  int threads_;
  tbb::task_arena arena_;
  std::unique_ptr<Pinning> observer_;
  std::atomic<std::int64_t> last_parallel_end_ns_{0};
};

// Monotonic clock in nanoseconds, used throughout veda's timing.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace veda::detail
