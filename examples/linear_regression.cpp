// linear_regression: least squares by gradient descent, 200 steps over
// 100 000 samples of 16 features, written as the VedaRT guide writes it.
// X, y and the weights are veda::Arrays:
// on a GPU they move to the device once and stay there between steps (only
// the loss comes back); telemetry counts what crossed the bus.
#include <veda/veda.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_util.hpp"

int main() {
  veda::init(veda::Config::builder().telemetry(true).build());
  constexpr std::size_t m = 100'000, k = 16, steps = 200;
  constexpr float lr = 0.1f;
  // Features in [-1, 1), targets from known weights plus a little noise.
  std::vector<float> w_true(k), xs(m * k), ys(m);
  for (std::size_t j = 0; j < k; ++j) w_true[j] = 0.5f - static_cast<float>(j) / k;
  std::uint32_t r = 1;
  auto uniform = [&] {
    r = r * 1664525u + 1013904223u;
    return static_cast<float>(r >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  };
  for (std::size_t i = 0; i < m; ++i) {
    float t = 0;
    for (std::size_t j = 0; j < k; ++j) t += w_true[j] * (xs[i * k + j] = uniform());
    ys[i] = t + 0.01f * uniform();
  }
  const veda::Array<float> X(m, k, std::move(xs)), y(m, 1, std::move(ys));
  veda::Array<float> w(k, 1);

  auto square = VEDA_LAMBDA((float e) noexcept, { return e * e; });

  const auto t0 = std::chrono::steady_clock::now();
  float loss = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    // The guide's step, w -= lr * 2/m * X.T @ (X @ w - y): two matmuls and
    // two fused expressions.
    const veda::Array<float> err = veda::matmul(X, w) - y;                   // m x 1
    const auto grad = veda::matmul(X, err, {.transpose_a = true});          // k x 1
    w = w - (lr * 2.0f / m) * grad;                                         // in place
    if (step % 50 == 0 || step + 1 == steps) {
      loss = static_cast<float>(veda::par_iter(err, {.name = "loss"}).gpu_map(square).sum() / m);
      std::printf("step %3zu: loss %.6f\n", step, loss);
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  float worst = 0;
  const auto wh = w.host();
  for (std::size_t j = 0; j < k; ++j) worst = std::max(worst, std::abs(wh[j] - w_true[j]));
  std::printf("%zu steps in %.1f ms; largest weight error %.4f\n", steps, ms, worst);
  example::report("the loss, per training step:", ms * 1e3 / steps);
  const auto s = veda::telemetry::snapshot();
  std::printf("transfers: %llu host-to-device (%.1f MiB), %llu device-to-host (%.1f MiB)\n",
              static_cast<unsigned long long>(s.transfers_h2d), s.bytes_h2d / 1048576.0,
              static_cast<unsigned long long>(s.transfers_d2h), s.bytes_d2h / 1048576.0);
  for (const auto& o : s.ops)
    std::printf("  %-10s %5llu calls, p50 %8.1f us, %s\n", o.name.c_str(), static_cast<unsigned long long>(o.calls),
                o.p50_us, o.by_tier.begin()->first.c_str());
  veda::shutdown();
  return worst < 0.01f ? 0 : 1;
}
