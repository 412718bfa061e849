// Contract (gpu): several GPUs in one runtime (Config::devices / all_devices).
// On any GPU machine: all_devices() uses every GPU found (GpuStatus::in_use,
// the selected one first), and a call or Array::to_device naming a device
// veda does not use is InvalidArgument. With two or more GPUs: a map asking
// for device 1 runs there (its result is valid on device 1 only); a map over
// that result runs on device 1 without asking (where its data is); a matmul
// asking for device 0 over operands on device 1 gives exact values (the data
// moved through the host, whose copy was valid); a map asking for device 0
// over data only device 1 holds copies it device to device, leaving the
// host stale; and every used device's pool holds memory. Calibration
// measures each GPU used on its own (its UUID, its rates) and, with two or
// more, the copy rate of every ordered pair. A co-executed map, reduction,
// matmul and sort over host data split their GPU part among the devices of
// one kind (each device's pool allocates) and give the serial results.
// With one GPU the two-GPU cases report that they were skipped.
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include "backends/cpu/cpu_executor.hpp"
#include "runtime/runtime_state.hpp"
#include "src/calibration.hpp"
#include "support/device_work.hpp"
#include "veda/detail/gpu_bridge.hpp"
#include "veda/veda.hpp"

namespace multi_device_test {
struct Twice {
  static constexpr bool veda_device = true;
  VEDA_FN float operator()(float v) const { return 2.0f * v; }
};
}  // namespace multi_device_test

namespace {
struct AllDevices {
  AllDevices() { veda::init(veda::Config::builder().all_devices().build()); }
  ~AllDevices() { veda::shutdown(); }
};

veda::Array<float> iota(std::size_t n) {
  veda::Array<float> a(n);
  for (std::size_t i = 0; i < n; ++i) a.host()[i] = static_cast<float>(i % 1024);
  return a;
}
veda::Array<float> iota(std::size_t rows, std::size_t cols) {
  veda::Array<float> a = iota(rows * cols);
  a.reshape(rows, cols);
  return a;
}
}  // namespace

TEST_CASE("all_devices uses every GPU found; a device veda does not use is InvalidArgument") {
  AllDevices run;
  const veda::GpuStatus& g = veda::get_runtime().gpu();
  REQUIRE(g.usable);
  REQUIRE(g.in_use.size() == g.devices.size());
  CHECK(g.in_use.front() == g.selected);
  CHECK(veda::get_runtime().memory_stats().devices.size() == g.devices.size());
  const int missing = static_cast<int>(g.devices.size());
  veda::Array<float> a = iota(1000);
  CHECK_THROWS_AS(a.to_device(missing), veda::InvalidArgument);
  auto twice = veda::gpu(multi_device_test::Twice{}, {.device = missing, .tier = "cuda"});
  CHECK_THROWS_AS((void)twice(a), veda::InvalidArgument);
  veda::MatmulOptions mo;
  mo.device = missing;
  CHECK_THROWS_AS((void)veda::matmul(iota(2, 2), iota(2, 2), mo), veda::InvalidArgument);
}

TEST_CASE("calibration measures every GPU used on its own, and with several the copy rate of every pair") {
  AllDevices run;
  auto& st = veda::get_runtime().state();
  const veda::detail::MachineProfile p =
      veda::detail::measure_profile(st.config, st.cpu, st.gpu, *st.cpu_executor, st.all_devices());
  const std::size_t used = st.gpu.in_use.size();
  REQUIRE(used == st.device_count());
  REQUIRE(p.other_gpus.size() == used - 1);
  for (std::size_t slot = 0; slot < used; ++slot) {
    CAPTURE(slot);
    const veda::detail::GpuProfile& g = p.gpu_at(slot);
    CHECK(g.present);
    CHECK(g.uuid == st.gpu.devices[static_cast<std::size_t>(st.gpu.in_use[slot])].uuid);
    CHECK(g.launch_us > 0);
    CHECK(g.device_bw_gbps > 100);  // any data-centre GPU streams far faster
    if (used == 1) {
      CHECK(g.peer_in_gbps.empty());
      continue;
    }
    REQUIRE(g.peer_in_gbps.size() == used);
    for (std::size_t from = 0; from < used; ++from) CHECK((from == slot) == (g.peer_in_gbps[from] == 0));
    std::printf("GPU %d (%s): copies in from the others at", st.gpu.in_use[slot], g.name.c_str());
    for (std::size_t from = 0; from < used; ++from)
      if (from != slot) std::printf(" %.1f GB/s (GPU %d)", g.peer_in_gbps[from], st.gpu.in_use[from]);
    std::printf("\n");
  }
  // The calibration's memory went back: the program's pools start empty.
  for (std::size_t slot = 0; slot < used; ++slot) CHECK(st.device_at(slot)->pool().stats().bytes_cached == 0);
}

TEST_CASE("with two GPUs, calls run where they are asked to, else where their data is") {
  AllDevices run;
  if (veda::get_runtime().gpu().in_use.size() < 2) {
    std::printf("skipped: one GPU in this machine, this case needs two\n");
    return;
  }
  const std::size_t n = (std::size_t{1} << 22) + 3;
  veda::Array<float> a = iota(n);
  auto on1 = veda::gpu(multi_device_test::Twice{}, {.device = 1, .tier = "cuda"});
  veda_test::DeviceWork w;
  veda::Array<float> b = on1(a);
  veda_test::check_ran("cuda", w);
  CHECK(b.valid_on_device(1));
  CHECK_FALSE(b.valid_on_device(0));
  auto anywhere = veda::gpu(multi_device_test::Twice{}, {.tier = "cuda"});
  veda::Array<float> c = anywhere(b);  // b is on device 1: so is this call
  CHECK(c.valid_on_device(1));
  // c is on device 1 only: a call asking for device 0 copies it over device
  // to device (cudaMemcpyPeerAsync), and the host copy stays stale.
  REQUIRE_FALSE(c.valid_on_host());
  auto on0 = veda::gpu(multi_device_test::Twice{}, {.device = 0, .tier = "cuda"});
  veda::Array<float> e = on0(c);
  CHECK(e.valid_on_device(0));
  CHECK(c.valid_on_device(0));
  CHECK(c.valid_on_device(1));
  CHECK_FALSE(c.valid_on_host());
  for (std::size_t i : {std::size_t{0}, std::size_t{1023}, n - 1}) {
    CHECK(c[i] == 4.0f * static_cast<float>(i % 1024));
    CHECK(e[i] == 8.0f * static_cast<float>(i % 1024));
  }

  veda::Array<float> x = iota(64, 48);
  veda::Array<float> y = iota(48, 32);
  x.to_device(1);
  y.to_device(1);
  veda::MatmulOptions mo;
  mo.device = 0;
  mo.tier = "gpu-cublas";
  const veda::Array<float> z = veda::matmul(x, y, mo);
  CHECK(z.valid_on_device(0));
  for (std::size_t r : {std::size_t{0}, std::size_t{63}})
    for (std::size_t col : {std::size_t{0}, std::size_t{31}}) {
      double want = 0;
      for (std::size_t k = 0; k < 48; ++k) want += double(x.at(r, k)) * double(y.at(k, col));
      CHECK(z.at(r, col) == doctest::Approx(want).epsilon(1e-6));
    }
  const veda::MemoryStats m = veda::get_runtime().memory_stats();
  CHECK(m.devices[0].used > 0);
  CHECK(m.devices[1].used > 0);
}

TEST_CASE("with two GPUs of one kind, a co-executed call (a par_iter phase, a veda::gpu map, a matmul, a sort) splits its GPU part between them") {
  AllDevices run;
  if (veda::get_runtime().gpu().in_use.size() < 2) {
    std::printf("skipped: one GPU in this machine, this case needs two\n");
    return;
  }
  veda::detail::Plan any;  // asking for every device of the first's kind
  any.gpu_devices = 64;
  const std::size_t sharing = veda::detail::gpu_bridge::share_devices(veda::get_runtime(), any).size();
  std::printf("co-execution: %zu of %zu devices are of the first's kind\n", sharing,
              veda::get_runtime().gpu().in_use.size());
  const std::size_t n = (std::size_t{1} << 24) + 7;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1024);
  auto allocations = [] {
    std::vector<std::uint64_t> a;
    for (const auto& d : veda::get_runtime().memory_stats().devices) a.push_back(d.allocations);
    return a;
  };
  const std::vector<std::uint64_t> before = allocations();
  const veda_test::DeviceWork w;
  const std::vector<float> got =
      veda::par_iter(x, {.tier = "cpu+gpu"}).gpu_map([] VEDA_FN(float v) { return 3.0f * v + 1.0f; }).collect();
  veda_test::check_ran("cpu+gpu", w);
  REQUIRE(got.size() == n);
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != 3.0f * x[i] + 1.0f) FAIL_CHECK("element " << i << ": " << got[i]);
  const std::vector<std::uint64_t> after = allocations();
  for (std::size_t i = 0; i < sharing; ++i) CHECK_MESSAGE(after[i] > before[i], "device slot " << i << " took no share");
  const double s = veda::par_iter(veda::range<std::int64_t>(0, n), {.tier = "cpu+gpu"})
                       .gpu_map([] VEDA_FN(std::int64_t i) { return static_cast<double>(i % 10); })
                       .reduce(0.0, [] VEDA_FN(double a, double b) { return a + b; });
  // n = 10 * 1677722 + 3: whole decades sum to 45 each, then 0 + 1 + 2.
  CHECK(s == 45.0 * 1677722 + 3);
  // A veda::gpu map of host vectors splits the same way.
  const std::vector<std::uint64_t> before_map = allocations();
  const veda_test::DeviceWork wm;
  auto affine = veda::gpu([] VEDA_FN(float v, float a) { return a * v + 1.0f; }, {.name = "split map", .tier = "cpu+gpu"});
  const std::vector<float> z = affine(x, 3.0f);
  veda_test::check_ran("cpu+gpu", wm);
  REQUIRE(z.size() == n);
  for (std::size_t i = 0; i < n; ++i)
    if (z[i] != 3.0f * x[i] + 1.0f) FAIL_CHECK("map element " << i << ": " << z[i]);
  const std::vector<std::uint64_t> after_map = allocations();
  for (std::size_t i = 0; i < sharing; ++i)
    CHECK_MESSAGE(after_map[i] > before_map[i], "device slot " << i << " took no share of the map");
  // A matmul of host spans splits C's rows the same way; entries are small
  // integers, so every tier's sums are exact.
  const std::size_t m = 4099, k = 257, cols = 129;
  std::vector<double> a(m * k), b(k * cols), c(m * cols, -1.0), want(m * cols);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2;
  veda::matmul<double>(a, b, want, m, k, cols, {.tier = "cpu-reference"});
  const std::vector<std::uint64_t> before_gemm = allocations();
  veda::matmul<double>(a, b, c, m, k, cols, {.tier = "cpu+gpu"});
  CHECK(veda::last_decision().tier == "cpu+gpu");
  CHECK(c == want);
  const std::vector<std::uint64_t> after_gemm = allocations();
  for (std::size_t i = 0; i < sharing; ++i)
    CHECK_MESSAGE(after_gemm[i] > before_gemm[i], "device slot " << i << " took no rows of the matmul");
  // A sort of host spans: each device sorts its share of the keys, the CPU
  // the rest, and the parts are merged: the same order as a stable sort.
  std::vector<float> keys(1'000'003);
  std::vector<std::uint32_t> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<float>(i * 7919 % 10007) - 5000;
    values[i] = static_cast<std::uint32_t>(i);
  }
  auto want_keys = keys;
  auto want_values = values;
  veda::sort_by_key(want_keys, want_values, {.stable = true, .tier = "serial"});
  const std::vector<std::uint64_t> before_sort = allocations();
  veda::sort_by_key(keys, values, {.stable = true, .tier = "cpu+gpu"});
  CHECK(veda::last_decision().tier == "cpu+gpu");
  CHECK(keys == want_keys);
  CHECK(values == want_values);
  const std::vector<std::uint64_t> after_sort = allocations();
  for (std::size_t i = 0; i < sharing; ++i)
    CHECK_MESSAGE(after_sort[i] > before_sort[i], "device slot " << i << " sorted no keys");
}
