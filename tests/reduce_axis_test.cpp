// Contract: veda::sum/mean/var/stddev/min/max/argmin/argmax along an axis.
// Every op, element type (float, double, int32, int64), axis (negative ones
// too) and tier (serial, tbb-auto, and cuda where a GPU is usable: the
// gpu-labelled build of this file) agrees with a long-double reference, for
// shapes of 1 to 4 dimensions with empty, single, prime and non-multiple
// extents; keepdims keeps the axis as 1; the CPU tiers give bitwise-identical
// float results at any thread count; NaN and ties follow NumPy; a bad axis,
// a negative ddof and an empty axis for min/max/arg* are InvalidArgument
// naming the shape, before any work.
// Built twice in the CUDA configuration: reduce_axis_test and gpu_reduce_axis_test (gpu).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/reduce.hpp"

namespace {
using veda::detail::AxisOp;
constexpr AxisOp kOps[] = {AxisOp::Sum, AxisOp::Mean, AxisOp::Var,    AxisOp::Stddev,
                           AxisOp::Min, AxisOp::Max,  AxisOp::ArgMin, AxisOp::ArgMax};
const char* op_name(AxisOp op) {
  constexpr const char* names[] = {"sum", "mean", "var", "stddev", "min", "max", "argmin", "argmax"};
  return names[static_cast<int>(op)];
}

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

veda::AxisOptions forced(const std::string& tier, bool keepdims = false, int ddof = 0) {
  veda::AxisOptions o;
  o.tier = tier;
  o.strict = !tier.empty();
  o.keepdims = keepdims;
  o.ddof = ddof;
  return o;
}

// The call, by op (the result converted to long double for comparison).
template <class T>
std::vector<long double> call(AxisOp op, const veda::Array<T>& x, int axis, const veda::AxisOptions& o,
                              veda::Shape* shape) {
  auto take = [&](const auto& r) {
    *shape = r.shape();
    const auto h = r.host();
    return std::vector<long double>(h.begin(), h.end());
  };
  switch (op) {
    case AxisOp::Sum: return take(veda::sum(x, axis, o));
    case AxisOp::Mean: return take(veda::mean(x, axis, o));
    case AxisOp::Var: return take(veda::var(x, axis, o));
    case AxisOp::Stddev: return take(veda::stddev(x, axis, o));
    case AxisOp::Min: return take(veda::min(x, axis, o));
    case AxisOp::Max: return take(veda::max(x, axis, o));
    case AxisOp::ArgMin: return take(veda::argmin(x, axis, o));
    default: return take(veda::argmax(x, axis, o));
  }
}

struct Split {
  std::size_t outer = 1, len, inner = 1;
};
Split split(const veda::Shape& s, int axis) {
  Split p;
  for (int d = 0; d < axis; ++d) p.outer *= s[d];
  for (int d = axis + 1; d < s.ndim(); ++d) p.inner *= s[d];
  p.len = s[axis];
  return p;
}

// The reference: each output's values gathered and reduced in long double.
template <class T>
std::vector<long double> reference(AxisOp op, const std::vector<T>& x, const Split& p, int ddof) {
  const long double nan = std::numeric_limits<long double>::quiet_NaN();
  std::vector<long double> out;
  for (std::size_t o = 0; o < p.outer; ++o)
    for (std::size_t k = 0; k < p.inner; ++k) {
      std::vector<long double> v;
      for (std::size_t j = 0; j < p.len; ++j) v.push_back(x[(o * p.len + j) * p.inner + k]);
      long double sum = 0, best = v.empty() ? 0 : v[0];
      std::size_t at = 0;
      for (std::size_t j = 0; j < v.size(); ++j) {
        sum += v[j];
        if (std::isnan(best)) continue;
        const bool better = op == AxisOp::Min || op == AxisOp::ArgMin ? v[j] < best : v[j] > best;
        if (std::isnan(v[j]) || better) best = v[j], at = j;
      }
      const long double n = static_cast<long double>(v.size()), mean = v.empty() ? nan : sum / n;
      long double sq = 0;
      for (long double e : v) sq += (e - mean) * (e - mean);
      const long double var = static_cast<long double>(v.size()) > ddof ? sq / (n - ddof) : nan;
      switch (op) {
        case AxisOp::Sum: out.push_back(sum); break;
        case AxisOp::Mean: out.push_back(mean); break;
        case AxisOp::Var: out.push_back(var); break;
        case AxisOp::Stddev: out.push_back(std::sqrt(var)); break;
        case AxisOp::Min:
        case AxisOp::Max: out.push_back(best); break;
        default: out.push_back(static_cast<long double>(at)); break;
      }
    }
  return out;
}

// Small integers (exact in every type and sum), some repeated: ties.
template <class T>
std::vector<T> values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<long>((i * 7919) % 23) - 11);
  return v;
}

bool close(long double got, long double want, long double tol) {
  if (std::isnan(want)) return std::isnan(got);
  return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

template <class T>
void check_shape(const veda::Shape& shape, const std::string& tier) {
  const auto data = values<T>(shape.size());
  const veda::Array<T> x(shape, std::vector<T>(data));
  // float's mean/var round; sums of small integers are exact in every type.
  const long double tol = std::is_same_v<T, float> ? 1e-5L : 1e-12L;
  for (int axis = -shape.ndim(); axis < shape.ndim(); ++axis) {
    const int a = axis < 0 ? axis + shape.ndim() : axis;
    const Split p = split(shape, a);
    for (AxisOp op : kOps) {
      const bool needs_one = op == AxisOp::Min || op == AxisOp::Max || op == AxisOp::ArgMin || op == AxisOp::ArgMax;
      if (needs_one && p.len == 0 && p.outer * p.inner > 0) continue;  // the error case, checked below
      for (bool keep : {false, true}) {
        CAPTURE(shape.str());
        CAPTURE(axis);
        CAPTURE(op_name(op));
        CAPTURE(keep);
        const int ddof = op == AxisOp::Var || op == AxisOp::Stddev ? axis & 1 : 0;
        veda::Shape got_shape;
        const veda_test::DeviceWork w;
        const auto got = call(op, x, axis, forced(tier, keep, ddof), &got_shape);
        const auto want = reference(op, data, p, ddof);
        REQUIRE(got.size() == want.size());
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i) bad += !close(got[i], want[i], tol);
        CHECK(bad == 0);
        CHECK(got_shape.size() == p.outer * p.inner);
        CHECK(got_shape.ndim() == (keep ? shape.ndim() : std::max(shape.ndim() - 1, 1)));
        if (keep) CHECK(got_shape[a] == 1);
        if (p.outer * p.inner > 0) veda_test::check_ran(tier, w);
      }
    }
  }
}

const veda::Shape kShapes[] = {
    veda::Shape{0},         veda::Shape{1},          veda::Shape{7},          veda::Shape{1, 1},
    veda::Shape{3, 0},      veda::Shape{0, 3},       veda::Shape{13, 17},     veda::Shape{1, 2053},
    veda::Shape{2053, 1},   veda::Shape{3, 4099},    veda::Shape{131, 5},     veda::Shape{2, 3, 5},
    veda::Shape{3, 70, 300}, veda::Shape{2, 3, 4, 5}, veda::Shape{1, 1, 1, 1}};
}  // namespace

TEST_CASE_TEMPLATE("every op along every axis agrees with a long-double reference on every tier", T, float, double,
                   std::int32_t, std::int64_t) {
  veda_test::OpRuntime rt;
  for (const auto& tier : tiers())
    for (const auto& shape : kShapes) check_shape<T>(shape, tier);
}

TEST_CASE("the result types: sum of integers in 64 bits, means of integers in double, indices as int64") {
  veda_test::OpRuntime rt;
  const veda::Array<std::int32_t> x(veda::Shape{2, 2}, {2'000'000'000, 2'000'000'000, 1, 2});
  const veda::Array<std::int64_t> s = veda::sum(x, 0);
  CHECK(s.host()[0] == 2'000'000'001LL);
  const veda::Array<double> m = veda::mean(x, 1);
  CHECK(m.host()[1] == 1.5);
  const veda::Array<std::int64_t> i = veda::argmax(x, 1);
  CHECK(i.host()[0] == 0);  // a tie: the first index
  static_assert(std::is_same_v<decltype(veda::stddev(veda::Array<float>{}, 0)), veda::Array<float>>);
}

TEST_CASE("long axes: 10^7 + 19 elements, contiguous and strided, on every tier") {
  veda_test::OpRuntime rt;
  const std::size_t n = 10'000'019;
  const auto data = values<double>(n);
  const long double want = reference(AxisOp::Sum, data, {1, n, 1}, 0)[0];
  veda::Array<double> flat{std::vector<double>(data)};
  veda::Array<double> tall(veda::Shape{n, 1}, std::vector<double>(data));
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    CHECK(veda::sum(flat, 0, forced(tier)).host()[0] == doctest::Approx(static_cast<double>(want)));
    CHECK(veda::sum(tall, 0, forced(tier)).host()[0] == doctest::Approx(static_cast<double>(want)));
    CHECK(veda::argmin(flat, 0, forced(tier)).host()[0] == 0);  // -11 first at index 0
    CHECK(veda::max(tall, 0, forced(tier)).host()[0] == 11);
  }
}

TEST_CASE("float sums are the same bits on both CPU tiers and at every thread count") {
  const std::size_t rows = 37, cols = 100'003;
  std::vector<float> data(rows * cols);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::sin(static_cast<float>(i)) * 1000.0f;
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    veda_test::OpRuntime rt(veda::Config::builder().threads(threads).calibration(veda::CalibrationMode::Off).build());
    const veda::Array<float> x(veda::Shape{rows, cols}, std::vector<float>(data));
    const veda::Array<float> one_row(veda::Shape{1, rows * cols}, std::vector<float>(data));
    for (const char* tier : {"serial", "tbb-auto"}) {
      std::vector<float>& r = results.emplace_back();
      auto append = [&r](const veda::Array<float>& a) { r.insert(r.end(), a.host().begin(), a.host().end()); };
      for (int axis : {0, 1}) {
        append(veda::sum(x, axis, forced(tier)));
        append(veda::var(x, axis, forced(tier)));
      }
      append(veda::sum(one_row, 1, forced(tier)));
    }
  }
  for (const auto& r : results) {
    REQUIRE(r.size() == results[0].size());
    CHECK(std::memcmp(r.data(), results[0].data(), r.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("NaN and ties follow NumPy: min/max give NaN, argmin/argmax the first NaN, ties the first index") {
  veda_test::OpRuntime rt;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: a NaN in the middle; row 1: ties and no NaN; row 2: two NaNs.
  const veda::Array<float> x(veda::Shape{3, 5}, {1, 5, nan, -3, 5,  //
                                                 2, -1, 7, -1, 7,   //
                                                 nan, 0, 0, nan, 0});
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    // (each result Array kept alive: host() is a view of it)
    const auto mn_a = veda::min(x, 1, forced(tier)), mx_a = veda::max(x, 1, forced(tier));
    const auto mn = mn_a.host(), mx = mx_a.host();
    CHECK(std::isnan(mn[0]));
    CHECK(std::isnan(mx[0]));
    CHECK(mn[1] == -1);
    CHECK(mx[1] == 7);
    const auto amn_a = veda::argmin(x, 1, forced(tier)), amx_a = veda::argmax(x, 1, forced(tier));
    const auto amn = amn_a.host(), amx = amx_a.host();
    CHECK(amn[0] == 2);
    CHECK(amx[0] == 2);
    CHECK(amn[1] == 1);
    CHECK(amx[1] == 2);
    CHECK(amn[2] == 0);
    CHECK(amx[2] == 0);
    const auto col_a = veda::argmax(x, 0, forced(tier));  // strided: columns 0 and 3 hold a NaN in row 2
    const auto col = col_a.host();
    CHECK(col[0] == 2);
    CHECK(col[1] == 0);
    CHECK(col[3] == 2);
    CHECK(std::isnan(veda::sum(x, 1, forced(tier)).host()[0]));
    CHECK(veda::sum(x, 1, forced(tier)).host()[1] == 14);
  }
}

TEST_CASE("empty axes: sum 0, mean and var NaN; var with ddof >= length NaN") {
  veda_test::OpRuntime rt;
  const veda::Array<float> x(veda::Shape{3, 0});
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const auto s = veda::sum(x, 1, forced(tier));
    CHECK(s.shape() == veda::Shape{3});
    CHECK(s.host()[2] == 0.0f);
    CHECK_FALSE(std::signbit(s.host()[2]));
    CHECK(std::isnan(veda::mean(x, 1, forced(tier)).host()[0]));
    CHECK(std::isnan(veda::var(x, 1, forced(tier)).host()[1]));
    const veda::Array<double> one(veda::Shape{2, 1}, {4.0, 5.0});
    CHECK(std::isnan(veda::var(one, 1, forced(tier, false, 1)).host()[0]));
    CHECK(veda::var(one, 1, forced(tier)).host()[0] == 0.0);
  }
  CHECK(veda::sum(veda::Array<float>(veda::Shape{0, 3}), 1).shape() == veda::Shape{0});
  CHECK(veda::max(veda::Array<float>(veda::Shape{0, 0}), 1).size() == 0);  // nothing to reduce: no error
}

TEST_CASE("bad input is InvalidArgument naming the axis and the shape, before any work") {
  veda_test::OpRuntime rt;
  const veda::Array<float> x(veda::Shape{3, 4});
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const veda::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string out_of_range = message([&] { (void)veda::sum(x, 2); });
  CHECK(out_of_range.find("axis 2") != std::string::npos);
  CHECK(out_of_range.find("[3, 4]") != std::string::npos);
  CHECK(message([&] { (void)veda::mean(x, -3); }).find("axis -3") != std::string::npos);
  CHECK(message([&] { (void)veda::var(x, 0, {.ddof = -1}); }).find("ddof") != std::string::npos);
  const veda::Array<double> empty(veda::Shape{3, 0});
  const std::string no_max = message([&] { (void)veda::max(empty, 1); });
  CHECK(no_max.find("empty") != std::string::npos);
  CHECK(no_max.find("[3, 0]") != std::string::npos);
  CHECK(message([&] { (void)veda::argmin(empty, -1); }).find("argmin") != std::string::npos);
  CHECK(veda::sum(x, 0).host()[0] == 0.0f);  // the runtime is still usable
}

TEST_CASE("the decision is named after the op, and keepdims keeps the axis as 1") {
  veda_test::OpRuntime rt;
  const veda::Array<double> x(veda::Shape{2, 3, 4});
  (void)veda::stddev(x, 1);
  CHECK(veda::last_decision().name == "stddev(axis)");
  CHECK(veda::mean(x, 1, {.keepdims = true}).shape() == veda::Shape{2, 1, 4});
  CHECK(veda::argmax(x, -1).shape() == veda::Shape{2, 3});
  CHECK(veda::sum(veda::Array<float>(veda::Shape{5}), 0).shape() == veda::Shape{1});
}
