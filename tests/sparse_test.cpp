// Contract: SparseCsr checks its structure once and names what is wrong;
// spmv / spmv_into give the reference's y = alpha A x + beta y on every tier
// (serial, tbb-auto, and cuda and gpu-cusparse where a GPU is usable: the
// gpu-labelled build of this file), for shapes from empty through primes,
// empty rows, one long row and 10^7 non-zeros; beta == 0 never reads y; the
// CPU tiers give the same bits; sizes that do not fit, y aliasing x and
// replaced values are InvalidArgument before any work.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/sparse.hpp"

namespace {
std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda", "gpu-cusparse"}); }

struct Csr {
  std::size_t rows, cols;
  std::vector<std::int32_t> off, idx;
  std::vector<double> val;
};

// Random rows of 0..2*mean non-zeros; row `long_row` (if < rows) has `cols` of them.
Csr random_csr(std::size_t rows, std::size_t cols, std::size_t mean, std::size_t long_row, unsigned seed) {
  std::mt19937 g(seed);
  Csr m{rows, cols, {0}, {}, {}};
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t k = cols == 0 ? 0 : r == long_row ? cols : g() % (2 * mean + 1);
    for (std::size_t j = 0; j < k; ++j) {
      m.idx.push_back(static_cast<std::int32_t>(r == long_row ? j : g() % cols));
      m.val.push_back(static_cast<double>(static_cast<int>(g() % 2001) - 1000) / 256.0);
    }
    m.off.push_back(static_cast<std::int32_t>(m.idx.size()));
  }
  return m;
}

template <class T>
veda::SparseCsr<T> to_sparse(const Csr& m) {
  return {m.rows, m.cols, std::vector<std::int32_t>(m.off), std::vector<std::int32_t>(m.idx),
          std::vector<T>(m.val.begin(), m.val.end())};
}

template <class T>
std::vector<T> input(std::size_t n) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i)));
  return x;
}

// |got - want| within float rounding of the row's magnitude.
template <class T>
std::size_t mismatches(const Csr& m, const std::vector<T>& x, const std::vector<T>& y0, const std::vector<T>& got,
                       double alpha, double beta) {
  const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  std::size_t bad = 0;
  for (std::size_t r = 0; r < m.rows; ++r) {
    double s = 0, mag = 0;
    for (auto k = m.off[r]; k < m.off[r + 1]; ++k) {
      const double t = static_cast<double>(static_cast<T>(m.val[k])) * static_cast<double>(x[m.idx[k]]);
      s += t;
      mag += std::abs(t);
    }
    const double want = alpha * s + (beta == 0 ? 0.0 : beta * static_cast<double>(y0[r]));
    bad += !(std::abs(static_cast<double>(got[r]) - want) <= eps * (std::abs(alpha) * mag + std::abs(want) + 1));
  }
  return bad;
}

struct Shape {
  std::size_t rows, cols, mean, long_row;
};
const Shape kShapes[] = {{0, 0, 0, 9},     {0, 5, 3, 9},   {5, 0, 0, 9},    {1, 1, 1, 9},     {1, 7, 3, 0},
                         {7, 1, 1, 9},     {13, 17, 4, 5}, {1000, 3, 1, 9}, {4099, 4099, 3, 77}, {3, 1000, 400, 1},
                         {100'003, 50'021, 20, 99'999}};
}  // namespace

TEST_CASE_TEMPLATE("spmv gives the reference's y for every shape and tier", T, float, double) {
  veda_test::OpRuntime rt;
  for (const auto& s : kShapes) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    const Csr m = random_csr(s.rows, s.cols, s.mean, s.long_row, 7);
    const auto a = to_sparse<T>(m);
    CHECK(a.nnz() == m.val.size());
    const std::vector<T> xv = input<T>(s.cols);
    const veda::Array<T> x(xv);
    std::vector<T> cpu_bits;
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const veda_test::DeviceWork w;
      const veda::Array<T> y = veda::spmv(a, x, {.tier = tier});
      REQUIRE(y.size() == s.rows);
      veda_test::check_ran(tier, w, s.rows > 0);
      const auto got = y.to_vector();
      CHECK(mismatches<T>(m, xv, {}, got, 1, 0) == 0);
      // Each row summed in one order on the CPU: the same bits on every CPU tier.
      if (tier == "serial") cpu_bits = got;
      if (tier == "tbb-auto") CHECK(got == cpu_bits);
    }
  }
}

TEST_CASE_TEMPLATE("spmv_into: y = alpha A x + beta y; beta 0 never reads y (NaN stays out)", T, float, double) {
  veda_test::OpRuntime rt;
  const Csr m = random_csr(2003, 1999, 6, 1000, 11);
  const auto a = to_sparse<T>(m);
  const std::vector<T> xv = input<T>(m.cols);
  const veda::Array<T> x(xv);
  for (const auto& [alpha, beta] : {std::pair{1.0, 1.0}, std::pair{-0.5, 2.0}, std::pair{3.0, 0.0}}) {
    std::vector<T> y0(m.rows);
    for (std::size_t r = 0; r < m.rows; ++r)
      y0[r] = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(static_cast<double>(r % 13) * 0.5);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      CAPTURE(alpha);
      CAPTURE(beta);
      veda::Array<T> y(y0);
      veda::spmv_into(y, a, x, {.tier = tier, .alpha = alpha, .beta = beta});
      CHECK(mismatches<T>(m, xv, y0, y.to_vector(), alpha, beta) == 0);
    }
  }
}

TEST_CASE("10^7 non-zeros: every tier, and the chosen tier, agree with the reference") {
  veda_test::OpRuntime rt;
  const Csr m = random_csr(1'000'003, 1'000'003, 9, 500'000, 3);
  REQUIRE(m.val.size() >= 10'000'000);
  const auto a = to_sparse<double>(m);
  const std::vector<double> xv = input<double>(m.cols);
  const veda::Array<double> x(xv);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const auto y = veda::spmv(a, x, {.tier = tier});
    CHECK(mismatches<double>(m, xv, {}, y.to_vector(), 1, 0) == 0);
  }
}

TEST_CASE("new values in the same structure give the new product") {
  veda_test::OpRuntime rt;
  auto a = to_sparse<float>(random_csr(50, 40, 4, 9, 5));
  veda::Array<float> x(std::vector<float>(40, 1.0f));
  for (float& v : a.values().host()) v = 2.0f;
  const auto y = veda::spmv(a, x).to_vector();
  const auto off = a.row_offsets().to_vector();
  for (std::size_t r = 0; r < 50; ++r) CHECK(y[r] == 2.0f * static_cast<float>(off[r + 1] - off[r]));
}

TEST_CASE("a bad structure is InvalidArgument naming what is wrong") {
  using V = std::vector<std::int32_t>;
  using D = std::vector<double>;
  auto make = [](std::size_t rows, std::size_t cols, V off, V idx, D val) {
    return veda::SparseCsr<double>(rows, cols, std::move(off), std::move(idx), std::move(val));
  };
  CHECK_THROWS_WITH_AS(make(2, 2, {0, 1}, {0}, {1}), doctest::Contains("rows + 1 = 3"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(1, 2, {1, 1}, {0}, {1}), doctest::Contains("row_offsets[0] is 1"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(2, 2, {0, 2, 1}, {0, 1}, {1, 2}), doctest::Contains("decrease at row 1"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(1, 2, {0, 1}, {0, 1}, {1, 2}), doctest::Contains("end at 1"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(1, 2, {0, 2}, {0, 1}, {1}), doctest::Contains("col_indices has 2"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(1, 2, {0, 2}, {0, 2}, {1, 2}), doctest::Contains("col_indices[1] = 2"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(make(1, 2, {0, 1}, {-1}, {1}), doctest::Contains("col_indices[0] = -1"), veda::InvalidArgument);
  CHECK_NOTHROW(make(3, 2, {0, 0, 2, 2}, {1, 1}, {1, 2}));  // empty rows, a duplicate (they add)
}

TEST_CASE("sizes that do not fit, aliasing and replaced values are InvalidArgument before any work") {
  veda_test::OpRuntime rt;
  auto a = to_sparse<double>(random_csr(4, 3, 2, 9, 1));
  veda::Array<double> x3(3), x4(4), y4(std::vector<double>(4, 7.0)), y3(3);
  CHECK_THROWS_WITH_AS((void)veda::spmv(a, x4), doctest::Contains("x has 4 elements but A is 4x3"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::spmv_into(y3, a, x3), doctest::Contains("y has 3 elements"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS((void)veda::spmv(a, x3, {.beta = 1}), doctest::Contains("spmv_into"), veda::InvalidArgument);
  auto sq = to_sparse<double>(random_csr(3, 3, 2, 9, 1));
  veda::Array<double> v(std::vector<double>(3, 1.0));
  CHECK_THROWS_WITH_AS(veda::spmv_into(v, sq, v), doctest::Contains("y is x"), veda::InvalidArgument);
  CHECK(y4.to_vector() == std::vector<double>(4, 7.0));  // nothing was written
  CHECK_THROWS_WITH_AS(veda::spmv_into(y4, a, x3, {.tier = "gpu-tiled"}), doctest::Contains("gpu-tiled"),
                       veda::InvalidArgument);
  const std::size_t nnz = a.nnz();
  a.values() = veda::Array<double>(nnz + 1);
  CHECK_THROWS_WITH_AS((void)veda::spmv(a, x3), doctest::Contains("values were replaced"), veda::InvalidArgument);
  const auto fresh = to_sparse<double>(random_csr(4, 3, 2, 9, 1));
  veda::spmv_into(y4, fresh, x3);  // still usable
  CHECK(y4.to_vector() == veda::spmv(fresh, x3).to_vector());
}

TEST_CASE("the decision explains spmv: every offered tier is a candidate, the chosen one is predicted fastest") {
  veda_test::OpRuntime rt;
  const auto a = to_sparse<float>(random_csr(20'000, 20'000, 10, 9, 2));
  const veda::Array<float> x(input<float>(20'000));
  (void)veda::spmv(a, x);
  const veda::Decision d = veda::last_decision();
  CHECK(d.name == "spmv");
  std::vector<std::string> names;
  for (const auto& c : d.candidates) names.push_back(c.tier);
  CHECK(names == std::vector<std::string>{"serial", "tbb-auto", "cuda", "gpu-cusparse"});
}
