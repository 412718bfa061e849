#include "bench/spmv/contenders.hpp"

namespace bench::spmv {
void omp(const Csr& a, const double* x, double* y) {
  const auto n = static_cast<long>(a.rows);
#pragma omp parallel for schedule(dynamic, 256)
  for (long r = 0; r < n; ++r) rows(a, x, y, static_cast<std::size_t>(r), static_cast<std::size_t>(r) + 1);
}
}  // namespace bench::spmv
