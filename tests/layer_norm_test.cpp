// Contract: veda::layer_norm over the last axis (layer_norm.hpp). Every
// element type (float, double), tier (serial, tbb-auto, and cuda where a GPU
// is usable: the gpu-labelled build of this file, where the forced tier must
// launch device work) and affine part (gamma and beta, either, neither)
// agrees with a double-precision reference within the stated tolerance, for
// 1- to 4-D shapes with rows of 1, a prime, more than a warp's 1024 and not a
// multiple of any chunk, and 10^7 elements; the CPU tiers give the same
// bits; a row of one element gives beta; a constant row with eps = 0 and a
// row holding NaN or inf give NaN; an empty input gives an empty result;
// layer_norm_into writes the same values into an Array of x's shape; gamma
// or beta of the wrong shape, a negative or non-finite eps, and an out of
// another shape or that is x, are InvalidArgument naming them, before any
// work.
// Built twice in the CUDA configuration: layer_norm_test and gpu_layer_norm_test (gpu).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/layer_norm.hpp"

namespace {

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

veda::LayerNormOptions forced(const std::string& tier) {
  veda::LayerNormOptions o;
  o.tier = tier;
  o.strict = !tier.empty();
  return o;
}

template <class T>
veda::Array<T> values(const veda::Shape& s, double scale, double offset) {
  veda::Array<T> a(s);
  auto h = a.host();
  for (std::size_t i = 0; i < h.size(); ++i)
    h[i] = static_cast<T>(offset + scale * std::sin(0.37 * static_cast<double>(i)) + static_cast<double>(i % 3));
  return a;
}

template <class T>
std::vector<double> reference(const veda::Array<T>& x, const veda::Array<T>& g, const veda::Array<T>& b, double eps) {
  const std::size_t d = x.shape()[x.shape().ndim() - 1], rows = x.size() / d;
  const auto h = x.host();
  std::vector<double> y(h.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < d; ++i) mean += h[r * d + i];
    mean /= static_cast<double>(d);
    for (std::size_t i = 0; i < d; ++i) var += (h[r * d + i] - mean) * (h[r * d + i] - mean);
    const double rstd = 1 / std::sqrt(var / static_cast<double>(d) + eps);
    for (std::size_t i = 0; i < d; ++i)
      y[r * d + i] = (h[r * d + i] - mean) * rstd * (g.size() ? static_cast<double>(g.host()[i]) : 1.0) +
                     (b.size() ? static_cast<double>(b.host()[i]) : 0.0);
  }
  return y;
}

// Outputs are O(1) (normalised, then scaled by gamma ~ 1 and shifted by beta ~ 1).
template <class T>
std::size_t mismatches(const veda::Array<T>& got, const std::vector<double>& want) {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  const auto h = got.host();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    bad += !(std::fabs(static_cast<double>(h[i]) - want[i]) <= tol * std::max(1.0, std::fabs(want[i])));
  return bad;
}

template <class T>
bool same_bits(const veda::Array<T>& a, const veda::Array<T>& b) {
  return a.size() == b.size() && std::memcmp(a.host().data(), b.host().data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEST_CASE_TEMPLATE("layer_norm equals a double reference for every affine part and tier", T, float, double) {
  veda_test::OpRuntime rt;
  for (const veda::Shape& s : {veda::Shape{1}, veda::Shape{7}, veda::Shape{3, 1}, veda::Shape{5, 1009},
                               veda::Shape{2, 3, 4099}, veda::Shape{4, 2, 3, 64}, veda::Shape{3, 1025}}) {
    CAPTURE(s.str());
    const std::size_t d = s[s.ndim() - 1];
    const auto x = values<T>(s, 3.0, 100.0);  // a large mean: the two-pass variance has no cancellation
    const auto gamma = values<T>(veda::Shape{d}, 0.5, 1.0), beta = values<T>(veda::Shape{d}, 0.25, -1.0);
    const veda::Array<T> none;
    for (double eps : {1e-5, 0.1}) {
      for (int affine = 0; affine < 4; ++affine) {
        CAPTURE(eps);
        CAPTURE(affine);
        const veda::Array<T>& g = affine & 1 ? gamma : none;
        const veda::Array<T>& b = affine & 2 ? beta : none;
        const auto want = reference(x, g, b, eps);
        for (const auto& tier : tiers()) {
          CAPTURE(tier);
          const veda_test::DeviceWork w;
          const auto y = veda::layer_norm(x, g, b, eps, forced(tier));
          veda_test::check_ran(tier, w);
          REQUIRE(y.shape() == s);
          CHECK(mismatches(y, want) == 0);
          if (tier == "cuda") CHECK(y.valid_on_device());  // left where it was computed
        }
      }
    }
  }
}

TEST_CASE("10^7 floats: 9767 rows of 1024, and one row of 2^20 + 3; the CPU tiers give the same bits") {
  veda_test::OpRuntime rt;
  for (const veda::Shape& s : {veda::Shape{9767, 1024}, veda::Shape{(std::size_t{1} << 20) + 3}}) {
    CAPTURE(s.str());
    const std::size_t d = s[s.ndim() - 1];
    const auto x = values<float>(s, 2.0, -5.0);
    const auto gamma = values<float>(veda::Shape{d}, 0.5, 1.0), beta = values<float>(veda::Shape{d}, 0.25, 0.0);
    const auto want = reference(x, gamma, beta, 1e-5);
    const auto serial = veda::layer_norm(x, gamma, beta, 1e-5, forced("serial"));
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const veda_test::DeviceWork w;
      const auto y = veda::layer_norm(x, gamma, beta, 1e-5, forced(tier));
      veda_test::check_ran(tier, w);
      CHECK(mismatches(y, want) == 0);
      if (tier == "tbb-auto") CHECK(same_bits(y, serial));
    }
  }
}

TEST_CASE("edge rows: one element gives beta; a constant row with eps 0, NaN and inf give NaN; empty gives empty") {
  veda_test::OpRuntime rt;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const veda::Array<double> one(veda::Shape{3, 1}, {5, -2, 7}), g(veda::Shape{1}, {3}), b(veda::Shape{1}, {0.5});
    CHECK(veda::layer_norm(one, g, b, 1e-5, forced(tier)).to_vector() == std::vector<double>{0.5, 0.5, 0.5});
    const veda::Array<double> odd(veda::Shape{3, 4}, {2, 2, 2, 2, 1, nan, 3, 4, 1, inf, 3, 4});
    const auto y = veda::layer_norm(odd, {}, {}, 0.0, forced(tier)).to_vector();
    for (double v : y) CHECK(std::isnan(v));
    const auto z = veda::layer_norm(odd, {}, {}, 1.0, forced(tier)).to_vector();
    CHECK(z[0] == 0.0);  // a constant row with eps > 0: x - mean = 0
    const veda::Array<float> empty(veda::Shape{0, 8});
    CHECK(veda::layer_norm(empty, {}, {}, 1e-5, forced(tier)).shape() == veda::Shape{0, 8});
  }
}

TEST_CASE("layer_norm_into writes into out; out of another shape, or x itself, is an error") {
  veda_test::OpRuntime rt;
  const auto x = values<double>(veda::Shape{5, 300}, 2.0, 1.0), g = values<double>(veda::Shape{300}, 0.5, 1.0);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::Array<double> out(veda::Shape{5, 300});
    const auto* storage = out.buffer();
    veda::layer_norm_into(out, x, g, {}, 1e-3, forced(tier));
    CHECK(out.buffer() == storage);  // written in place: no new storage
    CHECK(mismatches(out, reference(x, g, {}, 1e-3)) == 0);
  }
  veda::Array<double> wrong(veda::Shape{1500}), self(veda::Shape{5, 300});
  CHECK_THROWS_WITH_AS(veda::layer_norm_into(wrong, x, g, g), doctest::Contains("out has shape [1500]"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::layer_norm_into(self, self, g, g), doctest::Contains("out must not be x"),
                       veda::InvalidArgument);
}

TEST_CASE("gamma, beta and eps are checked before any work; so are the tier and the placement") {
  veda_test::OpRuntime rt;
  const auto x = values<float>(veda::Shape{4, 6}, 1.0, 0.0);
  const veda::Array<float> six(6), five(5), two_d(2, 3);
  CHECK_NOTHROW(veda::layer_norm(x, six, six));
  CHECK_THROWS_WITH_AS(veda::layer_norm(x, five, six),
                       doctest::Contains("veda::layer_norm: gamma has shape [5]; it must be [6] (the last axis of x's shape [4, 6]) or empty"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::layer_norm(x, six, two_d), doctest::Contains("beta has shape [2, 3]"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::layer_norm(x, six, six, -1.0), doctest::Contains("eps must be finite and >= 0"),
                       veda::InvalidArgument);
  for (double eps : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    CHECK_THROWS_AS(veda::layer_norm(x, six, six, eps), veda::InvalidArgument);
  const veda::Array<float> empty(veda::Shape{0, 6});
  CHECK_THROWS_AS(veda::layer_norm(empty, five, {}), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::layer_norm(x, {}, {}, 1e-5, {.tier = "quantum"}), doctest::Contains("unknown tier 'quantum'"),
                       veda::InvalidArgument);
  CHECK_THROWS_AS(veda::layer_norm(x, {}, {}, 1e-5, {.placement = static_cast<veda::Placement>(7)}), veda::InvalidArgument);
  (void)veda::layer_norm(x, six, six);
  CHECK(veda::last_decision().name == "layer_norm");
  (void)veda::layer_norm(x, six, six, 1e-5, {.name = "ln1"});
  CHECK(veda::last_decision().name == "ln1");
}
