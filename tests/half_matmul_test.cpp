// Contract: veda::matmul, matmul_into and linear over veda::half and
// veda::bfloat16 agree, on every tier this build and machine can run, with the exact
// product rounded once to the element type: the sums are FP32 (double on
// cpu-reference), so the error is within half an ulp of T at the result plus
// FP32's accumulation error (k 2^-22 of the largest |sum|). Inputs are
// multiples of 1/32 in [-2, 2), exact in both types, so the exact product is
// known here in double. Shapes: empty, 1x1, k = 0, primes, vectors,
// batches; transpositions; alpha and beta (beta 0 never reads C); the
// TF32/BF16-rounding tiers are not offered for 16-bit elements. linear adds
// its bias and activation in FP32 (every activation, with and without a
// bias).
// Built twice in the CUDA configuration: half_matmul_test (whatever device is
// there) and gpu_half_matmul_test (labelled gpu: every GPU tier forced).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/device_work.hpp"
#include "support/op_tiers.hpp"
#include "veda/half.hpp"
#include "veda/matmul.hpp"

namespace {
using Runtime = veda_test::OpRuntime;

template <class T>
veda::Array<T> matrix(veda::Shape shape, unsigned seed) {
  veda::Array<T> a(shape);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : a.host()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int>(x >> 25) - 64) / 32.0f;  // 7 bits: exact in half and bfloat16
  }
  return a;
}
template <class T>
veda::Array<T> matrix(std::size_t r, std::size_t c, unsigned seed) {
  return matrix<T>(veda::Shape{r, c}, seed);
}

std::vector<std::string> tiers() {
  return veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-tiled"},
                             {"gpu-tiled", "gpu-cublas", "gpu-naive", "gpu-vectorized", "gpu-wmma"});
}

struct Dims {
  std::size_t m, k, n;
};

// C's exact value (double: every product and partial sum of these inputs is
// exact), then alpha and beta as FP32 would apply them.
template <class T>
std::vector<double> exact(const veda::Array<T>& a, const veda::Array<T>& b, const Dims& d, bool ta = false,
                          bool tb = false, std::size_t batch = 1, double alpha = 1, double beta = 0,
                          const veda::Array<T>* c0 = nullptr) {
  std::vector<double> c(batch * d.m * d.n);
  const auto ah = a.host(), bh = b.host();
  const std::size_t sa = a.ndim() == 3 ? d.m * d.k : 0, sb = b.ndim() == 3 ? d.k * d.n : 0;
  for (std::size_t q = 0; q < batch; ++q)
    for (std::size_t i = 0; i < d.m; ++i)
      for (std::size_t j = 0; j < d.n; ++j) {
        double s = 0;
        for (std::size_t p = 0; p < d.k; ++p)
          s += double(float(ah[q * sa + (ta ? p * d.m + i : i * d.k + p)])) *
               double(float(bh[q * sb + (tb ? j * d.k + p : p * d.n + j)]));
        const std::size_t at = (q * d.m + i) * d.n + j;
        c[at] = alpha * s + (beta != 0 ? beta * double(float(c0->host()[at])) : 0.0);
      }
  return c;
}

// Half an ulp of T at |want| (RNE) plus FP32 accumulation over k terms of
// magnitude up to 4, plus the alpha/beta sums.
template <class T>
void check_close(const veda::Array<T>& got, const std::vector<double>& want, std::size_t k) {
  REQUIRE(got.size() == want.size());
  const double eps = std::ldexp(1.0, 1 - std::numeric_limits<T>::digits);
  const double acc = 4.0 * static_cast<double>(k + 2) * std::ldexp(1.0, -22);
  std::size_t bad = 0;
  double worst = 0;
  const auto g = got.host();
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double e = std::abs(double(float(g[i])) - want[i]);
    const double tol = eps / 2 * std::abs(want[i]) * (1 + eps) + acc;
    worst = std::max(worst, e / tol);
    bad += !(e <= tol);  // NaN counts as bad
  }
  CAPTURE(worst);
  CHECK(bad == 0);
}

const Dims kDims[] = {{0, 0, 0}, {0, 5, 3}, {4, 0, 3}, {1, 1, 1}, {2, 3, 2}, {13, 1, 17}, {7, 13, 11},
                      {97, 89, 101}, {3, 1021, 2}, {64, 64, 64}, {129, 257, 65}, {1, 97, 13}, {101, 37, 1}};

template <class T>
void agrees(bool ta, bool tb) {
  for (const Dims& d : kDims) {
    CAPTURE(d.m);
    CAPTURE(d.k);
    CAPTURE(d.n);
    const auto a = ta ? matrix<T>(d.k, d.m, 1) : matrix<T>(d.m, d.k, 1);
    const auto b = tb ? matrix<T>(d.n, d.k, 2) : matrix<T>(d.k, d.n, 2);
    const auto want = exact(a, b, d, ta, tb);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const veda_test::DeviceWork w;
      const auto c = veda::matmul(a, b, {.transpose_a = ta, .transpose_b = tb, .tier = tier});
      CHECK(c.rows() == d.m);
      CHECK(c.cols() == d.n);
      check_close(c, want, d.k);
      veda_test::check_ran(tier, w, d.m * d.n > 0);
    }
  }
}
}  // namespace

TEST_CASE_TEMPLATE("16-bit matmul agrees with the exact product rounded once, every shape, transposition and tier", T,
                   veda::half, veda::bfloat16) {
  Runtime rt;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      agrees<T>(ta, tb);
    }
  CHECK(veda::last_decision().name == "matmul");
}

TEST_CASE_TEMPLATE("16-bit matmul_into: C = alpha A B + beta C in FP32, rounded once; beta 0 never reads C", T,
                   veda::half, veda::bfloat16) {
  Runtime rt;
  for (const Dims& d : {Dims{1, 1, 1}, Dims{7, 13, 11}, Dims{97, 89, 101}, Dims{5, 0, 3}}) {
    CAPTURE(d.m);
    CAPTURE(d.k);
    CAPTURE(d.n);
    const auto a = matrix<T>(d.m, d.k, 3), b = matrix<T>(d.k, d.n, 4), c0 = matrix<T>(d.m, d.n, 5);
    for (const auto& scale : {std::pair{0.5, -2.0}, std::pair{1.0, 1.0}, std::pair{-1.5, 0.0}}) {
      const double alpha = scale.first, beta = scale.second;  // not a structured binding: CAPTURE's lambda
      CAPTURE(alpha);
      CAPTURE(beta);
      const auto want = exact(a, b, d, false, false, 1, alpha, beta, &c0);
      for (const auto& tier : tiers()) {
        CAPTURE(tier);
        auto c = beta != 0 ? c0.clone() : veda::Array<T>(d.m, d.n);
        if (beta == 0) std::fill(c.host().begin(), c.host().end(), std::numeric_limits<T>::quiet_NaN());
        veda::matmul_into(c, a, b, {.tier = tier, .alpha = alpha, .beta = beta});
        check_close(c, want, d.k);
      }
    }
  }
}

TEST_CASE_TEMPLATE("16-bit batches: a stack times a shared matrix, and stack times stack", T, veda::half,
                   veda::bfloat16) {
  Runtime rt;
  const Dims d{13, 29, 7};
  for (std::size_t batch : {std::size_t{1}, std::size_t{3}}) {
    CAPTURE(batch);
    const auto a = matrix<T>(veda::Shape{batch, d.m, d.k}, 6);
    const auto shared = matrix<T>(d.k, d.n, 7);
    const auto stack = matrix<T>(veda::Shape{batch, d.k, d.n}, 8);
    const auto want_shared = exact(a, shared, d, false, false, batch);
    const auto want_stack = exact(a, stack, d, false, false, batch);
    for (const auto& tier : tiers()) {
      CAPTURE(tier);
      const auto c1 = veda::matmul(a, shared, {.tier = tier});
      CHECK(c1.shape() == veda::Shape{batch, d.m, d.n});
      check_close(c1, want_shared, d.k);
      check_close(veda::matmul(a, stack, {.tier = tier}), want_stack, d.k);
    }
  }
}

// linear = act(x w^T + bias), against the exact pre-activation z in double:
// the CPU tiers and gpu-cublaslt-fused round y once, gpu-unfused rounds the
// product and then y, so the bound is a whole ulp of T at y plus one at z
// carried through the activation (|act'| < 1.2), plus FP32's sums.
template <class T>
void linear_agrees(veda::Activation act, bool with_bias) {
  for (const Dims& d : {Dims{0, 3, 4}, Dims{1, 1, 1}, Dims{4, 0, 3}, Dims{7, 13, 11}, Dims{97, 89, 101},
                        Dims{1, 97, 13}}) {
    CAPTURE(d.m);
    CAPTURE(d.k);
    CAPTURE(d.n);
    const auto x = matrix<T>(d.m, d.k, 11), w = matrix<T>(d.n, d.k, 12);
    const auto bias = with_bias ? matrix<T>(veda::Shape{d.n}, 13) : veda::Array<T>();
    std::vector<double> z = exact(x, w, d, false, true), want(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      if (with_bias) z[i] += double(float(bias.host()[i % d.n]));
      const double v = z[i];
      want[i] = act == veda::Activation::Relu   ? std::max(v, 0.0)
                : act == veda::Activation::Gelu ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                                                : v;
    }
    const double eps = std::ldexp(1.0, 1 - std::numeric_limits<T>::digits);
    const double acc = 4.0 * static_cast<double>(d.k + 2) * std::ldexp(1.0, -22) + 1e-6;  // + FP32's tanh
    for (const auto& tier : veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-tiled"},
                                                {"gpu-unfused", "gpu-cublaslt-fused"})) {
      CAPTURE(tier);
      const veda_test::DeviceWork dw;
      const auto y = veda::linear(x, w, bias, act, {.tier = tier});
      REQUIRE(y.shape() == veda::Shape{d.m, d.n});
      if (y.size()) CHECK(veda::last_decision().name == "linear");
      veda_test::check_ran(tier, dw, y.size() > 0);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double e = std::abs(double(float(y.host()[i])) - want[i]);
        bad += !(e <= eps * (std::abs(want[i]) + 1.2 * std::abs(z[i])) + acc);
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE_TEMPLATE("16-bit linear = act(x w^T + bias) in FP32, for every activation, with and without a bias, every tier",
                   T, veda::half, veda::bfloat16) {
  Runtime rt;
  for (auto act : {veda::Activation::None, veda::Activation::Relu, veda::Activation::Gelu})
    for (bool with_bias : {true, false}) {
      CAPTURE(static_cast<int>(act));
      CAPTURE(with_bias);
      linear_agrees<T>(act, with_bias);
    }
}

TEST_CASE("16-bit matmul with 10^7 outputs, and over std::vector ranges") {
  Runtime rt;
  const Dims d{10007, 3, 1009};
  const auto a = matrix<veda::half>(d.m, d.k, 9), b = matrix<veda::half>(d.k, d.n, 10);
  for (const char* tier : {"cpu-blas", "cpu-tiled", ""}) {
    CAPTURE(tier);
    const auto c = veda::matmul(a, b, {.tier = tier});
    REQUIRE(c.size() == d.m * d.n);
    const auto ch = c.host(), ah = a.host(), bh = b.host();
    for (std::size_t i : {std::size_t{0}, d.m / 2, d.m - 1})
      for (std::size_t j : {std::size_t{0}, d.n / 3, d.n - 1}) {
        double s = 0;
        for (std::size_t p = 0; p < d.k; ++p) s += double(float(ah[i * d.k + p])) * float(bh[p * d.n + j]);
        CHECK(float(ch[i * d.n + j]) == float(veda::half(static_cast<float>(s))));  // 3 terms: exact, one rounding
      }
  }
  const std::vector<veda::bfloat16> x = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};  // 2 x 3
  const std::vector<veda::bfloat16> y = {7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f};  // 3 x 2
  std::vector<veda::bfloat16> z(4);
  veda::matmul(x, y, z, 2, 3, 2);
  CHECK(float(z[0]) == 58.0f);
  CHECK(float(z[1]) == 64.0f);
  CHECK(float(z[2]) == 139.0f);  // 8 significant bits: exact in bfloat16
  CHECK(float(z[3]) == 154.0f);
}

TEST_CASE("16-bit matmul: the FP32-input tensor-core tiers are not offered; bad shapes throw before any work") {
  Runtime rt;
  const auto a = matrix<veda::half>(4, 3, 1), b = matrix<veda::half>(3, 5, 2);
  for (const char* tier : {"gpu-cublas-tf32", "gpu-cublas-bf16"}) {
    CAPTURE(tier);
    CHECK_THROWS_WITH_AS(veda::matmul(a, b, {.tier = tier}), doctest::Contains("has no tier"), veda::InvalidArgument);
  }
  const auto wrong = matrix<veda::half>(4, 3, 3);
  CHECK_THROWS_WITH_AS(veda::matmul(a, wrong), doctest::Contains("inner dimensions 3 and 4 differ"),
                       veda::InvalidArgument);
  veda::Array<veda::half> c(4, 4);
  CHECK_THROWS_WITH_AS(veda::matmul_into(c, a, b), doctest::Contains("C is 4x4 but A B is 4x5"), veda::InvalidArgument);
  const auto ok = veda::matmul(a, b);  // still usable
  CHECK(ok.shape() == veda::Shape{4, 5});
  const auto dec = veda::last_decision();
  CHECK(dec.name == "matmul");
  for (const auto& c : dec.candidates) {
    CAPTURE(c.tier);
    CHECK(c.tier != "gpu-cublas-tf32");
    CHECK(c.tier != "gpu-cublas-bf16");
  }
}
