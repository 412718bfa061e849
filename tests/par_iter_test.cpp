// Contract: par_iter chains give exactly what a serial loop gives — for every
// length (0, 1, primes, fewer elements than threads, lengths not divisible by
// the chunk count, 10^6+) and every arena size (1, 2, 3, 8 threads) — and
// preserve source order through filters and positional stages; exceptions
// from user functions reach the caller with no partial result; float sums
// are bitwise reproducible in deterministic mode. Compiled by nvcc in the
// CUDA configuration (gpu_map segments get GPU candidates) and by the host
// compiler otherwise.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "veda/par_iter.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 2, 3, 5, 7, 13, 97, 1009, 4096, 65537, 1000003};
const int kThreads[] = {1, 2, 3, 8};

struct Runtime {
  explicit Runtime(int threads = 2, bool deterministic = false) {
    auto b = veda::Config::builder().threads(threads).calibration(veda::CalibrationMode::Off);
    if (deterministic) b.deterministic(1);
    veda::init(b.build());
  }
  ~Runtime() { veda::shutdown(); }
};

std::vector<std::int64_t> numbers(std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>((i * 7919) % 1000) - 500;
  return v;
}

// Runs `check` under every arena size, several times (learning changes tiers).
template <class F>
void for_every_arena(F&& check) {
  for (int t : kThreads) {
    Runtime rt(t);
    CAPTURE(t);
    for (int rep = 0; rep < 3; ++rep) check();
  }
}
}  // namespace

TEST_CASE("map and filter chains equal serial loops") {
  for_every_arena([] {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      const auto v = numbers(n);
      std::vector<std::int64_t> squares, kept, mixed;
      std::int64_t total = 0, sum_squares = 0;
      for (auto x : v) {
        squares.push_back(x * x);
        sum_squares += x * x;
        if (x % 3 == 0) kept.push_back(x);
        if ((x * 2) % 5 != 0) total += x * 2 + 1;
      }
      CHECK(veda::par_iter(v).map([](std::int64_t x) { return x * x; }).collect() == squares);
      CHECK(veda::par_iter(v).map([](std::int64_t x) { return x * x; }).sum() == sum_squares);  // 1:1 into lanes
      CHECK(veda::par_iter(v).filter([](std::int64_t x) { return x % 3 == 0; }).collect() == kept);
      CHECK(veda::par_iter(v)
                .map([](std::int64_t x) { return x * 2; })
                .filter([](std::int64_t x) { return x % 5 != 0; })
                .gpu_map([] VEDA_FN(std::int64_t x) { return x + 1; })
                .sum() == total);
      CHECK(veda::par_iter(v).filter([](std::int64_t x) { return x > 0; }).count() ==
            static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](auto x) { return x > 0; })));
    }
  });
}

TEST_CASE("positional stages keep source order before and after filters") {
  for_every_arena([] {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      const auto v = numbers(n);
      // enumerate, then filter on the index
      std::vector<std::int64_t> odd_positions;
      for (std::size_t i = 0; i < n; ++i)
        if (i % 2 == 1) odd_positions.push_back(v[i]);
      CHECK(veda::par_iter(v)
                .enumerate()
                .filter([](const auto& p) { return p.first % 2 == 1; })
                .map([](const auto& p) { return p.second; })
                .collect() == odd_positions);
      // filter, then enumerate: indices count the survivors
      std::vector<veda::pair<std::size_t, std::int64_t>> numbered;
      for (auto x : v)
        if (x < 0) numbered.push_back({numbered.size(), x});
      CHECK(veda::par_iter(v).filter([](std::int64_t x) { return x < 0; }).enumerate().collect() == numbered);
      // skip and take around a filter
      std::vector<std::int64_t> window, after_filter;
      for (std::size_t i = 3; i < n && i < 3 + 50; ++i) window.push_back(v[i]);
      for (auto x : v)
        if (x % 2 == 0) after_filter.push_back(x);
      after_filter.erase(after_filter.begin(), after_filter.begin() + std::min<std::size_t>(2, after_filter.size()));
      if (after_filter.size() > 10) after_filter.resize(10);
      CHECK(veda::par_iter(v).skip(3).take(50).collect() == window);
      CHECK(veda::par_iter(v).filter([](std::int64_t x) { return x % 2 == 0; }).skip(2).take(10).collect() ==
            after_filter);
      // skip then enumerate counts from the first kept element
      auto e = veda::par_iter(v).skip(2).enumerate().collect();
      CHECK(e.size() == (n > 2 ? n - 2 : 0));
      if (!e.empty()) CHECK(e.back().first == e.size() - 1);
      // enumerate then skip keeps the original indices
      auto e2 = veda::par_iter(v).enumerate().skip(2).collect();
      if (!e2.empty()) CHECK(e2.front().first == 2);
    }
  });
}

TEST_CASE("zip pairs positions, before and after a filter") {
  for_every_arena([] {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      const auto a = numbers(n);
      std::vector<double> b(n + 3);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5 * static_cast<double>(i);
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += static_cast<double>(a[i]) * b[i];
      CHECK(veda::par_iter(a).zip(b).map([](const auto& p) { return static_cast<double>(p.first) * p.second; }).sum() ==
            doctest::Approx(dot));
      std::vector<veda::pair<std::int64_t, std::size_t>> zipped;
      for (auto x : a)
        if (x > 100) zipped.push_back({x, zipped.size()});
      CHECK(veda::par_iter(a).filter([](std::int64_t x) { return x > 100; }).zip(veda::range(n)).collect() == zipped);
    }
  });
}

TEST_CASE("index ranges, searches and extremes") {
  for_every_arena([] {
    for (std::size_t n : kLengths) {
      CAPTURE(n);
      const auto r = veda::range<std::int64_t>(10, 10 + static_cast<std::int64_t>(n));
      CHECK(veda::par_iter(r).count() == n);
      CHECK(veda::par_iter(r).sum() == static_cast<std::int64_t>(n) * 10 + static_cast<std::int64_t>(n * (n ? n - 1 : 0) / 2));
      CHECK(veda::par_iter(r).any([n](std::int64_t x) { return x == 10 + static_cast<std::int64_t>(n) - 1; }) == (n > 0));
      CHECK(veda::par_iter(r).all([](std::int64_t x) { return x >= 10; }));
      if (n > 1) CHECK_FALSE(veda::par_iter(r).all([](std::int64_t x) { return x % 2 == 0; }));
      const auto first = veda::par_iter(r).find_first([](std::int64_t x) { return x % 97 == 96; });
      std::optional<std::int64_t> expect;
      for (std::int64_t x = 10; x < 10 + static_cast<std::int64_t>(n); ++x)
        if (x % 97 == 96) {
          expect = x;
          break;
        }
      CHECK(first == expect);
      const auto v = numbers(n);
      const auto mn = veda::par_iter(v).min(), mx = veda::par_iter(v).max();
      CHECK(mn.has_value() == (n > 0));
      if (n) {
        CHECK(*mn == *std::min_element(v.begin(), v.end()));
        CHECK(*mx == *std::max_element(v.begin(), v.end()));
      }
    }
  });
}

TEST_CASE("ranges of mixed integer types meet in their common type; bounds that do not fit are rejected") {
  Runtime rt;
  std::vector<int> v(1001, 1);
  const auto r = veda::range(0, v.size());  // int and std::size_t
  static_assert(std::is_same_v<decltype(r), const veda::IndexRange<std::size_t>>);
  CHECK(veda::par_iter(r).count() == v.size());
  CHECK(veda::par_iter(veda::range(std::int16_t{-5}, 5LL)).sum() == -5);
  CHECK(veda::par_iter(veda::range(3u, 3)).count() == 0);
  CHECK_THROWS_AS(veda::range(-1, v.size()), veda::InvalidArgument);     // -1 is no std::size_t
  CHECK_THROWS_AS(veda::range(5u, 3), veda::InvalidArgument);            // last < first
  CHECK(veda::range(-3, std::int64_t{1} << 40).last == std::int64_t{1} << 40);
}

TEST_CASE("reduce, for_each, collect_array, sources") {
  Runtime rt(3);
  const auto v = numbers(100003);
  const auto product_mod = veda::par_iter(v).map([](std::int64_t x) { return (x % 7 + 7) % 7 + 1; }).reduce(
      std::int64_t{1}, [](std::int64_t a, std::int64_t b) { return (a * b) % 1000003; });
  std::int64_t expect = 1;
  for (auto x : v) expect = (expect * ((x % 7 + 7) % 7 + 1)) % 1000003;
  CHECK(product_mod == expect);
  std::atomic<std::int64_t> acc{0};
  veda::par_iter(v).for_each([&](std::int64_t x) { acc += x; });
  CHECK(acc.load() == std::accumulate(v.begin(), v.end(), std::int64_t{0}));
  veda::Array<std::int64_t> a = veda::par_iter(v).map([](std::int64_t x) { return x + 1; }).collect_array();
  CHECK(a.size() == v.size());
  CHECK(a[5] == v[5] + 1);
  const std::int64_t c_array[] = {4, 5, 6};
  CHECK(veda::par_iter(c_array).sum() == 15);
  CHECK(veda::par_iter(std::span<const std::int64_t>(v).subspan(10, 5)).collect() ==
        std::vector<std::int64_t>(v.begin() + 10, v.begin() + 15));
  CHECK(veda::par_iter(a).filter([](std::int64_t x) { return x > 0; }).count() ==
        static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](auto x) { return x + 1 > 0; })));
}

TEST_CASE("an exception cancels the work and reaches the caller") {
  for (int t : kThreads) {
    Runtime rt(t);
    std::vector<int> v(200000);
    std::iota(v.begin(), v.end(), 0);
    std::atomic<int> calls{0};
    auto boom = [&](int x) {
      ++calls;
      if (x == 1234) throw std::runtime_error("bad element");
      return x;
    };
    CHECK_THROWS_WITH_AS(veda::par_iter(v).map(boom).collect(), "bad element", std::runtime_error);
    CHECK_THROWS_WITH_AS(veda::par_iter(v).map(boom).sum(), "bad element", std::runtime_error);
    CHECK_THROWS_WITH_AS(veda::par_iter(v).filter([&](int x) { return boom(x) > 0; }).enumerate().count(), "bad element",
                         std::runtime_error);
    CHECK(veda::par_iter(v).map([](int x) { return x; }).sum() == 199999LL * 200000 / 2);  // still usable
  }
}

TEST_CASE("deterministic float sums are bitwise identical across thread counts") {
  std::vector<float> v(2'000'003);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f / static_cast<float>(1 + i % 977);
  std::vector<std::uint32_t> seen, seen2;
  for (int t : kThreads) {
    Runtime rt(t, true);
    for (int rep = 0; rep < 2; ++rep) {
      const float s = veda::par_iter(v).map([](float x) { return x * 3.0f; }).filter([](float x) { return x > 0.01f; }).sum();
      const float m = veda::par_iter(v).map([](float x) { return x * 3.0f; }).sum();  // 1:1: straight into lanes
      std::uint32_t b[2];
      std::memcpy(&b[0], &s, 4);
      std::memcpy(&b[1], &m, 4);
      seen.push_back(b[0]);
      seen2.push_back(b[1]);
    }
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [&](auto b) { return b == seen.front(); }));
  CHECK(std::all_of(seen2.begin(), seen2.end(), [&](auto b) { return b == seen2.front(); }));
}

TEST_CASE("the plan is visible through last_decision") {
  Runtime rt(2);
  const auto v = numbers(1000);
  (void)veda::par_iter(v, {.name = "two-phase"}).filter([](std::int64_t x) { return x > 0; }).enumerate().count();
  const veda::Decision d = veda::last_decision();
  CHECK(d.name == "two-phase");
  CHECK(d.segments.size() == 2);
  CHECK(d.reason == "plan of 2 segments");
  for (const auto& s : d.segments) CHECK(s.device == veda::Device::Cpu);
  (void)veda::par_iter(v).map([](std::int64_t x) { return x; }).sum();
  CHECK(veda::last_decision().segments.size() == 1);
}
