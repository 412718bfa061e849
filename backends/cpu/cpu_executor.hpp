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
// Pins workers to CPUs through a task_scheduler_observer where
// Config::pin_workers() says so: by default (Pinning::Auto) when the pool
// has as many threads as the process's affinity mask has CPUs. Left to
// themselves, on the 2-CPU virtual machines of docs/benchmarks.md, a worker
// woken after the caller had idled 3 ms or more joined none of the calls of
// the burst that followed (if at all, on the caller's CPU): 2 * x + y on
// 2^18 floats, on tbb-auto, took 73-79 us a call (serial speed) instead of
// 17-18 (docs/concepts.md). Pinned workers leave a CPU to the caller, but
// the caller is not pinned and may run on a worker's CPU: then the two take
// turns there while the other CPU idles, and the OS rarely moves the caller
// (a 2^16-float expression on tbb-static took serial time, 13.8 us a call,
// for whole runs of calls that started on that CPU; 9 us from the other).
// So before each parallel region the caller's CPU is checked (one
// sched_getcpu), and a worker pinned there swaps CPUs with the free one.
// The same observer reports workers entering and leaving the arena, and
// execute() the end of each parallel region, to the runtime's WorkerActivity
// (runtime/worker_activity.hpp), which the scheduler reads.
//
// Thread-safety: execute() may be called from any number of threads at once.
#pragma once

#include <sched.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/clock.hpp"
#include "veda/config.hpp"
#include "runtime/worker_activity.hpp"

namespace veda::detail {

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

// Whether the calling thread is a oneTBB worker (or an external thread in a
// worker's slot of veda's arena, which is inside a call of its own). While
// shutdown() drains, a worker outside any call of its own runs a chunk of a
// call in flight: it must neither block on the lifecycle nor wait for the
// calls in flight.
bool on_cpu_worker() noexcept;

// The CPUs of the process's affinity mask, and whether a pool of `threads`
// pins its workers under `p` (Pinning::Auto: a CPU for each thread).
std::vector<int> affinity_cpus();
bool pins_workers(Pinning p, int threads, std::size_t cpus);

class CpuExecutor {
 public:
  // `activity` is told when workers and parallel regions come and go; it
  // must outlive the executor.
  CpuExecutor(int threads, Pinning pinning, WorkerActivity& activity);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  int threads() const noexcept { return threads_; }
  bool pinned() const noexcept { return pin_; }  // Config::pin_workers() resolved
  // veda's own arena, or null when parallel work runs in the caller's arena.
  tbb::task_arena* arena() noexcept { return arena_ ? &*arena_ : nullptr; }

  // Runs f (typically a tbb::parallel_for) in the right arena and notes when
  // it finished, for the wake-up model.
  template <class F>
  void execute(F&& f) {
    before_region();
    if (arena_) arena_->execute(std::forward<F>(f));
    else f();
    activity_.note_region_end();
  }

  // Starts every worker thread and waits until each has run a task.
  void warm_up();

  // From a parallel region's calling thread, before the region: where
  // workers are pinned and one is pinned to the caller's CPU, it moves to
  // the CPU left free (at most one move per kSwapSpacingNs, so that callers
  // on different CPUs at once do not move a worker back and forth each
  // region).
  void before_region() noexcept {
    if (pin_) {
      const int cpu = sched_getcpu();
      if (cpu != free_cpu_.load(std::memory_order_relaxed)) make_room(cpu);
    }
  }
  static constexpr std::int64_t kSwapSpacingNs = 1'000'000;

  // memcpy that splits copies of a megabyte or more across the workers
  // (not on a thread that called copy_without_workers(), dispatch.hpp).
  void copy(void* dst, const void* src, std::size_t bytes);

 private:
  class Observer;
  void start_observer(std::unique_ptr<Observer> o);
  void make_room(int cpu) noexcept;
  int threads_;
  std::uint64_t id_;       // distinct for each pool of the process
  std::vector<int> cpus_;  // the process's affinity mask when the pool started
  bool pin_;
  std::atomic<std::size_t> placed_{0};  // workers pinned so far
  // Pinned workers: each one's thread id and CPU, and the CPU none has (the
  // caller's, -1 without pinning), kept by make_room.
  struct PinnedWorker {
    int tid;
    int cpu;
  };
  std::mutex pin_mu_;
  std::vector<PinnedWorker> pinned_;
  std::atomic<int> free_cpu_{-1};
  std::int64_t last_swap_ns_ = 0;
  WorkerActivity& activity_;
  std::optional<tbb::task_arena> arena_;
  std::unique_ptr<Observer> observer_;
};

}  // namespace veda::detail
