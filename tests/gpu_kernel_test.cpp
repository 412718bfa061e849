// Contract: veda::gpu_kernel pairs a CPU and a CUDA implementation; inputs
// arrive as const spans and read-write ranges as mutable spans, scalars pass
// through; results land in the caller's ranges; exceptions from the CPU side
// reach the caller; the decision names the tier and why. Without a usable
// GPU (or without a CUDA side) the CPU implementation runs.
#include <doctest/doctest.h>

#include <numeric>
#include <stdexcept>

#include "veda/gpu_kernel.hpp"

namespace {
struct Runtime {
  Runtime() { veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build()); }
  ~Runtime() { veda::shutdown(); }
};
}  // namespace

TEST_CASE("CPU-only kernel over vectors, spans and Arrays") {
  Runtime rt;
  auto scale = veda::gpu_kernel(
      [](std::span<const float> x, std::span<float> y, float a) {
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i];
      },
      {.name = "scale"});
  for (std::size_t n : {0, 1, 7, 4097}) {
    std::vector<float> x(n), y(n, -1);
    std::iota(x.begin(), x.end(), 1.0f);
    scale(x, y, 3.0f);
    for (std::size_t i = 0; i < n; ++i) CHECK(y[i] == 3.0f * x[i]);
    veda::Array<float> ax(x), ay(n);
    scale(std::as_const(ax), ay, 2.0f);
    for (std::size_t i = 0; i < n; ++i) CHECK(ay[i] == 2.0f * x[i]);
    std::vector<float> z(n);
    scale(std::span<const float>(x), std::span<float>(z), 1.0f);
    CHECK(z == x);
  }
  const auto d = veda::last_decision();
  CHECK(d.name == "scale");
  CHECK(d.tier == "cpu");
  CHECK(d.device == veda::Device::Cpu);
}

TEST_CASE("with a CUDA side: runs on the CPU without a usable GPU, and says why") {
  Runtime rt;
  bool cuda_called = false;
  auto add = veda::gpu_kernel(
      [](std::span<const int> a, std::span<int> acc) {
        for (std::size_t i = 0; i < a.size(); ++i) acc[i] += a[i];
      },
      [&](std::span<const int>, std::span<int>, veda::cuda_stream_t) { cuda_called = true; },
      {.name = "accumulate"});
  std::vector<int> a{1, 2, 3}, acc{10, 20, 30};
  add(a, acc);
  CHECK(acc == std::vector<int>{11, 22, 33});
  if (!veda::get_runtime().gpu_usable()) {
    CHECK_FALSE(cuda_called);
    const auto d = veda::last_decision();
    CHECK(d.tier == "cpu");
#if VEDA_HAS_CUDA
    CHECK(d.reason.find("no usable GPU") != std::string::npos);
#endif
  }
}

TEST_CASE("exceptions from the CPU implementation reach the caller") {
  Runtime rt;
  auto bad = veda::gpu_kernel([](std::span<const float>) { throw std::logic_error("nope"); });
  std::vector<float> x(3);
  CHECK_THROWS_WITH_AS(bad(x), "nope", std::logic_error);
  auto fine = veda::gpu_kernel([](std::span<float> v) { v[0] = 1; });
  fine(x);
  CHECK(x[0] == 1);
}
