#include <cmath>

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

void serial(Case c, const Memory& m) {
  const float *x = m.x, *y = m.y;
  float* o = m.out;
  const std::size_t n = m.n;
  switch (c) {
    case Case::Axpy:
      for (std::size_t i = 0; i < n; ++i) o[i] = 2 * x[i] + y[i];
      break;
    case Case::Rational:
      for (std::size_t i = 0; i < n; ++i) o[i] = (x[i] - y[i]) * (x[i] + y[i]) / (1 + x[i] * x[i]);
      break;
    case Case::LeakySqrt:
      for (std::size_t i = 0; i < n; ++i) o[i] = (x[i] > 0 ? x[i] : 0.1f * x[i]) + std::sqrt(std::fabs(y[i]));
      break;
    case Case::Normalize:
      for (std::size_t r = 0; r < n / m.cols; ++r)
        for (std::size_t j = 0; j < m.cols; ++j) o[r * m.cols + j] = (x[r * m.cols + j] - m.mu[j]) / m.sd[j];
      break;
  }
}

}  // namespace bench::expressions
