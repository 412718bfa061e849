// The seed workloads' dense algebra through OpenBLAS's CBLAS, called directly.
#include <cblas.h>

#include "bench/seeds/contenders.hpp"

namespace bench::seeds {

double matmul_openblas(Matmul& w) {
  const int n = static_cast<int>(w.n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, w.a.data(), n, w.b.data(), n, 0.0f,
              w.c.data(), n);
  return static_cast<double>(w.c[0]) + w.c[w.n * w.n - 1];
}

void gram_openblas(const float* z, std::size_t n, std::size_t d, float* g) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(d),
              1.0f, z, static_cast<int>(d), z, static_cast<int>(d), 0.0f, g, static_cast<int>(n));
}

// Per step: predictions X w (sgemv), residuals, gradient X^T e (sgemv).
double regression_openblas(const Regression& w) {
  const int m = static_cast<int>(w.m), k = static_cast<int>(w.k);
  std::vector<float> wt(w.k, 0.0f), e(w.m), grad(w.k);
  for (std::size_t step = 0; step < w.steps; ++step) {
    cblas_scopy(m, w.y.data(), 1, e.data(), 1);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, w.x.data(), k, wt.data(), 1, -1.0f, e.data(), 1);
    cblas_sgemv(CblasRowMajor, CblasTrans, m, k, 1.0f, w.x.data(), k, e.data(), 1, 0.0f, grad.data(), 1);
    cblas_saxpy(k, -w.lr * 2.0f / static_cast<float>(w.m), grad.data(), 1, wt.data(), 1);
  }
  double s = 0;
  for (float v : wt) s += v;
  return s;
}

}  // namespace bench::seeds
