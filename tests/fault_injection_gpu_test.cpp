// Contract (gpu): an injected kernel-launch, allocation or copy fault in a
// GPU call gives the result a run without faults gives, and is counted:
// - a GPU map over host vectors (which it copies itself) runs on the CPU
//   instead: one fault, one CPU fallback;
// - a copy of an Array's data (Buffer) is retried once: one fault, no
//   fallback, the call stays on the GPU;
// - ops (matmul, sum, sort) fall back like maps, and a float sort_by_key
//   whose Kth allocation fails (K = 1..6) still gives the CPU's stable
//   (key, value) order, bit for bit, whichever allocation it was.
// Compiled by nvcc, labelled gpu: skipped (exit 77) without a device.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/device_work.hpp"
#include "veda/veda.hpp"

namespace {
struct Faulty {
  explicit Faulty(const std::string& faults) {
    veda::init(veda::Config::builder().telemetry(true).faults(faults).build());
  }
  ~Faulty() { veda::shutdown(); }
};

// Small integers: every tier computes them exactly, so results compare with ==.
std::vector<float> ints(std::size_t n, int mod) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % mod) - mod / 2);
  return v;
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::transform(v.begin(), v.end(), b.begin(), [](float x) { return std::bit_cast<std::uint32_t>(x); });
  return b;
}
}  // namespace

TEST_CASE("a faulting GPU map over host vectors runs on the CPU with the same result") {
  const auto x = ints(1 << 20, 17), y = ints(1 << 20, 5);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = 2 * x[i] + y[i];
  // copy:1 and copy:2 fail the inputs' copies in, copy:3 the result's copy out.
  for (const std::string spec : {"launch:1", "alloc:1", "copy:1", "copy:2", "copy:3"}) {
    CAPTURE(spec);
    Faulty f(spec);
    auto saxpy = veda::gpu(VEDA_LAMBDA((float a, float b) noexcept, { return 2 * a + b; }),
                           {.name = "fault-saxpy", .tier = "cuda"});
    CHECK(saxpy(x, y) == want);
    const auto d = veda::last_decision();
    const auto m = veda::get_runtime().memory_stats();
    CHECK(m.faults_injected == 1);
    // Host vectors are copied by the call, not by a Buffer: no retry here.
    CHECK(m.cpu_fallbacks == 1);
    CHECK(d.device == veda::Device::Cpu);
    const veda_test::DeviceWork w;
    CHECK(saxpy(x, y) == want);  // and the next call is back on the GPU
    veda_test::check_ran("cuda", w);
    CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 1);
  }
}

TEST_CASE("a faulting copy of an Array is retried: the call stays on the GPU") {
  const auto x = ints(1 << 20, 17), y = ints(1 << 20, 5);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = 2 * x[i] + y[i];
  // copy:1 and copy:2 fail the operands' copies to the device (the call's
  // own), copy:3 the result's copy back to the host (in to_vector).
  for (const std::string spec : {"copy:1", "copy:2", "copy:3"}) {
    CAPTURE(spec);
    Faulty f(spec);
    auto saxpy = veda::gpu(VEDA_LAMBDA((float a, float b) noexcept, { return 2 * a + b; }),
                           {.name = "retry-saxpy", .tier = "cuda"});
    const veda::Array<float> ax(x), ay(y);
    const veda_test::DeviceWork w;
    const veda::Array<float> r = saxpy(ax, ay);
    veda_test::check_ran("cuda", w);
    CHECK(r.valid_on_device());
    CHECK(r.to_vector() == want);
    const auto m = veda::get_runtime().memory_stats();
    CHECK(m.faults_injected == 1);
    CHECK(m.cpu_fallbacks == 0);
    CHECK(veda::telemetry::snapshot().faults["copy"] == 1);
  }
}

TEST_CASE("faulting ops fall back too: matmul, sum, sort") {
  for (const std::string spec : {"launch:1", "alloc:1"}) {
    CAPTURE(spec);
    const std::size_t n = 257;
    const veda::Array<float> a(n, n, ints(n * n, 7)), b(n, n, ints(n * n, 3));
    veda::Array<float> want;
    {
      veda::init();
      want = veda::matmul(a, b, {.tier = "cpu-reference"});
      veda::shutdown();
    }
    Faulty f(spec);
    const auto c = veda::matmul(a, b, {.tier = "gpu-cublas"});
    CHECK(veda::last_decision().device == veda::Device::Cpu);
    CHECK(std::vector<float>(c.host().begin(), c.host().end()) ==
          std::vector<float>(want.host().begin(), want.host().end()));
    CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 1);
    const auto x = ints(1 << 20, 9);
    CHECK(veda::sum(x, {.tier = "cuda"}) == veda::sum(x, {.tier = "serial"}));
    auto keys = ints(100'003, 1000), sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const veda_test::DeviceWork w;
    veda::sort(keys, {.tier = "cuda"});
    veda_test::check_ran("cuda", w);
    CHECK(keys == sorted);
    CHECK(veda::get_runtime().memory_stats().faults_injected == 1);
  }
}

TEST_CASE("float sort_by_key under a failing Kth allocation gives the CPU's stable order") {
  const std::size_t n = 100'003;
  // Many equal keys (stability shows in the values), both zeros and NaNs.
  std::vector<float> keys = ints(n, 1000);
  for (std::size_t i = 0; i < n; i += 997) keys[i] = (i / 997) % 2 ? -0.0f : 0.0f;
  for (std::size_t i = 5; i < n; i += 10007) keys[i] = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::uint32_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);

  std::vector<float> want_keys = keys;
  std::vector<std::uint32_t> want_values = values;
  {
    veda::init();
    veda::sort_by_key(want_keys, want_values, {.stable = true, .tier = "serial"});
    CHECK(veda::last_decision().device == veda::Device::Cpu);
    veda::shutdown();
  }
  const auto nans = std::count_if(keys.begin(), keys.end(), [](float v) { return std::isnan(v); });
  REQUIRE(nans == 10);
  CHECK(std::is_sorted(want_keys.begin(), want_keys.end() - nans));
  CHECK(std::all_of(want_keys.end() - nans, want_keys.end(), [](float v) { return std::isnan(v); }));  // NaNs last

  for (int k = 1; k <= 6; ++k) {
    CAPTURE(k);
    Faulty f("alloc:" + std::to_string(k));
    auto got_keys = keys;
    auto got_values = values;
    veda::sort_by_key(got_keys, got_values, {.stable = true, .tier = "cuda"});
    const auto d = veda::last_decision();
    CHECK(bits(got_keys) == bits(want_keys));
    CHECK(got_values == want_values);
    const auto m = veda::get_runtime().memory_stats();
    CHECK(m.faults_injected <= 1);
    CHECK(m.cpu_fallbacks == m.faults_injected);  // an allocation that failed sent the call to the CPU
    CHECK(d.device == (m.faults_injected ? veda::Device::Cpu : veda::Device::Gpu));
    if (m.faults_injected) CHECK(d.reason.rfind("device out of memory: fell back to CPU", 0) == 0);
  }
}
