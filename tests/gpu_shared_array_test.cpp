// Contract (gpu): one const veda::Array may be read by many threads at once on
// the GPU (array.hpp: concurrent const access is safe), each thread on its own
// stream. Eight threads computing forced-"cuda" sums and maps of a shared
// Array of 2^22+3 elements see exactly its contents and run on the GPU:
// - when it was made device-resident first, while another thread writes
//   other Arrays on the GPU;
// - when it is still on the host (pageable or pinned) and the readers start
//   together, so the first one's copy to the device races the others' reads.
// A GPU update of an Array in place (gpu_kernel), published by joining the
// updating thread, is what readers on other threads see afterwards, and
// results computed from its old contents before the update keep them.
// Values are small integers, so every float sum and map result is exact.
// Every sum and map launches device work (Runtime::device_launches).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <latch>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/device_work.hpp"
#include "veda/veda.hpp"

namespace shared_array_test {
// Device functors (an extended lambda may not be defined inside a lambda).
struct TwicePlusOne {
  static constexpr bool veda_device = true;
  VEDA_FN float operator()(float v) const { return 2.0f * v + 1.0f; }
};
struct Plus {
  static constexpr bool veda_device = true;
  VEDA_FN float operator()(float v, float k) const { return v + k; }
};
}  // namespace shared_array_test
#ifdef __CUDACC__
static_assert(veda::detail::device_callable_v<shared_array_test::TwicePlusOne> &&
              veda::detail::device_callable_v<shared_array_test::Plus>);
#endif

namespace {
constexpr std::size_t kN = (std::size_t{1} << 22) + 3;
constexpr int kReaders = 8;
constexpr int kReps = 20;

struct Runtime {
  Runtime() { veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build()); }
  ~Runtime() { veda::shutdown(); }
};

// Element i is pattern(i): i % 7, or 6 - i % 7 once reflected.
float pattern(std::size_t i, bool reflected) {
  const auto r = static_cast<float>(i % 7);
  return reflected ? 6.0f - r : r;
}
std::vector<float> values(std::size_t n, bool reflected = false) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern(i, reflected);
  return v;
}
// Below 2^24, like every partial sum: exact in float in any order.
float expected_sum(std::size_t n, bool reflected) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<std::uint64_t>(pattern(i, reflected));
  REQUIRE(s < (std::uint64_t{1} << 24));
  return static_cast<float>(s);
}

// Runs fn(t) on n threads released together; counts what went wrong.
struct Errors {
  std::atomic<int> wrong_value{0}, not_on_gpu{0}, thrown{0};
  std::mutex mu;
  std::string first_throw;
  void check() {
    CAPTURE(first_throw);
    CHECK(thrown.load() == 0);
    CHECK(wrong_value.load() == 0);
    CHECK(not_on_gpu.load() == 0);
  }
};
void run_threads(int n, Errors& e, const std::function<void(int)>& fn) {
  std::latch start(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        fn(t);
      } catch (const std::exception& ex) {
        if (e.thrown++ == 0) {
          std::lock_guard lock(e.mu);
          e.first_throw = ex.what();
        }
      }
    });
  for (auto& th : threads) th.join();
}

void expect_gpu(Errors& e, const char* tier) {
  const auto d = veda::last_decision();
  if (d.device != veda::Device::Gpu || (tier && d.tier != tier)) ++e.not_on_gpu;
}

// Whether a holds 2 * pattern(i) + 1 everywhere.
bool mapped(const veda::Array<float>& a, bool reflected) {
  if (a.size() != kN) return false;
  const auto h = a.host();
  for (std::size_t i = 0; i < kN; ++i)
    if (h[i] != 2.0f * pattern(i, reflected) + 1.0f) return false;
  return true;
}

auto twice_plus_one(veda::GpuOptions o) { return veda::gpu(shared_array_test::TwicePlusOne{}, std::move(o)); }

// Reads `shared` on kReaders threads, kReps times each: a sum or a map.
void read_concurrently(const veda::Array<float>& shared, bool reflected, Errors& e, int reps,
                       const std::function<void()>& also = {}) {
  const float want = expected_sum(kN, reflected);
  auto map = twice_plus_one({.name = "shared-map", .tier = "cuda"});
  const veda_test::DeviceWork w;  // each sum and each map launches device work
  run_threads(kReaders + (also ? 1 : 0), e, [&](int t) {
    if (t == kReaders) return also();
    for (int rep = 0; rep < reps; ++rep) {
      if ((t + rep) % 2 == 0) {
        const float s = veda::sum(shared, {.tier = "cuda"});
        expect_gpu(e, "cuda");
        if (s != want) ++e.wrong_value;
      } else {
        const veda::Array<float> r = map(shared);
        expect_gpu(e, "cuda");
        if (!mapped(r, reflected)) ++e.wrong_value;
      }
    }
  });
  CHECK(w.launches() >= static_cast<std::uint64_t>(kReaders) * reps);
}
}  // namespace

TEST_CASE("eight threads read one device-resident const Array while another writes other Arrays") {
  Runtime rt;
  veda::Array<float> a(values(kN));
  a.to_device();
  REQUIRE(a.valid_on_device());
  const veda::Array<float>& shared = a;

  Errors e, writer;
  std::atomic<int> writes{0};
  read_concurrently(shared, false, e, kReps, [&] {
    // The writer: fresh device results (pool blocks allocated and freed
    // while the readers run), then an in-place sort on the GPU.
    auto plus = veda::gpu(shared_array_test::Plus{}, {.name = "writer", .tier = "cuda"});
    const veda::Array<float> src(values(kN, true));
    veda::Array<float> w(kN);
    for (int rep = 0; rep < kReps; ++rep) {
      plus.into(w, src, static_cast<float>(rep));
      expect_gpu(writer, "cuda");
      if (!w.valid_on_device()) ++writer.not_on_gpu;
      const auto h = std::as_const(w).host();
      for (std::size_t i = 0; i < kN; i += 4099)
        if (h[i] != pattern(i, true) + static_cast<float>(rep)) {
          ++writer.wrong_value;
          break;
        }
      veda::sort(w, {.tier = "cuda"});
      expect_gpu(writer, "cuda");
      const auto s = std::as_const(w).host();
      if (s.front() != static_cast<float>(rep) || s.back() != 6.0f + static_cast<float>(rep)) ++writer.wrong_value;
      ++writes;
    }
  });
  e.check();
  CAPTURE(writer.first_throw);
  CHECK(writer.thrown.load() == 0);
  CHECK(writer.wrong_value.load() == 0);
  CHECK(writer.not_on_gpu.load() == 0);
  CHECK(writes.load() == kReps);
  CHECK(shared.valid_on_device());
  CHECK(shared.to_vector() == values(kN));  // readers never changed it
  CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}

TEST_CASE("readers that start together on a host-resident const Array: the copy in is complete for all") {
  Runtime rt;
  for (int round = 0; round < 6; ++round) {
    const bool pinned = round % 2 == 1;
    CAPTURE(round);
    CAPTURE(pinned);
    veda::Array<float> a;
    if (pinned) {
      a = veda::Array<float>::pinned(kN);
      const auto v = values(kN);
      std::copy(v.begin(), v.end(), a.host().begin());
    } else {
      a = veda::Array<float>(values(kN));
    }
    REQUIRE_FALSE(a.valid_on_device());
    const veda::Array<float>& shared = a;
    Errors e;
    read_concurrently(shared, false, e, 2);
    e.check();
    CHECK(shared.valid_on_device());
  }
  CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}

#ifdef __CUDACC__
namespace {
__global__ void reflect_kernel(float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] = 6.0f - y[i];
}
}  // namespace

TEST_CASE("a GPU update in place, published by a join: other threads then read the new values") {
  Runtime rt;
  veda::Array<float> a(values(kN));
  a.to_device();

  // Results of the old contents, left on the device by readers on other
  // threads (placement Gpu, so the model may leave them in flight).
  std::vector<veda::Array<float>> before(kReaders);
  Errors old_reads;
  auto map_auto = twice_plus_one({.placement = veda::Placement::Gpu, .strict = true, .name = "map-before"});
  run_threads(kReaders, old_reads, [&](int t) {
    before[static_cast<std::size_t>(t)] = map_auto(std::as_const(a));
    expect_gpu(old_reads, nullptr);
  });
  old_reads.check();

  // One thread updates `a` in place on the GPU; it must wait for the readers.
  auto reflect = veda::gpu_kernel(
      [](std::span<float> y) {
        for (auto& v : y) v = 6.0f - v;
      },
      [](std::span<float> y, veda::cuda_stream_t s) { reflect_kernel<<<256, 256, 0, s>>>(y.data(), y.size()); },
      {.placement = veda::Placement::Gpu, .strict = true, .name = "reflect"});
  Errors update;
  run_threads(1, update, [&](int) {
    reflect(a);
    expect_gpu(update, "cuda");
  });
  update.check();
  CHECK(a.valid_on_device());
  CHECK_FALSE(a.valid_on_host());

  // Readers on other threads now see every element updated.
  Errors e;
  read_concurrently(a, true, e, 4);
  e.check();

  // The earlier results were computed from the old contents.
  for (std::size_t t = 0; t < before.size(); ++t) {
    CAPTURE(t);
    CHECK(mapped(before[t], false));
  }
  CHECK(a.to_vector() == values(kN, true));
  CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
}
#endif
