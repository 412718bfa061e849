// CpuExecutor: veda's oneTBB worker pool.
//
// With the default thread count, parallel loops run in the calling thread's
// own (implicit) arena, exactly like the program's own oneTBB code, so the
// two never compete for workers: a worker lingering in one arena leaves
// another without help, which on a small machine halves parallel speed.
// With an explicit Config::threads(), veda uses its own task_arena of that
// size. Either way the pool is started and warmed up when the runtime starts,
// so that the first parallel call does not pay for starting threads (a cold
// pool costs ~0.4-2 ms to get its second thread running).
// Optionally pins workers to cores through a task_scheduler_observer.
// It also tracks whether the workers are busy: an observer on the arena
// counts workers inside it and notes when the last one left, and veda notes
// when its own parallel regions end. After the workers have gone to sleep,
// the next parallel call pays a wake-up that the cost model adds to its TBB
// prediction. (Counting only veda's own regions would be wrong: the
// program's own oneTBB loops keep the same workers awake.)
//
// Thread-safety: execute() may be called from any number of threads at once.
#pragma once

#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace veda::detail {

// Told when a worker was active in the arena (telemetry's worker tracks).
class ActivityListener {
 public:
  virtual ~ActivityListener() = default;
  virtual void on_worker_active(int slot, std::int64_t begin_ns, std::int64_t end_ns) = 0;
};

// ThreadSanitizer builds (scripts/sanitize.sh tsan) run every parallel loop
// on the thread that calls it: Debian's libtbb and libopenblas are not built
// for TSan, so the hand-over of work to their threads is invisible to it and
// each loop over the caller's data would be reported as a race. Placement
// decisions are unchanged (they use Config::threads()); only the loops run
// narrower. TSan then checks veda's own shared state under many
// application threads; ASan/UBSan runs the loops on the workers.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kTsanBuild = true;
#else
inline constexpr bool kTsanBuild = false;
#endif

class CpuExecutor {
 public:
  CpuExecutor(int threads, bool pin_workers);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  int threads() const noexcept { return threads_; }
  bool pinned() const noexcept { return pin_; }
  // veda's own arena, or null when parallel work runs in the caller's arena.
  tbb::task_arena* arena() noexcept { return arena_ ? &*arena_ : nullptr; }

  // Runs f (typically a tbb::parallel_for) in the right arena and notes when
  // it finished, for the wake-up model.
  template <class F>
  void execute(F&& f) {
    if (arena_) arena_->execute(std::forward<F>(f));
    else f();
    note_parallel_end();
  }

  // Nanoseconds the workers have been idle: 0 while one is in the arena,
  // else since the last parallel activity (large if never).
  std::int64_t idle_ns(std::int64_t now) const noexcept;
  // Whether they have been idle for more than `threshold_ns`. Once they have,
  // the answer is kept until they work again, so a stream of serial calls
  // reads no clock (a clock read costs as much as a tiny call).
  bool asleep(std::int64_t threshold_ns) noexcept;
  void note_parallel_end() noexcept;

  // Starts every worker thread and waits until each has run a task.
  void warm_up();

  // memcpy that splits copies of a megabyte or more across the workers.
  void copy(void* dst, const void* src, std::size_t bytes);

  // Reports each worker's stay in the arena to `l` (null: stop). The
  // listener must outlive the executor, or be removed before it goes.
  void set_activity_listener(ActivityListener* l) noexcept { listener_.store(l, std::memory_order_release); }

 private:
  class Observer;
  int threads_;
  bool pin_;
  std::optional<tbb::task_arena> arena_;
  std::atomic<std::int64_t> last_parallel_end_ns_{0};
  std::atomic<int> workers_inside_{0};
  std::atomic<bool> asleep_{false};
  std::atomic<ActivityListener*> listener_{nullptr};
  std::unique_ptr<Observer> observer_;
};

// Monotonic clock in nanoseconds, used throughout veda's timing.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace veda::detail
