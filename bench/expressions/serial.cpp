#include <cmath>

#include "bench/expressions/contenders.hpp"

namespace bench::expressions {

void serial(Case c, const Data& d, std::vector<float>& out) {
  const float *x = d.x.data(), *y = d.y.data();
  float* o = out.data();
  const std::size_t n = out.size();
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
      for (std::size_t r = 0; r < n / d.cols; ++r)
        for (std::size_t j = 0; j < d.cols; ++j) o[r * d.cols + j] = (x[r * d.cols + j] - d.mu[j]) / d.sd[j];
      break;
  }
}

}  // namespace bench::expressions
