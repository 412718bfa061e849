// Contract: veda::softmax and veda::log_softmax along an axis (softmax.hpp).
// Every element type (float, double), axis (negative ones too) and tier
// (serial, tbb-auto, and cuda where a GPU is usable: the gpu-labelled build
// of this file, where the forced tier must launch device work) agrees with a
// double-precision reference within the stated tolerance, for 1- to 4-D
// shapes with single, prime, fewer-than-threads and non-multiple-of-chunk
// extents, and one slice of 10^7 + 19 elements; logits near 1000 do not
// overflow; NaN, +inf and all -inf slices give NaN as in PyTorch; the CPU
// tiers give bitwise-identical results; an empty input gives an empty
// result; the _into forms write the same values into an Array of x's shape;
// a bad axis or tier, and an out of another shape or that is x, are
// InvalidArgument before any work.
// Built twice in the CUDA configuration: softmax_test and gpu_softmax_test (gpu).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/softmax.hpp"

namespace {

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

veda::SoftmaxOptions forced(const std::string& tier) {
  veda::SoftmaxOptions o;
  o.tier = tier;
  o.strict = !tier.empty();
  return o;
}

template <class T>
veda::Array<T> logits(const veda::Shape& s, double offset = 0) {
  veda::Array<T> a(s);
  auto h = a.host();
  for (std::size_t i = 0; i < h.size(); ++i)
    h[i] = static_cast<T>(offset + 20.0 * std::sin(0.7 * static_cast<double>(i)) + static_cast<double>(i % 5));
  return a;
}

// softmax or log_softmax of x along axis, in double.
template <class T>
std::vector<double> reference(const veda::Array<T>& x, int axis, bool log) {
  const veda::Shape& s = x.shape();
  const int a = axis < 0 ? axis + s.ndim() : axis;
  std::size_t outer = 1, inner = 1;
  for (int k = 0; k < a; ++k) outer *= s[k];
  for (int k = a + 1; k < s.ndim(); ++k) inner *= s[k];
  const std::size_t len = s[a];
  const auto h = x.host();
  std::vector<double> y(h.size());
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t k = 0; k < inner; ++k) {
      auto at = [&](std::size_t j) { return (o * len + j) * inner + k; };
      double m = -INFINITY, sum = 0;
      for (std::size_t j = 0; j < len; ++j) m = std::max(m, static_cast<double>(h[at(j)]));
      for (std::size_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(h[at(j)]) - m);
      for (std::size_t j = 0; j < len; ++j)
        y[at(j)] = log ? static_cast<double>(h[at(j)]) - m - std::log(sum) : std::exp(static_cast<double>(h[at(j)]) - m) / sum;
    }
  return y;
}

// Relative for probabilities; for log-probabilities, relative to max(1, |want|).
template <class T>
std::size_t mismatches(const veda::Array<T>& got, const std::vector<double>& want, bool log) {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  const auto h = got.host();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double scale = log ? std::max(1.0, std::fabs(want[i])) : std::fabs(want[i]);
    bad += !(std::fabs(static_cast<double>(h[i]) - want[i]) <= tol * scale + 1e-300);
  }
  return bad;
}

template <class T>
bool same_bits(const veda::Array<T>& a, const veda::Array<T>& b) {
  return a.size() == b.size() && std::memcmp(a.host().data(), b.host().data(), a.size() * sizeof(T)) == 0;
}

const veda::Shape kShapes[] = {veda::Shape{1},        veda::Shape{7},           veda::Shape{1, 1},
                               veda::Shape{3, 1009},  veda::Shape{2, 4099},     veda::Shape{2, 3, 5},
                               veda::Shape{4, 33, 17}, veda::Shape{2, 3, 2, 1031}, veda::Shape{70001, 2}};

}  // namespace

TEST_CASE_TEMPLATE("softmax and log_softmax equal a double reference along every axis, on every tier", T, float, double) {
  veda_test::OpRuntime rt;
  for (const veda::Shape& s : kShapes) {
    CAPTURE(s.str());
    const auto x = logits<T>(s);
    for (int axis = -s.ndim(); axis < s.ndim(); ++axis) {
      CAPTURE(axis);
      for (bool log : {false, true}) {
        CAPTURE(log);
        const auto want = reference(x, axis, log);
        for (const auto& tier : tiers()) {
          CAPTURE(tier);
          const veda_test::DeviceWork w;
          const auto y = log ? veda::log_softmax(x, axis, forced(tier)) : veda::softmax(x, axis, forced(tier));
          veda_test::check_ran(tier, w);
          REQUIRE(y.shape() == s);
          CHECK(mismatches(y, want, log) == 0);
          if (tier == "cuda") CHECK(y.valid_on_device());  // left where it was computed
        }
      }
    }
  }
}

TEST_CASE("one slice of 10^7 + 19 floats: the reference on every tier, the same bits on both CPU tiers") {
  veda_test::OpRuntime rt;
  const auto x = logits<float>(veda::Shape{10'000'019});
  const auto want = reference(x, 0, false);
  const auto serial = veda::softmax(x, 0, forced("serial"));
  CHECK(mismatches(serial, want, false) == 0);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const veda_test::DeviceWork w;
    const auto y = veda::softmax(x, -1, forced(tier));
    veda_test::check_ran(tier, w);
    CHECK(mismatches(y, want, false) == 0);
    if (tier == "tbb-auto") CHECK(same_bits(y, serial));
  }
}

TEST_CASE("the CPU tiers give the same bits: long slices split into chunks, many short slices, strided axes") {
  veda_test::OpRuntime rt;
  for (const veda::Shape& s : {veda::Shape{200'003}, veda::Shape{3, 70'001}, veda::Shape{5000, 37}, veda::Shape{64, 1000, 3}}) {
    CAPTURE(s.str());
    const auto x = logits<float>(s);
    for (int axis : {0, -1}) {
      for (bool log : {false, true}) {
        const auto a = log ? veda::log_softmax(x, axis, forced("serial")) : veda::softmax(x, axis, forced("serial"));
        const auto b = log ? veda::log_softmax(x, axis, forced("tbb-auto")) : veda::softmax(x, axis, forced("tbb-auto"));
        CHECK(same_bits(a, b));
      }
    }
  }
}

TEST_CASE("logits near 1000 do not overflow; NaN, +inf and all -inf slices give NaN; a -inf logit gives 0") {
  veda_test::OpRuntime rt;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const veda::Array<double> big(veda::Shape{1, 3}, {1000, 1001, 1002});
    const auto p = veda::softmax(big, -1, forced(tier));
    const double z = std::exp(-2.0) + std::exp(-1.0) + 1.0;
    CHECK(p.host()[0] == doctest::Approx(std::exp(-2.0) / z).epsilon(1e-14));
    CHECK(p.host()[2] == doctest::Approx(1.0 / z).epsilon(1e-14));
    const veda::Array<float> fbig(veda::Shape{2}, {3e38f, 3e38f});
    CHECK(veda::softmax(fbig, 0, forced(tier)).to_vector() == std::vector<float>{0.5f, 0.5f});

    // Rows: a NaN; +inf; only -inf; one -inf among finite logits.
    const veda::Array<double> odd(veda::Shape{4, 3}, {1, nan, 2, 1, inf, 2, -inf, -inf, -inf, -inf, 0, 0});
    for (bool log : {false, true}) {
      CAPTURE(log);
      const auto y = log ? veda::log_softmax(odd, 1, forced(tier)) : veda::softmax(odd, 1, forced(tier));
      const auto h = y.host();
      for (std::size_t i = 0; i < 9; ++i) CHECK(std::isnan(h[i]));
      CHECK(h[9] == (log ? -inf : 0.0));
      CHECK(h[10] == doctest::Approx(log ? std::log(0.5) : 0.5));
    }
  }
}

TEST_CASE("an empty input gives an empty result of its shape; bad axes, tiers and placements fail before any work") {
  veda_test::OpRuntime rt;
  const veda::Array<float> empty(veda::Shape{0, 5});
  for (const auto& tier : tiers()) {
    const auto y = veda::softmax(empty, 1, forced(tier));
    CHECK(y.shape() == veda::Shape{0, 5});
    CHECK(veda::log_softmax(empty, 0, forced(tier)).size() == 0);
  }
  const auto x = logits<float>(veda::Shape{3, 4});
  CHECK_THROWS_WITH_AS(veda::softmax(x, 2), doctest::Contains("veda::softmax: axis 2 is out of range for shape [3, 4]"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::log_softmax(x, -3), doctest::Contains("veda::log_softmax: axis -3 is out of range"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::softmax(empty, 5), doctest::Contains("axis 5"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::softmax(x, -1, {.tier = "quantum"}), doctest::Contains("unknown tier 'quantum'"),
                       veda::InvalidArgument);
  CHECK_THROWS_AS(veda::softmax(empty, 0, {.tier = "quantum"}), veda::InvalidArgument);
  CHECK_THROWS_AS(veda::softmax(x, -1, {.placement = static_cast<veda::Placement>(42)}), veda::InvalidArgument);
}

TEST_CASE("softmax_into and log_softmax_into write into out; out of another shape, or x itself, is an error") {
  veda_test::OpRuntime rt;
  const auto x = logits<double>(veda::Shape{6, 257});
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::Array<double> out(veda::Shape{6, 257});
    const auto* storage = out.buffer();
    veda::softmax_into(out, x, 0, forced(tier));
    CHECK(out.buffer() == storage);  // written in place: no new storage
    CHECK(mismatches(out, reference(x, 0, false), false) == 0);
    veda::log_softmax_into(out, x, -1, forced(tier));
    CHECK(mismatches(out, reference(x, -1, true), true) == 0);
  }
  veda::Array<double> wrong(veda::Shape{257, 6}), self(veda::Shape{6, 257});
  CHECK_THROWS_WITH_AS(veda::softmax_into(wrong, x),
                       doctest::Contains("veda::softmax_into: out has shape [257, 6]; it must have x's shape [6, 257]"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::log_softmax_into(self, self), doctest::Contains("out must not be x"), veda::InvalidArgument);
}

TEST_CASE("decisions name the op; a forced GPU tier without a GPU runs on the CPU, or throws when strict") {
  veda_test::OpRuntime rt;
  const auto x = logits<float>(veda::Shape{8, 100});
  (void)veda::softmax(x);
  CHECK(veda::last_decision().name == "softmax");
  (void)veda::log_softmax(x, -1, {.name = "logits"});
  CHECK(veda::last_decision().name == "logits");
  if (!veda::get_runtime().gpu_usable()) {
    const auto y = veda::softmax(x, -1, {.tier = "cuda"});
    CHECK(veda::last_decision().device == veda::Device::Cpu);
    CHECK(mismatches(y, reference(x, -1, false), false) == 0);
    CHECK_THROWS_AS(veda::softmax(x, -1, {.strict = true, .tier = "cuda"}), veda::DeviceError);
  }
}
