#include <omp.h>

#include "bench/common/lanes.hpp"
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise {
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


Runner omp(Work w, Workload& d) {
  switch (w) {
    case Work::Saxpy:
      return [&d] {
        const long n = static_cast<long>(d.x.size());
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) d.out[i] = saxpy_op(d.x[i], d.y[i]);
      };
    case Work::ExpSin:
      return [&d] {
        const long n = static_cast<long>(d.x.size());
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) d.out[i] = expsin_op(d.x[i]);
      };
    case Work::Sum:
      return [&d] {
        const float* x = d.x.data();
        volatile float s = omp_sum_lanes<float>(d.x.size(), [x](std::size_t i) { return x[i]; });
        (void)s;
      };
  }
  return {};
}

}  // namespace bench::elementwise
