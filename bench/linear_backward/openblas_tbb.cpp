#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "bench/linear_backward/contenders.hpp"

namespace bench::linear_backward {
namespace {
float gelu_grad(float z) {
  const float c = 0.7978845608f, a = 0.044715f;
  const float t = std::tanh(c * (z + a * z * z * z));
  return 0.5f * (1 + t) + 0.5f * z * (1 - t * t) * c * (1 + 3 * a * z * z);
}
}  // namespace

void openblas_tbb(Layer& l) {
  const std::size_t m = l.m, k = l.k, n = l.n;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m * n, 16384), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) l.dz[i] = l.grad_out[i] * gelu_grad(l.pre_act[i]);
  });
  const int M = static_cast<int>(m), K = static_cast<int>(k), N = static_cast<int>(n);
  // grad_x = dz w; grad_w = dz^T x
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, K, N, 1.0f, l.dz.data(), N, l.w.data(), K, 0.0f,
              l.grad_x.data(), K);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, K, M, 1.0f, l.dz.data(), N, l.x.data(), K, 0.0f,
              l.grad_w.data(), K);
  // Column sums: blocks of columns to workers, each walking the rows.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const auto& r) {
    std::fill(l.grad_bias.begin() + static_cast<std::ptrdiff_t>(r.begin()),
              l.grad_bias.begin() + static_cast<std::ptrdiff_t>(r.end()), 0.0f);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = r.begin(); j < r.end(); ++j) l.grad_bias[j] += l.dz[i * n + j];
  });
}

}  // namespace bench::linear_backward
