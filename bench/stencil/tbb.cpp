#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include "bench/stencil/contenders.hpp"

namespace bench::stencil {
void tbb(const double* u, double* v, std::size_t n) {
  tbb::parallel_for(tbb::blocked_range2d<std::size_t>(1, n - 1, 1, n - 1), [&](const auto& r) {
    rows(u, v, n, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
  });
}
}  // namespace bench::stencil
