#include "bench/par_iter/contenders.hpp"

namespace bench::par_iter {

float omp_fused(const float* x, std::size_t n) {
  float s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    const float a = stage1(x[i]);
    if (keep(a)) s += stage2(a);
  }
  return s;
}

double omp_stream(const double* x, std::size_t n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (std::size_t i = 0; i < n; ++i) s += scale(x[i]);
  return s;
}

}  // namespace bench::par_iter
