// Contract: veda::linear_backward gives the gradients of linear() —
// grad_x = dz w, grad_w = dz^T x, grad_bias = dz's column sums, dz =
// grad_out * act'(pre_act) — on every tier this build and machine can run,
// for float, double, half and bfloat16 (16-bit: computed in FP32) and every
// activation, at empty, 1x1, prime, odd and 10^7-element shapes; the chained form folds the input layer's
// activation gradient and bias gradient in; the gradients agree with
// finite differences of linear() itself; bad shapes and a missing
// pre-activation throw InvalidArgument naming them before any work.
// Built twice in the CUDA configuration: linear_backward_test and
// gpu_linear_backward_test (labelled gpu: the GPU tiers forced too).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/op_tiers.hpp"
#include "veda/linear_backward.hpp"
#include "veda/matmul.hpp"

namespace {
using Runtime = veda_test::OpRuntime;
using veda::Activation;

template <class T>
veda::Array<T> matrix(std::size_t r, std::size_t c, unsigned seed) {
  veda::Array<T> a(r, c);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : a.host()) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>(x >> 22) - 512) / T(256);  // in [-2, 2), exact in float
  }
  return a;
}

std::vector<std::string> tiers() {
  return veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-tiled"}, {"gpu-unfused", "gpu-cublaslt-fused"});
}

// The gradients computed here in double, from the definitions.
struct Want {
  std::vector<double> gx, gw, gb, gib;
};
template <class T>
Want oracle(const veda::Array<T>& x, const veda::Array<T>& w, const veda::Array<T>& g, Activation act,
            const veda::Array<T>& z, Activation in_act, const veda::Array<T>& zin) {
  const std::size_t m = x.rows(), k = x.cols(), n = w.rows();
  std::vector<double> dz(m * n);
  for (std::size_t i = 0; i < m * n; ++i)
    dz[i] = g.host()[i] * (act == Activation::None ? 1.0 : veda::detail::activation_derivative<double>(z.host()[i], act));
  Want r{std::vector<double>(m * k), std::vector<double>(n * k), std::vector<double>(n), std::vector<double>(k)};
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      r.gb[j] += dz[i * n + j];
      for (std::size_t p = 0; p < k; ++p) {
        r.gx[i * k + p] += dz[i * n + j] * w.host()[j * k + p];
        r.gw[j * k + p] += dz[i * n + j] * x.host()[i * k + p];
      }
    }
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      if (in_act != Activation::None) r.gx[i * k + p] *= veda::detail::activation_derivative<double>(zin.host()[i * k + p], in_act);
      r.gib[p] += r.gx[i * k + p];
    }
  return r;
}

// |got - want| within terms * 8 eps(T) * 4 (values below 2, products below
// 4), TF32's eps for the cuBLASLt tier's products.
template <class T>
void check_close(const veda::Array<T>& got, const std::vector<double>& want, std::size_t terms, const std::string& tier,
                 const char* what) {
  CAPTURE(what);
  REQUIRE(got.size() == want.size());
  const double eps = tier == "gpu-cublaslt-fused" && std::is_same_v<T, float> ? std::ldexp(1.0, -10)
                                                                               : std::numeric_limits<T>::epsilon();
  const double tol = 32.0 * eps * static_cast<double>(std::max<std::size_t>(terms, 1)) + 1e-12;
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(got.host()[i]) - want[i]);
    worst = std::max(worst, e);
    bad += !(e <= tol);
  }
  CAPTURE(worst);
  CAPTURE(tol);
  CHECK(bad == 0);
}

struct Dims {
  std::size_t m, k, n;
};
const Dims kDims[] = {{0, 4, 3}, {5, 0, 3}, {5, 4, 0}, {1, 1, 1},    {7, 13, 11},
                      {13, 16, 5}, {97, 89, 101}, {300, 64, 3}, {1031, 8, 7}};
const Activation kActs[] = {Activation::None, Activation::Relu, Activation::Gelu};

}  // namespace

TEST_CASE_TEMPLATE("linear_backward agrees with the definitions for every shape, activation and tier", T, float,
                   double) {
  Runtime rt;
  for (const Dims& s : kDims) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const auto x = matrix<T>(s.m, s.k, 1), w = matrix<T>(s.n, s.k, 2), g = matrix<T>(s.m, s.n, 3);
    const auto z = matrix<T>(s.m, s.n, 4);
    for (Activation act : kActs)
      for (bool bias : {true, false}) {
        CAPTURE(static_cast<int>(act));
        CAPTURE(bias);
        const Want want = oracle(x, w, g, act, z, Activation::None, z);
        for (const auto& tier : tiers()) {
          CAPTURE(tier);
          veda::LinearBackwardOptions o;
          o.tier = tier;
          o.bias = bias;
          const veda_test::DeviceWork dw;
          const auto r = veda::linear_backward(x, w, g, act, z, o);
          CHECK(veda::last_decision().name == "linear_backward");
          // Device work exists where a gradient has elements to write.
          const bool work = s.m * s.k > 0 || s.n * s.k > 0 || (bias && s.n > 0) ||
                            (act != Activation::None && s.m * s.n > 0);
          veda_test::check_ran(tier, dw, work);
          CHECK(r.grad_x.rows() == s.m);
          CHECK(r.grad_x.cols() == s.k);
          CHECK(r.grad_w.rows() == s.n);
          CHECK(r.grad_w.cols() == s.k);
          check_close(r.grad_x, want.gx, s.n, tier, "grad_x");
          check_close(r.grad_w, want.gw, s.m, tier, "grad_w");
          if (bias) check_close(r.grad_bias, want.gb, s.m, tier, "grad_bias");
          else CHECK(r.grad_bias.empty());
          CHECK(r.grad_input_bias.empty());
        }
      }
  }
}

TEST_CASE_TEMPLATE("the chained form folds in the input layer's activation and bias gradients", T, float, double) {
  Runtime rt;
  for (const Dims& s : kDims) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const auto x = matrix<T>(s.m, s.k, 5), w = matrix<T>(s.n, s.k, 6), g = matrix<T>(s.m, s.n, 7);
    const auto z = matrix<T>(s.m, s.n, 8), zin = matrix<T>(s.m, s.k, 9);
    for (Activation act : {Activation::None, Activation::Gelu})
      for (Activation in_act : kActs) {
        CAPTURE(static_cast<int>(act));
        CAPTURE(static_cast<int>(in_act));
        const Want want = oracle(x, w, g, act, z, in_act, zin);
        for (const auto& tier : tiers()) {
          CAPTURE(tier);
          veda::LinearBackwardOptions o;
          o.tier = tier;
          const veda_test::DeviceWork dw;
          const auto r = veda::linear_backward(x, w, g, act, z, in_act, zin, o);
          veda_test::check_ran(tier, dw, s.m * s.n > 0 || s.n * s.k > 0 || s.m * s.k > 0);
          check_close(r.grad_x, want.gx, s.n, tier, "grad_x");
          check_close(r.grad_w, want.gw, s.m, tier, "grad_w");
          check_close(r.grad_bias, want.gb, s.m, tier, "grad_bias");
          check_close(r.grad_input_bias, want.gib, s.m * s.n, tier, "grad_input_bias");
        }
      }
  }
}

// 16-bit elements: each gradient against the definitions in double over
// the inputs as stored, with A the sum of its terms' magnitudes. The CPU
// tiers compute in FP32 and round once: half an ulp of T at the value
// (cpu-reference rounds through float: a little more) plus FP32's sums.
// gpu-unfused also rounds dz (and grad_x before an input activation) to T:
// an ulp of T per term besides.
template <class T>
void check_16(const veda::Array<T>& got, const std::vector<double>& want, const std::vector<double>& mag,
              std::size_t terms, bool gpu, const char* what) {
  CAPTURE(what);
  REQUIRE(got.size() == want.size());
  const double eps = std::ldexp(1.0, 1 - std::numeric_limits<T>::digits);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(double(float(got.host()[i])) - want[i]);
    const double tol = (eps / 2 + std::ldexp(1.0, -23)) * std::abs(want[i]) +
                       (static_cast<double>(terms + 2) * std::ldexp(1.0, -23) + (gpu ? 2 * eps : 0.0)) * mag[i];
    bad += !(e <= tol);
  }
  CHECK(bad == 0);
}

TEST_CASE_TEMPLATE("16-bit linear_backward computes in FP32: every activation, bias or not, chained, every tier", T,
                   veda::half, veda::bfloat16) {
  Runtime rt;
  const auto tiers16 = veda_test::op_tiers({"cpu-reference", "cpu-blas", "cpu-tiled"}, {"gpu-unfused"});
  for (const Dims& s : {Dims{0, 4, 3}, Dims{5, 0, 3}, Dims{1, 1, 1}, Dims{7, 13, 11}, Dims{97, 89, 101},
                        Dims{1031, 8, 7}}) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const auto x = matrix<T>(s.m, s.k, 41), w = matrix<T>(s.n, s.k, 42), g = matrix<T>(s.m, s.n, 43);
    const auto z = matrix<T>(s.m, s.n, 44), zin = matrix<T>(s.m, s.k, 45);
    // The magnitudes: the same sums over |terms| (|act'| <= 1.2).
    auto abs_of = [](const veda::Array<T>& a) {
      veda::Array<double> r(a.rows(), a.cols());
      for (std::size_t i = 0; i < a.size(); ++i) r.host()[i] = std::abs(double(float(a.host()[i])));
      return r;
    };
    auto wide = [](const veda::Array<T>& a) {
      veda::Array<double> r(a.rows(), a.cols());
      for (std::size_t i = 0; i < a.size(); ++i) r.host()[i] = double(float(a.host()[i]));
      return r;
    };
    const auto ax = abs_of(x), aw = abs_of(w), ag = abs_of(g);
    for (Activation act : kActs)
      for (Activation in_act : {Activation::None, Activation::Gelu}) {
        CAPTURE(static_cast<int>(act));
        CAPTURE(static_cast<int>(in_act));
        const bool chained = in_act != Activation::None;
        const Want want = oracle(wide(x), wide(w), wide(g), act, wide(z), in_act, wide(zin));
        Want mag = oracle(ax, aw, ag, Activation::None, ax, Activation::None, ax);
        for (auto* v : {&mag.gx, &mag.gw, &mag.gb, &mag.gib})
          for (double& e : *v) e *= 1.44;  // act' and input_act' at most 1.2 each
        for (const auto& tier : tiers16) {
          CAPTURE(tier);
          veda::LinearBackwardOptions o;
          o.tier = tier;
          const veda_test::DeviceWork dw;
          const auto r = chained ? veda::linear_backward(x, w, g, act, z, in_act, zin, o)
                                 : veda::linear_backward(x, w, g, act, z, o);
          veda_test::check_ran(tier, dw, s.m * s.n > 0 || s.n * s.k > 0 || s.m * s.k > 0);
          const bool gpu = tier.rfind("gpu", 0) == 0;
          check_16(r.grad_x, want.gx, mag.gx, s.n, gpu, "grad_x");
          check_16(r.grad_w, want.gw, mag.gw, s.m, gpu, "grad_w");
          check_16(r.grad_bias, want.gb, mag.gb, s.m, gpu, "grad_bias");
          if (chained) check_16(r.grad_input_bias, want.gib, mag.gib, s.m * s.n, gpu, "grad_input_bias");
        }
      }
  }
  const auto x = matrix<T>(3, 4, 1), w = matrix<T>(2, 4, 2), g = matrix<T>(3, 2, 3);
  veda::LinearBackwardOptions o;
  o.tier = "gpu-cublaslt-fused";
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, w, g, Activation::None, {}, o), doctest::Contains("has no tier"),
                       veda::InvalidArgument);
}

TEST_CASE("the gradients are those of linear(): central differences in double") {
  Runtime rt;
  const std::size_t m = 6, k = 5, n = 4;
  auto x = matrix<double>(m, k, 11), w = matrix<double>(n, k, 12);
  const auto b = matrix<double>(1, n, 13), c = matrix<double>(m, n, 14);  // L = sum(c * linear(x, w, b, act)): dL/dy = c
  veda::Array<double> b1(n);
  for (std::size_t j = 0; j < n; ++j) b1.host()[j] = b.host()[j];
  for (Activation act : kActs) {
    CAPTURE(static_cast<int>(act));
    auto loss = [&](const veda::Array<double>& xx, const veda::Array<double>& ww, const veda::Array<double>& bb) {
      const auto y = veda::linear(xx, ww, bb, act);
      double l = 0;
      for (std::size_t i = 0; i < m * n; ++i) l += c.host()[i] * y.host()[i];
      return l;
    };
    const auto z = veda::linear(x, w, b1);
    const auto r = veda::linear_backward(x, w, c, act, z);
    const double h = 1e-6;
    for (double v : z.host()) REQUIRE(std::abs(v) > 4 * h);  // no step crosses ReLU's kink
    auto numeric = [&](veda::Array<double>& a, std::size_t i) {
      const double keep = a.host()[i];
      a.host()[i] = keep + h;
      const double up = loss(x, w, b1);
      a.host()[i] = keep - h;
      const double down = loss(x, w, b1);
      a.host()[i] = keep;
      return (up - down) / (2 * h);
    };
    for (std::size_t i = 0; i < m * k; i += 3) CHECK(r.grad_x.host()[i] == doctest::Approx(numeric(x, i)).epsilon(1e-6));
    for (std::size_t i = 0; i < n * k; i += 2) CHECK(r.grad_w.host()[i] == doctest::Approx(numeric(w, i)).epsilon(1e-6));
    for (std::size_t j = 0; j < n; ++j) CHECK(r.grad_bias.host()[j] == doctest::Approx(numeric(b1, j)).epsilon(1e-6));
  }
}

TEST_CASE("10^7-element gradients on the model's tier and cpu-tiled") {
  Runtime rt;
  const std::size_t m = 156250, k = 8, n = 64;  // grad_out: 10^7 elements
  const auto x = matrix<double>(m, k, 21), w = matrix<double>(n, k, 22), g = matrix<double>(m, n, 23);
  const auto z = matrix<double>(m, n, 24);
  const Want want = oracle(x, w, g, Activation::Relu, z, Activation::None, z);
  for (const char* tier : {"", "cpu-tiled"}) {
    CAPTURE(tier);
    veda::LinearBackwardOptions o;
    o.tier = tier;
    const auto r = veda::linear_backward(x, w, g, Activation::Relu, z, o);
    check_close(r.grad_x, want.gx, n, tier, "grad_x");
    check_close(r.grad_w, want.gw, m, tier, "grad_w");
    check_close(r.grad_bias, want.gb, m, tier, "grad_bias");
  }
}

TEST_CASE("the CPU tiers give the same bias gradient bits; so do repeated calls") {
  Runtime rt;
  const auto x = matrix<float>(4099, 33, 31), w = matrix<float>(1500, 33, 32), g = matrix<float>(4099, 1500, 33);
  veda::LinearBackwardOptions o;
  o.tier = "cpu-reference";
  const auto a = veda::linear_backward(x, w, g, Activation::None, {}, o);
  o.tier = "cpu-tiled";
  const auto b = veda::linear_backward(x, w, g, Activation::None, {}, o);
  const auto c = veda::linear_backward(x, w, g, Activation::None, {}, o);
  CHECK(a.grad_bias.to_vector() == b.grad_bias.to_vector());
  CHECK(b.grad_bias.to_vector() == c.grad_bias.to_vector());
}

TEST_CASE("shape errors and a missing pre-activation name what is wrong, before any work") {
  Runtime rt;
  const auto x = matrix<float>(3, 4, 1), w = matrix<float>(2, 4, 2), g = matrix<float>(3, 2, 3);
  const auto z = matrix<float>(3, 2, 4);
  using veda::InvalidArgument;
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, matrix<float>(2, 5, 5), g),
                       Contains("veda::linear_backward: x is 3x4 and w is 2x5"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, w, matrix<float>(2, 3, 6)), Contains("grad_out is 2x3; it must be 3x2"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, w, g, Activation::Gelu), Contains("pre_act is empty; it must be 3x2"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, w, g, Activation::None, {}, Activation::Relu, z),
                       Contains("input_pre_act is 3x2; it must be 3x4"), InvalidArgument);
  const veda::Array<float> x3(veda::Shape{1, 3, 4});
  CHECK_THROWS_WITH_AS(veda::linear_backward(x3, w, g), Contains("must be 2-D"), InvalidArgument);
  CHECK_THROWS_WITH_AS(veda::linear_backward(x, w, g, Activation::None, {}, {.tier = "quantum"}),
                       Contains("unknown tier 'quantum'"), InvalidArgument);
  // The runtime stays usable.
  CHECK(veda::linear_backward(x, w, g).grad_w.size() == 8);
}
