#include "bench/common/omp_lanes.hpp"
#include "bench/par_iter/contenders.hpp"

namespace bench::par_iter {

float omp_fused(const float* x, std::size_t n) {
  return omp_sum_lanes<float>(n, [x](std::size_t i) {
    const float a = stage1(x[i]);
    return keep(a) ? stage2(a) : 0.0f;
  });
}

double omp_stream(const double* x, std::size_t n) {
  return omp_sum_lanes<double>(n, [x](std::size_t i) { return scale(x[i]); });
}

}  // namespace bench::par_iter
