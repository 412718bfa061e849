// matrix_multiply: the seed documents' headline — a small (100 x 100) and a
// large (2000 x 2000) product — and a linear layer. For each: where veda ran
// it, why, and how long it took once settled.
#include <veda/veda.hpp>

#include <cmath>
#include <cstdio>

#include "example_util.hpp"

namespace {
veda::Array<float> filled(std::size_t r, std::size_t c, float scale) {
  veda::Array<float> a(r, c);
  auto h = a.host();
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = scale * static_cast<float>((i * 37) % 101) / 101.0f;
  return a;
}
}  // namespace

int main() {
  for (std::size_t n : {std::size_t{100}, std::size_t{2000}}) {
    const auto a = filled(n, n, 1.0f), b = filled(n, n, 0.5f);
    veda::Array<float> c;
    const double us = example::settled_us([&] { c = veda::matmul(a, b); }, n > 1000 ? 5 : 20);
    const std::string what = std::to_string(n) + " x " + std::to_string(n) + " matmul";
    example::report(what.c_str(), us);
    std::printf("%-36s = %.0f GFLOP/s; c[0][0] = %.4f\n", "", 2.0 * n * n * n / us / 1e3, c.host()[0]);
  }
  // A linear layer: relu(x w^T + b), 512 samples of 1024 features -> 256.
  const auto x = filled(512, 1024, 1.0f), w = filled(256, 1024, 0.01f), bias = filled(1, 256, 0.1f);
  veda::Array<float> y;
  const double us = example::settled_us([&] { y = veda::linear(x, w, bias, veda::Activation::Relu); });
  example::report("linear 512x1024 -> 256, ReLU", us);
  float worst = 0;
  for (float v : y.host()) worst = std::max(worst, std::abs(v));
  std::printf("%-36s = max |y| %.4f\n", "", worst);
  return 0;
}
