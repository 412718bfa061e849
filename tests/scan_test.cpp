// Contract: veda::inclusive_scan / exclusive_scan agree with std::
// inclusive_scan / exclusive_scan for every length (0, 1, primes, fewer
// elements than threads, 10^7+), element type and tier: exactly for integers
// and for floats whose partial sums are exact, within rounding otherwise; in
// place works; bad lengths and partial overlaps throw before any work;
// deterministic mode scans floats serially.
// Built twice in the CUDA configuration: scan_test and gpu_scan_test (gpu).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/scan.hpp"

namespace {
const std::size_t kLengths[] = {0, 1, 2, 3, 13, 4093, 65537, 1000003, 10000019};

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

// Values in {-1, 0, 1, 2} (unsigned: {0, 1, 2, 3}): every partial sum of up
// to 10^7 of them is exact in float, so every tier must match exactly.
template <class T>
std::vector<T> small_values(std::size_t n) {
  std::vector<T> v(n);
  std::uint32_t x = 12345;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    const int r = static_cast<int>(x >> 30);
    e = std::is_signed_v<T> ? static_cast<T>(r - 1) : static_cast<T>(r);
  }
  return v;
}

template <class T>
void exact_for_every_length() {
  for (std::size_t n : kLengths) {
    CAPTURE(n);
    const auto in = small_values<T>(n);
    std::vector<T> want_inc(n), want_exc(n);
    std::inclusive_scan(in.begin(), in.end(), want_inc.begin());
    std::exclusive_scan(in.begin(), in.end(), want_exc.begin(), T(7));
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      veda::ScanOptions o;
      o.tier = tier;
      std::vector<T> out(n, T(99));
      const veda_test::DeviceWork inc;
      veda::inclusive_scan(in, out, o);
      CHECK(out == want_inc);
      veda_test::check_ran(tier, inc, n > 0);
      const veda_test::DeviceWork exc;
      veda::exclusive_scan(in, out, T(7), o);
      CHECK(out == want_exc);
      veda_test::check_ran(tier, exc, n > 0);
    }
  }
}
}  // namespace

TEST_CASE_TEMPLATE("scans are exact where the sums are, for every length and tier", T, std::int32_t, std::int64_t,
                   std::uint32_t, std::uint64_t, float, double) {
  veda_test::OpRuntime rt;
  exact_for_every_length<T>();
}

TEST_CASE("unsigned scans wrap as std::inclusive_scan does") {
  veda_test::OpRuntime rt;
  std::vector<std::uint32_t> in(100003, 0xF0000000u);
  std::vector<std::uint32_t> want(in.size()), out(in.size());
  std::inclusive_scan(in.begin(), in.end(), want.begin());
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::ScanOptions o;
    o.tier = tier;
    veda::inclusive_scan(in, out, o);
    CHECK(out == want);
  }
}

TEST_CASE("float scans of arbitrary values agree within rounding") {
  veda_test::OpRuntime rt;
  const std::size_t n = 1000003;
  std::vector<float> in(n);
  std::uint32_t x = 7;
  for (auto& e : in) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<float>(x >> 8) / static_cast<float>(1 << 24);  // [0, 1)
  }
  std::vector<double> exact(n);
  std::inclusive_scan(in.begin(), in.end(), exact.begin(), std::plus<double>(), 0.0);
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::ScanOptions o;
    o.tier = tier;
    std::vector<float> out(n);
    veda::inclusive_scan(in, out, o);
    // Any grouping of i positive additions errs by at most i * eps relative.
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; i += 97)
      bad += !(std::abs(out[i] - exact[i]) <= 1.2e-7 * static_cast<double>(i + 1) * exact[i] + 1e-6);
    CHECK(bad == 0);
  }
}

TEST_CASE("in place, and the Array overloads") {
  veda_test::OpRuntime rt;
  for (const auto& tier : tiers()) {
    CAPTURE(tier);
    veda::ScanOptions o;
    o.tier = tier;
    std::vector<std::int64_t> v = {3, 1, 4, 1, 5, 9, 2, 6};
    veda::inclusive_scan(v, v, o);
    CHECK(v == std::vector<std::int64_t>{3, 4, 8, 9, 14, 23, 25, 31});
    veda::exclusive_scan(v, v, std::int64_t{-1}, o);
    CHECK(v == std::vector<std::int64_t>{-1, 2, 6, 14, 23, 37, 60, 85});

    const veda::Array<std::int32_t> counts = {2, 0, 3, 1};
    const auto offsets = veda::exclusive_scan(counts, 0, o);
    CHECK(offsets.to_vector() == std::vector<std::int32_t>{0, 2, 2, 5});
    const auto totals = veda::inclusive_scan(counts, o);
    CHECK(totals.to_vector() == std::vector<std::int32_t>{2, 2, 5, 6});
    CHECK(veda::inclusive_scan(veda::Array<double>(), o).size() == 0);
  }
}

TEST_CASE("bad lengths and overlaps throw before any work") {
  veda_test::OpRuntime rt;
  std::vector<float> in(10, 1.0f), out(9, -1.0f);
  CHECK_THROWS_WITH_AS(veda::inclusive_scan(in, out), doctest::Contains("out has 9 elements, in has 10"),
                       veda::InvalidArgument);
  CHECK(out == std::vector<float>(9, -1.0f));
  std::vector<float> buf(20, 1.0f);
  std::span<float> a(buf.data(), 10), b(buf.data() + 5, 10);
  CHECK_THROWS_WITH_AS(veda::exclusive_scan(a, b), doctest::Contains("overlaps"), veda::InvalidArgument);
  veda::ScanOptions o;
  o.tier = "tbb-static";
  CHECK_THROWS_WITH_AS(veda::inclusive_scan(in, in, o), doctest::Contains("no tier"), veda::InvalidArgument);
  veda::inclusive_scan(in, in);  // still usable
  CHECK(in.back() == 10.0f);
}

TEST_CASE("deterministic mode scans floats serially, integers on any tier") {
  veda_test::OpRuntime rt(
      veda::Config::builder().calibration(veda::CalibrationMode::Off).deterministic(42).build());
  std::vector<float> in(2000003, 0.1f), out(in.size());
  veda::inclusive_scan(in, out);
  auto d = veda::last_decision();
  CHECK(d.tier == "serial");
  CHECK(d.candidates.size() == 1);
  std::vector<std::int32_t> ints(2000003, 1), iout(ints.size());
  veda::inclusive_scan(ints, iout);
  d = veda::last_decision();
  CHECK(d.name == "inclusive_scan");
  CHECK(d.candidates.size() >= 2);
}
