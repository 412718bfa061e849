#include "backends/cpu/cpu_executor.hpp"

#include <pthread.h>
#include <sched.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace veda::detail {

// Pins each worker that enters the arena to one CPU of the process's affinity
// mask, round-robin by arena slot. External threads (callers) are left alone.
class CpuExecutor::Pinning : public tbb::task_scheduler_observer {
 public:
  explicit Pinning(tbb::task_arena& a) : tbb::task_scheduler_observer(a) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus_.push_back(c);
    observe(true);
  }
  ~Pinning() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    if (!is_worker || cpus_.empty()) return;
    const int slot = tbb::this_task_arena::current_thread_index();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus_[static_cast<std::size_t>(slot) % cpus_.size()], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }

 private:
  std::vector<int> cpus_;
};

CpuExecutor::CpuExecutor(int threads, bool pin_workers) : threads_(threads), arena_(threads) {
  arena_.initialize();
  if (pin_workers) observer_ = std::make_unique<Pinning>(arena_);
  warm_up();
}

CpuExecutor::~CpuExecutor() {
  observer_.reset();
  arena_.terminate();
}

void CpuExecutor::warm_up() {
  if (threads_ <= 1) return;
  // Each of `threads_` chunks waits until all have started, which forces every
  // worker to wake up and join; bounded so an oversubscribed machine cannot hang.
  std::atomic<int> started{0};
  arena_.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, threads_, 1),
        [&](const tbb::blocked_range<int>&) {
          started.fetch_add(1);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
          while (started.load() < threads_ && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        },
        tbb::static_partitioner());
  });
  note_parallel_end();
}

void CpuExecutor::copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{256} << 10;
  if (threads_ <= 1 || bytes < 4 * kPiece) {
    std::memcpy(dst, src, bytes);
    return;
  }
  execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, (bytes + kPiece - 1) / kPiece),
        [&](const tbb::blocked_range<std::size_t>& r) {
          const std::size_t first = r.begin() * kPiece;
          const std::size_t last = std::min(bytes, r.end() * kPiece);
          std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first,
                      last - first);
        },
        tbb::static_partitioner());
  });
}

std::int64_t CpuExecutor::idle_ns() const noexcept {
  const auto last = last_parallel_end_ns_.load(std::memory_order_relaxed);
  return last == 0 ? std::int64_t{1} << 40 : now_ns() - last;
}

void CpuExecutor::note_parallel_end() noexcept {
  last_parallel_end_ns_.store(now_ns(), std::memory_order_relaxed);
}

}  // namespace veda::detail
