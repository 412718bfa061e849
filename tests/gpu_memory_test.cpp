// Contract (gpu): the data layer over the real CUDA device — the pool over
// cudaMalloc, staged and pinned transfers verified with checksums at sizes
// 0, 1, odd and 2^28+3 bytes, Array residency, ranges read from and written
// into a device copy (Array::read/write) and the address device_data gives,
// and device out-of-memory leaving data on the host.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <numeric>
#include <vector>

#include "backends/cuda/cuda_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/array.hpp"
#include "veda/runtime.hpp"

using namespace veda::detail;

namespace {
constexpr std::size_t MiB = std::size_t{1} << 20;

cuda::CudaDevice& device() {
  auto* d = dynamic_cast<cuda::CudaDevice*>(veda::get_runtime().state().device());
  REQUIRE(d != nullptr);
  return *d;
}

std::uint64_t checksum(const unsigned char* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
}  // namespace

TEST_CASE("pool over cudaMalloc: reuse, split, coalesce, trim") {
  cuda::CudaUpstream up(veda::detect_gpu().selected);
  PoolOptions o;
  o.chunk = 8 * MiB;
  MemoryPool pool(up, o);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  void* small = pool.allocate(1000, s);
  REQUIRE(cudaMemsetAsync(small, 1, 1000, s) == cudaSuccess);
  pool.deallocate(small, s);
  CHECK(pool.allocate(700, s) == small);
  pool.deallocate(small, s);
  char* a = static_cast<char*>(pool.allocate(3 * MiB, s));
  char* b = static_cast<char*>(pool.allocate(3 * MiB, s));
  CHECK(b == a + 3 * MiB);
  REQUIRE(cudaMemsetAsync(a, 0, 6 * MiB, s) == cudaSuccess);
  pool.deallocate(a, s);
  pool.deallocate(b, s);
  CHECK(pool.stats().largest_free_block == 8 * MiB);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(pool.trim() == 8 * MiB + 1024);
  CHECK(pool.stats().bytes_reserved == 0);
  cudaStreamDestroy(s);
}

TEST_CASE("transfers round-trip intact: pageable (direct and staged) and pinned") {
  veda::init();
  auto& dev = device();
  const auto s = dev.stream();
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4099}, 256 * MiB / 1024 + 1,
                            64 * MiB + 5, (std::size_t{1} << 28) + 3}) {
    CAPTURE(bytes);
    std::vector<unsigned char> src(bytes), back(bytes, 0);
    for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 131) ^ (i >> 9));
    void* d = dev.pool().allocate(bytes, s);
    dev.copy_to_device(d, src.data(), bytes, s, false);
    dev.copy_to_host(back.data(), d, bytes, s, false);
    CHECK(checksum(back.data(), bytes) == checksum(src.data(), bytes));
    if (bytes <= 64 * MiB + 5) {  // pinned path
      auto pinned = veda::detail::make_pinned_storage(bytes);
      CHECK(pinned->pinned);
      std::fill(back.begin(), back.end(), 0);
      dev.copy_to_device(d, src.data(), bytes, s, false);
      dev.copy_to_host(pinned->data, d, bytes, s, true);
      CHECK(checksum(static_cast<unsigned char*>(pinned->data), bytes) == checksum(src.data(), bytes));
    }
    dev.pool().deallocate(d, s);
  }
  veda::shutdown();
}

TEST_CASE("Array residency over the device") {
  veda::init();
  auto& dev = device();
  veda::Array<std::int32_t> a(std::vector<std::int32_t>(1 << 20, 7));
  a.to_device();
  CHECK(a.valid_on_device());
  CHECK(a.valid_on_host());
  void* d = a.buffer()->device_write(dev, dev.stream(), true);
  REQUIRE(cudaMemsetAsync(d, 0, a.bytes(), static_cast<cudaStream_t>(dev.stream())) == cudaSuccess);
  a.buffer()->device_done(dev.stream());
  CHECK_FALSE(a.valid_on_host());
  const auto v = a.to_vector();
  CHECK(std::accumulate(v.begin(), v.end(), 0L) == 0);
  a.host()[5] = 3;
  CHECK_FALSE(a.valid_on_device());
  veda::Array<std::int32_t> keep(std::vector<std::int32_t>(1000, 1));
  void* k = keep.buffer()->device_write(dev, dev.stream(), false);
  REQUIRE(cudaMemsetAsync(k, 0, keep.bytes(), static_cast<cudaStream_t>(dev.stream())) == cudaSuccess);
  keep.buffer()->device_done(dev.stream());
  veda::shutdown();  // brings `keep` home
  CHECK(keep.valid_on_host());
  CHECK(keep[999] == 0);
  const auto st = veda::Array<float>::pinned(16);
  CHECK_FALSE(st.pinned_host());  // after shutdown nothing is pinned
}

TEST_CASE("Array::read/write move only a range of the device copy; device_data is that copy's device memory") {
  veda::init();
  constexpr std::size_t n = (std::size_t{1} << 24) + 3;  // 64 MiB + 12 B: several staging chunks
  veda::Array<std::int32_t> a(std::vector<std::int32_t>(n, 1));
  std::int32_t* d = a.device_data();  // a write: the host copy turns stale
  REQUIRE(d != nullptr);
  cudaPointerAttributes at{};
  REQUIRE(cudaPointerGetAttributes(&at, d) == cudaSuccess);
  CHECK(at.type == cudaMemoryTypeDevice);
  REQUIRE(cudaMemset(d, 0, a.bytes()) == cudaSuccess);  // "outside" work, finished before veda goes on
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK_FALSE(a.valid_on_host());
  std::vector<std::int32_t> big(n - 2, -1), one(1, -1);
  a.read(1, big);  // crosses chunk boundaries, from device memory
  CHECK(std::count(big.begin(), big.end(), 0) == static_cast<std::ptrdiff_t>(n - 2));
  const std::vector<std::int32_t> in{4, 5, 6};
  a.write(n - 3, in);
  a.write(7, in);
  a.read(n - 1, one);
  CHECK(one[0] == 6);
  CHECK_FALSE(a.valid_on_host());
  const veda::Array<std::int32_t>& ca = a;
  std::vector<std::int32_t> seen(5);
  REQUIRE(cudaMemcpy(seen.data(), ca.device_data() + 6, 5 * sizeof(std::int32_t), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  CHECK(seen == std::vector<std::int32_t>{0, 4, 5, 6, 0});
  const auto v = a.to_vector();
  CHECK(std::accumulate(v.begin(), v.end(), std::int64_t{0}) == 30);
  // An overwrite target: device memory, nothing copied in, the host stale.
  veda::Array<std::int32_t> b(std::vector<std::int32_t>(1000, 3));
  std::int32_t* o = b.device_overwrite();
  REQUIRE(cudaPointerGetAttributes(&at, o) == cudaSuccess);
  CHECK(at.type == cudaMemoryTypeDevice);
  REQUIRE(cudaMemset(o, 0, b.bytes()) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK_FALSE(b.valid_on_host());
  CHECK(b.to_vector() == std::vector<std::int32_t>(1000, 0));
  veda::shutdown();
}

TEST_CASE("device out of memory leaves data on the host") {
  veda::init(veda::Config::builder().memory_pool_limit(std::size_t{1} << 20).build());
  veda::Array<float> big(std::vector<float>(1 << 20, 1.f));  // 4 MiB > limit
  big.to_device();
  CHECK(big.valid_on_host());
  CHECK_FALSE(big.valid_on_device());
  const auto stats = veda::get_runtime().memory_stats();
  REQUIRE(stats.devices.size() == 1);
  CHECK(stats.devices[0].oom_failures >= 1);
  CHECK(stats.devices[0].limit == (std::size_t{1} << 20));
  CHECK(stats.pinned_staging_total > 0);
  veda::shutdown();
}

// Finding 11 of the GPU review: calibrating with a pool too small for its
// 64/256 MiB buffers threw OutOfMemory out of veda::init.
TEST_CASE("calibration that runs out of device memory keeps the default figures; init succeeds") {
  const std::string cache = std::string(std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "/tmp") +
                            "/calibration-oom";
  REQUIRE(setenv("XDG_CACHE_HOME", cache.c_str(), 1) == 0);  // a fresh cache: this profile is not kept
  veda::init(veda::Config::builder()
                 .memory_pool_limit(std::size_t{1} << 20)
                 .calibration(veda::CalibrationMode::Force)
                 .build());
  const auto& g = veda::get_runtime().state().profile().gpu;
  CHECK(g.present);
  CHECK(g.h2d_pinned_gbps > 0);  // measured where it fit, else the default
  veda::Array<float> a(std::vector<float>(1000, 2.f));
  a.to_device();  // 4 KB fits: the runtime works
  CHECK(a.valid_on_device());
  CHECK(a.to_vector() == std::vector<float>(1000, 2.f));
  veda::shutdown();
}
