#include "bench/common/omp_lanes.hpp"
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise {

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
