// Contract: veda::sum/min/max/reduce agree with serial std:: algorithms for
// every length (0, 1, primes, fewer elements than threads, 10^7+) and tier;
// integer sums are exact (64-bit), float sums within rounding; min/max of an
// empty range throw; NaN propagates through min/max; deterministic mode gives
// bitwise-identical float sums across runs, tiers and thread counts.
// Compiled by nvcc in the CUDA configuration (GPU candidates) and by the
// host compiler otherwise.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "veda/detail/lanes.hpp"
#include "veda/reduce.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 2, 3, 13, 4093, 65537, 1000003, 10000019};

struct Runtime {
  explicit Runtime(veda::Config c = veda::Config::builder().calibration(veda::CalibrationMode::Off).build()) {
    veda::init(c);
  }
  ~Runtime() { veda::shutdown(); }
};

template <class T>
std::vector<T> data(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 2654435761u) % 1000) - static_cast<T>(i % 3 == 0 ? 0 : 0);
  return v;
}

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
}  // namespace

TEST_CASE("integer sums are exact, min and max agree with std::") {
  Runtime rt;
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    const auto v = data<std::int32_t>(n);
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(veda::sum(v) == std::accumulate(v.begin(), v.end(), std::int64_t{0}));
      if (n) {
        CHECK(veda::min(v) == *std::min_element(v.begin(), v.end()));
        CHECK(veda::max(v) == *std::max_element(v.begin(), v.end()));
      }
    }
    const auto u8 = data<std::uint8_t>(n);
    CHECK(veda::sum(u8) == std::accumulate(u8.begin(), u8.end(), std::uint64_t{0}));
    veda::Array<std::int32_t> a(v);
    CHECK(veda::sum(a) == std::accumulate(v.begin(), v.end(), std::int64_t{0}));
  }
}

TEST_CASE("float sums agree within rounding") {
  Runtime rt;
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = 0.001f * static_cast<float>(i % 1000);
    const double exact = std::accumulate(v.begin(), v.end(), 0.0);
    for (int rep = 0; rep < 5; ++rep) CHECK(veda::sum(v) == doctest::Approx(exact).epsilon(1e-5));
    std::vector<double> d(v.begin(), v.end());
    CHECK(veda::sum(std::span<const double>(d)) == doctest::Approx(exact).epsilon(1e-12));
  }
}

TEST_CASE("detail::sum_vectors gives reduce_lanes' float and double sums bit for bit") {
  // The same lanes in 16-byte vectors, combined in the same order (veda::sum
  // and veda::reduce with std::plus sum floats and doubles so, layer_norm its
  // rows); contiguous data of kWideSumBytes or more in libveda's
  // sum_contiguous, in 32-byte vectors where the CPU has AVX. Sums of mixed
  // signs and magnitudes, where order shows; lengths on both sides of that
  // threshold, and starts off a vector's alignment (lo = 3).
  const auto plus = [](auto a, auto b) { return a + b; };
  for (std::size_t n : {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 1027, 4093, 65537,
                        1000003}) {
    CAPTURE(n);
    std::vector<float> f(n);
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) {
      f[i] = static_cast<float>((i * 2654435761u) % 2001) * (i % 2 ? 1e-3f : -1.7f);
      d[i] = static_cast<double>(f[i]) * 1e5 + 1e-7 * static_cast<double>(i);
    }
    for (std::size_t lo : {std::size_t{0}, std::size_t{3}}) {
      if (lo > n) continue;
      auto lf = [&](std::size_t i) { return f[i]; };
      auto ld = [&](std::size_t i) { return d[i]; };
      const std::uint32_t ref_f = bits(veda::detail::reduce_lanes(lf, lo, n, 0.0f, plus));
      CHECK(bits(veda::detail::sum_vectors<float>(lf, lo, n)) == ref_f);
      CHECK(bits(veda::detail::sum_vectors<float>(veda::detail::Contiguous<float>{f.data()}, lo, n)) == ref_f);
      // The inlined loop at every length (sum_contiguous's path without AVX).
      CHECK(bits(veda::detail::sum_vectors<float, false>(veda::detail::Contiguous<float>{f.data()}, lo, n)) == ref_f);
      const double ref = veda::detail::reduce_lanes(ld, lo, n, 0.0, plus);
      for (const double vd : {veda::detail::sum_vectors<double>(ld, lo, n),
                              veda::detail::sum_vectors<double>(veda::detail::Contiguous<double>{d.data()}, lo, n)})
        CHECK(std::memcmp(&vd, &ref, sizeof vd) == 0);
    }
  }
}

// sum_contiguous reads 32-byte vectors where the CPU has AVX, from aligned
// addresses also where the data starts 16 bytes past one (its own path):
// the same bits as the lanes at every start, with -0 kept where the lanes
// keep it.
template <class T>
void check_every_alignment() {
  const auto plus = [](auto a, auto b) { return a + b; };
  constexpr std::size_t kMax = 70000;
  std::vector<T> storage(kMax + 64);
  T* base = storage.data();
  while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
  for (std::size_t i = 0; i < kMax + 16; ++i)
    base[i] = static_cast<T>((i * 2654435761u) % 2001) * (i % 2 ? T(1e-3) : T(-1.7));
  for (std::size_t n : {0, 1, 16, 17, 1024, 1025, 1039, 4096, 65537})
    for (std::size_t off = 0; off < 16; ++off) {
      CAPTURE(n);
      CAPTURE(off);
      const auto load = [&](std::size_t i) { return base[off + i]; };
      const T got = veda::detail::sum_contiguous(base + off, n), ref = veda::detail::reduce_lanes(load, 0, n, T(0), plus);
      CHECK(std::memcmp(&got, &ref, sizeof got) == 0);
    }
  std::fill(base, base + kMax, -T(0));
  for (std::size_t off = 0; off < 8; ++off) {
    const T got = veda::detail::sum_contiguous(base + off, 4100);
    CHECK(got == 0);
    CHECK(!std::signbit(got));  // 0 + -0, as the lanes start from 0
  }
}

TEST_CASE("detail::sum_contiguous: the lanes' bits from every start, aligned or not") {
  check_every_alignment<float>();
  check_every_alignment<double>();
}

TEST_CASE("reduce with a user operator") {
  Runtime rt;
  std::vector<std::int64_t> v(100003);
  std::iota(v.begin(), v.end(), 1);
  auto big = veda::reduce(v, std::int64_t{0}, [] VEDA_FN(std::int64_t a, std::int64_t b) { return a > b ? a : b; });
  CHECK(big == 100003);
  std::vector<double> w(257, 1.001);
  const double prod = veda::reduce(w, 1.0, [] VEDA_FN(double a, double b) { return a * b; });
  CHECK(prod == doctest::Approx(std::pow(1.001, 257)));
  CHECK(veda::reduce(std::vector<int>{}, 7, [](int a, int b) { return a + b; }) == 7);
}

// Leaves fold in lanes of default-constructed accumulators (lanes.hpp); a
// type without a default constructor folds in one chain, to the same result.
struct Tally {
  explicit Tally(std::int64_t v) : n(v) {}
  std::int64_t n;
};

TEST_CASE("reduce over an accumulator type without a default constructor") {
  Runtime rt;
  for (std::size_t len : kLengths) {
    std::vector<Tally> v(len, Tally{2});
    const Tally r = veda::reduce(v, Tally{1}, [](Tally a, Tally b) { return Tally{a.n + b.n - 1}; });
    CHECK(r.n == static_cast<std::int64_t>(len) + 1);
  }
}

TEST_CASE("empty ranges: sum is zero, min and max throw") {
  Runtime rt;
  const std::vector<float> e;
  CHECK(veda::sum(e) == 0.0f);
  CHECK_THROWS_WITH_AS(veda::min(e), "veda::min of an empty range", veda::InvalidArgument);
  CHECK_THROWS_AS(veda::max(e), veda::InvalidArgument);
}

TEST_CASE("NaN propagates through min and max; infinities are ordinary values") {
  Runtime rt;
  for (std::size_t n : {std::size_t{1}, std::size_t{9}, std::size_t{100000}}) {
    for (std::size_t where : {std::size_t{0}, n / 2, n - 1}) {
      std::vector<double> v(n, 1.0);
      v[where] = std::numeric_limits<double>::quiet_NaN();
      CHECK(std::isnan(veda::min(v)));
      CHECK(std::isnan(veda::max(v)));
      CHECK(std::isnan(veda::sum(v)));
    }
  }
  std::vector<float> inf{1.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  CHECK(veda::max(inf) == std::numeric_limits<float>::infinity());
  CHECK(veda::min(inf) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("deterministic mode: bitwise-identical float sums across runs, tiers and thread counts") {
  std::vector<float> v(3'000'017);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 1e3f + 1e-3f * static_cast<float>(i % 7);
  std::vector<std::uint32_t> seen;
  for (int threads : {1, 2, 3, 8}) {
    Runtime rt(veda::Config::builder().threads(threads).deterministic(42).calibration(veda::CalibrationMode::Off).build());
    for (auto placement : {veda::Placement::Auto, veda::Placement::Cpu}) {
      veda::ScopedPlacement scope(placement);
      for (int rep = 0; rep < 3; ++rep) {
        const float s = veda::sum(v);
        if (veda::last_decision().device == veda::Device::Cpu) seen.push_back(bits(s));
      }
    }
  }
  REQUIRE_FALSE(seen.empty());
  CHECK(std::all_of(seen.begin(), seen.end(), [&](std::uint32_t b) { return b == seen.front(); }));
}

TEST_CASE("forced cpu+gpu: the range split between the CPU and the GPU agrees with serial at every length") {
  // Without a usable GPU the forced tier runs on the CPU; the values are the same.
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  const veda::ReduceOptions split{.tier = "cpu+gpu"};
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    const auto v = data<std::int32_t>(n);
    CHECK(veda::sum(v, split) == std::accumulate(v.begin(), v.end(), std::int64_t{0}));
    if (gpu && n > 0) CHECK(veda::last_decision().tier == "cpu+gpu");
    if (n) {
      CHECK(veda::min(v, split) == *std::min_element(v.begin(), v.end()));
      CHECK(veda::max(v, split) == *std::max_element(v.begin(), v.end()));
    }
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = 0.5 * static_cast<double>(i % 1000);  // sums exactly
    CHECK(veda::sum(d, split) == std::accumulate(d.begin(), d.end(), 0.0));
  }
  std::vector<std::int64_t> w(1000003);
  std::iota(w.begin(), w.end(), -500000);
  CHECK(veda::reduce(w, std::numeric_limits<std::int64_t>::min(),
                     [] VEDA_FN(std::int64_t a, std::int64_t b) { return a > b ? a : b; }, split) == 500002);
  // An Array is not split: the forced tier's GPU side, cuda, reduces it.
  veda::Array<std::int32_t> a(data<std::int32_t>(4093));
  const auto v = data<std::int32_t>(4093);
  CHECK(veda::sum(a, split) == std::accumulate(v.begin(), v.end(), std::int64_t{0}));
  CHECK(veda::last_decision().tier != "cpu+gpu");
  if (gpu) CHECK(veda::last_decision().tier == "cuda");
}

TEST_CASE("decisions for reductions") {
  Runtime rt;
  std::vector<double> v(10);
  (void)veda::sum(v);
  auto d = veda::last_decision();
  CHECK(d.name == "sum");
  CHECK(d.tier == "serial");
  (void)veda::max(v, {.placement = veda::Placement::Cpu, .name = "my-max"});
  d = veda::last_decision();
  CHECK(d.name == "my-max");
  CHECK(d.reason.rfind("forced to CPU by placement option", 0) == 0);
}
