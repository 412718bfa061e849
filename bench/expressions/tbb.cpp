// The hand-fused loop an experienced user writes: one oneTBB parallel_for,
// the whole expression in its body.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

void tbb_loop(Case c, const Memory& m) {
  const float *x = m.x, *y = m.y, *mu = m.mu, *sd = m.sd;
  float* o = m.out;
  const std::size_t n = m.n, cols = m.cols;
  if (c == Case::Normalize) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n / cols), [=](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i < r.end(); ++i)
        for (std::size_t j = 0; j < cols; ++j) o[i * cols + j] = (x[i * cols + j] - mu[j]) / sd[j];
    });
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [=](const tbb::blocked_range<std::size_t>& r) {
    const std::size_t b = r.begin(), e = r.end();
    switch (c) {
      case Case::Axpy:
        for (std::size_t i = b; i < e; ++i) o[i] = 2 * x[i] + y[i];
        break;
      case Case::Rational:
        for (std::size_t i = b; i < e; ++i) o[i] = (x[i] - y[i]) * (x[i] + y[i]) / (1 + x[i] * x[i]);
        break;
      default:
        for (std::size_t i = b; i < e; ++i) o[i] = (x[i] > 0 ? x[i] : 0.1f * x[i]) + std::sqrt(std::fabs(y[i]));
        break;
    }
  });
}

}  // namespace bench::expressions
