// Contract: Config::pin_workers() (backends/cpu/cpu_executor.hpp). Under
// Pinning::Auto (the default) veda pins oneTBB's workers when its threads
// are as many as the CPUs of the process's affinity mask, each worker on a
// CPU of its own other than the first; Pinning::On pins them whatever the
// thread count, Pinning::Off never, and gives a worker that an earlier
// runtime pinned its whole mask back. The runtime's description says which.
// Calls compute the same results either way. A caller that runs on a
// pinned worker's CPU gets it to itself: before the region the worker moves
// to the CPU left free.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sched.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executor.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/expr.hpp"
#include "veda/runtime.hpp"

namespace {

// The CPU masks of the workers that ran a chunk of a region every thread
// must join (each chunk waits for the others, up to a bound).
std::vector<std::set<int>> worker_masks() {
  const int chunks = std::min(veda::get_runtime().config().threads(), tbb::info::default_concurrency());
  std::vector<std::set<int>> masks;
  std::mutex mu;
  std::atomic<int> started{0};
  tbb::parallel_for(
      tbb::blocked_range<int>(0, chunks, 1),
      [&](const tbb::blocked_range<int>&) {
        started.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (started.load() < chunks && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        if (tbb::this_task_arena::current_thread_index() == 0) return;
        cpu_set_t set;
        CPU_ZERO(&set);
        REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0);
        std::set<int> cpus;
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &set)) cpus.insert(c);
        std::lock_guard lock(mu);
        masks.push_back(cpus);
      },
      tbb::static_partitioner());
  return masks;
}

bool described_pinned() { return veda::get_runtime().describe().find(", pinned)") != std::string::npos; }

float saxpy_sum(std::size_t n) {
  veda::Array<float> x(std::vector<float>(n, 1.5f)), y(std::vector<float>(n, 0.25f)), out(n);
  veda::assign(out, 2 * x + y);
  float s = 0;
  for (float v : out.to_vector()) s += v;
  return s;
}

}  // namespace

TEST_CASE("Pinning::Auto pins exactly when the threads take every CPU of the mask") {
  using veda::detail::pins_workers;
  using veda::Pinning;
  CHECK(pins_workers(Pinning::Auto, 2, 2));
  CHECK(pins_workers(Pinning::Auto, 16, 16));
  CHECK_FALSE(pins_workers(Pinning::Auto, 1, 1));   // no workers
  CHECK_FALSE(pins_workers(Pinning::Auto, 2, 4));   // fewer threads than CPUs: the OS places them
  CHECK_FALSE(pins_workers(Pinning::Auto, 8, 4));   // more: they would share CPUs anyway
  CHECK(pins_workers(Pinning::On, 2, 4));
  CHECK(pins_workers(Pinning::On, 1, 1));
  CHECK_FALSE(pins_workers(Pinning::Off, 2, 2));
  CHECK_FALSE(pins_workers(Pinning::On, 2, 0));  // no mask read
}

TEST_CASE("by default the workers are pinned, one CPU each, and Off unpins them") {
  const std::vector<int> cpus = veda::detail::affinity_cpus();
  if (cpus.size() < 2 || tbb::info::default_concurrency() < 2 || veda::detail::kTsanBuild) {
    MESSAGE("no workers to pin (one CPU, or a TSan build, whose loops run on the caller)");
    return;
  }
  const std::size_t n = 100003;  // a prime
  const float expected = static_cast<float>(n) * 3.25f;

  veda::init(veda::Config::builder().gpu(false).build());
  CHECK(veda::get_runtime().config().pin_workers() == veda::Pinning::Auto);
  CHECK(described_pinned());
  const auto pinned = worker_masks();
  REQUIRE_FALSE(pinned.empty());
  std::set<int> used;
  for (const auto& m : pinned) {
    REQUIRE(m.size() == 1);  // one CPU each
    CHECK(*m.begin() != cpus.front());  // the first left to the caller
    used.insert(*m.begin());
  }
  CHECK(used.size() == pinned.size());  // and not the same one
  CHECK(saxpy_sum(n) == doctest::Approx(expected));
  veda::shutdown();

  veda::init(veda::Config::builder().gpu(false).pin_workers(false).build());
  CHECK_FALSE(described_pinned());
  for (const auto& m : worker_masks()) CHECK(m.size() == cpus.size());  // the whole mask back
  CHECK(saxpy_sum(n) == doctest::Approx(expected));
  veda::shutdown();

  // One thread: no workers, nothing pinned, also not under Auto.
  veda::init(veda::Config::builder().gpu(false).threads(1).build());
  CHECK_FALSE(described_pinned());
  CHECK(saxpy_sum(n) == doctest::Approx(expected));
  veda::shutdown();
}

TEST_CASE("a caller on a pinned worker's CPU: before its region the worker moves to the free CPU") {
  const std::vector<int> cpus = veda::detail::affinity_cpus();
  if (cpus.size() < 2 || tbb::info::default_concurrency() < 2 || veda::detail::kTsanBuild) {
    MESSAGE("no workers to pin (one CPU, or a TSan build, whose loops run on the caller)");
    return;
  }
  veda::init(veda::Config::builder().gpu(false).build());
  REQUIRE(described_pinned());
  const auto before = worker_masks();
  REQUIRE_FALSE(before.empty());
  const int taken = *before.front().begin();  // a worker's CPU
  cpu_set_t all, one;
  REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  CPU_ZERO(&one);
  CPU_SET(taken, &one);
  REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);  // the caller moves there
  REQUIRE(sched_getcpu() == taken);
  (void)veda::detail::cpu_arena(veda::get_runtime());  // as each region starts
  std::set<int> used;
  for (const auto& m : worker_masks()) {
    REQUIRE(m.size() == 1);  // still pinned, one CPU each
    CHECK(*m.begin() != taken);
    used.insert(*m.begin());
  }
  CHECK(used.count(cpus.front()) == 1);  // the one that was free
  // The calls still compute the same (the caller back on its whole mask).
  REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0);
  CHECK(saxpy_sum(100003) == doctest::Approx(100003 * 3.25f));
  veda::shutdown();
}
