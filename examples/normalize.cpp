// normalize: the VedaRT guide's example, (X - mean) / std per column, then
// the Gram matrix Z Z^T, for 2000 samples of 256 features:
//   normalized = (X - X.mean(axis=0)) / X.std(axis=0); G = normalized @ normalized.T
// The column statistics are reductions along axis 0, the normalisation one
// fused expression that broadcasts them along the rows (one pass, written
// into Z in place), the Gram matrix a matmul with B transposed; every step
// is placed by veda.
#include <veda/veda.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_util.hpp"

int main() {
  constexpr std::size_t n = 2000, d = 256;
  std::vector<float> xs(n * d);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j)
      xs[i * d + j] = static_cast<float>(j) + std::sin(static_cast<float>(i * 31 + j)) * (1.0f + j % 7);
  const veda::Array<float> X(n, d, std::move(xs));

  veda::Array<float> Z(n, d), G;
  auto run = [&] {
    Z = (X - veda::mean(X, 0)) / veda::stddev(X, 0);
    G = veda::matmul(Z, Z, {.transpose_b = true});  // n x n
  };
  for (int i = 0; i < 5; ++i) run();
  const auto t0 = std::chrono::steady_clock::now();
  run();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  example::report("Gram matrix Z Z^T (2000 x 2000)", us);

  // Each column of Z now has mean 0 and variance 1; G's diagonal is d.
  double worst_mean = 0, worst_diag = 0;
  const auto z = Z.host();
  for (std::size_t j = 0; j < d; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += z[i * d + j];
    worst_mean = std::max(worst_mean, std::abs(s / n));
  }
  const auto g = G.host();
  double diag = 0;
  for (std::size_t i = 0; i < n; ++i) diag += g[i * n + i];
  worst_diag = std::abs(diag / n - static_cast<double>(d));
  std::printf("%-36s = whole pipeline %.1f ms; largest column mean %.2e; mean diagonal of G %.3f (expect %zu)\n", "",
              us / 1e3, worst_mean, diag / n, d);
  return worst_mean < 1e-3 && worst_diag < 0.05 * d ? 0 : 1;
}
