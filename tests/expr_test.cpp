// Contract: veda's element-wise expressions (veda/expr.hpp). Every operation
// and tier (serial, tbb-static, tbb-auto, the cost model's choice, and cuda
// where a GPU is usable: the gpu-labelled build of this file, where the
// forced cuda tier must run on the device) agrees with a scalar reference
// that broadcasts by index, for shapes of 1 to 4 dimensions with extents of
// 0, 1, a prime and rows longer than the CPU loop's unit, and 10^7 + 19
// elements; + - * / sqrt give the same bits on every tier; the result types
// follow NumPy's rules; NaN propagates through maximum, minimum and clamp;
// where() selects exactly one side's bits (signed zeros, NaN, infinities);
// expressions are lazy and keep temporary operands alive; an output may be
// an operand; an operand that appears several times is merged into one
// pointer of the CPU loop where its pattern has a loop, with the same
// values; assignment writes in place; shapes that do not broadcast are
// InvalidArgument naming both, before any work.
// Built twice in the CUDA configuration: expr_test and gpu_expr_test (gpu).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/build_config.hpp"
#include "veda/expr.hpp"
#include "veda/reduce_axis.hpp"

namespace {

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-static", "tbb-auto"}, {"cuda"}); }

veda::ExprOptions forced(const std::string& tier) {
  veda::ExprOptions o;
  o.tier = tier;
  o.strict = !tier.empty();
  return o;
}

// The element of `s` (right-aligned against `out`) that result index i reads.
std::size_t source_index(const veda::Shape& s, const veda::Shape& out, std::size_t i) {
  std::size_t idx = 0, step = 1;
  for (int d = out.ndim() - 1, j = s.ndim() - 1; j >= 0; --d, --j) {
    const std::size_t c = i % out[d];
    i /= out[d];
    if (s[j] != 1) idx += c * step;
    step *= s[j];
  }
  return idx;
}

std::vector<float> values(std::size_t n, float scale, float shift) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 1013) / 1013.0f + shift;
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), b.size() * sizeof(T)) == 0);
}

void check_tier_ran(const std::string& tier, std::size_t n, const veda_test::DeviceWork& w) {
  if (tier.empty() || n == 0) return;
  veda_test::check_ran(tier, w);
  const veda::Decision d = veda::last_decision();
  CHECK(d.device == (tier == "cuda" ? veda::Device::Gpu : veda::Device::Cpu));
  CHECK(d.name.rfind("expr ", 0) == 0);
}

struct Case {
  veda::Shape a, b, out;
};
const Case kBroadcast[] = {
    {veda::Shape{0}, veda::Shape{0}, veda::Shape{0}},
    {veda::Shape{1}, veda::Shape{1}, veda::Shape{1}},
    {veda::Shape{7}, veda::Shape{1}, veda::Shape{7}},
    {veda::Shape{4099}, veda::Shape{4099}, veda::Shape{4099}},
    {veda::Shape{3, 4}, veda::Shape{4}, veda::Shape{3, 4}},
    {veda::Shape{3, 1}, veda::Shape{1, 4}, veda::Shape{3, 4}},
    {veda::Shape{0, 3}, veda::Shape{3}, veda::Shape{0, 3}},
    {veda::Shape{3, 0}, veda::Shape{1}, veda::Shape{3, 0}},
    {veda::Shape{5, 5003}, veda::Shape{5, 1}, veda::Shape{5, 5003}},  // rows longer than a unit, column broadcast
    {veda::Shape{2, 3, 4}, veda::Shape{3, 1}, veda::Shape{2, 3, 4}},
    {veda::Shape{2, 1, 3, 1}, veda::Shape{4, 1, 5}, veda::Shape{2, 4, 3, 5}},
    {veda::Shape{1, 1, 1, 1}, veda::Shape{13}, veda::Shape{1, 1, 1, 13}},
    {veda::Shape{131, 1, 17}, veda::Shape{131, 2, 17}, veda::Shape{131, 2, 17}},
};

// Runs f(tier, case, A, B, A's values, B's values) on every tier for every broadcast case.
template <class F>
void for_each_broadcast(F&& f) {
  for (const auto& tier : tiers())
    for (const Case& k : kBroadcast) {
      CAPTURE(tier);
      CAPTURE(k.a.str());
      CAPTURE(k.b.str());
      const auto av = values(k.a.size(), 4.0f, -2.0f), bv = values(k.b.size(), 3.0f, 0.5f);
      const veda::Array<float> A(k.a, std::vector<float>(av)), B(k.b, std::vector<float>(bv));
      f(tier, k, A, B, av, bv);
    }
}

}  // namespace

TEST_CASE("every operation broadcasts like NumPy and agrees with a scalar reference on every tier") {
  veda_test::OpRuntime rt;
  for_each_broadcast([](const std::string& tier, const Case& k, const veda::Array<float>& A,
                        const veda::Array<float>& B, const std::vector<float>& av, const std::vector<float>& bv) {
    const veda::ExprOptions o = forced(tier);
    // A mix of every kind of node: binary, unary, scalar, comparison, where, functions.
    const veda_test::DeviceWork w;
    const auto r1 = veda::eval((A - B) / (B + 1.0f) * 2 + veda::sqrt(veda::abs(A)), o);
    REQUIRE(r1.shape() == k.out);
    check_tier_ran(tier, k.out.size(), w);
    const auto r2 = veda::eval(veda::where(A > B, veda::exp(-A), veda::maximum(A, B) - veda::tanh(B)), o);
    const auto r3 = veda::eval(veda::clamp(veda::pow(B, 2) - veda::log(B) + veda::sin(A) * veda::cos(A), -1, 1), o);
    const auto r4 = veda::eval(A <= B, o);
    static_assert(std::is_same_v<decltype(r4), const veda::Array<bool>>);
    for (std::size_t i = 0; i < k.out.size(); ++i) {
      const float a = av[source_index(k.a, k.out, i)], b = bv[source_index(k.b, k.out, i)];
      const float w1 = (a - b) / (b + 1.0f) * 2.0f + std::sqrt(std::fabs(a));
      const float w2 = a > b ? std::exp(-a) : std::max(a, b) - std::tanh(b);
      const float w3 = std::min(std::max(std::pow(b, 2.0f) - std::log(b) + std::sin(a) * std::cos(a), -1.0f), 1.0f);
      CHECK(r1.host()[i] == doctest::Approx(w1).epsilon(1e-6));
      CHECK(r2.host()[i] == doctest::Approx(w2).epsilon(1e-5));
      CHECK(r3.host()[i] == doctest::Approx(w3).epsilon(1e-5));
      CHECK(r4.host()[i] == (a <= b));
      if (i > 64) i += i / 7;  // sample large results
    }
  });
}

TEST_CASE("+ - * / and sqrt give the same bits on every tier, 10^7 + 19 elements") {
  veda_test::OpRuntime rt;
  const std::size_t n = 10'000'019;
  const veda::Array<float> x(values(n, 8.0f, 0.25f)), y(values(n, 2.0f, 1.0f));
  const auto want = veda::eval(veda::sqrt(x * y + 3) / (x - y * 0.5), forced("serial")).to_vector();
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const veda_test::DeviceWork w;
    veda::Array<float> z = veda::eval(veda::sqrt(x * y + 3) / (x - y * 0.5), forced(tier));
    check_tier_ran(tier, n, w);
    if (tier == "cuda") CHECK(z.valid_on_device());
    CHECK(same_bits(z.to_vector(), want));
  }
  const float a = x.host()[n - 1], b = y.host()[n - 1];
  CHECK(want[n - 1] == std::sqrt(a * b + 3.0f) / (a - b * 0.5f));
}

TEST_CASE("result types follow NumPy: true division, weak scalars, bool comparisons") {
  veda_test::OpRuntime rt;
  const veda::Array<std::int32_t> i{7, -3, 4};
  const veda::Array<std::int64_t> l{1, 2, 3};
  const veda::Array<float> f{1.5f, -2.0f, 0.25f};
  const veda::Array<double> d{0.5, 1.0, 2.0};
  const veda::Array<bool> m{true, false, true};
  static_assert(std::is_same_v<decltype(veda::eval(i / i)), veda::Array<double>>);      // true division
  static_assert(std::is_same_v<decltype(veda::eval(i + 2)), veda::Array<std::int32_t>>);
  static_assert(std::is_same_v<decltype(veda::eval(i * 2.5)), veda::Array<double>>);    // a float scalar with integers
  static_assert(std::is_same_v<decltype(veda::eval(f * 2.0)), veda::Array<float>>);     // weak: stays float
  static_assert(std::is_same_v<decltype(veda::eval(i + l)), veda::Array<std::int64_t>>);
  static_assert(std::is_same_v<decltype(veda::eval(f + d)), veda::Array<double>>);
  static_assert(std::is_same_v<decltype(veda::eval(veda::exp(i))), veda::Array<double>>);
  static_assert(std::is_same_v<decltype(veda::eval(f < 1)), veda::Array<bool>>);
  static_assert(std::is_same_v<decltype(veda::eval(m * f)), veda::Array<float>>);
  CHECK(veda::eval(i / i).to_vector() == std::vector<double>{1, 1, 1});
  CHECK(veda::eval(i / 2).to_vector() == std::vector<double>{3.5, -1.5, 2});
  CHECK(veda::eval(i + 2).to_vector() == std::vector<std::int32_t>{9, -1, 6});
  CHECK(veda::eval(veda::abs(i) - l).to_vector() == std::vector<std::int64_t>{6, 1, 1});
  CHECK(veda::eval(m * f).to_vector() == std::vector<float>{1.5f, 0.0f, 0.25f});
  CHECK(veda::eval(veda::where(m, i, 0)).to_vector() == std::vector<std::int32_t>{7, 0, 4});
  CHECK(veda::eval(veda::where(f > 0, 1.0, -1.0)).to_vector() == std::vector<double>{1, -1, 1});
  // Converting on the way out, as static_cast does.
  const veda::Array<std::int32_t> t = f * 2;
  CHECK(t.to_vector() == std::vector<std::int32_t>{3, -4, 0});
}

TEST_CASE("NaN propagates through maximum, minimum and clamp; comparisons with NaN are false") {
  veda_test::OpRuntime rt;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const veda::Array<float> a{nan, 1.0f, 2.0f, nan}, b{0.0f, nan, 3.0f, nan};
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    const auto mx = veda::eval(veda::maximum(a, b), forced(tier)).to_vector();
    const auto mn = veda::eval(veda::minimum(a, b), forced(tier)).to_vector();
    const auto cl = veda::eval(veda::clamp(a, 0, 1.5), forced(tier)).to_vector();
    const auto gt = veda::eval(a > b, forced(tier)).to_vector();
    CHECK((std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 3.0f && std::isnan(mx[3])));
    CHECK((std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 2.0f && std::isnan(mn[3])));
    CHECK((std::isnan(cl[0]) && cl[1] == 1.0f && cl[2] == 1.5f));
    CHECK(gt == std::vector<bool>{false, false, false, false});
  }
}

// The same bits, except that any NaN matches any NaN: a GPU's arithmetic
// gives its own NaN bits (x86's default NaN is negative, CUDA's positive).
template <class T>
bool same_bits_any_nan(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return false;
  return true;
}

// A float where() is selected by bit masks where the loop vectorises, by a
// ternary where it calls libm (WhereNode::eval): either way one side's bits
// (on the CPU tiers NaNs' too).
template <class T>
void check_where_bits() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T kinds[] = {T(-0.0), T(0), nan, -inf, inf, T(1.5), T(-2.25), std::numeric_limits<T>::denorm_min(),
                     -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max()};
  std::vector<T> xv(4099), yv(4099);  // longer than a unit, not a multiple of any vector width
  for (std::size_t i = 0; i < xv.size(); ++i) {
    xv[i] = kinds[(i * 7) % std::size(kinds)];
    yv[i] = kinds[(i * 3 + 1) % std::size(kinds)];
  }
  std::vector<T> plain(xv.size()), with_sqrt(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    plain[i] = xv[i] > 0 ? xv[i] : yv[i] * T(0.5);
    with_sqrt[i] = (xv[i] > 0 ? xv[i] : yv[i] * T(0.5)) + std::sqrt(std::fabs(yv[i]));
  }
  const veda::Array<T> X(xv), Y(yv);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    auto same = [&](const std::vector<T>& got, const std::vector<T>& want) {
      return tier == "cuda" ? same_bits_any_nan(got, want) : same_bits(got, want);
    };
    CHECK(same(veda::eval(veda::where(X > 0, X, Y * T(0.5)), forced(tier)).to_vector(), plain));
    CHECK(same(veda::eval(veda::where(X > 0, X, Y * T(0.5)) + veda::sqrt(veda::abs(Y)), forced(tier)).to_vector(),
               with_sqrt));
  }
}

TEST_CASE("where selects one side's bits exactly: signed zeros, NaN, infinities, denormals; float and double") {
  veda_test::OpRuntime rt;
  check_where_bits<float>();
  check_where_bits<double>();
}

TEST_CASE("the guide's normalisation: temporaries are kept alive, and the expression is lazy") {
  veda_test::OpRuntime rt;
  const std::size_t rows = 301, cols = 37;
  veda::Array<float> X(veda::Shape{rows, cols}, values(rows * cols, 10.0f, -3.0f));
  // mean and stddev return temporaries: the expression owns them.
  auto e = (X - veda::mean(X, 0)) / veda::stddev(X, 0);
  veda::Array<float> Z = e;
  const auto m = veda::mean(Z, 0).to_vector(), s = veda::stddev(Z, 0).to_vector();
  for (std::size_t c = 0; c < cols; ++c) {
    CHECK(std::fabs(m[c]) < 1e-5f);
    CHECK(s[c] == doctest::Approx(1.0f).epsilon(1e-5));
  }
  // Lazy: the named operand is read when the expression is evaluated.
  auto twice = X * 2;
  X.host()[0] = 21.0f;
  CHECK(veda::eval(twice).host()[0] == 42.0f);
}

TEST_CASE("an output may be an operand; assignment writes in place") {
  veda_test::OpRuntime rt;
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::Array<float> x(values(100'003, 1.0f, 0.0f));
    const auto before = x.to_vector();
    veda::assign(x, x * 2 + x, forced(tier));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < before.size(); ++i) bad += x.host()[i] != before[i] * 2 + before[i];
    CHECK(bad == 0);
  }
  veda::Array<double> y(1000);
  const veda::Array<double> one{1.0};
  y = one + 1;  // a [1] result is not y's shape: y is replaced
  CHECK(y.shape() == veda::Shape{1});
  veda::Array<double> z(1000);
  const double* storage = z.host().data();
  const veda::Array<double> w(1000);
  z = w + 1;
  CHECK(z.host().data() == storage);  // same shape: written in place
  CHECK(z.host()[999] == 1.0);
}

TEST_CASE("an operand that appears several times is one pointer in the CPU loop, and the values stay right") {
  veda_test::OpRuntime rt;
  const veda::Array<float> A(values(10, 1.0f, 0.0f)), B(values(10, 2.0f, 1.0f)), C(values(10, 3.0f, 1.0f));
  // The map the loop uses: leaf k read through leaf map[k] (4 bits each).
  auto map_of = [](const auto& e, std::vector<const void*> bases) {
    using N = std::remove_cvref_t<decltype(e.node())>;
    const veda::detail::ExprCallOf<N> c(e.node());
    const std::size_t m = veda::detail::expr_leaf_map_index<N::kLeaves>(c, bases.data());
    return veda::detail::kExprLeafMaps<N::kLeaves>[m];
  };
  const void *a = A.host().data(), *b = B.host().data(), *c = C.host().data();
  // A B A B A A: up to 6 leaves of 2 operands have their own loop.
  CHECK(map_of((A - B) * (A + B) / (1 + A * A), {a, b, a, b, a, a}) == 0x001010);
  CHECK(map_of(A * A * A * A, {a, a, a, a}) == 0);
  CHECK(map_of(A + B + C + A, {a, b, c, a}) == 0x0210);  // every 4-leaf pattern has one
  // 5 leaves of 3 operands, and leaves that are all different: each read on its own.
  CHECK(map_of(A + B + C + A + B, {a, b, c, a, b}) == veda::detail::kExprOwnLeaves);
  CHECK(map_of(A + B + C, {a, b, c}) == veda::detail::kExprOwnLeaves);
  {  // the same buffer walked with other strides is another operand
    const auto twice = A + A;
    veda::detail::ExprCallOf<std::remove_cvref_t<decltype(twice.node())>> call(twice.node());
    call.leaves[0].stride[3] = 1;  // planned strides; the other leaf broadcasts (0)
    const void* bases[] = {a, a};
    CHECK(veda::detail::kExprLeafMaps<2>[veda::detail::expr_leaf_map_index<2>(call, bases)] ==
          veda::detail::kExprOwnLeaves);
  }
  for_each_broadcast([](const std::string& tier, const Case& k, const veda::Array<float>& X,
                        const veda::Array<float>& Y, const std::vector<float>& av, const std::vector<float>& bv) {
    const auto r1 = veda::eval((X - Y) * (X + Y) / (1 + X * X), forced(tier));  // merged
    const auto r2 = veda::eval(X * Y - Y + X * 2 - Y * Y, forced(tier));        // 5 leaves, merged
    REQUIRE(r1.shape() == k.out);
    for (std::size_t i = 0; i < k.out.size(); ++i) {
      const float x = av[source_index(k.a, k.out, i)], y = bv[source_index(k.b, k.out, i)];
      CHECK(r1.host()[i] == (x - y) * (x + y) / (1 + x * x));
      CHECK(r2.host()[i] == x * y - y + x * 2 - y * y);
      if (i > 64) i += i / 7;
    }
  });
}

TEST_CASE("shapes that do not broadcast are InvalidArgument naming both, before any work") {
  veda_test::OpRuntime rt;
  const veda::Array<float> a(veda::Shape{3, 4}), b(veda::Shape{5});
  try {
    (void)veda::eval(a + b);
    FAIL("no exception");
  } catch (const veda::InvalidArgument& e) {
    const std::string what = e.what();
    CHECK(what.find("[3, 4]") != std::string::npos);
    CHECK(what.find("[5]") != std::string::npos);
  }
  veda::Array<float> out(veda::Shape{4, 4});
  out.host()[0] = 9.0f;
  CHECK_THROWS_AS(veda::assign(out, a * 2), veda::InvalidArgument);  // [3, 4] into [4, 4]
  CHECK(out.host()[0] == 9.0f);
  CHECK_THROWS_AS(veda::eval(a * 2, {.placement = static_cast<veda::Placement>(7)}), veda::InvalidArgument);
  CHECK_THROWS_AS(veda::eval(a * 2, forced("warp-drive")), veda::InvalidArgument);
}

TEST_CASE("each expression structure is its own call site, named by its readable form") {
  veda_test::OpRuntime rt;
  const veda::Array<float> x(8), y(8);
  (void)veda::eval((x - y) / x);
  CHECK(veda::last_decision().name == "expr ((x0 - x1) / x2)");
  CHECK(veda::last_decision().tier == "serial");  // 8 elements
  (void)veda::eval(veda::maximum(x, 0) * 2);
  CHECK(veda::last_decision().name == "expr (maximum(x0, s0) * s1)");
  (void)veda::eval(x + 1, {.name = "bias"});
  CHECK(veda::last_decision().name == "bias");
  // An expression is not a user function: without a GPU the reason names
  // that (a CPU-only build names no GPU at all), never "mark it VEDA_FN".
  if (!veda::get_runtime().gpu_usable()) {
    const std::string why = veda::last_decision().reason;
    CAPTURE(why);
    CHECK(why.find("VEDA_FN") == std::string::npos);
    if (VEDA_HAS_CUDA) CHECK(why.find("no usable GPU") != std::string::npos);
  }
}
