#include <cmath>
#include <numeric>

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
        volatile float s = std::accumulate(d.x.begin(), d.x.end(), 0.0f);
        (void)s;
      };
  }
  return {};
}

}  // namespace bench::elementwise
