// std::execution::par_unseq (libstdc++'s parallel algorithms run on oneTBB).
#include <algorithm>
#include <execution>
#include <numeric>

#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise {

Runner stdpar(Work w, Workload& d) {
  switch (w) {
    case Work::Saxpy:
      return [&d] {
        std::transform(std::execution::par_unseq, d.x.begin(), d.x.end(), d.y.begin(), d.out.begin(), saxpy_op);
      };
    case Work::ExpSin:
      return [&d] { std::transform(std::execution::par_unseq, d.x.begin(), d.x.end(), d.out.begin(), expsin_op); };
    case Work::Sum:
      return [&d] {
        volatile float s = std::reduce(std::execution::par_unseq, d.x.begin(), d.x.end(), 0.0f);
        (void)s;
      };
  }
  return {};
}

}  // namespace bench::elementwise
