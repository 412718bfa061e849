// Contract: parallel_for / parallel_reduce over index spaces. Every tier
// (serial, tbb-static, tbb-auto, and cuda where the GPU is usable: the gpu-
// labelled build of this file) gives the serial reference's results for 1-D,
// 2-D and 3-D extents and boxes of edge sizes (0, 1, prime, non-square,
// touching the edges, 10^7); a Jacobi stencil and a CSR SpMV; reductions
// with built-in and user operators, an empty extent giving init, and
// deterministic mode identical across thread counts. Bad input (lo > hi, a
// negative count, the same Array declared twice) is InvalidArgument before
// any work; an exception from f reaches the caller and veda stays usable.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/device_work.hpp"
#include "veda/parallel_for.hpp"
#include "veda/veda.hpp"

namespace {
std::vector<std::string> tiers() {
  std::vector<std::string> t{"serial", "tbb-static", "tbb-auto"};
#if VEDA_GPU_SITE
  if (veda::get_runtime().gpu().usable) t.push_back("cuda");
#endif
  return t;
}

veda::ParallelOptions forced(const std::string& tier) {
  veda::ParallelOptions o;
  o.tier = tier;
  o.strict = true;
  return o;
}

// The tier the last call ran on is the one forced (the GPU one on the
// device, where it launched work since w began).
void check_ran_on(const std::string& tier, const veda_test::DeviceWork& w) {
  veda_test::check_ran(tier, w);
  CHECK(veda::last_decision().device == (tier == "cuda" ? veda::Device::Gpu : veda::Device::Cpu));
}

veda::Array<double> ramp(std::size_t rows, std::size_t cols) {
  veda::Array<double> a(rows, cols);
  auto h = a.host();
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = std::sin(0.001 * static_cast<double>(i)) + 0.5;
  return a;
}
}  // namespace

TEST_CASE("1-D extents: every index once, on every tier, at edge sizes") {
  veda::init();
  for (const std::string& tier : tiers()) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{101}, std::size_t{10'000'019}}) {
      CAPTURE(tier);
      CAPTURE(n);
      veda::Array<float> x(n), y(n);
      auto xh = x.host();
      for (std::size_t i = 0; i < n; ++i) xh[i] = static_cast<float>(i % 1000);
      const veda_test::DeviceWork w;
      veda::parallel_for(
          n, veda::read(x), veda::write(y),
          [] VEDA_FN(std::size_t i, veda::View<const float> in, veda::View<float> out) { out[i] = 2.0f * in[i] + static_cast<float>(i % 7); },
          forced(tier));
      if (n > 0) check_ran_on(tier, w);
      bool ok = true;
      const auto yh = y.host();
      for (std::size_t i = 0; i < n; ++i) ok &= yh[i] == 2.0f * static_cast<float>(i % 1000) + static_cast<float>(i % 7);
      CHECK(ok);
    }
  }
  veda::shutdown();
}

TEST_CASE("2-D and 3-D extents and boxes touching the edges give the serial loop's results") {
  veda::init();
  struct Shape {
    std::size_t r, c;
  };
  for (const std::string& tier : tiers()) {
    for (Shape s : {Shape{1, 1}, Shape{7, 13}, Shape{1000, 3}, Shape{3, 1000}, Shape{257, 513}}) {
      CAPTURE(tier);
      CAPTURE(s.r);
      CAPTURE(s.c);
      veda::Array<double> out(s.r, s.c);
      const veda_test::DeviceWork w;
      veda::parallel_for(
          veda::Extent<2>{s.r, s.c}, veda::write(out),
          [] VEDA_FN(std::size_t i, std::size_t j, veda::View<double> o) { o(i, j) = static_cast<double>(i * 10000 + j); },
          forced(tier));
      check_ran_on(tier, w);
      bool ok = true;
      for (std::size_t i = 0; i < s.r; ++i)
        for (std::size_t j = 0; j < s.c; ++j) ok &= out.at(i, j) == static_cast<double>(i * 10000 + j);
      CHECK(ok);
      // A box from the first row to the last column: only it changes.
      const veda::Box<2> box{{0, s.c / 2}, {s.r, s.c}};
      veda::parallel_for(box, veda::read_write(out),
                         [] VEDA_FN(std::size_t i, std::size_t j, veda::View<double> o) { o(i, j) = -o(i, j); }, forced(tier));
      for (std::size_t i = 0; i < s.r; ++i)
        for (std::size_t j = 0; j < s.c; ++j)
          ok &= out.at(i, j) == (j >= s.c / 2 ? -1.0 : 1.0) * static_cast<double>(i * 10000 + j);
      CHECK(ok);
    }
    // A 3-D Array: pages x rows x columns, a box touching the last row.
    const std::size_t P = 5, R = 11, C = 67;
    veda::Array<int> vol(P, R, C);
    const veda_test::DeviceWork vol_work;
    veda::parallel_for(
        veda::Box<3>{{1, 0, 2}, {P, R, C - 1}}, veda::write(vol),
        [] VEDA_FN(std::size_t p, std::size_t r, std::size_t c, veda::View<int> v) {
          v(p, r, c) = static_cast<int>(p * 1000000 + r * 1000 + c + v.extent(2) - 67);
        },
        forced(tier));
    check_ran_on(tier, vol_work);
    bool ok = true;
    for (std::size_t p = 0; p < P; ++p)
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) {
          const bool in = p >= 1 && c >= 2 && c < C - 1;
          ok &= vol.at(p, r, c) == (in ? static_cast<int>(p * 1000000 + r * 1000 + c) : 0);
        }
    CHECK(ok);
    // A 7-point stencil over the interior of a 3-D Array.
    veda::Array<double> u(P, R, C), w(P, R, C);
    for (std::size_t k = 0; k < u.size(); ++k) u.host()[k] = std::sin(0.01 * static_cast<double>(k));
    veda::parallel_for(
        veda::Box<3>{{1, 1, 1}, {P - 1, R - 1, C - 1}}, veda::read(u), veda::write(w),
        [] VEDA_FN(std::size_t p, std::size_t r, std::size_t c, veda::View<const double> a, veda::View<double> b) {
          b(p, r, c) = (a(p - 1, r, c) + a(p + 1, r, c) + a(p, r - 1, c) + a(p, r + 1, c) + a(p, r, c - 1) +
                        a(p, r, c + 1)) / 6.0;
        },
        forced(tier));
    for (std::size_t p = 1; p + 1 < P; ++p)
      for (std::size_t r = 1; r + 1 < R; ++r)
        for (std::size_t c = 1; c + 1 < C; ++c)
          ok &= w.at(p, r, c) == (u.at(p - 1, r, c) + u.at(p + 1, r, c) + u.at(p, r - 1, c) + u.at(p, r + 1, c) +
                                  u.at(p, r, c - 1) + u.at(p, r, c + 1)) / 6.0;
    CHECK(ok);
  }
  veda::shutdown();
}

TEST_CASE("a 5-point Jacobi sweep over the interior and a CSR SpMV match hand-written loops") {
  veda::init();
  const std::size_t n = 131;  // prime
  for (const std::string& tier : tiers()) {
    CAPTURE(tier);
    veda::Array<double> u = ramp(n, n), v = u.clone();
    v.reshape(n, n);
    std::vector<double> ref = u.to_vector();
    for (int it = 0; it < 4; ++it) {
      veda::parallel_for(
          veda::Box<2>{{1, 1}, {n - 1, n - 1}}, veda::read(u), veda::write(v),
          [] VEDA_FN(std::size_t i, std::size_t j, veda::View<const double> in, veda::View<double> out) {
            out(i, j) = 0.25 * (in(i - 1, j) + in(i + 1, j) + in(i, j - 1) + in(i, j + 1));
          },
          forced(tier));
      std::swap(u, v);
      std::vector<double> next = ref;
      for (std::size_t i = 1; i + 1 < n; ++i)
        for (std::size_t j = 1; j + 1 < n; ++j)
          next[i * n + j] = 0.25 * (ref[(i - 1) * n + j] + ref[(i + 1) * n + j] + ref[i * n + j - 1] + ref[i * n + j + 1]);
      ref = next;
    }
    CHECK(u.to_vector() == ref);  // same operations in the same order: bitwise

    // A tridiagonal CSR matrix times x.
    const std::size_t m = 1009;
    std::vector<int> rp{0}, ci;
    std::vector<double> va;
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = i == 0 ? 0 : i - 1; j <= std::min(m - 1, i + 1); ++j) {
        ci.push_back(static_cast<int>(j));
        va.push_back(i == j ? 2.0 : -1.0);
      }
      rp.push_back(static_cast<int>(ci.size()));
    }
    veda::Array<int> rows(rp), cols(ci);
    veda::Array<double> vals(va), x = ramp(m, 1), y(m);
    x.flatten();
    veda::parallel_for(
        m, veda::read(rows), veda::read(cols), veda::read(vals), veda::read(x), veda::write(y),
        [] VEDA_FN(std::size_t i, veda::View<const int> rp, veda::View<const int> ci, veda::View<const double> va,
                   veda::View<const double> xv, veda::View<double> yv) {
          double s = 0;
          for (int k = rp[i]; k < rp[i + 1]; ++k) s += va[static_cast<std::size_t>(k)] * xv[static_cast<std::size_t>(ci[static_cast<std::size_t>(k)])];
          yv[i] = s;
        },
        forced(tier));
    bool ok = true;
    const auto xs = x.chost(), ys = y.chost();
    for (std::size_t i = 0; i < m; ++i) {
      double s = 0;
      for (int k = rp[i]; k < rp[i + 1]; ++k) s += va[static_cast<std::size_t>(k)] * xs[static_cast<std::size_t>(ci[static_cast<std::size_t>(k)])];
      ok &= ys[i] == s;
    }
    CHECK(ok);
  }
  veda::shutdown();
}

TEST_CASE("parallel_reduce: built-in and user operators, init combined once, empty extents") {
  veda::init();
  for (const std::string& tier : tiers()) {
    CAPTURE(tier);
    for (std::size_t n : {std::size_t{1}, std::size_t{97}, std::size_t{1'000'003}}) {
      CAPTURE(n);
      veda::Array<long long> x(n);
      auto xh = x.host();
      for (std::size_t i = 0; i < n; ++i) xh[i] = static_cast<long long>(i % 1013) - 500;
      long long sum = 0, lo = xh[0], hi = xh[0];
      for (long long v : xh) sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
      auto get = [] VEDA_FN(std::size_t i, veda::View<const long long> v) { return v[i]; };
      const veda_test::DeviceWork w;
      CHECK(veda::parallel_reduce(n, veda::read(x), get, 7LL, veda::Plus{}, forced(tier)) == sum + 7);
      check_ran_on(tier, w);
      CHECK(veda::parallel_reduce(n, veda::read(x), get, 1LL << 40, veda::Min{}, forced(tier)) == lo);
      CHECK(veda::parallel_reduce(n, veda::read(x), get, -(1LL << 40), veda::Max{}, forced(tier)) == hi);
      // A user operator over a 2-D extent: a sum of squares.
      const auto sq = veda::parallel_reduce(
          veda::Extent<2>{n, 1}, veda::read(x), [] VEDA_FN(std::size_t i, std::size_t, veda::View<const long long> v) { return v[i] * v[i]; },
          0LL, [] VEDA_FN(long long a, long long b) { return a + b; }, forced(tier));
      long long sq_ref = 0;
      for (long long v : x.chost()) sq_ref += v * v;
      CHECK(sq == sq_ref);
    }
    veda::Array<float> none;
    CHECK(veda::parallel_reduce(std::size_t{0}, veda::read(none), [] VEDA_FN(std::size_t i, veda::View<const float> v) { return v[i]; },
                                3.5f, veda::Plus{}, forced(tier)) == 3.5f);
  }
  veda::shutdown();
}

TEST_CASE("deterministic mode: a float reduction is bitwise identical across thread counts") {
  const std::size_t n = 3'000'017;
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = std::sin(static_cast<float>(i)) * 1e3f;
  float first = 0;
  for (int threads : {1, 2, 4}) {
    veda::init(veda::Config::builder().threads(threads).deterministic(1).build());
    veda::Array<float> x(data);
    const float s = veda::parallel_reduce(n, veda::read(x), [] VEDA_FN(std::size_t i, veda::View<const float> v) { return v[i]; }, 0.0f,
                                          veda::Plus{});
    if (threads == 1) first = s;
    CHECK(std::memcmp(&s, &first, sizeof s) == 0);
    veda::shutdown();
  }
}

TEST_CASE("bad input is InvalidArgument before any work; f's exceptions reach the caller") {
  veda::init();
  veda::Array<float> a(10), b(10);
  auto f = [] VEDA_FN(std::size_t i, veda::View<const float> x, veda::View<float> y) { y[i] = x[i]; };
  CHECK_THROWS_WITH_AS(veda::parallel_for(veda::Box<1>{{5}, {3}}, veda::read(a), veda::write(b), f),
                       doctest::Contains("lo 5 > hi 3"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::parallel_for(10, veda::read(a), veda::write(a), f), doctest::Contains("same Array"),
                       veda::InvalidArgument);
  CHECK_THROWS_AS(veda::parallel_for(-1, veda::read(a), veda::write(b), f), veda::InvalidArgument);
#ifndef NDEBUG  // views are bounds-checked in debug builds
  veda::Array<float> vol(2, 3, 4);
  CHECK_THROWS_WITH_AS(veda::parallel_for(
                           1, veda::write(vol), [](std::size_t, auto v) { v(1, 3, 0) = 1; }, forced("serial")),
                       doctest::Contains("index (1, 3, 0) is outside the array's 2 x 3 x 4"), veda::InvalidArgument);
#endif
  for (const std::string& tier : {"serial", "tbb-auto"}) {
    CHECK_THROWS_WITH_AS(veda::parallel_for(
                             std::size_t{100000}, veda::write(b),
                             [](std::size_t i, auto) {
                               if (i == 77777) throw std::runtime_error("bad index 77777");
                             },
                             forced(tier)),
                         "bad index 77777", std::runtime_error);
  }
  veda::parallel_for(10, veda::read(a), veda::write(b), f);  // still usable
  CHECK(veda::last_decision().name == "veda::parallel_for");
  veda::shutdown();
}
