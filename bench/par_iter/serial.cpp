#include "bench/common/lanes.hpp"
#include "bench/par_iter/contenders.hpp"

namespace bench::par_iter {

float serial(const float* x, std::size_t n) {
  return sum_lanes<float>(0, n, [x](std::size_t i) {
    const float a = stage1(x[i]);
    return keep(a) ? stage2(a) : 0.0f;
  });
}

}  // namespace bench::par_iter

namespace bench::par_iter {

double serial_stream(const double* x, std::size_t n) {
  return sum_lanes<double>(0, n, [x](std::size_t i) { return scale(x[i]); });
}

}  // namespace bench::par_iter
