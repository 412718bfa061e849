// Contract (the bad-input matrix): every public entry point, given empty
// ranges, mismatched lengths or shapes, sizes whose byte counts overflow,
// overlapping outputs, unknown tiers, bad Config or environment values, or
// called after shutdown(), throws a veda::Error subclass naming the problem
// before it writes anything (outputs keep their sentinel values), and the
// runtime stays usable. Empty inputs are valid and do nothing; NaN and Inf
// flow through as IEEE arithmetic says.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "veda/veda.hpp"

namespace {
constexpr float kSentinel = -12345.0f;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max() / 2;

std::vector<float> sentinel(std::size_t n) { return std::vector<float>(n, kSentinel); }
bool untouched(const std::vector<float>& v) {
  for (float x : v)
    if (x != kSentinel) return false;
  return true;
}

// Runs f, which must throw E with `needle` in its message.
template <class E>
void rejects(const std::function<void()>& f, const std::string& needle) {
  CAPTURE(needle);
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  } catch (const std::exception& e) {
    FAIL("wrong exception: " << e.what());
  }
}

struct Running {
  Running() { veda::init(veda::Config::builder().threads(2).build()); }
  ~Running() {
    if (veda::is_running()) veda::shutdown();
  }
};
}  // namespace

TEST_CASE("wrapped calls: mismatched lengths are rejected before the output is touched") {
  Running rt;
  auto add = veda::gpu([](float a, float b) noexcept { return a + b; }, {.name = "add"});
  std::vector<float> a(10, 1.0f), b(11, 1.0f), out = sentinel(10), short_out = sentinel(9);
  rejects<veda::InvalidArgument>([&] { (void)add(a, b); }, "add");
  rejects<veda::InvalidArgument>([&] { add.into(out, a, b); }, "11");
  rejects<veda::InvalidArgument>([&] { add.into(std::span<float>(short_out), a, a); }, "output has 9");
  CHECK(untouched(out));
  CHECK(untouched(short_out));
  add.into(short_out, a, a);  // a std::vector output is resized to fit, by contract
  CHECK(short_out.size() == 10);
  CHECK(add(std::vector<float>{}, std::vector<float>{}).empty());  // empty is fine
  std::span<const float> null_span;                                // null data, size 0
  CHECK(add(null_span, null_span).empty());
  CHECK(add(a, a) == std::vector<float>(10, 2.0f));  // still usable
}

TEST_CASE("par_iter, reductions, scans, sorts, transpose: empty is valid, mismatches are errors") {
  Running rt;
  const std::vector<float> none;
  CHECK(veda::sum(none) == 0);
  CHECK(veda::par_iter(none).map([](float v) { return v + 1; }).collect().empty());
  CHECK(veda::par_iter(none).sum() == 0);
  std::vector<float> out0;
  veda::inclusive_scan(none, out0);
  std::vector<float> keys0;
  veda::sort(keys0);

  std::vector<float> in(100, 1.0f), out = sentinel(99);
  rejects<veda::InvalidArgument>([&] { veda::inclusive_scan(in, out); }, "out has 99");
  CHECK(untouched(out));
  std::vector<float> k(5, 1.0f);
  std::vector<std::int32_t> v(4, 7);
  rejects<veda::InvalidArgument>([&] { veda::sort_by_key(k, v); }, "5 keys");
  CHECK(v == std::vector<std::int32_t>(4, 7));
  std::vector<float> t_out = sentinel(6), t_in(6, 1.0f);
  rejects<veda::InvalidArgument>([&] { veda::transpose(t_in, t_out, 2, 4); }, "2x4");
  rejects<veda::InvalidArgument>([&] { veda::transpose(t_in, t_out, kHuge, 4); }, "transpose");
  CHECK(untouched(t_out));
  rejects<veda::InvalidArgument>([&] { (void)veda::sum(in, {.tier = "warp-drive"}); }, "warp-drive");
}

TEST_CASE("matmul and linear: shapes, overflowing sizes, overlaps") {
  Running rt;
  const veda::Array<float> a(3, 4), b(5, 2), v1(7);
  rejects<veda::InvalidArgument>([&] { (void)veda::matmul(a, b); }, "3x4");
  rejects<veda::InvalidArgument>([&] { (void)veda::matmul(v1, b); }, "2-D");
  std::vector<float> A(12, 1.0f), B(8, 1.0f), C = sentinel(5);
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, 3, 4, 2); }, "C has 5");
  CHECK(untouched(C));
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, kHuge, 4, 2); }, "overflows");
  rejects<veda::InvalidArgument>([&] { veda::matmul<float>(A, B, C, 2, kHuge, 2); }, "overflows");
  std::vector<float> AB(16, 1.0f);
  std::span<float> overlap(AB.data() + 2, 4);  // C starts inside A
  rejects<veda::InvalidArgument>(
      [&] { veda::matmul<float>(std::span<const float>(AB.data(), 4), std::span<const float>(AB.data(), 4), overlap, 2, 2, 2); },
      "overlaps");
  const veda::Array<float> x(2, 3), w(4, 3), bias(5);
  rejects<veda::InvalidArgument>([&] { (void)veda::linear(x, w, bias); }, "bias has 5");
  // 0-sized products are valid: an m x 0 times 0 x n is all zeros.
  const veda::Array<float> e1(3, 0), e2(0, 2);
  const auto z = veda::matmul(e1, e2);
  CHECK(z.rows() == 3);
  CHECK(z.cols() == 2);
  for (float f : z.host()) CHECK(f == 0.0f);
}

TEST_CASE("Arrays: overflowing shapes, bad reshapes, out-of-range indices") {
  Running rt;
  rejects<veda::InvalidArgument>([] { veda::Array<double> big(kHuge); }, "overflows");
  rejects<veda::InvalidArgument>([] { veda::Array<float> big(kHuge, 3); }, "overflows");
  veda::Array<float> a(std::vector<float>(6, 2.0f));
  rejects<veda::InvalidArgument>([&] { a.reshape(4, 2); }, "reshape");
  CHECK(a.size() == 6);
  CHECK(a.ndim() == 1);
  rejects<veda::InvalidArgument>([&] { (void)a[6]; }, "index 6");
  a.reshape(2, 3);
  rejects<veda::InvalidArgument>([&] { (void)a.at(2, 0); }, "veda::Array");
  rejects<veda::InvalidArgument>([&] { veda::Array<float>(2, 2, std::vector<float>(5)); }, "[2, 2]");
}

TEST_CASE("NaN and Inf flow through as IEEE arithmetic says") {
  Running rt;
  std::vector<float> x(1000, 1.0f);
  x[17] = kNaN;
  CHECK(std::isnan(veda::sum(x)));
  x[17] = kInf;
  CHECK(veda::sum(x) == kInf);
  x[18] = -kInf;
  CHECK(std::isnan(veda::sum(x)));  // inf + -inf
  auto sq = veda::gpu([](float v) noexcept { return v * v; }, {.name = "sq"});
  const auto y = sq(std::vector<float>{kNaN, kInf, -kInf, 0.0f});
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == kInf);
  CHECK(y[2] == kInf);
  CHECK(y[3] == 0.0f);
  std::vector<float> k = {3.0f, kNaN, -kInf, 1.0f, kInf};
  veda::sort(k);  // NaN last
  CHECK(k[0] == -kInf);
  CHECK(k[3] == kInf);
  CHECK(std::isnan(k[4]));
  std::vector<float> s(3);
  veda::inclusive_scan(std::vector<float>{1.0f, kInf, 1.0f}, s);
  CHECK(s[2] == kInf);
  const veda::Array<float> m(2, 2, {1.0f, kNaN, 0.0f, 1.0f}), id(2, 2, {1.0f, 0.0f, 0.0f, 1.0f});
  const auto p = veda::matmul(m, id);  // NaN * 0 is NaN: the NaN reaches its whole row
  CHECK(std::isnan(p.host()[0]));
  CHECK(std::isnan(p.host()[1]));
  CHECK(p.host()[2] == 0.0f);
  CHECK(p.host()[3] == 1.0f);
}

TEST_CASE("bad Config and environment values are ConfigErrors naming them; nothing starts") {
  using B = veda::Config::Builder;
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[] { veda::Config::builder().threads(0).build(); }, "threads"},
      {[] { veda::Config::builder().threads(1 << 20).build(); }, "threads"},
      {[] { veda::Config::builder().device(-1).build(); }, "device"},
      {[] { veda::Config::builder().memory_pool_limit(1.5).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().memory_pool_limit(-1).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().memory_pool_limit(std::nan("")).build(); }, "memory_pool_limit"},
      {[] { veda::Config::builder().pinned_staging(100).build(); }, "pinned_staging"},
      {[] { veda::Config::builder().faults("boom").build(); }, "faults"},
  };
  (void)sizeof(B);
  for (const auto& [f, field] : cases) rejects<veda::ConfigError>(f, field);
  const std::vector<std::pair<std::string, std::string>> env = {
      {"VEDA_GPU", "maybe"},         {"VEDA_THREADS", "0"},         {"VEDA_THREADS", "two"},
      {"VEDA_DEVICE", "-3"},         {"VEDA_MEMORY_POOL_LIMIT", "0"}, {"VEDA_MEMORY_POOL_LIMIT", "12 parsecs"},
      {"VEDA_PRECISION", "fp8"},     {"VEDA_CALIBRATION", "sometimes"}, {"VEDA_LOG_LEVEL", "loud"},
      {"VEDA_DETERMINISTIC", "-1"},  {"VEDA_TELEMETRY", "2"},       {"VEDA_PINNED_STAGING", "1k"},
      {"VEDA_FAULT", "copy:0"},
  };
  for (const auto& [var, value] : env) {
    auto get = [&](std::string_view n) -> std::optional<std::string> {
      if (n == var) return value;
      return std::nullopt;
    };
    rejects<veda::ConfigError>([&] { veda::apply_environment(veda::Config::builder().build(), get); }, var);
  }
  CHECK_FALSE(veda::is_running());
}

TEST_CASE("every entry point after shutdown() throws veda::Error and writes nothing") {
  veda::init();
  auto f = veda::gpu([](float v) noexcept { return v + 1; }, {.name = "after"});
  veda::Array<float> arr(std::vector<float>(4, 1.0f));
  veda::shutdown();
  std::vector<float> x(8, 1.0f), out = sentinel(8), keys = sentinel(8);
  const std::vector<std::function<void()>> calls = {
      [&] { f.into(out, x); },
      [&] { (void)veda::sum(x); },
      [&] { (void)veda::par_iter(x).sum(); },
      [&] { veda::inclusive_scan(x, out); },
      [&] { veda::sort(keys); },
      [&] { veda::transpose(x, out, 2, 4); },
      [&] { (void)veda::matmul(veda::Array<float>(2, 2), veda::Array<float>(2, 2)); },
      [&] { arr.to_device(); },
      [&] { (void)veda::get_runtime(); },
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CAPTURE(i);
    rejects<veda::Error>(calls[i], "shut down");
  }
  CHECK(untouched(out));
  CHECK(untouched(keys));
  CHECK(arr[3] == 1.0f);  // host data survives shutdown
  veda::init();  // and a new runtime works
  CHECK(veda::sum(x) == 8.0f);
  veda::shutdown();
}
