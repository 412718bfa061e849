// Contract: the runtime lifecycle. get_runtime() starts one runtime on first
// use (once, even when many threads race); init() while running throws;
// shutdown() waits for calls in flight; after shutdown() calls throw until
// init() starts a fresh runtime; a bad environment starts nothing.
// Test cases run in file order: the first one needs a never-started process.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/error.hpp"
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
