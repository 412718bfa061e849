#include "bench/stencil/contenders.hpp"

namespace bench::stencil {
void omp(const double* u, double* v, std::size_t n) {
  const auto last = static_cast<long>(n) - 1;
#pragma omp parallel for schedule(static)
  for (long i = 1; i < last; ++i) rows(u, v, n, static_cast<std::size_t>(i), static_cast<std::size_t>(i) + 1, 1, n - 1);
}
}  // namespace bench::stencil
