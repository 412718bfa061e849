// Contract: one runtime serves many threads at once. 16 threads each make
// 10^4 mixed calls (wrapped element-wise calls, par_iter pipelines, ops,
// Array transfers through a host-emulated device) and each thread's
// checksum equals the one its serial reference computes. Calls racing
// shutdown() either complete with the right answer or throw veda::Error;
// none crashes, hangs or returns a wrong value, and init() afterwards gives
// a working runtime. Run under ThreadSanitizer in CI (scripts/sanitize.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#include "runtime/host_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/veda.hpp"

namespace {
// VEDA_STRESS_CALLS scales the load (sanitizer runs use fewer).
int calls_per_thread() {
  const char* v = std::getenv("VEDA_STRESS_CALLS");
  return v ? std::max(1, std::atoi(v)) : 10'000;
}

std::uint64_t mix(std::uint64_t h, std::int64_t v) { return (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ull; }

// Inputs are small integers held in floats, so every sum is exact in any
// order or tier: the checksums compare with ==.
std::vector<float> input(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed) % 13) - 6.0f;
  return v;
}

// Call k of thread t: which kind, and on how many elements (0, 1, primes, a few thousand).
struct Call {
  int kind;
  std::size_t n;
};
Call call_of(int t, int k) {
  static const std::size_t sizes[] = {0, 1, 2, 7, 31, 97, 256, 1009, 4099};
  const std::uint64_t h = (static_cast<std::uint64_t>(t) * 1000003u + static_cast<std::uint64_t>(k)) * 0x9E3779B97F4A7C15ull;
  return {static_cast<int>((h >> 60) % 6), sizes[(h >> 32) % std::size(sizes)]};
}

// The same calls as plain loops.
std::int64_t reference(const Call& c, std::uint64_t seed) {
  const auto x = input(c.n, seed);
  std::int64_t r = 0;
  switch (c.kind) {
    case 0:  // saxpy, summed
      for (float v : x) r += static_cast<std::int64_t>(3 * v + 1);
      return r;
    case 1:  // pipeline: map, filter, sum
      for (float v : x)
        if (v * 2 > 0) r += static_cast<std::int64_t>(v * 2);
      return r;
    case 2: {  // sort, then a position-weighted checksum
      auto s = x;
      std::sort(s.begin(), s.end());
      for (std::size_t i = 0; i < s.size(); ++i) r += static_cast<std::int64_t>(s[i]) * static_cast<std::int64_t>(i % 5);
      return r;
    }
    case 3: {  // inclusive scan, last element and a middle one
      float acc = 0, mid = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        acc += x[i];
        if (i == x.size() / 2) mid = acc;
      }
      return static_cast<std::int64_t>(acc) * 31 + static_cast<std::int64_t>(mid);
    }
    case 4:  // Array to the device and back, then sum
      for (float v : x) r += static_cast<std::int64_t>(v);
      return r;
    default: {  // matmul of a 1 x n row by an n x 1 column: a dot product
      for (float v : x) r += static_cast<std::int64_t>(v * v);
      return r;
    }
  }
}

std::int64_t through_veda(const Call& c, std::uint64_t seed) {
  const auto x = input(c.n, seed);
  switch (c.kind) {
    case 0: {
      static const auto f = veda::gpu([](float v) noexcept { return 3 * v + 1; }, {.name = "stress-saxpy"});
      return static_cast<std::int64_t>(veda::sum(f(x)));
    }
    case 1:
      return static_cast<std::int64_t>(veda::par_iter(x, {.name = "stress-pipe"})
                                           .map([](float v) { return v * 2; })
                                           .filter([](float v) { return v > 0; })
                                           .sum());
    case 2: {
      auto s = x;
      veda::sort(s);
      std::int64_t r = 0;
      for (std::size_t i = 0; i < s.size(); ++i) r += static_cast<std::int64_t>(s[i]) * static_cast<std::int64_t>(i % 5);
      return r;
    }
    case 3: {
      std::vector<float> out(x.size());
      veda::inclusive_scan(x, out);
      if (out.empty()) return 0;
      return static_cast<std::int64_t>(out.back()) * 31 + static_cast<std::int64_t>(out[out.size() / 2]);
    }
    case 4: {
      veda::Array<float> a(x);
      a.to_device();
      const double s = veda::sum(a);
      a.to_host();
      return static_cast<std::int64_t>(s);
    }
    default: {
      if (c.n == 0) return 0;
      const veda::Array<float> row(1, c.n, x), col(c.n, 1, x);
      return static_cast<std::int64_t>(veda::matmul(row, col).host()[0]);
    }
  }
}

struct WithHostDevice {
  WithHostDevice() {
    veda::init(veda::Config::builder().threads(4).build());
    veda::get_runtime().state().install_device(std::make_unique<veda::detail::HostDevice>());
  }
  ~WithHostDevice() { veda::shutdown(); }
};
}  // namespace

TEST_CASE("16 threads x 10^4 mixed calls: every thread's checksum equals its serial reference") {
  WithHostDevice rt;
  constexpr int kThreads = 16;
  const int calls = calls_per_thread();
  std::vector<std::uint64_t> got(kThreads), want(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::uint64_t h = 0;
      try {
        for (int k = 0; k < calls; ++k) h = mix(h, through_veda(call_of(t, k), static_cast<std::uint64_t>(t + k)));
      } catch (...) {
        errors.fetch_add(1);
      }
      got[static_cast<std::size_t>(t)] = h;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    std::uint64_t h = 0;
    for (int k = 0; k < calls; ++k) h = mix(h, reference(call_of(t, k), static_cast<std::uint64_t>(t + k)));
    want[static_cast<std::size_t>(t)] = h;
  }
  CHECK(errors == 0);
  CHECK(got == want);
}

TEST_CASE("calls racing shutdown complete correctly or throw veda::Error; the runtime restarts") {
  for (int round = 0; round < 3; ++round) {
    veda::init(veda::Config::builder().threads(2).build());
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0}, refused{0}, done{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        for (int k = 0; !stop.load(); ++k) {
          const Call c = call_of(t, k);
          try {
            if (through_veda(c, 1) != reference(c, 1)) wrong.fetch_add(1);
            done.fetch_add(1);
          } catch (const veda::Error&) {
            refused.fetch_add(1);  // after shutdown: "veda has been shut down"
          } catch (...) {
            other.fetch_add(1);
          }
        }
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    veda::shutdown();  // waits for calls in flight; later calls are refused
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop = true;
    for (auto& th : threads) th.join();
    CHECK(wrong == 0);
    CHECK(other == 0);
    CHECK(done > 0);
    CHECK(refused > 0);
    veda::init();  // usable again
    CHECK(through_veda({0, 97}, 3) == reference({0, 97}, 3));
    veda::shutdown();
  }
}
