// Contract: par_iter chains with GPU segments (runs of gpu_map with VEDA_FN
// filters) give the serial loop's results under every placement. Where a GPU
// is usable and placement is Gpu, the segment runs on the device (device
// filters as order-preserving compaction, index sources generated on the
// device, reductions, count and collect_array finishing there); elsewhere
// the same pipeline runs on the CPU. Compiled by nvcc in the CUDA
// configuration and by the host compiler otherwise.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "support/device_work.hpp"
#include "veda/par_iter.hpp"
#include "veda/reduce.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 7, 1009, 65537, 1000003};
const veda::Placement kPlacements[] = {veda::Placement::Auto, veda::Placement::Cpu, veda::Placement::Gpu};

struct Runtime {
  Runtime() { veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build()); }
  ~Runtime() { veda::shutdown(); }
};

// An empty input is no work: it is answered on the calling thread, wherever
// placed. Otherwise placed on the GPU, the call launched device work since w.
bool on_gpu_if_forced(veda::Placement p, std::size_t n, const veda_test::DeviceWork& w) {
  if (p != veda::Placement::Gpu || n == 0 || !veda::get_runtime().gpu_usable()) return true;
  return veda::last_decision().device == veda::Device::Gpu && w.launches() > 0;
}
}  // namespace

TEST_CASE("gpu_map runs with device filters: collect, count, sum, min, max") {
  Runtime rt;
  for (auto placement : kPlacements) {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 0.01f - 3.0f;
      std::vector<float> expect;
      for (float v : x) {
        const float a = v * 2.0f + 1.0f;
        if (a > 0.0f) expect.push_back(std::sqrt(a));
      }
      auto pipe = veda::par_iter(x, {.placement = placement})
                      .gpu_map([] VEDA_FN(float v) { return v * 2.0f + 1.0f; })
                      .filter([] VEDA_FN(float v) { return v > 0.0f; })
                      .gpu_map([] VEDA_FN(float v) { return std::sqrt(v); });
      const veda_test::DeviceWork w;
      CHECK(pipe.collect() == expect);
      CHECK(on_gpu_if_forced(placement, n, w));
      CHECK(pipe.count() == expect.size());
      const double total = std::accumulate(expect.begin(), expect.end(), 0.0);
      CHECK(pipe.sum() == doctest::Approx(total).epsilon(1e-4));
      CHECK(pipe.min() == (expect.empty() ? std::nullopt : std::optional<float>(*std::min_element(expect.begin(), expect.end()))));
      CHECK(pipe.max() == (expect.empty() ? std::nullopt : std::optional<float>(*std::max_element(expect.begin(), expect.end()))));
    }
  }
}

TEST_CASE("index sources, collect_array and CPU stages around a GPU segment") {
  Runtime rt;
  for (auto placement : kPlacements) {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      const auto r = veda::range<std::int64_t>(0, static_cast<std::int64_t>(n));
      std::int64_t expect_sum = 0;
      std::vector<std::int64_t> expect;
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        expect_sum += i * i % 7;
        if ((i * 3) % 4 != 0) expect.push_back(i * 3 + 1);
      }
      const veda_test::DeviceWork w;
      CHECK(veda::par_iter(r, {.placement = placement}).gpu_map([] VEDA_FN(std::int64_t i) { return i * i % 7; }).sum() ==
            expect_sum);
      CHECK(on_gpu_if_forced(placement, n, w));
      // CPU map before, device filter inside, CPU map after.
      const auto got = veda::par_iter(r, {.placement = placement})
                           .map([](std::int64_t i) { return i * 3; })
                           .gpu_map([] VEDA_FN(std::int64_t v) { return v; })
                           .filter([] VEDA_FN(std::int64_t v) { return v % 4 != 0; })
                           .map([](std::int64_t v) { return v + 1; })
                           .collect();
      CHECK(got == expect);
      veda::Array<std::int64_t> a =
          veda::par_iter(r, {.placement = placement}).gpu_map([] VEDA_FN(std::int64_t i) { return i + 5; }).collect_array();
      CHECK(a.size() == n);
      if (n) CHECK(a[n - 1] == static_cast<std::int64_t>(n) + 4);
    }
  }
}

TEST_CASE("Array sources stay where they are; results are identical") {
  Runtime rt;
  std::vector<double> v(300007);
  std::iota(v.begin(), v.end(), 0.0);
  veda::Array<double> a(v);
  a.to_device();  // resident on the device where one exists
  for (auto placement : kPlacements) {
    const double s = veda::par_iter(a, {.placement = placement}).gpu_map([] VEDA_FN(double x) { return 0.5 * x; }).sum();
    CHECK(s == doctest::Approx(0.5 * 300006.0 * 300007.0 / 2.0));
    const auto c = veda::par_iter(a, {.placement = placement})
                       .gpu_map([] VEDA_FN(double x) { return x * 2; })
                       .enumerate()
                       .filter([](const auto& p) { return p.first % 1000 == 0; })
                       .count();
    CHECK(c == 301);
  }
}

TEST_CASE("VEDA_LAMBDA stages: gpu_map, device filters and reduction operators") {
  Runtime rt;
  std::vector<int> v(200003);
  std::iota(v.begin(), v.end(), -100000);
  const int k = 7;
  std::int64_t expect = 0;
  for (int x : v)
    if ((x * k) % 3 == 0) expect += static_cast<std::int64_t>(x) * k;
  for (auto placement : kPlacements) {
    const veda_test::DeviceWork w;
    const auto got = veda::par_iter(v, {.placement = placement})
                         .gpu_map(VEDA_LAMBDA((int x), { return static_cast<std::int64_t>(x) * k; }))
                         .filter(VEDA_LAMBDA((std::int64_t x), { return x % 3 == 0; }))
                         .reduce(std::int64_t{0}, VEDA_LAMBDA((std::int64_t a, std::int64_t b), { return a + b; }));
    CHECK(got == expect);
    CHECK(on_gpu_if_forced(placement, v.size(), w));
  }
  CHECK(veda::reduce(v, 0LL, VEDA_LAMBDA((long long a, long long b), { return a + b; })) ==
        std::accumulate(v.begin(), v.end(), 0LL));
}

TEST_CASE("streaming and co-execution shapes: host source, gpu_maps, collect or sum") {
  Runtime rt;
  std::vector<float> x(1 << 22);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 4096);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = x[i] * 0.5f + 2.0f;
  for (auto placement : kPlacements) {
    for (int rep = 0; rep < 4; ++rep) {  // learning may move between tiers
      CHECK(veda::par_iter(x, {.placement = placement}).gpu_map([] VEDA_FN(float v) { return v * 0.5f + 2.0f; }).collect() ==
            expect);
      const double s = veda::par_iter(x, {.placement = placement})
                           .gpu_map([] VEDA_FN(float v) { return static_cast<double>(v); })
                           .reduce(0.0, [] VEDA_FN(double a, double b) { return a + b; });
      CHECK(s == doctest::Approx(std::accumulate(x.begin(), x.end(), 0.0)));
    }
  }
}
