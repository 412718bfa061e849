// Contract: the runtime lifecycle. get_runtime() starts one runtime on first
// use (once, even when many threads race); init() while running throws;
// shutdown() waits for calls in flight; after shutdown() calls throw until
// init() starts a fresh runtime; a bad environment starts nothing; calls
// inside user functions, shutdown() inside them, calls served from the
// thread's settled plans and Array destructors racing shutdown() neither
// crash nor hang; call-site state is bounded.
// Test cases run in file order: the first one needs a never-started process.
#include <doctest/doctest.h>
#include <tbb/info.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/sites.hpp"
#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/settled_plans.hpp"
#include "veda/error.hpp"
#include "veda/gpu.hpp"
#include "veda/reduce.hpp"
#include "veda/runtime.hpp"

TEST_CASE("get_runtime() from many threads at once starts exactly one runtime") {
  REQUIRE_FALSE(veda::is_running());
  constexpr int kThreads = 16;
  std::vector<veda::Runtime*> seen(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      seen[static_cast<std::size_t>(i)] = &veda::get_runtime();
    });
  go = true;
  for (auto& t : threads) t.join();
  CHECK(std::set<veda::Runtime*>(seen.begin(), seen.end()).size() == 1);
  CHECK(veda::is_running());
  CHECK(veda::get_runtime().config().threads() >= 1);
}

TEST_CASE("init while running is an error") {
  REQUIRE(veda::is_running());
  CHECK_THROWS_AS(veda::init(), veda::Error);
  CHECK(veda::is_running());
}

TEST_CASE("after shutdown, calls throw until init") {
  veda::shutdown();
  CHECK_FALSE(veda::is_running());
  CHECK_THROWS_WITH_AS(veda::get_runtime(), doctest::Contains("shut down"), veda::Error);
  CHECK_THROWS_AS(veda::detail::CallScope{}, veda::Error);
  CHECK(veda::detail::t_call_depth == 0);
  veda::shutdown();  // a no-op when nothing runs
  veda::init(veda::Config::builder().threads(2).build());
  CHECK(veda::get_runtime().config().threads() == 2);
}

TEST_CASE("each runtime is a new generation") {
  const auto g1 = veda::get_runtime().state().generation;
  veda::shutdown();
  veda::init();
  CHECK(veda::get_runtime().state().generation > g1);
}

TEST_CASE("init applies the environment; a bad value starts nothing") {
  veda::shutdown();
  setenv("VEDA_THREADS", "1", 1);
  veda::init(veda::Config::builder().threads(2).build());
  CHECK(veda::get_runtime().config().threads() == 1);
  veda::shutdown();
  setenv("VEDA_THREADS", "lots", 1);
  CHECK_THROWS_AS(veda::init(), veda::ConfigError);
  CHECK_FALSE(veda::is_running());
  unsetenv("VEDA_THREADS");
  veda::init();
  CHECK(veda::is_running());
}

TEST_CASE("shutdown waits for calls in flight") {
  std::atomic<bool> inside{false}, release{false}, finished{false};
  std::thread caller([&] {
    veda::detail::CallScope scope;
    inside = true;
    while (!release.load()) std::this_thread::yield();
    CHECK(scope.runtime().cpu().threads >= 1);  // still alive
    finished = true;
  });
  while (!inside.load()) std::this_thread::yield();
  std::thread stopper([&] { veda::shutdown(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(finished.load());
  release = true;
  stopper.join();
  caller.join();
  CHECK(finished.load());
  CHECK_FALSE(veda::is_running());
  veda::init();
}

// The in-flight marks: one record per thread, reused once a thread ends (a
// program that starts a thread per task must not grow the list shutdown()
// walks), and on Linux the OS barrier so that a call's mark needs no fence.
TEST_CASE("calls mark per-thread records that later threads reuse") {
  auto records = [] {
    int n = 0;
    for (auto* r = veda::detail::g_records.load(); r; r = r->next) ++n;
    return n;
  };
  { veda::detail::CallScope warm; }  // this thread's record exists
  const int before = records();
  for (int i = 0; i < 64; ++i) {
    std::thread t([] {
      veda::detail::CallScope scope;
      CHECK(veda::detail::t_record->in_flight.load() == 1);
    });
    t.join();
  }
  CHECK(records() <= before + 1);
  CHECK(veda::detail::t_record->in_flight.load() == 0);
#if defined(__linux__)
  CHECK(veda::detail::g_os_barrier.load());
#endif
}

TEST_CASE("shutdown from inside a call is refused") {
  veda::detail::CallScope scope;
  CHECK_THROWS_AS(veda::shutdown(), veda::Error);
}

TEST_CASE("init/shutdown cycles racing calls never crash") {
  std::atomic<bool> stop{false};
  std::atomic<long> ok{0}, refused{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      while (!stop.load()) {
        try {
          veda::detail::CallScope scope;
          (void)scope.runtime().config().threads();
          ++ok;
        } catch (const veda::Error&) {
          ++refused;
        }
      }
    });
  for (int cycle = 0; cycle < 20; ++cycle) {
    // Let a caller get through this runtime before tearing it down (bounded,
    // so an overloaded machine slows the test instead of failing it).
    const long before = ok.load();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (ok.load() == before && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    veda::shutdown();
    veda::init(veda::Config::builder().threads(1).build());
  }
  stop = true;
  for (auto& t : callers) t.join();
  CHECK(ok.load() > 0);
  CHECK(veda::is_running());
}

// Calls served from the thread's table of settled plans take no CallScope
// (settled_plans.hpp): racing shutdown() and init(), each completes with the
// right values or throws veda::Error.
TEST_CASE("settled calls racing init/shutdown cycles complete or throw") {
  std::atomic<bool> stop{false}, wrong{false};
  std::atomic<long> ok{0}, from_table{0};
  const auto twice = veda::gpu([](float v) noexcept { return 2 * v; }, {.name = "racing-settled"});
  std::vector<std::thread> callers;
  for (int i = 0; i < 2; ++i)
    callers.emplace_back([&] {
      const std::vector<float> x(64, 0.5f);
      std::vector<float> out;
      while (!stop.load()) {
        try {
          if (veda::sum(x) != 32.0f) wrong = true;
          from_table += veda::detail::t_settled_last.pending;
          twice.into(out, x);
          from_table += veda::detail::t_settled_last.pending;
          if (out != std::vector<float>(64, 1.0f)) wrong = true;
          ++ok;
        } catch (const veda::Error&) {
        }
      }
    });
  for (int cycle = 0; cycle < 20; ++cycle) {
    // Until calls take the table in this runtime (bounded, as above).
    const long before = from_table.load();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (from_table.load() < before + 64 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    veda::shutdown();
    veda::init(veda::Config::builder().threads(1).build());
  }
  stop = true;
  for (auto& t : callers) t.join();
  CHECK_FALSE(wrong.load());
  CHECK(ok.load() > 0);
  CHECK(from_table.load() > 0);
}

// Issue 20, F1: a veda call inside a user function while another thread
// shuts down. The caller's own nested calls run on the runtime its outer
// call keeps alive; a worker's complete on it too or throw veda::Error; no
// call crashes or hangs.
namespace {
// Runs f over 2048 elements on `tier` in a thread, and shuts down once a
// user function has started; returns the results (empty if the call threw).
template <class F>
std::vector<float> call_racing_shutdown(const char* tier, F body, std::atomic<bool>& started) {
  veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
  auto f = veda::gpu(body, {.name = std::string("nested-") + tier, .tier = tier});
  std::vector<float> x(2048, 1.0f), y;
  std::atomic<bool> done{false};
  std::thread caller([&] {
    try {
      y = f(x);
    } catch (const veda::Error&) {
    }
    done = true;
  });
  while (!started.load() && !done.load()) std::this_thread::yield();
  veda::shutdown();
  caller.join();
  return y;
}
}  // namespace

TEST_CASE("a nested call racing shutdown on the caller's thread completes") {
  veda::shutdown();
  const std::vector<float> inner(64, 1.0f);
  std::atomic<bool> started{false};
  const auto y = call_racing_shutdown(
      "serial",
      [&](float v) {
        started = true;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        return v + veda::sum(inner);
      },
      started);
  REQUIRE(y.size() == 2048);
  for (float v : y) CHECK(v == 65.0f);
  CHECK_FALSE(veda::is_running());
  veda::init();
}

TEST_CASE("a nested call racing shutdown on a worker completes or throws veda::Error, never hangs") {
  veda::shutdown();
  const std::vector<float> inner(64, 1.0f);
  std::atomic<bool> started{false};
  std::atomic<long> refused{0};
  const auto y = call_racing_shutdown(
      "tbb-static",
      [&](float v) {
        started = true;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        try {
          return v + veda::sum(inner);
        } catch (const veda::Error&) {
          ++refused;
          return -1.0f;
        }
      },
      started);
  REQUIRE(y.size() == 2048);
  long wrong = 0;
  for (float v : y) wrong += v != 65.0f && v != -1.0f;
  CHECK(wrong == 0);
  MESSAGE("nested calls refused: " << refused.load());
  veda::init();
}

TEST_CASE("shutdown() from a user function on a worker throws instead of deadlocking") {
  veda::shutdown();
  veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
  std::atomic<long> threw{0}, returned{0};
  auto f = veda::gpu(
      [&](float v) {
        if (veda::detail::t_call_depth == 0) {  // a worker (the caller is inside the call)
          try {
            veda::shutdown();
            ++returned;
          } catch (const veda::Error&) {
            ++threw;
          }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(5));
        return v;
      },
      {.name = "shutdown-inside", .tier = "tbb-static"});
  std::vector<float> x(4096, 1.0f);
  const auto y = f(x);
  CHECK(y == x);
  CHECK(returned.load() == 0);
  MESSAGE("worker calls of shutdown(): " << threw.load() << " (0 when the caller ran every chunk)");
  CHECK(veda::is_running());
}

// Issue 20, F2: destroying device-resident Arrays (not a veda call) while
// shutdown() tears the device down. Before the fix the destructor freed
// memory through the destroyed device (terminate, or a use-after-free).
TEST_CASE("Arrays destroyed while shutdown() destroys their device") {
  auto start = [] {
    veda::init(veda::Config::builder().threads(2).calibration(veda::CalibrationMode::Off).build());
    veda::get_runtime().state().install_device(std::make_unique<veda::detail::HostDevice>());
  };
  // install_device() is a test hook for a runtime no call uses yet: the
  // placing is kept off it (not the destructors, nor shutdown()) by a gate
  // that favours the main thread (a reader-preferring lock starved it).
  std::atomic<bool> pausing{false};
  std::atomic<int> placing{0};
  veda::shutdown();
  start();
  std::atomic<bool> stop{false};
  std::atomic<long> placed{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) {
        std::vector<veda::Array<float>> v;
        ++placing;
        if (pausing.load()) {
          --placing;
          std::this_thread::yield();
          continue;
        }
        for (int i = 0; i < 16; ++i) {
          v.emplace_back(std::vector<float>(256, static_cast<float>(i)));
          try {
            v.back().to_device();
            ++placed;
          } catch (const veda::Error&) {  // between runtimes
          }
        }
        --placing;
        for (int i = 0; i < 16; ++i) bad += v[static_cast<std::size_t>(i)].host()[255] != static_cast<float>(i);
      }  // destroyed here, maybe while shutdown() evicts and destroys the device
    });
  for (int cycle = 0; cycle < 200; ++cycle) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    veda::shutdown();
    pausing = true;
    while (placing.load() != 0) std::this_thread::yield();
    start();
    pausing = false;
  }
  stop = true;
  for (auto& t : threads) t.join();
  CHECK(bad.load() == 0);
  CHECK(placed.load() > 0);
  veda::shutdown();
  veda::init();
}

// Issue 13, item 5: a named call finds its site in a per-thread cache, not
// the registry; the cache must give exactly what the registry gives.
TEST_CASE("a named site is the same site from the thread's cache, other threads and the registry") {
  using veda::detail::OpClass;
  using veda::detail::site_for;
  static const int tag_a = 0, tag_b = 0;
  const auto find = [](const void* id, const std::string& name) {
    return site_for(id, name, OpClass::Reduce, veda::detail::tier_bit(veda::detail::Tier::Serial), {});
  };
  // Names that share length and last character (one cache index for one
  // identity), a name longer than a cache entry holds, and the empty name.
  std::vector<std::string> names{"", std::string(100, 'x'), std::string(44, 'y'), std::string(45, 'y')};
  for (int i = 0; i < 40; ++i) names.push_back("cache-" + std::to_string(100 + i) + "z");
  std::vector<veda::detail::Site*> first;
  for (const auto& n : names) first.push_back(find(&tag_a, n));
  CHECK(std::set<veda::detail::Site*>(first.begin(), first.end()).size() == names.size());
  for (int round = 0; round < 3; ++round)  // hits and evictions, in both orders
    for (std::size_t k = 0; k < names.size(); ++k) {
      const std::size_t i = round % 2 ? names.size() - 1 - k : k;
      CHECK(find(&tag_a, names[i]) == first[i]);
      CHECK(first[i]->name() == names[i]);
    }
  CHECK(find(&tag_b, names[2]) != first[2]);  // the identity is part of the key
  std::vector<veda::detail::Site*> other(names.size());
  std::thread([&] {
    for (std::size_t i = 0; i < names.size(); ++i) other[i] = find(&tag_a, names[i]);
  }).join();
  CHECK(other == first);
}

// Issue 20, F10: names are call-site labels; one per call must not grow
// veda's state without bound.
TEST_CASE("distinct call-site names past the limit share one site") {
  const std::vector<float> x(16, 1.0f);
  const std::size_t names = veda::detail::kMaxSites + 100;
  for (std::size_t i = 0; i < names; ++i) CHECK(veda::sum(x, {.name = "bounded-" + std::to_string(i)}) == 16.0f);
  std::size_t sites = 0;
  veda::detail::Site::for_each([&](veda::detail::Site&) { ++sites; });
  CHECK(sites <= veda::detail::kMaxSites + 64);  // + one overflow site per op
  CHECK(veda::sum(x, {.name = "bounded-past-the-limit"}) == 16.0f);
  CHECK(veda::last_decision().name.find("names past") != std::string::npos);
}

// Issue 20, F9: thread counts past the hardware threads cost 50 ms each at
// start-up (the warm-up waited for chunks no thread could run); they are
// capped, with a warning.
TEST_CASE("threads above the hardware threads are capped") {
  veda::shutdown();
  veda::init(veda::Config::builder().threads(512).calibration(veda::CalibrationMode::Off).build());
  const int cores = tbb::info::default_concurrency();
  CHECK(veda::get_runtime().config().threads() == cores);
  CHECK(veda::get_runtime().cpu().threads == cores);
  const std::vector<float> x(100003, 1.0f);
  CHECK(veda::sum(x, {.tier = "tbb-auto"}) == 100003.0f);
  veda::shutdown();
  veda::init();
}
