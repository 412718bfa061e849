// The seed workloads as plain serial loops (and the workloads' data).
#include <algorithm>
#include <cmath>

#include "bench/seeds/contenders.hpp"

namespace bench::seeds {

Matmul::Matmul(std::size_t n_) : n(n_), a(n * n), b(n * n), c(n * n) {
  for (std::size_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 13) * 0.125f - 0.75f;
    b[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  }
}

Images::Images(int count_) : count(count_), in(std::size_t(count) * kH * kW), out(in.size()) {
  float total = 0;
  for (int y = -kR; y <= kR; ++y)
    for (int x = -kR; x <= kR; ++x) total += w[y + kR][x + kR] = std::exp(-(x * x + y * y) / (2 * 1.2f * 1.2f));
  for (auto& row : w)
    for (float& v : row) v /= total;
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(static_cast<std::uint32_t>(i * 2654435761u) >> 24) / 255.0f;
}

void Images::blur(int image) {
  const float* img = &in[std::size_t(image) * kH * kW];
  float* o = &out[std::size_t(image) * kH * kW];
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      float s = 0;
      for (int dy = -kR; dy <= kR; ++dy)
        for (int dx = -kR; dx <= kR; ++dx) {
          const int yy = std::clamp(y + dy, 0, kH - 1), xx = std::clamp(x + dx, 0, kW - 1);
          s += w[dy + kR][dx + kR] * img[yy * kW + xx];
        }
      o[y * kW + x] = s;
    }
}

double Images::mean(int image) const {
  double s = 0;
  for (std::size_t p = 0; p < std::size_t(kH) * kW; ++p) s += out[std::size_t(image) * kH * kW + p];
  return s / (kH * kW);
}

Regression::Regression(std::size_t m_, std::size_t k_, std::size_t steps_)
    : m(m_), k(k_), steps(steps_), x(m * k), y(m) {
  std::uint32_t r = 1;
  auto uniform = [&] {
    r = r * 1664525u + 1013904223u;
    return static_cast<float>(r >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  };
  for (std::size_t i = 0; i < m; ++i) {
    float t = 0;
    for (std::size_t j = 0; j < k; ++j) t += (0.5f - static_cast<float>(j) / k) * (x[i * k + j] = uniform());
    y[i] = t + 0.01f * uniform();
  }
}

Normalize::Normalize(std::size_t n_, std::size_t d_) : n(n_), d(d_), x(n * d), z(n * d), g(n * n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j)
      x[i * d + j] = static_cast<float>(j) + std::sin(static_cast<float>(i * 31 + j)) * (1.0f + j % 7);
}

double trace(const std::vector<float>& g, std::size_t n) {
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) t += g[i * n + i];
  return t;
}

double pi_serial(std::uint64_t n) {
  std::uint64_t hits = 0;
  for (std::uint64_t i = 0; i < n; ++i) hits += inside(i);
  return 4.0 * static_cast<double>(hits) / static_cast<double>(n);
}

double blur_serial(Images& w) {
  double s = 0;
  for (int i = 0; i < w.count; ++i) {
    w.blur(i);
    s += w.mean(i);
  }
  return s;
}

double regression_serial(const Regression& w) {
  std::vector<float> wt(w.k, 0.0f), grad(w.k);
  for (std::size_t step = 0; step < w.steps; ++step) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    for (std::size_t i = 0; i < w.m; ++i) {
      const float* row = &w.x[i * w.k];
      float p = 0;
      for (std::size_t j = 0; j < w.k; ++j) p += row[j] * wt[j];
      const float e = p - w.y[i];
      for (std::size_t j = 0; j < w.k; ++j) grad[j] += e * row[j];
    }
    for (std::size_t j = 0; j < w.k; ++j) wt[j] -= w.lr * 2.0f * grad[j] / static_cast<float>(w.m);
  }
  double s = 0;
  for (float v : wt) s += v;
  return s;
}

double normalize_serial(Normalize& w) {
  std::vector<double> mean(w.d, 0.0), sq(w.d, 0.0);
  for (std::size_t i = 0; i < w.n; ++i)
    for (std::size_t j = 0; j < w.d; ++j) {
      const double v = w.x[i * w.d + j];
      mean[j] += v;
      sq[j] += v * v;
    }
  std::vector<float> m(w.d), sd(w.d);
  for (std::size_t j = 0; j < w.d; ++j) {
    m[j] = static_cast<float>(mean[j] / w.n);
    sd[j] = static_cast<float>(std::sqrt(sq[j] / w.n - (mean[j] / w.n) * (mean[j] / w.n)));
  }
  for (std::size_t i = 0; i < w.n; ++i)
    for (std::size_t j = 0; j < w.d; ++j) w.z[i * w.d + j] = (w.x[i * w.d + j] - m[j]) / sd[j];
  gram_openblas(w.z.data(), w.n, w.d, w.g.data());
  return trace(w.g, w.n);
}

}  // namespace bench::seeds
