// The seed workloads as veda code, after examples/ (compiled by nvcc when
// veda has its CUDA backend, so the device tiers exist where a GPU does).
#include <cmath>

#include "bench/seeds/contenders.hpp"
#include "veda/veda.hpp"

namespace bench::seeds {

double matmul_veda(Matmul& w) {
  veda::matmul<float>(w.a, w.b, w.c, w.n, w.n, w.n);
  return static_cast<double>(w.c[0]) + w.c[w.n * w.n - 1];
}

double pi_veda(std::uint64_t n) {
  const std::uint64_t hits = veda::par_iter(veda::range<std::uint64_t>(0, n), {.name = "seeds-pi"})
                                 .gpu_map(VEDA_LAMBDA((std::uint64_t i) noexcept, { return inside(i); }))
                                 .sum();
  return 4.0 * static_cast<double>(hits) / static_cast<double>(n);
}

double blur_veda(Images& w) {
  return veda::par_iter(veda::range(w.count), {.name = "seeds-blur"})
      .map([&w](int i) {
        w.blur(i);
        return w.mean(i);
      })
      .sum();
}

std::function<double()> regression_veda(const Regression& r) {
  const std::size_t m = r.m, k = r.k, steps = r.steps;
  const float lr = r.lr;
  auto X = std::make_shared<veda::Array<float>>(m, k, r.x);
  auto y = std::make_shared<veda::Array<float>>(m, 1, r.y);
  auto residual = veda::gpu(VEDA_LAMBDA((float p, float t) noexcept, { return p - t; }), {.name = "seeds-residual"});
  auto update = veda::gpu(VEDA_LAMBDA((float wj, float g) noexcept, { return wj - lr * g; }), {.name = "seeds-update"});
  auto scale = veda::gpu(VEDA_LAMBDA((float g) noexcept, { return 2.0f * g / m; }), {.name = "seeds-scale"});
  return [=] {
    veda::Array<float> w(k, 1);
    for (std::size_t step = 0; step < steps; ++step) {
      auto err = residual(veda::matmul(*X, w), *y);
      err.reshape(m, 1);
      auto grad = veda::matmul(err, *X, {.transpose_a = true});
      grad.flatten();
      w = update(w, scale(grad));
      w.reshape(k, 1);
    }
    double s = 0;
    for (float v : w.host()) s += v;
    return s;
  };
}

// Two passes, as a careful user writes it in float: the variance of the
// centred values, not E[x^2] - E[x]^2, which cancels catastrophically here
// (column means up to 255, deviations about 1: 0.1% off on an H100).
std::function<double()> normalize_veda(Normalize& nz) {
  const std::size_t n = nz.n, d = nz.d;
  auto X = std::make_shared<veda::Array<float>>(n, d, nz.x);
  auto ones_row = std::make_shared<veda::Array<float>>(1, n, std::vector<float>(n, 1.0f / n));
  auto ones_col = std::make_shared<veda::Array<float>>(n, 1, std::vector<float>(n, 1.0f));
  auto centre = veda::gpu(VEDA_LAMBDA((float x, float mean) noexcept, { return x - mean; }), {.name = "seeds-centre"});
  auto square = veda::gpu(VEDA_LAMBDA((float x) noexcept, { return x * x; }), {.name = "seeds-square"});
  auto root = veda::gpu(VEDA_LAMBDA((float v) noexcept, { return sqrtf(v); }), {.name = "seeds-std"});
  auto divide = veda::gpu(VEDA_LAMBDA((float c, float sd) noexcept, { return c / sd; }), {.name = "seeds-z"});
  return [=] {
    const auto mean = veda::matmul(*ones_row, *X);
    auto C = centre(*X, veda::matmul(*ones_col, mean));
    C.reshape(n, d);
    auto sq = square(C);
    sq.reshape(n, d);
    auto sd = root(veda::matmul(*ones_row, sq));
    sd.reshape(1, d);
    auto Z = divide(C, veda::matmul(*ones_col, sd));
    Z.reshape(n, d);
    const auto G = veda::matmul(Z, Z, {.transpose_b = true});
    const auto g = G.host();
    double t = 0;
    for (std::size_t i = 0; i < n; ++i) t += g[i * n + i];
    return t;
  };
}

}  // namespace bench::seeds
