// Contract: veda::gpu wrapped calls give exactly what a plain loop gives, for
// every length (0, 1, 7, 4097, 10^6+3) and argument kind (vector, span,
// Array, broadcast scalars), with any placement; mismatched lengths throw
// before any work; exceptions from f reach the caller; decisions explain
// themselves and forcing is honoured. This file is compiled by nvcc in the
// CUDA configuration (so the call sites have a GPU candidate) and by the
// host compiler otherwise: the same checks run against each backend.
// Where a GPU is usable, every call that forces a GPU tier or Placement::Gpu
// must have run on the GPU (last_decision().device), in the forced tier, and
// launched device work (Runtime::device_launches rose); without one it runs
// on the CPU, and strict forcing throws.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/device_work.hpp"
#include "veda/gpu.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 7, 4097, 1000003};

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 1013) - 3.0f;
  return v;
}

// x (halves and small integers: every tier computes x * 3 exactly), y, and x * 3 + y.
struct AxpyData {
  std::vector<float> x;
  std::vector<double> y, expect;
};
AxpyData axpy_data(std::size_t n) {
  AxpyData d{ramp(n, 0.5f), std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    d.y[i] = static_cast<double>(i % 4099) - 2000.0;
    d.expect[i] = static_cast<double>(d.x[i] * 3.0f) + d.y[i];
  }
  return d;
}

struct Runtime {
  explicit Runtime(veda::Config c = veda::Config::builder().calibration(veda::CalibrationMode::Off).build()) {
    veda::init(c);
  }
  ~Runtime() { veda::shutdown(); }
};
}  // namespace

TEST_CASE("saxpy equals a plain loop for every length") {
  Runtime rt;
  auto saxpy = veda::gpu([] VEDA_FN(float a, float x, float y) { return a * x + y; }, {.name = "saxpy"});
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    const auto x = ramp(n, 0.5f), y = ramp(n, 2.0f);
    std::vector<float> expect(n);
    for (std::size_t i = 0; i < n; ++i) expect[i] = 2.0f * x[i] + y[i];
    for (int rep = 0; rep < 6; ++rep) CHECK(saxpy(2.0f, x, y) == expect);  // learning changes tiers
    CHECK(saxpy(2.0f, std::span<const float>(x), std::span<const float>(y)) == expect);
    veda::Array<float> ax(x), ay(y);
    veda::Array<float> r = saxpy(2.0f, ax, ay);
    CHECK(r.size() == n);
    CHECK(r.to_vector() == expect);
  }
}

TEST_CASE("transcendental and integer maps equal plain loops") {
  Runtime rt;
  auto wave = veda::gpu([] VEDA_FN(double x) { return std::exp(-x * x) * std::sin(3.0 * x); });
  auto mix = veda::gpu([] VEDA_FN(std::int32_t a, std::int64_t b) { return static_cast<std::int64_t>(a) * 3 - b; });
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    std::vector<double> x(n);
    std::vector<std::int32_t> a(n);
    std::vector<std::int64_t> b(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<double>(i % 977) * 0.01 - 4.0;
      a[i] = static_cast<std::int32_t>(i * 7 % 100003);
      b[i] = static_cast<std::int64_t>(i) - 5;
    }
    std::vector<double> ew(n);
    std::vector<std::int64_t> em(n);
    for (std::size_t i = 0; i < n; ++i) {
      ew[i] = std::exp(-x[i] * x[i]) * std::sin(3.0 * x[i]);
      em[i] = static_cast<std::int64_t>(a[i]) * 3 - b[i];
    }
    const auto w = wave(x);
    bool close = w.size() == n;
    for (std::size_t i = 0; close && i < n; ++i) close = std::abs(w[i] - ew[i]) <= 1e-12 * (1 + std::abs(ew[i]));
    CHECK(close);
    CHECK(mix(a, b) == em);
  }
}

TEST_CASE("only scalars: an inline call") {
  Runtime rt;
  auto add = veda::gpu([] VEDA_FN(int a, int b) { return a + b; });
  CHECK(add(2, 3) == 5);
}

TEST_CASE("mismatched lengths throw before any work") {
  Runtime rt;
  int calls = 0;
  auto f = veda::gpu([&calls](float x, float y) {
    ++calls;
    return x + y;
  });
  std::vector<float> a(5), b(4);
  CHECK_THROWS_WITH_AS(f(a, b), doctest::Contains("argument 2 has 4 elements but argument 1 has 5"),
                       veda::InvalidArgument);
  std::vector<float> out{9, 9};
  CHECK_THROWS_AS(f.into(out, a, b), veda::InvalidArgument);
  CHECK(out == std::vector<float>{9, 9});
  std::vector<float> small(3);
  CHECK_THROWS_AS(f.into(std::span<float>(small), a, a), veda::InvalidArgument);
  CHECK(calls == 0);
}

TEST_CASE("into writes a vector, a span or an Array") {
  Runtime rt;
  auto twice = veda::gpu([] VEDA_FN(float x) { return 2 * x; });
  const auto x = ramp(4097, 1.0f);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = 2 * x[i];
  std::vector<float> v;
  twice.into(v, x);
  CHECK(v == expect);
  std::vector<float> storage(x.size());
  twice.into(std::span<float>(storage), x);
  CHECK(storage == expect);
  veda::Array<float> arr(17, 241);  // 4097 elements
  twice.into(arr, x);
  CHECK(arr.to_vector() == expect);
  CHECK(arr.rows() == 17);
  CHECK_THROWS_AS(twice.into(arr, std::vector<float>(5)), veda::InvalidArgument);
}

TEST_CASE("into writes in place whatever f's noexcept-ness: no new storage, also for an Array") {
  Runtime rt;
  auto may_throw = veda::gpu([] VEDA_FN(float a, float x) { return a * x + 1; }, {.name = "in-place"});
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4099}, std::size_t{1} << 20}) {
    const auto x = ramp(n, 0.5f);
    std::vector<float> out(n, -1.0f);
    const float* before = out.data();
    veda::Array<float> arr(n);
    const float* arr_before = arr.host().data();
    for (int rep = 0; rep < 3; ++rep) {  // serial, then whatever the model settles on
      may_throw.into(out, 2.0f, x);
      may_throw.into(arr, 2.0f, x);
    }
    CHECK(out.data() == before);
    CHECK(arr.host().data() == arr_before);
    for (std::size_t i = 0; i < n; i += 1 + n / 97) {
      CHECK(out[i] == 2.0f * x[i] + 1);
      CHECK(arr.host()[i] == 2.0f * x[i] + 1);
    }
  }
}

TEST_CASE("into an Array that is also an input updates it element by element") {
  Runtime rt;
  auto inc = veda::gpu([] VEDA_FN(float v) { return v + 1; }, {.name = "self-inc"});
  veda::Array<float> a(ramp(70001, 1.0f));
  for (int rep = 0; rep < 3; ++rep) inc.into(a, a);
  const auto expect = ramp(70001, 1.0f);
  for (std::size_t i = 0; i < expect.size(); i += 997) CHECK(a.host()[i] == expect[i] + 3);
}

TEST_CASE("an exception from f reaches the caller; into keeps the output's size and veda stays usable") {
  Runtime rt;
  auto risky = veda::gpu([](float x) {
    if (x > 1000.0f) throw std::runtime_error("too big");
    return x + 1;
  });
  std::vector<float> x(100000, 1.0f);
  x[77777] = 5000.0f;
  for (auto placement : {veda::Placement::Cpu, veda::Placement::Auto}) {
    veda::ScopedPlacement scope(placement);
    for (int rep = 0; rep < 4; ++rep) {  // serial and parallel tiers
      std::vector<float> out(100000, -1.0f);
      const float* before = out.data();
      CHECK_THROWS_WITH_AS(risky.into(out, x), "too big", std::runtime_error);
      CHECK(out.size() == 100000);  // values unspecified (the basic guarantee)
      CHECK(out.data() == before);
      CHECK_THROWS_WITH_AS((void)risky(x), "too big", std::runtime_error);
    }
  }
  x[77777] = 0;
  CHECK(risky(x)[77777] == 1.0f);  // still usable
  std::vector<float> out(100000, -1.0f);
  risky.into(out, x);
  CHECK(out[77777] == 1.0f);
  CHECK(out[99999] == 2.0f);
}

TEST_CASE("decisions explain themselves") {
  Runtime rt;
  auto inc = veda::gpu([] VEDA_FN(float x) { return x + 1; }, {.name = "inc"});
  (void)inc(std::vector<float>(10));
  const veda::Decision d = veda::last_decision();
  CHECK(d.name == "inc");
  CHECK(d.sizes == std::vector<std::size_t>{10});
  CHECK(d.device == veda::Device::Cpu);
  CHECK(d.tier == "serial");
  CHECK(d.measured_us >= 0);
  CHECK(d.candidates.size() >= 3);
  CHECK(d.reason.find("below TBB break-even") != std::string::npos);
  if (!veda::get_runtime().gpu_usable()) CHECK(d.reason.find("no usable GPU") != std::string::npos);
  CHECK_FALSE(d.to_string().empty());
}

TEST_CASE("forcing the CPU: config, environment, call option, scope; identical results") {
  const auto x = ramp(300001, 0.25f);
  auto sq = veda::gpu([] VEDA_FN(float v) { return v * v; }, {.name = "sq"});
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = x[i] * x[i];
  {
    Runtime rt(veda::Config::builder().gpu(false).calibration(veda::CalibrationMode::Off).build());
    CHECK(sq(x) == expect);
    CHECK(veda::last_decision().reason.rfind("forced to CPU by config (gpu(false))", 0) == 0);
  }
  {
    setenv("VEDA_GPU", "0", 1);
    Runtime rt;
    unsetenv("VEDA_GPU");
    CHECK(sq(x) == expect);
    CHECK(veda::last_decision().reason.rfind("forced to CPU by VEDA_GPU=0", 0) == 0);
  }
  Runtime rt;
  auto forced = veda::gpu([] VEDA_FN(float v) { return v * v; }, {.placement = veda::Placement::Cpu, .name = "sq-cpu"});
  CHECK(forced(x) == expect);
  CHECK(veda::last_decision().reason.rfind("forced to CPU by placement option", 0) == 0);
  {
    veda::ScopedPlacement scope(veda::Placement::Cpu);
    CHECK(sq(x) == expect);
    CHECK(veda::last_decision().reason.rfind("forced to CPU by ScopedPlacement", 0) == 0);
    CHECK(veda::last_decision().device == veda::Device::Cpu);
  }
  CHECK(sq(x) == expect);
}

TEST_CASE("placement Gpu: runs on the GPU, or without one a logged fallback (an error when strict)") {
  Runtime rt;
  auto on_gpu = veda::gpu([] VEDA_FN(float v) { return v + 1; }, {.placement = veda::Placement::Gpu, .name = "want-gpu"});
  auto strict = veda::gpu([] VEDA_FN(float v) { return v + 1; },
                          {.placement = veda::Placement::Gpu, .strict = true, .name = "strict"});
  const veda_test::DeviceWork w;
  CHECK(on_gpu(std::vector<float>{1, 2}) == std::vector<float>{2, 3});
  const auto d = veda::last_decision();
  CHECK(d.name == "want-gpu");
  if (veda::get_runtime().gpu_usable()) {
    CHECK(d.device == veda::Device::Gpu);
    CHECK(w.launches() > 0);
    CHECK(d.reason.find("forced to GPU by placement option") != std::string::npos);
    CHECK(strict(std::vector<float>{1}) == std::vector<float>{2});
    CHECK(veda::last_decision().device == veda::Device::Gpu);
    CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
  } else {
    CHECK(d.device == veda::Device::Cpu);
    CHECK(d.reason.rfind("placement Gpu but", 0) == 0);
    CHECK(d.reason.find("fell back to CPU") != std::string::npos);
    CHECK_THROWS_AS(strict(std::vector<float>{1}), veda::DeviceError);
  }
}

TEST_CASE("many threads call one wrapped function at once") {
  Runtime rt;
  auto f = veda::gpu([] VEDA_FN(int a, int b) { return a * 2 + b; }, {.name = "shared"});
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        const std::size_t n = static_cast<std::size_t>(1 + (t * 977 + rep * 131) % 50000);
        std::vector<int> a(n, t), b(n, rep);
        const auto r = f(a, b);
        if (r.size() != n || r[n - 1] != 2 * t + rep) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("a forced tier runs that tier; an unknown tier is an error before any work") {
  Runtime rt;
  const auto x = ramp(100000, 1.0f);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = x[i] + 1;
  for (const char* tier : {"serial", "tbb-static", "tbb-auto"}) {
    auto f = veda::gpu([] VEDA_FN(float v) { return v + 1; }, {.name = "forced", .tier = tier});
    CHECK(f(x) == expect);
    const auto d = veda::last_decision();
    CHECK(d.tier == tier);
    CHECK(d.reason == std::string("forced tier ") + tier + " by option");
  }
  CHECK_THROWS_WITH_AS(veda::gpu([](float v) { return v; }, {.tier = "quantum"}), doctest::Contains("unknown tier 'quantum'"),
                       veda::InvalidArgument);
  auto g = veda::gpu([] VEDA_FN(float v) { return v + 1; }, {.name = "forced-cuda", .tier = "cuda"});
  auto strict = veda::gpu([] VEDA_FN(float v) { return v + 1; }, {.strict = true, .name = "strict-cuda", .tier = "cuda"});
  const veda_test::DeviceWork w;
  CHECK(g(x) == expect);
  const auto d = veda::last_decision();
  if (veda::get_runtime().gpu_usable()) {
    veda_test::check_ran("cuda", w);
    CHECK(d.reason == "forced tier cuda by option");
    const veda_test::DeviceWork ws;
    CHECK(strict(x) == expect);
    veda_test::check_ran("cuda", ws);
    veda::Array<float> ax(x);  // an Array result stays on the device
    const veda_test::DeviceWork wa;
    const veda::Array<float> r = g(ax);
    veda_test::check_ran("cuda", wa);
    CHECK(r.valid_on_device());
    CHECK(r.to_vector() == expect);
    CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
  } else {
    CHECK(d.device == veda::Device::Cpu);  // falls back to the CPU, logged once
    CHECK_THROWS_AS(strict(x), veda::DeviceError);
  }
}

TEST_CASE("forced cuda-streamed: chunked through staging, equal to a serial loop at 1, 10^6+3 and 10^7+1") {
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  // Two ranges of different element sizes around a broadcast scalar, so each
  // chunk's kernel must find its inputs by range index, not argument index.
  auto axpy = veda::gpu([] VEDA_FN(float x, float a, double y) { return static_cast<double>(x * a) + y; },
                       {.name = "streamed", .tier = "cuda-streamed"});
  for (std::size_t n : {std::size_t{1}, std::size_t{1000003}, std::size_t{10000001}}) {
    CAPTURE(n);
    const auto [x, y, expect] = axpy_data(n);
    const veda_test::DeviceWork w;
    CHECK(axpy(x, 3.0f, y) == expect);
    auto d = veda::last_decision();
    CHECK(d.sizes == std::vector<std::size_t>{n});
    CHECK(d.device == (gpu ? veda::Device::Gpu : veda::Device::Cpu));
    if (gpu) {
      veda_test::check_ran("cuda-streamed", w);
      CHECK(d.reason == "forced tier cuda-streamed by option");
    }
    std::vector<double> out(n, -1.0);
    const veda_test::DeviceWork wi;
    axpy.into(std::span<double>(out), std::span<const float>(x), 3.0f, y);
    CHECK(out == expect);
    if (gpu) veda_test::check_ran("cuda-streamed", wi);
  }
  if (gpu) CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}

TEST_CASE("forced cpu+gpu: the range split between the CPU and the GPU, equal to a serial loop at 0, 1, 1009 and 10^7+1") {
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  auto axpy = veda::gpu([] VEDA_FN(float x, float a, double y) { return static_cast<double>(x * a) + y; },
                        {.name = "split", .tier = "cpu+gpu"});
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1009}, std::size_t{10000001}}) {
    CAPTURE(n);
    const auto [x, y, expect] = axpy_data(n);
    const veda_test::DeviceWork w;
    CHECK(axpy(x, 3.0f, y) == expect);
    if (gpu && n > 0) {
      veda_test::check_ran("cpu+gpu", w);
      CHECK(veda::last_decision().reason == "forced tier cpu+gpu by option");
    }
    std::vector<double> out(n, -1.0);
    axpy.into(std::span<double>(out), std::span<const float>(x), 3.0f, y);
    CHECK(out == expect);
  }
  // An Array operand is not split: the forced tier's GPU side, cuda, runs the call.
  const veda::Array<float> ax(ramp(1009, 0.5f));
  const veda_test::DeviceWork wa;
  const veda::Array<double> ra = axpy(ax, 3.0f, std::vector<double>(1009, 1.0));
  CHECK(ra.to_vector()[1008] == (0.5 * 1008 - 3.0) * 3.0 + 1.0);
  if (gpu) veda_test::check_ran("cuda", wa);
  else CHECK(veda::last_decision().device == veda::Device::Cpu);
  if (gpu) CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}

TEST_CASE("device_launches counts a call's device work: none on the CPU, at least one per GPU call, from 0 per runtime") {
  const auto x = ramp(4097, 1.0f);
  {
    Runtime rt;
    CHECK(veda::get_runtime().device_launches() == 0);  // calibration's kernels are not calls' work
    auto cpu = veda::gpu([] VEDA_FN(float v) { return v * 2; }, {.name = "counted-cpu", .tier = "tbb-static"});
    (void)cpu(x);
    CHECK(veda::get_runtime().device_launches() == 0);
    auto dev = veda::gpu([] VEDA_FN(float v) { return v * 2; }, {.name = "counted-gpu", .tier = "cuda"});
    for (std::uint64_t call = 1; call <= 3; ++call) {
      (void)dev(x);
      if (veda::get_runtime().gpu_usable()) CHECK(veda::get_runtime().device_launches() >= call);
      else CHECK(veda::get_runtime().device_launches() == 0);  // the forced tier ran on the CPU
    }
  }
  Runtime next;
  CHECK(veda::get_runtime().device_launches() == 0);
}

TEST_CASE("VEDA_LAMBDA: one body, a CPU closure and a device closure") {
  Runtime rt;
  const float bias = 0.5f;  // captured by value
  auto f = veda::gpu(VEDA_LAMBDA((float a, float x), { return a * x + bias; }), {.name = "dual"});
  const auto x = ramp(100003, 1.0f);
  std::vector<float> expect(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) expect[i] = 3.0f * x[i] + bias;
  const bool gpu = veda::get_runtime().gpu_usable();
  for (auto placement : {veda::Placement::Auto, veda::Placement::Cpu, veda::Placement::Gpu}) {
    CAPTURE(static_cast<int>(placement));
    veda::ScopedPlacement scope(placement);
    CHECK(f(3.0f, x) == expect);
    if (placement == veda::Placement::Cpu) CHECK(veda::last_decision().device == veda::Device::Cpu);
    if (placement == veda::Placement::Gpu) {
      CHECK(veda::last_decision().device == (gpu ? veda::Device::Gpu : veda::Device::Cpu));
      if (gpu) CHECK(veda::last_decision().reason.find("forced to GPU by ScopedPlacement") != std::string::npos);
    }
    veda::Array<float> ax(x);
    const veda::Array<float> r = f(3.0f, ax);
    if (placement == veda::Placement::Gpu) {
      CHECK(veda::last_decision().device == (gpu ? veda::Device::Gpu : veda::Device::Cpu));
      CHECK(r.valid_on_device() == gpu);
    }
    CHECK(r.to_vector() == expect);
  }
}
