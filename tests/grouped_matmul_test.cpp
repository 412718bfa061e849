// Contract: veda::grouped_matmul multiplies each group's rows by its own
// weight matrix, on every tier this build and machine can run, for float,
// double, half and bfloat16: one row, groups of no rows (first, last, all),
// a prime number of rows and groups, d_in = 0, d_out = 0, a 10^7-element result;
// composed with moe_route, moe_dispatch and moe_combine it computes the
// mixture-of-experts layer;
// shapes and counts that do not fit throw InvalidArgument before any work.
// Built twice in the CUDA configuration: grouped_matmul_test and
// gpu_grouped_matmul_test (labelled gpu: the GPU tiers forced too).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/grouped_matmul.hpp"
#include "veda/moe_route.hpp"

namespace {
using Runtime = veda_test::OpRuntime;

std::vector<std::string> tiers() {
  return veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-tiled"}, {"gpu-tiled", "gpu-cublas"});
}

template <class T>
veda::Array<T> random(veda::Shape s, unsigned seed) {
  veda::Array<T> a(s);
  std::uint32_t x = seed * 2654435761u + 3;
  for (auto& v : a.host()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<T>((static_cast<int>(x >> 22) - 512) / 256.0);  // in [-2, 2)
  }
  return a;
}

// The definition in double.
template <class T>
std::vector<double> oracle(const veda::Array<T>& x, const veda::Array<T>& w, const std::vector<std::int64_t>& counts) {
  const std::size_t k = x.extent(1), n = w.extent(2);
  std::vector<double> out(x.extent(0) * n, 0.0);
  std::size_t row = 0;
  for (std::size_t g = 0; g < counts.size(); ++g)
    for (std::int64_t r = 0; r < counts[g]; ++r, ++row)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t p = 0; p < k; ++p)
          out[row * n + j] += static_cast<double>(x.at(row, p)) * static_cast<double>(w.host()[(g * k + p) * n + j]);
  return out;
}

// Products of k terms below 4 in magnitude: an absolute bound growing with
// k; 16-bit results (FP32 sums, rounded once) add half an ulp of T at the
// value (the oracle uses the inputs as stored, so their rounding is not an
// error).
template <class T>
void check_close(const veda::Array<T>& got, const std::vector<double>& want, std::size_t k) {
  REQUIRE(got.size() == want.size());
  const double tol = (sizeof(T) == 8 ? 1e-14 : 4e-6) * 4 * static_cast<double>(k + 1);
  const double half_ulp = sizeof(T) == 2 ? std::ldexp(1.0, -std::numeric_limits<T>::digits) : 0.0;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(static_cast<float>(got.host()[i])) - want[i]);
    worst = std::max(worst, e / (tol + half_ulp * std::abs(want[i])));
  }
  CHECK(worst <= 1.0);
}

struct Case {
  std::vector<std::int64_t> counts;
  std::size_t k, n;
};
std::vector<Case> cases() {
  std::vector<Case> c = {
      {{1}, 1, 1},
      {{0, 5, 0, 3}, 7, 13},      // groups of no rows, first and last too
      {{0, 0, 0}, 8, 4},          // no rows at all
      {{4, 9}, 0, 6},             // d_in = 0: zeros
      {{4, 9}, 5, 0},             // d_out = 0: an empty result
      {{64, 1, 200, 0, 31}, 64, 96},
  };
  std::vector<std::int64_t> primes(17);  // 17 groups, 1009 rows
  for (std::size_t g = 0; g < primes.size(); ++g) primes[g] = static_cast<std::int64_t>((g * 37) % 113 / 2);
  primes.back() += 1009 - std::accumulate(primes.begin(), primes.end(), std::int64_t{0});
  c.push_back({primes, 33, 65});
  return c;
}
}  // namespace

TEST_CASE_TEMPLATE("grouped_matmul agrees with the definition for every grouping and tier", T, float, double,
                   veda::half, veda::bfloat16) {
  Runtime rt;
  unsigned seed = 1;
  for (const Case& c : cases()) {
    const auto rows = static_cast<std::size_t>(std::accumulate(c.counts.begin(), c.counts.end(), std::int64_t{0}));
    CAPTURE(rows);
    CAPTURE(c.k);
    CAPTURE(c.n);
    const auto x = random<T>(veda::Shape{rows, c.k}, seed++);
    const auto w = random<T>(veda::Shape{c.counts.size(), c.k, c.n}, seed++);
    const veda::Array<std::int64_t> counts(c.counts);
    const auto want = oracle(x, w, c.counts);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const veda_test::DeviceWork dw;
      const auto y = veda::grouped_matmul(x, w, counts, {.tier = tier});
      CHECK(y.shape() == veda::Shape{rows, c.n});
      if (y.size()) {
        CHECK(veda::last_decision().name == "grouped_matmul");
        veda_test::check_ran(tier, dw);
      }
      check_close(y, want, c.k);
    }
  }
}

TEST_CASE("a 10^7-element result over 8 experts") {
  Runtime rt;
  const std::vector<std::int64_t> c = {5000, 0, 12000, 3001, 9999, 1, 4000, 5999};  // 40000 rows
  const auto x = random<float>(veda::Shape{40000, 16}, 5);
  const auto w = random<float>(veda::Shape{8, 16, 250}, 6);
  const auto want = oracle(x, w, c);
  for (const auto& tier : tiers()) {
    if (tier == "cpu-reference") continue;
    CAPTURE(tier);
    check_close(veda::grouped_matmul(x, w, veda::Array<std::int64_t>(c), {.tier = tier}), want, 16);
  }
}

TEST_CASE("with moe_route: the mixture-of-experts layer, token by token") {
  Runtime rt;
  const std::size_t N = 301, E = 8, K = 2, d = 24, h = 40;
  const auto x = random<double>(veda::Shape{N, d}, 7);
  const auto w = random<double>(veda::Shape{E, d, h}, 8);
  auto logits = random<double>(veda::Shape{N, E}, 9);
  for (std::size_t t = 0; t < N; ++t) logits.at(t, 5) = -10;  // expert 5 receives nothing
  const auto r = veda::moe_route(logits, K);
  CHECK(r.counts.host()[5] == 0);
  const auto by_expert = veda::moe_dispatch(x, r);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const auto y = veda::moe_combine(veda::grouped_matmul(by_expert, w, r.counts, {.tier = tier}), r);
    double worst = 0;
    for (std::size_t t = 0; t < N; ++t)
      for (std::size_t j = 0; j < h; ++j) {
        double want = 0;
        for (std::size_t s = 0; s < K; ++s) {
          const auto e = static_cast<std::size_t>(r.ids.at(t, s));
          double dot = 0;
          for (std::size_t c = 0; c < d; ++c) dot += x.at(t, c) * w.host()[(e * d + c) * h + j];
          want += r.gates.at(t, s) * dot;
        }
        worst = std::max(worst, std::abs(y.at(t, j) - want));
      }
    CHECK(worst <= 1e-12);
  }
}

TEST_CASE("bad shapes and counts name what is wrong, before any work") {
  Runtime rt;
  using doctest::Contains;
  using veda::InvalidArgument;
  const auto x = random<float>(veda::Shape{10, 4}, 1);
  const auto w = random<float>(veda::Shape{3, 4, 5}, 2);
  const veda::Array<std::int64_t> ok{2, 3, 5};
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(random<float>(veda::Shape{10}, 3), w, ok),
                       Contains("inputs must be 2-D [rows, d_in], weights 3-D"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, random<float>(veda::Shape{3, 5, 5}, 4), ok),
                       Contains("weights must have one d_in x d_out matrix per count"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, w, veda::Array<std::int64_t>{5, 5}),
                       Contains("(inputs 10x4, weights 3x4x5, counts 2)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, w, veda::Array<std::int64_t>{2, -1, 9}),
                       Contains("counts[1] is negative (-1)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, w, veda::Array<std::int64_t>{2, 3, 4}),
                       Contains("counts sum to 9, the inputs have 10 rows"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, w, veda::Array<std::int64_t>{2, 9, 4}),
                       Contains("counts sum past the inputs' 10 rows (at group 1)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::grouped_matmul(x, w, ok, {.tier = "gpu-flash"}),
                       Contains("'grouped_matmul' has no tier 'gpu-flash'"), InvalidArgument);
  CHECK(veda::grouped_matmul(x, w, ok).shape() == veda::Shape{10, 5});  // still usable
}
