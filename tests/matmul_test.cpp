// Contract: veda::matmul and veda::linear agree with the cpu-reference tier
// (double accumulation) for every shape class (empty, 1x1, k = 0, primes,
// tall-skinny, 10^7 outputs), both element types, every transposition and
// every tier this build and machine can run; bad shapes throw
// InvalidArgument naming the shapes before any work; the decision names the
// op and its candidates.
// Built twice in the CUDA configuration: matmul_test (whatever device is
// there) and gpu_matmul_test (labelled gpu: every GPU tier forced).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/matmul.hpp"

namespace {
using Runtime = veda_test::OpRuntime;

template <class T>
veda::Array<T> matrix(std::size_t r, std::size_t c, unsigned seed) {
  veda::Array<T> a(r, c);
  auto h = a.host();
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : h) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>(x >> 22) - 512) / T(256);  // in [-2, 2), exact in float
  }
  return a;
}

// Tiers to compare against cpu-reference.
std::vector<std::string> tiers(bool linear) {
  return linear ? veda_test::op_tiers({"cpu-blas", "cpu-tiled"}, {"gpu-unfused", "gpu-cublaslt-fused"})
                : veda_test::op_tiers({"cpu-blas", "cpu-tiled"},
                                      {"gpu-tiled", "gpu-cublas", "gpu-cublas-tf32", "gpu-cublas-bf16", "gpu-naive",
                                       "gpu-vectorized", "gpu-wmma"});
}

// Error bound for a k-term dot product of values below 2 in magnitude:
// k * 4 * eps(T) relative to the largest possible |sum|, looser for TF32
// (10-bit mantissa) and BF16 (8-bit mantissa) inputs on tensor cores.
// A forced tensor-core tier rounds its inputs whatever the precision policy;
// on double operands gpu-cublas-bf16 is plain cuBLAS, while gpu-wmma
// rounds them to BF16 too.
template <class T>
double tolerance(std::size_t k, const std::string& tier) {
  const double eps = tier == "gpu-cublas-bf16" || tier == "gpu-wmma" ? std::ldexp(1.0, -7)
                     : tier.find("tf32") != std::string::npos || tier == "gpu-cublaslt-fused"
                         ? std::ldexp(1.0, -10)
                         : std::numeric_limits<T>::epsilon();
  return 4.0 * eps * static_cast<double>(std::max<std::size_t>(k, 1)) * 4.0 + 1e-12;
}

template <class T>
void check_close(const veda::Array<T>& got, const veda::Array<T>& want, double tol) {
  REQUIRE(got.size() == want.size());
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  const auto g = got.host();
  const auto w = want.host();
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double e = std::abs(static_cast<double>(g[i]) - static_cast<double>(w[i]));
    worst = std::max(worst, e);
    bad += !(e <= tol);  // NaN counts as bad
  }
  CAPTURE(worst);
  CAPTURE(tol);
  CHECK(bad == 0);
}

struct Shape {
  std::size_t m, k, n;
};
const Shape kShapes[] = {{0, 0, 0}, {0, 5, 3}, {4, 0, 3}, {1, 1, 1}, {1, 7, 1}, {2, 3, 2},
                         {13, 1, 17}, {7, 13, 11}, {97, 89, 101}, {1009, 3, 5}, {3, 1021, 2}, {64, 64, 64},
                         {129, 257, 65},
                         // a vector on one side (BLAS tiers take gemv): rows, columns, both
                         {1, 97, 13}, {101, 37, 1}, {1, 1021, 1}, {1000, 16, 1}, {1, 1000, 16}};

template <class T>
void matmul_agrees(bool ta, bool tb) {
  for (const auto& sh : kShapes) {
    CAPTURE(sh.m);
    CAPTURE(sh.k);
    CAPTURE(sh.n);
    const auto a = ta ? matrix<T>(sh.k, sh.m, 1) : matrix<T>(sh.m, sh.k, 1);
    const auto b = tb ? matrix<T>(sh.n, sh.k, 2) : matrix<T>(sh.k, sh.n, 2);
    veda::MatmulOptions o;
    o.transpose_a = ta;
    o.transpose_b = tb;
    o.tier = "cpu-reference";
    const auto want = veda::matmul(a, b, o);
    CHECK(veda::last_decision().tier == "cpu-reference");
    for (const auto& tier : tiers(false)) {
      CAPTURE(tier);
      o.tier = tier;
      const veda_test::DeviceWork w;
      check_close(veda::matmul(a, b, o), want, tolerance<T>(sh.k, tier));
      veda_test::check_ran(tier, w, sh.m * sh.n > 0);
      if (!tier.empty()) CHECK(veda::last_decision().device == (tier.rfind("gpu", 0) == 0 ? veda::Device::Gpu : veda::Device::Cpu));
    }
  }
}
}  // namespace

TEST_CASE_TEMPLATE("matmul agrees with the reference for every shape, transposition and tier", T, float, double) {
  Runtime rt;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      matmul_agrees<T>(ta, tb);
    }
}

namespace {
// Large squares: the reference computes eight sampled rows (a row block of
// A times B is those rows of the product).
template <class T>
void large_square(std::size_t n) {
  const auto a = matrix<T>(n, n, 3), b = matrix<T>(n, n, 4);
  const std::size_t rows[] = {0, 1, 2, n / 3, n / 2, n / 2 + 1, n - 2, n - 1};
  veda::Array<T> a_rows(std::size(rows), n);
  for (std::size_t r = 0; r < std::size(rows); ++r)
    for (std::size_t j = 0; j < n; ++j) a_rows.host()[r * n + j] = a.host()[rows[r] * n + j];
  veda::MatmulOptions o;
  o.tier = "cpu-reference";
  const auto want = veda::matmul(a_rows, b, o);
  for (const auto& tier : tiers(false)) {
    CAPTURE(tier);
    o.tier = tier;
    const auto c = veda::matmul(a, b, o);
    veda::Array<T> got(std::size(rows), n);
    for (std::size_t r = 0; r < std::size(rows); ++r)
      for (std::size_t j = 0; j < n; ++j) got.host()[r * n + j] = c.host()[rows[r] * n + j];
    check_close(got, want, tolerance<T>(n, tier));
  }
}
}  // namespace

TEST_CASE("matmul at n = 1024 and 4096, and with 10^7 outputs") {
  Runtime rt;
  large_square<float>(1024);
  large_square<double>(1024);
  large_square<float>(4096);
  // 10007 x 1009 = 10^7 outputs from a rank-3 product; spot-check rows
  // against sums computed here in double.
  const std::size_t m = 10007, k = 3, n = 1009;
  const auto a = matrix<float>(m, k, 5), b = matrix<float>(k, n, 6);
  for (const auto& tier : tiers(false)) {
    CAPTURE(tier);
    veda::MatmulOptions o;
    o.tier = tier;
    const veda_test::DeviceWork w;
    const auto c = veda::matmul(a, b, o);
    REQUIRE(c.size() == m * n);
    veda_test::check_ran(tier, w);
    const auto ch = c.host(), ah = a.host(), bh = b.host();
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, m / 2, m - 1})
      for (std::size_t j : {std::size_t{0}, n / 3, n - 1}) {
        double s = 0;
        for (std::size_t p = 0; p < k; ++p) s += double(ah[i * k + p]) * bh[p * n + j];
        CHECK(ch[i * n + j] == doctest::Approx(s).epsilon(1e-6));
      }
  }
}

TEST_CASE("matmul on spans writes C in place") {
  Runtime rt;
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};       // 2 x 3
  const std::vector<double> b = {7, 8, 9, 10, 11, 12};    // 3 x 2
  for (const char* tier : {"cpu-reference", "cpu-blas", "cpu-tiled"}) {
    CAPTURE(tier);
    std::vector<double> c(4, -1.0);
    veda::MatmulOptions o;
    o.tier = tier;
    veda::matmul<double>(a, b, c, 2, 3, 2, o);
    CHECK(c == std::vector<double>{58, 64, 139, 154});
  }
}

namespace {
// f(shape, ta, A, B, C) for every test shape, A stored transposed (ta) or
// not, on operands seeded from `seed`.
template <class T, class F>
void for_each_operands(unsigned seed, F&& f) {
  for (const auto& sh : kShapes)
    for (bool ta : {false, true}) {
      CAPTURE(sh.m);
      CAPTURE(sh.k);
      CAPTURE(sh.n);
      CAPTURE(ta);
      const auto a = ta ? matrix<T>(sh.k, sh.m, seed) : matrix<T>(sh.m, sh.k, seed);
      f(sh, ta, a, matrix<T>(sh.k, sh.n, seed + 1), matrix<T>(sh.m, sh.n, seed + 2));
    }
}

// C = alpha op(A) op(B) + beta C, oracle computed here from the reference product.
template <class T>
void matmul_into_agrees(double alpha, double beta) {
  for_each_operands<T>(7, [&](const Shape& sh, bool ta, const veda::Array<T>& a, const veda::Array<T>& b,
                              const veda::Array<T>& c0) {
    veda::MatmulOptions o;
    o.transpose_a = ta;
    o.tier = "cpu-reference";
    const auto ab = veda::matmul(a, b, o);
    veda::Array<T> want(sh.m, sh.n);
    for (std::size_t i = 0; i < want.size(); ++i)
      want.host()[i] = static_cast<T>(alpha * double(ab.host()[i]) + beta * double(c0.host()[i]));
    o.alpha = alpha;
    o.beta = beta;
    auto tiers_and_reference = tiers(false);
    tiers_and_reference.push_back("cpu-reference");
    for (const auto& tier : tiers_and_reference) {
      CAPTURE(tier);
      o.tier = tier;
      auto c = beta != 0 ? c0.clone() : veda::Array<T>(sh.m, sh.n);
      if (beta == 0) std::fill(c.host().begin(), c.host().end(), std::numeric_limits<T>::quiet_NaN());  // never read
      const T* before = c.host().data();
      veda::matmul_into(c, a, b, o);
      CHECK(c.host().data() == before);
      check_close(c, want, 2 * std::abs(alpha) * tolerance<T>(sh.k, tier) + 1e-12);
      if (!tier.empty()) CHECK(veda::last_decision().tier == tier);
    }
  });
}
}  // namespace

TEST_CASE_TEMPLATE("matmul_into computes C = alpha A B + beta C in place for every shape and tier", T, float, double) {
  Runtime rt;
  matmul_into_agrees<T>(0.5, -2.0);  // exact scalings: only the product's rounding differs
  matmul_into_agrees<T>(1.0, 1.0);   // C += A B
  matmul_into_agrees<T>(-1.5, 0.0);  // C's NaN must not be read
}

TEST_CASE("matmul over vectors deduces T; alpha and beta apply to ranges too") {
  Runtime rt;
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};     // 2 x 3
  const std::vector<double> b = {7, 8, 9, 10, 11, 12};  // 3 x 2
  for (const char* tier : {"cpu-reference", "cpu-blas", "cpu-tiled", ""}) {
    CAPTURE(tier);
    std::vector<double> c(4, 1.0);
    veda::matmul(a, b, c, 2, 3, 2, {.tier = tier, .alpha = 2, .beta = 10});
    CHECK(c == std::vector<double>{126, 138, 288, 318});
    std::vector<float> af(6, 1.0f), bf(6, 1.0f), cf(4, -1.0f);
    veda::matmul(af, bf, std::span<float>(cf), 2, 3, 2, {.tier = tier});
    CHECK(cf == std::vector<float>{3, 3, 3, 3});
  }
}

TEST_CASE_TEMPLATE("forced cpu+gpu: a matmul of spans split by C's rows equals the reference; transposed A and Arrays run whole", T,
                   float, double) {
  // Without a usable GPU the forced tier falls back to the CPU; the values are checked the same way.
  Runtime rt;
  const bool gpu = veda::get_runtime().gpu_usable();
  for_each_operands<T>(3, [&](const Shape& sh, bool ta, const veda::Array<T>& a, const veda::Array<T>& b,
                              const veda::Array<T>& c0) {
    auto want = c0.clone();
    veda::matmul_into(want, a, b, {.transpose_a = ta, .tier = "cpu-reference", .alpha = 2, .beta = 0.5});
    std::vector<T> c(c0.host().begin(), c0.host().end());
    veda::matmul<T>(a.host(), b.host(), c, sh.m, sh.k, sh.n,
                    {.transpose_a = ta, .tier = "cpu+gpu", .alpha = 2, .beta = 0.5});
    veda::Array<T> got(c);
    got.reshape(sh.m, sh.n);
    check_close(got, want, 4 * tolerance<T>(sh.k, "gpu-cublas") + 1e-12);
    if (gpu && sh.m * sh.n > 0) CHECK(veda::last_decision().tier == (ta ? "gpu-cublas" : "cpu+gpu"));
  });
  // An Array is not split: the devices' tier runs it whole.
  const auto a = matrix<T>(97, 89, 6), b = matrix<T>(89, 101, 7);
  const auto got = veda::matmul(a, b, {.tier = "cpu+gpu"});
  check_close(got, veda::matmul(a, b, {.tier = "cpu-reference"}), 4 * tolerance<T>(89, "gpu-cublas"));
  if (gpu) CHECK(veda::last_decision().tier == "gpu-cublas");
  else CHECK(veda::last_decision().device == veda::Device::Cpu);
}

TEST_CASE("alpha and beta errors: a returning matmul has no C, matmul_into needs C's shape and its own storage") {
  Runtime rt;
  const auto a = matrix<float>(3, 4, 1), b = matrix<float>(4, 5, 2);
  CHECK_THROWS_AS(veda::matmul(a, b, {.beta = 1}), veda::InvalidArgument);
  veda::Array<float> wrong(5, 3);
  CHECK_THROWS_WITH_AS(veda::matmul_into(wrong, a, b), doctest::Contains("C is 5x3 but A B is 3x5"),
                       veda::InvalidArgument);
  auto sq = matrix<float>(4, 4, 3);
  CHECK_THROWS_AS(veda::matmul_into(sq, sq, sq), veda::InvalidArgument);
  const auto x = matrix<float>(2, 4, 4);
  CHECK_THROWS_AS(veda::linear(x, b, veda::Array<float>(), veda::Activation::None, {.alpha = 2}), veda::InvalidArgument);
  veda::Array<float> c(3, 5);
  veda::matmul_into(c, a, b);  // still usable
  CHECK(veda::last_decision().name == "matmul");
}

TEST_CASE_TEMPLATE("linear = act(x w^T + bias) for every activation and tier", T, float, double) {
  Runtime rt;
  for (const Shape& sh : {Shape{1, 1, 1}, Shape{7, 13, 11}, Shape{97, 89, 101}, Shape{300, 64, 3}, Shape{0, 4, 2}}) {
    CAPTURE(sh.m);
    CAPTURE(sh.k);
    CAPTURE(sh.n);
    const auto x = matrix<T>(sh.m, sh.k, 7), w = matrix<T>(sh.n, sh.k, 8), bias = matrix<T>(1, sh.n, 9);
    for (auto act : {veda::Activation::None, veda::Activation::Relu, veda::Activation::Gelu})
      for (bool with_bias : {true, false}) {
        CAPTURE(static_cast<int>(act));
        CAPTURE(with_bias);
        const veda::Array<T> none;
        const veda::Array<T>& bv = with_bias ? bias : none;
        // Oracle: the reference product, then the epilogue computed here.
        veda::MatmulOptions o;
        o.transpose_b = true;
        o.tier = "cpu-reference";
        auto want = veda::matmul(x, w, o);
        auto wh = want.host();
        for (std::size_t i = 0; i < sh.m; ++i)
          for (std::size_t j = 0; j < sh.n; ++j)
            wh[i * sh.n + j] = veda::detail::activate<T>(wh[i * sh.n + j] + (with_bias ? bias.host()[j] : T(0)), act);
        for (const auto& tier : tiers(true)) {
          CAPTURE(tier);
          veda::MatmulOptions lo;
          lo.tier = tier;
          const veda_test::DeviceWork dw;
          const auto y = veda::linear(x, w, bv, act, lo);
          CHECK(veda::last_decision().name == "linear");
          veda_test::check_ran(tier, dw, y.size() > 0);
          // GELU's tanh adds a few ulps of its own.
          check_close(y, want, tolerance<T>(sh.k, tier) * 2);
        }
      }
  }
}

TEST_CASE("shape errors name both shapes and happen before any work") {
  Runtime rt;
  const auto a = matrix<float>(3, 4, 1), b = matrix<float>(5, 2, 2);
  try {
    (void)veda::matmul(a, b);
    FAIL("expected InvalidArgument");
  } catch (const veda::InvalidArgument& e) {
    const std::string what = e.what();
    CHECK(what.find("3x4") != std::string::npos);
    CHECK(what.find("5x2") != std::string::npos);
    CHECK(what.find("inner dimensions 4 and 5") != std::string::npos);
  }
  veda::MatmulOptions t;
  t.transpose_b = true;  // b^T is 2 x 5: still does not fit
  CHECK_THROWS_AS((void)veda::matmul(a, b, t), veda::InvalidArgument);
  t.transpose_a = true;  // a^T (4 x 3) * b^T (2 x 5): 3 vs 2
  CHECK_THROWS_AS((void)veda::matmul(a, b, t), veda::InvalidArgument);

  veda::Array<float> flat(12);
  CHECK_THROWS_WITH_AS((void)veda::matmul(flat, b), doctest::Contains("2-D"), veda::InvalidArgument);

  const auto w = matrix<float>(6, 4, 3);
  const auto bias = matrix<float>(1, 5, 4);
  CHECK_THROWS_WITH_AS((void)veda::linear(a, w, bias), doctest::Contains("bias has 5 elements"), veda::InvalidArgument);

  std::vector<float> sa(6), sb(6), sc(3);
  CHECK_THROWS_WITH_AS(veda::matmul<float>(sa, sb, sc, 2, 3, 2), doctest::Contains("C has 3 elements"),
                       veda::InvalidArgument);
  CHECK(sc == std::vector<float>(3, 0.0f));  // untouched
  std::vector<float> buf(12, 1.0f);
  CHECK_THROWS_WITH_AS(veda::matmul<float>(std::span<const float>(buf.data(), 4), std::span<const float>(buf.data() + 4, 4),
                                           std::span<float>(buf.data() + 2, 4), 2, 2, 2),
                       doctest::Contains("overlaps"), veda::InvalidArgument);

  veda::MatmulOptions bogus;
  bogus.tier = "cpu-fast";
  CHECK_THROWS_AS((void)veda::matmul(a, matrix<float>(4, 2, 5), bogus), veda::InvalidArgument);
  bogus.tier = "tbb-static";  // a real tier, but not one of matmul's
  CHECK_THROWS_WITH_AS((void)veda::matmul(a, matrix<float>(4, 2, 5), bogus), doctest::Contains("no tier"),
                       veda::InvalidArgument);

  // The runtime is still usable.
  const auto c = veda::matmul(a, matrix<float>(4, 2, 5));
  CHECK(c.rows() == 3);
  CHECK(c.cols() == 2);
}

TEST_CASE("the decision names the op, its shape classes and candidates") {
  Runtime rt;
  const auto a = matrix<float>(200, 100, 1), b = matrix<float>(100, 50, 2);
  veda::MatmulOptions o;
  o.name = "projection";
  (void)veda::matmul(a, b, o);
  const auto d = veda::last_decision();
  CHECK(d.name == "projection");
  CHECK(d.device == (d.tier.rfind("gpu", 0) == 0 ? veda::Device::Gpu : veda::Device::Cpu));
  bool blas = false, tiled = false, reference_ineligible = false;
  int teaching = 0;
  for (const auto& c : d.candidates) {
    blas |= c.tier == "cpu-blas";
    tiled |= c.tier == "cpu-tiled";
    if (c.tier == "cpu-reference") reference_ineligible = !c.eligible;
    if (c.tier == "gpu-naive" || c.tier == "gpu-vectorized") {  // the ladder's teaching kernels: forced only
      ++teaching;
      CHECK(!c.eligible);
    }
  }
  CHECK(blas);
  CHECK(tiled);
  CHECK(reference_ineligible);
  CHECK(teaching == 2);
  if (!veda::get_runtime().gpu().usable) CHECK(d.device == veda::Device::Cpu);

  // A forced GPU tier runs on the GPU where one is usable. Without one it
  // runs on the CPU, and strict forcing throws.
  veda::MatmulOptions ref;
  ref.tier = "cpu-reference";
  const auto want = veda::matmul(a, b, ref);
  o.tier = "gpu-cublas";
  const auto c = veda::matmul(a, b, o);
  check_close(c, want, tolerance<float>(100, "gpu-cublas"));
  if (veda::get_runtime().gpu().usable) {
    CHECK(veda::last_decision().device == veda::Device::Gpu);
    CHECK(veda::last_decision().tier == "gpu-cublas");
    o.strict = true;
    for (const char* tier : {"gpu-tiled", "gpu-cublas"}) {
      CAPTURE(tier);
      o.tier = tier;
      const veda_test::DeviceWork w;
      check_close(veda::matmul(a, b, o), want, tolerance<float>(100, tier));
      veda_test::check_ran(tier, w);
    }
    o.placement = veda::Placement::Gpu;  // the model's choice among GPU tiers
    o.tier.clear();
    check_close(veda::matmul(a, b, o), want, tolerance<float>(100, "gpu-cublas-tf32"));
    CHECK(veda::last_decision().device == veda::Device::Gpu);
    CHECK(veda::get_runtime().memory_stats().cpu_fallbacks == 0);
  } else {
    CHECK(veda::last_decision().device == veda::Device::Cpu);
    o.strict = true;
    CHECK_THROWS_AS((void)veda::matmul(a, b, o), veda::DeviceError);
  }
}

namespace {
// A stack of `batch` r x c matrices (3-D), or one matrix when batch is 0 (2-D).
template <class T>
veda::Array<T> stack(std::size_t batch, std::size_t r, std::size_t c, unsigned seed) {
  veda::Array<T> a = matrix<T>(std::max<std::size_t>(batch, 1) * r, c, seed);
  if (batch) a.reshape(veda::Shape{batch, r, c});
  return a;
}
// Product i of a batch as a 2-D matrix.
template <class T>
veda::Array<T> slice(const veda::Array<T>& a, std::size_t i) {
  if (a.ndim() == 2) return a.clone();
  const std::size_t r = a.extent(1), c = a.extent(2);
  const auto h = a.host();
  return veda::Array<T>(r, c, std::vector<T>(h.begin() + i * r * c, h.begin() + (i + 1) * r * c));
}
}  // namespace

TEST_CASE_TEMPLATE("a 3-D matmul is a batch of products, a 2-D operand shared by all, on every tier", T, float, double) {
  Runtime rt;
  struct Batched {
    std::size_t batch_a, batch_b, m, k, n;  // batch 0: that operand is 2-D
  };
  const Batched cases[] = {{3, 3, 5, 7, 4}, {1, 1, 1, 1, 1}, {0, 4, 6, 3, 5},  {5, 0, 7, 2, 3},
                           {2, 2, 0, 3, 4}, {2, 2, 3, 0, 4}, {13, 13, 17, 11, 1},
                           {0, 7, 64, 65, 33}, {7, 0, 33, 65, 64}, {0, 3, 1, 9, 1}};
  for (const auto& c : cases)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(c.batch_a);
        CAPTURE(c.batch_b);
        CAPTURE(c.m);
        CAPTURE(c.k);
        CAPTURE(c.n);
        CAPTURE(ta);
        CAPTURE(tb);
        const auto a = ta ? stack<T>(c.batch_a, c.k, c.m, 1) : stack<T>(c.batch_a, c.m, c.k, 1);
        const auto b = tb ? stack<T>(c.batch_b, c.n, c.k, 2) : stack<T>(c.batch_b, c.k, c.n, 2);
        const std::size_t batch = std::max(c.batch_a, c.batch_b);
        veda::MatmulOptions o;
        o.transpose_a = ta;
        o.transpose_b = tb;
        for (const auto& tier : tiers(false)) {
          CAPTURE(tier);
          o.tier = tier;
          const veda_test::DeviceWork w;
          const auto got = veda::matmul(a, b, o);
          REQUIRE(got.shape() == veda::Shape{batch, c.m, c.n});
          if (got.size()) veda_test::check_ran(tier, w);
          for (std::size_t i = 0; i < batch; ++i) {
            veda::MatmulOptions r = o;
            r.tier = "cpu-reference";
            const auto want = veda::matmul(slice(a, i), slice(b, i), r);
            check_close(slice(got, i), want, tolerance<T>(c.k, tier));
          }
        }
      }
}

TEST_CASE("batched matmul_into scales C in place; batch and rank errors name both shapes") {
  Runtime rt;
  const auto a = stack<float>(4, 3, 5, 1), b = stack<float>(4, 5, 2, 2);
  auto c = stack<float>(4, 3, 2, 3);
  const auto c0 = c.clone();
  veda::matmul_into(c, a, b, {.alpha = 2, .beta = -1});
  const auto ab = veda::matmul(a, b);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(c.host()[i] == doctest::Approx(2 * ab.host()[i] - c0.host()[i]));
  veda::Array<float> wrong(veda::Shape{3, 3, 2});
  CHECK_THROWS_WITH_AS(veda::matmul_into(wrong, a, b), doctest::Contains("C is 3x3x2 but A B is 4x3x2"),
                       veda::InvalidArgument);
  CHECK_THROWS_WITH_AS((void)veda::matmul(a, stack<float>(3, 5, 2, 2)),
                       doctest::Contains("A is 4x3x5 and B is 3x5x2: batches of 4 and 3 differ"), veda::InvalidArgument);
  const veda::Array<float> four(veda::Shape{1, 2, 3, 5});
  CHECK_THROWS_WITH_AS((void)veda::matmul(four, b), doctest::Contains("2-D or 3-D"), veda::InvalidArgument);
  CHECK_THROWS_WITH_AS((void)veda::linear(a, matrix<float>(2, 5, 1), veda::Array<float>()),
                       doctest::Contains("must be a 2-D Array"), veda::InvalidArgument);
}
