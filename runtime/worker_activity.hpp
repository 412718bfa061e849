// WorkerActivity: whether the CPU workers are busy, idle, or asleep.
//
// The CPU executor reports here (a worker entered or left the arena veda's
// loops run in; one of veda's parallel regions ended); the scheduler reads
// it. After the workers have gone to sleep, the next parallel call pays a
// wake-up that the cost model adds to its TBB prediction. Counting only
// veda's own regions would be wrong: the program's own oneTBB loops keep the
// same workers awake, hence the arena observer.
//
// Thread-safety: every member may be called from any thread at once.
#pragma once

#include <atomic>
#include <cstdint>

namespace veda::detail {

// Told when a worker was active in the arena (telemetry's worker tracks).
class ActivityListener {
 public:
  virtual ~ActivityListener() = default;
  virtual void on_worker_active(int slot, std::int64_t begin_ns, std::int64_t end_ns) = 0;
};

class WorkerActivity {
 public:
  WorkerActivity() noexcept { asleep_.store(false, std::memory_order_relaxed); }
  // Nanoseconds the workers have been idle: 0 while one is in the arena,
  // else since the last parallel activity (large if never).
  std::int64_t idle_ns(std::int64_t now) const noexcept;
  // Whether they have been idle for more than `threshold_ns`. Once they have,
  // the answer is kept until they work again, so a stream of serial calls
  // reads no clock (a clock read costs as much as a tiny call).
  bool asleep(std::int64_t threshold_ns) noexcept;
  // The kept answer alone (inline: a settled serial call asks only this).
  bool known_asleep() const noexcept { return asleep_.load(std::memory_order_relaxed); }
  // The flag itself, for the thread's settled plans (cleared by any work).
  // It lives for the process: a settled call reads it without keeping the
  // runtime alive (settled_plans.hpp); one runtime runs at a time.
  const std::atomic<bool>& asleep_flag() const noexcept { return asleep_; }
  // One of veda's parallel regions ended; counted (a wake-up try held if
  // more followed it, learning.hpp) without a locked add: a count lost to a
  // race misjudges one try at most.
  void note_region_end() noexcept {
    regions_.store(regions_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    note_parallel_end();
  }
  std::uint64_t regions() const noexcept { return regions_.load(std::memory_order_relaxed); }

  // A worker entered / left the arena (from the executor's observer).
  void worker_entered() noexcept {
    workers_inside_.fetch_add(1, std::memory_order_relaxed);
    asleep_.store(false, std::memory_order_relaxed);
  }
  void worker_left() noexcept {
    workers_inside_.fetch_sub(1, std::memory_order_relaxed);
    note_parallel_end();
  }

  // Each worker's stay in the arena goes to `l` (null: stop). The listener
  // must outlive the executor, or be removed before it goes.
  void set_listener(ActivityListener* l) noexcept { listener_.store(l, std::memory_order_release); }
  ActivityListener* listener() const noexcept { return listener_.load(std::memory_order_acquire); }

 private:
  void note_parallel_end() noexcept;  // a region ended or a worker left: they are awake until now

  std::atomic<std::int64_t> last_parallel_end_ns_{0};
  std::atomic<int> workers_inside_{0};
  std::atomic<std::uint64_t> regions_{0};
  static inline std::atomic<bool> asleep_{false};
  std::atomic<ActivityListener*> listener_{nullptr};
};

}  // namespace veda::detail
