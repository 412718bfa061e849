#include "runtime/worker_activity.hpp"

#include "runtime/clock.hpp"

namespace veda::detail {

std::int64_t WorkerActivity::idle_ns(std::int64_t now) const noexcept {
  if (workers_inside_.load(std::memory_order_relaxed) > 0) return 0;
  const auto last = last_parallel_end_ns_.load(std::memory_order_relaxed);
  return last == 0 ? std::int64_t{1} << 40 : now - last;
}

bool WorkerActivity::asleep(std::int64_t threshold_ns) noexcept {
  if (asleep_.load(std::memory_order_relaxed)) return true;
  if (workers_inside_.load(std::memory_order_relaxed) > 0) return false;
  const auto last = last_parallel_end_ns_.load(std::memory_order_relaxed);
  if (last != 0 && now_ns() - last <= threshold_ns) return false;
  asleep_.store(true, std::memory_order_relaxed);
  // Work that ended meanwhile wins (a stale "asleep" only misplaces a call).
  if (last_parallel_end_ns_.load(std::memory_order_relaxed) != last) asleep_.store(false, std::memory_order_relaxed);
  return true;
}

void WorkerActivity::note_parallel_end() noexcept {
  last_parallel_end_ns_.store(now_ns(), std::memory_order_relaxed);
  asleep_.store(false, std::memory_order_relaxed);
}

}  // namespace veda::detail
