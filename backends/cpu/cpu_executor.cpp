#include "backends/cpu/cpu_executor.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/runtime.hpp"

namespace veda::detail {

// A oneTBB worker takes an arena slot above the one reserved for the thread
// that owns or entered the arena.
bool on_cpu_worker() noexcept { return tbb::this_task_arena::current_thread_index() >= 1; }

namespace {
// The pool that placed the calling thread, if it is a oneTBB worker, and
// whether it left it pinned.
struct Placed {
  std::uint64_t pool = 0;
  bool pinned = false;
};
thread_local Placed t_placed;

// Pins thread `tid` of this process to `cpu`.
void pin_thread(int tid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)sched_setaffinity(tid, sizeof(set), &set);  // (a worker that has exited: ESRCH, nothing to move)
}
}  // namespace

// Watches workers entering and leaving the arena veda's loops run in (the
// starting thread's implicit arena, or veda's own): counts those inside and
// stamps the last exit, in the runtime's WorkerActivity. With pinning on, it
// also pins each worker (place_worker). External threads (callers) are left
// alone.
class CpuExecutor::Observer : public tbb::task_scheduler_observer {
 public:
  explicit Observer(CpuExecutor& ex) : ex_(ex) {}
  Observer(CpuExecutor& ex, tbb::task_arena& a) : tbb::task_scheduler_observer(a), ex_(ex) {}
  ~Observer() override { observe(false); }
  // Outside the constructor: observe(true) starts oneTBB for this thread and
  // may fail (no threads or memory left), and unregistering an observer it
  // half registered crashes inside oneTBB. Such an observer is left alone,
  // inert (see CpuExecutor's constructor).
  void start() { observe(true); }
  std::atomic<bool> inert{false};
  void on_scheduler_entry(bool is_worker) override {
    if (!is_worker || inert.load(std::memory_order_relaxed)) return;
    ex_.activity_.worker_entered();
    if (ex_.activity_.listener()) {
      entered_ns() = now_ns();
      entered_slot() = tbb::this_task_arena::current_thread_index();
    }
    place_worker();
  }
  // Once per worker and pool: pinned, the k-th worker to enter goes to CPU k
  // of the mask (CPU 0 left to the caller), and keeps it whichever arena
  // slot it takes later (by slot, workers swapped CPUs between regions); a
  // worker an earlier pool pinned gets the whole mask back from one that
  // does not pin. Pinning sticks to the OS thread, in other arenas too.
  void place_worker() {
    Placed& t = t_placed;
    if (t.pool == ex_.id_) return;
    t.pool = ex_.id_;
    if ((!ex_.pin_ && !t.pinned) || ex_.cpus_.empty()) return;
    if (!ex_.pin_) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : ex_.cpus_) CPU_SET(c, &set);
      if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0) t.pinned = false;
      return;
    }
    const int cpu = ex_.cpus_[(ex_.placed_.fetch_add(1, std::memory_order_relaxed) + 1) % ex_.cpus_.size()];
    const int tid = static_cast<int>(gettid());
    std::lock_guard lock(ex_.pin_mu_);  // (make_room may move the others meanwhile)
    pin_thread(tid, cpu);
    ex_.pinned_.push_back({tid, cpu});
    t.pinned = true;
  }
  void on_scheduler_exit(bool is_worker) override {
    if (!is_worker || inert.load(std::memory_order_relaxed)) return;
    ex_.activity_.worker_left();
    if (ActivityListener* l = ex_.activity_.listener(); l && entered_ns() > 0) {
      l->on_worker_active(entered_slot(), entered_ns(), now_ns());
      entered_ns() = 0;
    }
  }

 private:
  static std::int64_t& entered_ns() {
    thread_local std::int64_t t = 0;
    return t;
  }
  static int& entered_slot() {
    thread_local int s = 0;
    return s;
  }
  CpuExecutor& ex_;
};

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

namespace {
std::uint64_t next_pool_id() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

bool pins_workers(Pinning p, int threads, std::size_t cpus) {
  // Auto: worker k on CPU k of the mask, CPU 0 left to the calling thread
  // (slot 0); with fewer threads than CPUs the OS places them better.
  return cpus > 0 && (p == Pinning::On || (p == Pinning::Auto && threads > 1 && static_cast<std::size_t>(threads) == cpus));
}

CpuExecutor::CpuExecutor(int threads, Pinning pinning, WorkerActivity& activity)
    : threads_(threads),
      id_(next_pool_id()),
      cpus_(affinity_cpus()),
      pin_(pins_workers(pinning, threads, cpus_.size())),
      activity_(activity) {
  if (pin_) free_cpu_.store(cpus_.front(), std::memory_order_relaxed);
  if constexpr (kTsanBuild) {
    // For the whole process, exit included (never destroyed): lifting the
    // limit, between runtimes or while statics are destroyed, would start
    // workers whose start-up inside libtbb TSan cannot follow either.
    [[maybe_unused]] static const auto* serial =
        new tbb::global_control(tbb::global_control::max_allowed_parallelism, 1);
    start_observer(std::make_unique<Observer>(*this));
    return;
  }
  if (threads != tbb::info::default_concurrency()) {
    arena_.emplace(threads);
    arena_->initialize();
  }
  start_observer(arena_ ? std::make_unique<Observer>(*this, *arena_) : std::make_unique<Observer>(*this));
  warm_up();
}

void CpuExecutor::start_observer(std::unique_ptr<Observer> o) {
  try {
    o->start();
  } catch (...) {
    o->inert = true;
    (void)o.release();  // never unregistered: see Observer::start
    throw;
  }
  observer_ = std::move(o);
}

void CpuExecutor::make_room(int cpu) noexcept {
  if (cpu < 0 || t_placed.pool == id_) return;  // a worker's own nested region: it keeps its CPU
  std::unique_lock lock(pin_mu_, std::try_to_lock);
  const int free = free_cpu_.load(std::memory_order_relaxed);
  if (!lock || cpu == free) return;
  if (std::none_of(pinned_.begin(), pinned_.end(), [cpu](const PinnedWorker& w) { return w.cpu == cpu; })) return;
  const std::int64_t now = now_ns();
  if (now - last_swap_ns_ < kSwapSpacingNs) return;
  // The workers on the caller's CPU and those on the free one trade places.
  for (PinnedWorker& w : pinned_) {
    if (w.cpu == cpu) w.cpu = free;
    else if (w.cpu == free) w.cpu = cpu;
    else continue;
    pin_thread(w.tid, w.cpu);
  }
  free_cpu_.store(cpu, std::memory_order_relaxed);
  last_swap_ns_ = now;
}

CpuExecutor::~CpuExecutor() {
  observer_.reset();
  if (arena_) arena_->terminate();
}

void CpuExecutor::warm_up() {
  // Each chunk waits until all have started, which forces every worker to
  // wake up and join; bounded so a busy machine cannot hang. Only as many
  // chunks as can run at once: a chunk waiting for one that has no thread
  // would wait out its bound (threads above the cores cost 50 ms each).
  const int chunks = std::min(threads_, tbb::info::default_concurrency());
  if (chunks <= 1) return;
  std::atomic<int> started{0};
  execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, chunks, 1),
        [&](const tbb::blocked_range<int>&) {
          started.fetch_add(1);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
          while (started.load() < chunks && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        },
        tbb::static_partitioner());
  });
}

namespace {
thread_local bool t_copy_alone = false;
}

void CpuExecutor::copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{256} << 10;
  if (threads_ <= 1 || bytes < 4 * kPiece || t_copy_alone) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Isolated: the copy runs while its caller holds staging slots and an
  // Array's lock, so a thread waiting in it must not steal a user task that
  // calls veda again and waits for those (a deadlock).
  execute([&] {
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, (bytes + kPiece - 1) / kPiece),
          [&](const tbb::blocked_range<std::size_t>& r) {
            const std::size_t first = r.begin() * kPiece;
            const std::size_t last = std::min(bytes, r.end() * kPiece);
            std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first, last - first);
          },
          tbb::static_partitioner());
    });
  });
}

// The executor half of dispatch.hpp's CPU loop interface.
tbb::task_arena* cpu_arena(Runtime& rt) noexcept {
  CpuExecutor& ex = *rt.state().cpu_executor;
  ex.before_region();
  return ex.arena();
}
void parallel_done(Runtime& rt) noexcept { rt.state().workers.note_region_end(); }
void copy_without_workers() noexcept { t_copy_alone = true; }

}  // namespace veda::detail
