// Contract: veda::gpu_kernel pairs a CPU and a CUDA implementation; inputs
// arrive as const spans and read-write ranges as mutable spans, scalars pass
// through; results land in the caller's ranges; exceptions from the CPU side
// reach the caller; the decision names the tier and why. Without a usable
// GPU (or without a CUDA side) the CPU implementation runs; with one, a
// forced "cuda-impl" tier runs the CUDA implementation on the GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "veda/gpu_kernel.hpp"
#include "veda/gpu.hpp"
#include "veda/par_iter.hpp"

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

TEST_CASE("with a CUDA side: the CUDA side runs on the GPU when forced, the CPU side without a usable GPU") {
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  bool cuda_called = false;
  auto add = veda::gpu_kernel(
      [](std::span<const int> a, std::span<int> acc) {
        for (std::size_t i = 0; i < a.size(); ++i) acc[i] += a[i];
      },
      [&](std::span<const int>, std::span<int>, veda::cuda_stream_t) { cuda_called = true; },
      {.name = "accumulate"});
  std::vector<int> a{1, 2, 3}, acc{10, 20, 30};
  add(a, acc);
  const auto d = veda::last_decision();
  CHECK(d.name == "accumulate");
  if (!gpu) {
    CHECK(acc == std::vector<int>{11, 22, 33});
    CHECK_FALSE(cuda_called);
    CHECK(d.tier == "cpu");
    CHECK(d.device == veda::Device::Cpu);
#if VEDA_HAS_CUDA
    CHECK(d.reason.find("no usable GPU") != std::string::npos);
#endif
  } else {
    // The CUDA side here is a stub: whichever side ran must say so.
    CHECK(cuda_called == (d.tier == "cuda-impl"));
    CHECK(d.device == (cuda_called ? veda::Device::Gpu : veda::Device::Cpu));
    if (!cuda_called) CHECK(acc == std::vector<int>{11, 22, 33});
  }

  // A real CUDA side (a device-to-device copy, so no nvcc is needed here),
  // forced by placement: it runs on the GPU
  // where one is usable, and falls back to the CPU side where not.
  int cuda_calls = 0;
  auto copy = veda::gpu_kernel(
      [](std::span<const float> x, std::span<float> y) { std::copy(x.begin(), x.end(), y.begin()); },
      [&cuda_calls]([[maybe_unused]] std::span<const float> x, [[maybe_unused]] std::span<float> y,
                    [[maybe_unused]] veda::cuda_stream_t s) {
        ++cuda_calls;
#if VEDA_HAS_CUDA
        if (cudaMemcpyAsync(y.data(), x.data(), x.size_bytes(), cudaMemcpyDeviceToDevice, s) != cudaSuccess)
          throw std::runtime_error("cudaMemcpyAsync failed");
#endif
      },
      {.placement = veda::Placement::Gpu, .name = "forced-copy"});
  for (std::size_t n : {std::size_t{1}, std::size_t{100003}}) {
    CAPTURE(n);
    std::vector<float> x(n), y(n, -1.0f);
    std::iota(x.begin(), x.end(), 1.0f);
    const int before = cuda_calls;
    copy(x, y);
    CHECK(y == x);
    const auto f = veda::last_decision();
    CHECK(f.name == "forced-copy");
    if (gpu) {
      CHECK(cuda_calls == before + 1);
      CHECK(f.device == veda::Device::Gpu);
      CHECK(f.tier == "cuda-impl");
      CHECK(f.reason.find("forced to GPU by placement option") != std::string::npos);
      veda::Array<float> ax(x), ay(n);  // an Array result stays on the device
      copy(std::as_const(ax), ay);
      CHECK(veda::last_decision().device == veda::Device::Gpu);
      CHECK(ay.valid_on_device());
      CHECK(ay.to_vector() == x);
    } else {
      CHECK(cuda_calls == 0);
      CHECK(f.device == veda::Device::Cpu);
      CHECK(f.tier == "cpu");
    }
  }
  if (gpu) CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}

TEST_CASE("GpuOptions::tier forces an implementation; a name it lacks is InvalidArgument before any call") {
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  int cpu_calls = 0, cuda_calls = 0;
  auto cpu_side = [&](std::span<int> v) {
    ++cpu_calls;
    for (auto& x : v) x += 1;
  };
  auto cuda_side = [&](std::span<int>, veda::cuda_stream_t) { ++cuda_calls; };
  std::vector<int> v(5, 0);

  auto on_cpu = veda::gpu_kernel(cpu_side, cuda_side, {.name = "forced-cpu", .tier = "cpu"});
  on_cpu(v);
  CHECK(cpu_calls == 1);
  CHECK(cuda_calls == 0);
  CHECK(v == std::vector<int>(5, 1));
  auto d = veda::last_decision();
  CHECK(d.tier == "cpu");
  CHECK(d.reason == "forced tier cpu by option");

  auto on_gpu = veda::gpu_kernel(cpu_side, cuda_side, {.name = "forced-cuda-impl", .tier = "cuda-impl"});
  on_gpu(v);
  d = veda::last_decision();
  if (gpu) {
    CHECK(cuda_calls == 1);
    CHECK(d.tier == "cuda-impl");
    CHECK(d.device == veda::Device::Gpu);
  } else {  // falls back like any GPU tier that cannot run...
    CHECK(cpu_calls == 2);
    CHECK(v == std::vector<int>(5, 2));
    CHECK(d.tier == "cpu");
    // ...and strict says why instead
    auto strict = veda::gpu_kernel(cpu_side, cuda_side, {.strict = true, .name = "strict", .tier = "cuda-impl"});
    CHECK_THROWS_AS(strict(v), veda::DeviceError);
    CHECK(cpu_calls == 2);
  }

  // Tiers the kernel does not have, and names no tier has.
  CHECK_THROWS_WITH_AS(veda::gpu_kernel(cpu_side, {.name = "k", .tier = "cuda-impl"}),
                       doctest::Contains("no tier 'cuda-impl'"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::gpu_kernel(cpu_side, cuda_side, {.name = "k", .tier = "tbb-static"}),
                       doctest::Contains("no tier 'tbb-static'"), veda::InvalidArgument);
  CHECK_THROWS_AS(veda::gpu_kernel(cpu_side, cuda_side, {.name = "k", .tier = "warp-speed"}), veda::InvalidArgument);
  CHECK(cpu_calls + cuda_calls == 2);
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

TEST_CASE("last_decision after a kernel whose body runs veda calls reports the kernel, not the inner calls") {
  Runtime rt;
  auto outer = veda::gpu_kernel(
      [](std::span<const float> x, std::span<float> y) {
        const double s = veda::par_iter(x, {.name = "inner-pipeline"}).map([](float v) { return 2.0 * v; }).sum();
        veda::par_iter(veda::range(0, y.size())).for_each([&](std::size_t i) { y[i] = static_cast<float>(s); });
      },
      {.name = "outer-kernel"});
  std::vector<float> x(1000, 1.0f), y(1000);
  outer(x, y);
  CHECK(y[999] == 2000.0f);
  const auto d = veda::last_decision();
  CHECK(d.name == "outer-kernel");
  CHECK(d.tier == "cpu");
  CHECK(d.segments.empty());
  // A pipeline on its own still reports its plan.
  (void)veda::par_iter(x, {.name = "alone"}).map([](float v) { return v + 1; }).sum();
  CHECK(veda::last_decision().name == "alone");
}

TEST_CASE("a veda::gpu call site compiled by the host compiler says so in its reason") {
  Runtime rt;
  auto inc = veda::gpu([](float v) { return v + 1; }, {.name = "host-site"});
  (void)inc(std::vector<float>(100));
  const auto d = veda::last_decision();
  CHECK(d.device == veda::Device::Cpu);
  if (VEDA_HAS_CUDA) CHECK(d.reason.find("call site not compiled by nvcc") != std::string::npos);
  if (!veda::get_runtime().gpu_usable()) CHECK(d.reason.find("no usable GPU") != std::string::npos);
}
