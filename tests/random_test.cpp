// Contract: veda::random. Philox 4x32-10 gives the Random123 known answers;
// every tier (serial, tbb-auto, and cuda where a GPU is usable: the gpu-
// labelled build of this file) gives the same bits for Arrays of any shape
// and for ranges, equal element by element to uniform_at / normal_at, for
// sizes 0, 1, 3, a prime and 10^7 + 3, float and double; uniform_at and
// normal_at called inside parallel_for and par_iter functions (on the device
// in that build) give those bits too; the distributions have their range and
// moments, and the normals agree with std::log / std::cos / std::sin to
// rounding; bad parameters are InvalidArgument before any work.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/parallel_for.hpp"
#include "veda/random.hpp"
#include "veda/veda.hpp"

namespace {
namespace rng = veda::detail::rng;

std::vector<std::string> tiers() { return veda_test::op_tiers({"serial", "tbb-auto"}, {"cuda"}); }

veda::random::Options forced(const std::string& tier) {
  veda::random::Options o;
  o.tier = tier;
  o.strict = !tier.empty();
  return o;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
std::vector<T> reference(bool normal, std::uint64_t seed, std::size_t n, T p0, T p1) {
  std::vector<T> r(n);
  for (std::size_t i = 0; i < n; ++i)
    r[i] = normal ? veda::random::normal_at<T>(seed, i, p0, p1) : veda::random::uniform_at<T>(seed, i, p0, p1);
  return r;
}

template <class T>
void every_tier_same_bits() {
  veda_test::OpRuntime rt;
  const std::uint64_t seed = 0x0123456789abcdefull;
  for (bool normal : {false, true}) {
    const T p0 = normal ? T(1.5) : T(-2), p1 = normal ? T(0.25) : T(3);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{10'007}}) {
      const std::vector<T> want = reference<T>(normal, seed, n, p0, p1);
      for (const std::string& tier : tiers()) {
        CAPTURE(normal);
        CAPTURE(n);
        CAPTURE(tier);
        const veda_test::DeviceWork w;
        const auto a = normal ? veda::random::normal<T>(n, seed, p0, p1, forced(tier))
                              : veda::random::uniform<T>(n, seed, p0, p1, forced(tier));
        if (n) veda_test::check_ran(tier, w);
        CHECK(same_bits(a.to_vector(), want));
        std::vector<T> v(n, T(-7));
        if (normal) veda::random::normal_into(v, seed, p0, p1, forced(tier));
        else veda::random::uniform_into(v, seed, p0, p1, forced(tier));
        CHECK(same_bits(v, want));
      }
    }
  }
}
}  // namespace

TEST_CASE("Philox 4x32-10 gives the Random123 known-answer vectors") {
  struct Kat {
    rng::Block ctr;
    std::uint32_t k0, k1;
    rng::Block want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u, {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const rng::Block got = rng::philox4x32_10(k.ctr, k.k0, k.k1);
    CHECK(std::memcmp(got.w, k.want.w, sizeof got.w) == 0);
  }
  // The seed is the key (low word first), the block index the counter's low 64 bits.
  const rng::Block b = rng::block(0x123456789abcdef0ull, std::uint64_t{1} << 32);
  const std::uint32_t want[] = {0xab4806df, 0x6e8135ce, 0xbbca5391, 0xf37870f0};
  CHECK(std::memcmp(b.w, want, sizeof want) == 0);
  // uniform float element i is word i % 4 of block i / 4, top 24 bits (block 5 of seed 42: 5099d809 4b20b5d2 ...).
  CHECK(veda::random::uniform_at<float>(42, 21) == static_cast<float>(0x4b20b5d2u >> 8) * 0x1p-24f);
}

TEST_CASE("every tier gives the per-element functions' bits: float") { every_tier_same_bits<float>(); }
TEST_CASE("every tier gives the per-element functions' bits: double") { every_tier_same_bits<double>(); }

TEST_CASE("10^7 + 3 elements: the tiers split differently and agree bitwise") {
  veda_test::OpRuntime rt;
  const std::size_t n = 10'000'003;
  const auto serial = veda::random::normal<float>(n, 99, 0.0f, 1.0f, forced("serial")).to_vector();
  for (const std::uint64_t i : {std::uint64_t{0}, std::uint64_t{4'999'999}, std::uint64_t{n - 1}})
    CHECK(serial[i] == veda::random::normal_at<float>(99, i));
  for (const std::string& tier : tiers()) {
    CAPTURE(tier);
    CHECK(same_bits(veda::random::normal<float>(n, 99, 0.0f, 1.0f, forced(tier)).to_vector(), serial));
  }
  const auto u = veda::random::uniform<double>(n, 5, 0.0, 1.0, forced("serial")).to_vector();
  for (const std::string& tier : tiers())
    CHECK(same_bits(veda::random::uniform<double>(n, 5, 0.0, 1.0, forced(tier)).to_vector(), u));
}

TEST_CASE("shapes: the stream fills the Array in row-major order whatever its shape") {
  veda_test::OpRuntime rt;
  const auto x = veda::random::uniform<float>({3, 4, 5}, 11);
  CHECK((x.ndim() == 3 && x.extent(2) == 5));
  CHECK(same_bits(x.to_vector(), veda::random::uniform<float>(60, 11).to_vector()));
  veda::Array<double> m(7, 13);
  veda::random::normal_into(m, 3);
  CHECK((m.rows() == 7 && same_bits(m.to_vector(), reference<double>(true, 3, 91, 0.0, 1.0))));
  CHECK(veda::random::uniform<float>(veda::Shape{4, 0, 2}, 1).empty());
}

TEST_CASE("per-element calls inside index-space and pipeline functions give the same bits on every tier") {
  veda::init(veda::Config::builder().calibration(veda::CalibrationMode::Off).build());
  const std::size_t n = 100'003;
  const auto want = veda::random::normal<float>(n, 17).to_vector();
  std::vector<std::string> pf_tiers{"serial", "tbb-auto"};
#if VEDA_GPU_SITE
  if (veda::get_runtime().gpu_usable()) pf_tiers.push_back("cuda");
#endif
  for (const std::string& tier : pf_tiers) {
    CAPTURE(tier);
    veda::Array<float> out(n);
    veda::ParallelOptions o;
    o.tier = tier;
    o.strict = true;
    const veda_test::DeviceWork w;
    veda::parallel_for(
        n, veda::write(out),
        [] VEDA_FN(std::size_t i, veda::View<float> y) { y[i] = veda::random::normal_at<float>(17, i); }, o);
    veda_test::check_ran(tier, w);
    CHECK(same_bits(out.to_vector(), want));
  }
  const auto u = veda::random::uniform<double>(n, 23, -1.0, 1.0).to_vector();
  const std::vector<double> got =
      veda::par_iter(veda::range<std::uint64_t>(0, n))
          .gpu_map(VEDA_LAMBDA((std::uint64_t i) noexcept, { return veda::random::uniform_at<double>(23, i, -1.0, 1.0); }))
          .collect();
  CHECK(same_bits(got, u));
  veda::shutdown();
}

TEST_CASE("distributions: range, moments and agreement with the C library's log, cos and sin") {
  veda_test::OpRuntime rt;
  const std::size_t n = 1'000'000;
  const auto u = veda::random::uniform<float>(n, 1).to_vector();
  double s = 0, s2 = 0;
  float lo = 1, hi = 0;
  for (float x : u) {
    s += x, s2 += double(x) * x;
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  CHECK((lo >= 0.0f && hi < 1.0f));
  CHECK(s / n == doctest::Approx(0.5).epsilon(0.004));
  CHECK(s2 / n - (s / n) * (s / n) == doctest::Approx(1.0 / 12).epsilon(0.005));
  for (float x : veda::random::uniform<float>(10'000, 2, -3.0f, 5.0f).to_vector()) CHECK((x >= -3.0f && x <= 5.0f));

  const auto z = veda::random::normal<double>(n, 2).to_vector();
  double m = 0, v = 0, within = 0, top = 0;
  for (double x : z) {
    m += x, v += x * x;
    within += std::abs(x) < 1;
    top = std::max(top, std::abs(x));
  }
  m /= n, v = v / n - m * m;
  CHECK(std::abs(m) < 0.005);
  CHECK(v == doctest::Approx(1.0).epsilon(0.01));
  CHECK(within / n == doctest::Approx(0.682689).epsilon(0.005));
  CHECK(top < 8.6);  // sqrt(-2 ln 2^-53): the largest Box-Muller can give

  // Box-Muller by the C library on the same uniforms.
  double worst_f = 0, worst_d = 0;
  for (std::uint64_t i = 0; i < 200'000; ++i) {
    const rng::Block bf = rng::block(8, i / 4), bd = rng::block(8, i / 2);
    const int pf = static_cast<int>(i % 4) / 2, pd = 0;
    const double u1f = (rng::bits_of<float>(bf, 2 * pf) + 1) * 0x1p-24, u2f = rng::bits_of<float>(bf, 2 * pf + 1) * 0x1p-24;
    const double rf = std::sqrt(-2 * std::log(u1f)), af = 2 * std::numbers::pi * u2f;
    const double wf = i % 2 ? rf * std::sin(af) : rf * std::cos(af);
    worst_f = std::max(worst_f, std::abs(veda::random::normal_at<float>(8, i) - wf) / std::max(1.0, std::abs(wf)));
    const double u1d = (static_cast<double>(rng::bits_of<double>(bd, 2 * pd)) + 1) * 0x1p-53;
    const double u2d = static_cast<double>(rng::bits_of<double>(bd, 2 * pd + 1)) * 0x1p-53;
    const double rd = std::sqrt(-2 * std::log(u1d)), ad = 2 * std::numbers::pi * u2d;
    const double wd = i % 2 ? rd * std::sin(ad) : rd * std::cos(ad);
    worst_d = std::max(worst_d, std::abs(veda::random::normal_at<double>(8, i) - wd) / std::max(1.0, std::abs(wd)));
  }
  CHECK(worst_f < 4e-7);  // a few float ulps
  CHECK(worst_d < 1e-14);
}

TEST_CASE("seeds and far indices: distinct streams, the counter's high word used") {
  CHECK(veda::random::uniform_at<double>(1, 0) != veda::random::uniform_at<double>(2, 0));
  CHECK(veda::random::uniform_at<float>(~std::uint64_t{0}, 0) != veda::random::uniform_at<float>(~std::uint64_t{0} >> 1, 0));
  const std::uint64_t far = std::uint64_t{1} << 40;  // block 2^38: counter word 1 non-zero
  CHECK(veda::random::uniform_at<float>(3, far) != veda::random::uniform_at<float>(3, 0));
  const float z = veda::random::normal_at<float>(3, far);
  CHECK(std::isfinite(z));
}

TEST_CASE("bad parameters are InvalidArgument before any work; the runtime stays usable") {
  veda_test::OpRuntime rt;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(5, 42.0f);
  CHECK_THROWS_WITH_AS(veda::random::uniform_into(v, 1, 2.0f, 1.0f), doctest::Contains("low must not exceed high"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::random::uniform<float>(5, 1, 0.0f, inf), doctest::Contains("finite"), veda::InvalidArgument);
  CHECK_THROWS_AS(veda::random::uniform<float>(5, 1, nan, 1.0f), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::random::uniform<float>(5, 1, -std::numeric_limits<float>::max(),
                                                    std::numeric_limits<float>::max()),
                       doctest::Contains("overflows"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::random::normal<double>(5, 1, 0.0, -1.0), doctest::Contains("stddev must not be negative"),
                       veda::InvalidArgument);
  CHECK_THROWS_AS(veda::random::normal_into(v, 1, nan, 1.0f), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::random::uniform<float>(5, 1, 0.0f, 1.0f, forced("gpu-cublas")),
                       doctest::Contains("gpu-cublas"), veda::InvalidArgument);
  CHECK(v == std::vector<float>(5, 42.0f));  // untouched
  CHECK_THROWS_AS(veda::random::uniform<double>(veda::Shape{std::size_t{1} << 62, 4}, 1), veda::InvalidArgument);
  veda::random::uniform_into(v, 1, 1.0f, 1.0f);  // low == high: a constant
  CHECK(v == std::vector<float>(5, 1.0f));
  // An Array's element type alone sets T: integer bounds convert.
  veda::Array<float> a(veda::Shape{3});
  veda::random::uniform_into(a, 1, 2, 2);
  CHECK(a.host()[2] == 2.0f);
  veda::random::normal_into(a, 1, 3, 0);
  CHECK(a.host()[0] == 3.0f);
}
