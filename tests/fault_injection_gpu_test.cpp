// Contract (on a GPU): an injected kernel-launch, allocation or copy fault in
// a GPU call makes that call run on the CPU (or retry the copy), with the
// result a run without faults gives; the fallback and the fault are counted.
// Compiled by nvcc, labelled gpu: skipped (exit 77) without a device.
#include <doctest/doctest.h>

#include <vector>

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
}  // namespace

TEST_CASE("a faulting GPU map runs on the CPU with the same result") {
  const auto x = ints(1 << 20, 17), y = ints(1 << 20, 5);
  std::vector<float> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = 2 * x[i] + y[i];
  for (const char* spec : {"launch:1", "alloc:1", "copy:1", "copy:2"}) {
    CAPTURE(spec);
    Faulty f(spec);
    auto saxpy = veda::gpu(VEDA_LAMBDA((float a, float b) noexcept, { return 2 * a + b; }),
                           {.name = "fault-saxpy", .tier = "cuda"});
    CHECK(saxpy(x, y) == want);
    CHECK(veda::get_runtime().memory_stats().faults_injected == 1);
    const auto s = veda::telemetry::snapshot();
    if (std::string(spec).rfind("copy", 0) != 0) {  // copies are retried, no fallback
      CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 1);
      CHECK(veda::last_decision().device == veda::Device::Cpu);
    }
    CHECK(saxpy(x, y) == want);  // and the next call is back on the GPU
    CHECK(veda::last_decision().device == veda::Device::Gpu);
  }
}

TEST_CASE("faulting ops fall back too: matmul, sum, sort") {
  for (const char* spec : {"launch:1", "alloc:1"}) {
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
    CHECK(std::vector<float>(c.host().begin(), c.host().end()) ==
          std::vector<float>(want.host().begin(), want.host().end()));
    const auto x = ints(1 << 20, 9);
    CHECK(veda::sum(x, {.tier = "cuda"}) == veda::sum(x, {.tier = "serial"}));
    auto keys = ints(100'003, 1000), sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    veda::sort(keys, {.tier = "cuda"});
    CHECK(keys == sorted);
  }
}
