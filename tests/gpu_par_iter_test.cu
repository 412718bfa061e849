// Contract (gpu): par_iter GPU segments run on the device when placed there —
// fused gpu_map kernels, device filters as order-preserving compaction,
// device reductions returning only the scalar, collect_array leaving the
// result on the device, the streamed tier and CPU+GPU co-execution — and
// give the serial loop's results.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "support/device_work.hpp"
#include "veda/par_iter.hpp"

namespace {
std::vector<float> data(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 997) - 400.0f;
  return x;
}
}  // namespace

TEST_CASE("device segments: compaction, reduction, collect_array") {
  veda::init();
  for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{1} << 22}) {
    CAPTURE(n);
    const auto x = data(n);
    std::vector<float> expect;
    for (float v : x)
      if (v * 3.0f > 100.0f) expect.push_back(v * 3.0f + 1.0f);
    auto pipe = veda::par_iter(x, {.placement = veda::Placement::Gpu, .strict = true})
                    .gpu_map([] VEDA_FN(float v) { return v * 3.0f; })
                    .filter([] VEDA_FN(float v) { return v > 100.0f; })
                    .gpu_map([] VEDA_FN(float v) { return v + 1.0f; });
    const veda_test::DeviceWork w;
    CHECK(pipe.collect() == expect);
    CHECK(veda::last_decision().device == veda::Device::Gpu);
    CHECK(w.launches() > 0);
    CHECK(pipe.count() == expect.size());
    CHECK(pipe.sum() == doctest::Approx(std::accumulate(expect.begin(), expect.end(), 0.0)).epsilon(1e-5));
    veda::Array<float> a = pipe.collect_array();
    CHECK(a.valid_on_device() == !expect.empty());  // zero-length buffers never touch a device
    CHECK(a.valid_on_host() == expect.empty());
    CHECK(a.to_vector() == expect);
  }
  veda::shutdown();
}

TEST_CASE("streamed and co-executed tiers") {
  veda::init();
  const auto x = data(std::size_t{1} << 24);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = std::sqrt(std::abs(x[i]));
  for (const char* tier : {"cuda-streamed", "cpu+gpu", "cuda"}) {
    CAPTURE(tier);
    const veda_test::DeviceWork w;
    const auto got = veda::par_iter(x, {.tier = tier}).gpu_map([] VEDA_FN(float v) { return sqrtf(fabsf(v)); }).collect();
    CHECK(got == expect);
    veda_test::check_ran(tier, w);
  }
  const double s = veda::par_iter(veda::range<std::int64_t>(0, 1 << 24), {.tier = "cpu+gpu"})
                       .gpu_map([] VEDA_FN(std::int64_t i) { return static_cast<double>(i % 10); })
                       .reduce(0.0, [] VEDA_FN(double a, double b) { return a + b; });
  // 2^24 = 10 * 1677721 + 6: whole decades sum to 45 each, then 0+1+...+5.
  CHECK(s == doctest::Approx(45.0 * 1677721 + 15).epsilon(1e-12));
  veda::shutdown();
}
