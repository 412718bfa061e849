#include <omp.h>

#include "bench/common/lanes.hpp"
#include "bench/par_iter/contenders.hpp"

namespace bench::par_iter {
namespace {
// Each thread sums its static share through 8 lanes (bench/common/lanes.hpp).
template <class T, class Term>
T omp_sum_lanes(std::size_t n, const Term& term) {
  T acc = 0;
#pragma omp parallel reduction(+ : acc)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    acc += sum_lanes<T>(n * t / nt, n * (t + 1) / nt, term);
  }
  return acc;
}
}  // namespace

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
