#include <cmath>
#include <numeric>

#include "bench/common/lanes.hpp"
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise {

float expsin_op(float x) { return std::exp(-x) * std::sin(4.0f * x); }

Runner serial(Work w, Workload& d) {
  switch (w) {
    case Work::Saxpy:
      return [&d] {
        for (std::size_t i = 0; i < d.x.size(); ++i) d.out[i] = saxpy_op(d.x[i], d.y[i]);
      };
    case Work::ExpSin:
      return [&d] {
        for (std::size_t i = 0; i < d.x.size(); ++i) d.out[i] = expsin_op(d.x[i]);
      };
    case Work::Sum:
      return [&d] {
        const float* x = d.x.data();
        volatile float s = sum_lanes<float>(0, d.x.size(), [x](std::size_t i) { return x[i]; });
        (void)s;
      };
  }
  return {};
}

}  // namespace bench::elementwise
