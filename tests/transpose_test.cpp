// Contract: veda::transpose moves every element of a rows x cols matrix to
// (col, row), bit for bit, for element sizes 1, 2, 4 and 8, shapes from
// empty through primes and tall/wide to 10^7 elements, on every tier; the
// Array form returns a cols x rows Array; alpha/beta give out = alpha in^T +
// beta out (float, double) on every tier; bad shapes, 1-D Arrays and
// overlapping ranges throw before any work.
// Built twice in the CUDA configuration: transpose_test and gpu_transpose_test (gpu).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/transpose.hpp"

namespace {
std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

struct Shape {
  std::size_t rows, cols;
};
// {64, 1024}, {1024, 9}: rows of in or out a multiple of 1 KiB for 1-byte
// elements (8 x 8 pieces), {256, 512} for 2-byte ones.
const Shape kShapes[] = {{0, 0},   {0, 5},     {5, 0},     {1, 1},     {1, 7},       {7, 1},      {13, 17},
                         {31, 33}, {1000, 3},  {3, 1000},  {64, 1024}, {1024, 9},    {256, 512},  {1025, 1023},
                         {3163, 3163}};

template <class T>
T value(std::size_t i) {
  if constexpr (std::is_same_v<T, double>) return static_cast<double>(i) + 0.5;
  else return static_cast<T>(i * 2654435761u);
}

template <class T>
void every_shape_and_tier() {
  for (const auto& s : kShapes) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    std::vector<T> in(s.rows * s.cols);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = value<T>(i);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      veda::TransposeOptions o;
      o.tier = tier;
      std::vector<T> out(in.size());
      const veda_test::DeviceWork w;
      veda::transpose(in, out, s.rows, s.cols, o);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < s.rows; ++i)
        for (std::size_t j = 0; j < s.cols; ++j) bad += out[j * s.rows + i] != in[i * s.cols + j];
      CHECK(bad == 0);
      veda_test::check_ran(tier, w, !in.empty());
    }
  }
}
}  // namespace

TEST_CASE_TEMPLATE("transpose moves every element for every shape, size and tier", T, std::uint8_t, std::int16_t,
                   float, double) {
  veda_test::OpRuntime rt;
  every_shape_and_tier<T>();
}

namespace {
// out = alpha in^T + beta out; values are small integers and halves, so
// every tier computes them exactly. beta 0 starts from NaN: it must not be read.
template <class T>
void scaled_every_shape_and_tier(double alpha, double beta) {
  // Register tiles (4 x 4 doubles and 8 x 8 floats with AVX, 2 x 2 and 4 x 4
  // in transpose_test.sse2) with and without leftover rows and columns, each
  // walk order (rows of 1 KiB conflict: 256, 64 x 1024, 128 x 37 doubles).
  const Shape shapes[] = {{0, 0},   {1, 1},     {7, 1},     {3, 5},       {4, 4},    {8, 8},
                          {13, 17}, {128, 37}, {256, 256}, {1025, 1023}, {64, 1024}};
  for (const auto& s : shapes) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    const std::size_t n = s.rows * s.cols;
    std::vector<T> in(n), out0(n);
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = static_cast<T>(static_cast<double>(i % 97) - 48);
      out0[i] = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(static_cast<double>(i % 13) * 0.5);
    }
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      std::vector<T> out = out0;
      veda::transpose(in, out, s.rows, s.cols, {.tier = tier, .alpha = alpha, .beta = beta});
      std::size_t bad = 0;
      for (std::size_t i = 0; i < s.rows; ++i)
        for (std::size_t j = 0; j < s.cols; ++j) {
          const std::size_t o = j * s.rows + i;
          const double want = alpha * double(in[i * s.cols + j]) + (beta == 0 ? 0.0 : beta * double(out0[o]));
          bad += !(double(out[o]) == want);
        }
      CHECK(bad == 0);
      veda::Array<T> a(s.rows, s.cols, in), t(s.cols, s.rows, out0);
      veda::transpose_into(t, a, {.tier = tier, .alpha = alpha, .beta = beta});
      CHECK(t.to_vector() == out);
    }
  }
}
}  // namespace

TEST_CASE_TEMPLATE("alpha and beta: out = alpha in^T + beta out in one pass, every shape and tier", T, float, double) {
  veda_test::OpRuntime rt;
  scaled_every_shape_and_tier<T>(1.0, 1.0);   // B += A^T
  scaled_every_shape_and_tier<T>(-0.5, 2.0);
  scaled_every_shape_and_tier<T>(3.0, 0.0);   // NaN in out must not be read
}

TEST_CASE("alpha and beta errors: integer elements, the returning form, transpose_into shapes") {
  veda_test::OpRuntime rt;
  std::vector<int> vi(6), wi(6);
  CHECK_THROWS_WITH_AS(veda::transpose(vi, wi, 2, 3, {.alpha = 2}), doctest::Contains("float or double"),
                       veda::InvalidArgument);
  veda::Array<float> m(2, 3);
  CHECK_THROWS_AS((void)veda::transpose(m, {.beta = 1}), veda::InvalidArgument);
  veda::Array<float> wrong(2, 3);
  CHECK_THROWS_WITH_AS(veda::transpose_into(wrong, m), doctest::Contains("3x2"), veda::InvalidArgument);
  veda::Array<float> sq(3, 3);
  CHECK_THROWS_AS(veda::transpose_into(sq, sq), veda::InvalidArgument);
  veda::Array<float> t(3, 2);
  veda::transpose_into(t, m, {.beta = 1});  // still usable
  CHECK(t.to_vector() == std::vector<float>(6, 0.0f));
}

TEST_CASE("the Array form returns cols x rows") {
  veda_test::OpRuntime rt;
  const veda::Array<float> m(2, 3, {1, 2, 3, 4, 5, 6});
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::TransposeOptions o;
    o.tier = tier;
    const auto t = veda::transpose(m, o);
    CHECK(t.rows() == 3);
    CHECK(t.cols() == 2);
    CHECK(t.to_vector() == std::vector<float>{1, 4, 2, 5, 3, 6});
    const auto back = veda::transpose(t, o);
    CHECK(back.to_vector() == m.to_vector());
    const auto d = veda::last_decision();
    CHECK(d.name == "transpose");
    CHECK(d.sizes == std::vector<std::size_t>{3, 2});
  }
  const auto empty = veda::transpose(veda::Array<double>(0, 4));
  CHECK(empty.rows() == 4);
  CHECK(empty.cols() == 0);
}

TEST_CASE("bad shapes and overlaps throw before any work") {
  veda_test::OpRuntime rt;
  std::vector<int> in(6, 1), out(5, -1);
  CHECK_THROWS_WITH_AS(veda::transpose(in, out, 2, 3), doctest::Contains("out 5"), veda::InvalidArgument);
  CHECK(out == std::vector<int>(5, -1));
  CHECK_THROWS_AS(veda::transpose(in, in, 2, 3), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS((void)veda::transpose(veda::Array<float>(6)), doctest::Contains("2-D"), veda::InvalidArgument);
  std::vector<int> ok(6);
  veda::transpose(in, ok, 3, 2);  // still usable
  CHECK(ok == in);
}
