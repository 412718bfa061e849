#include <tbb/parallel_for.h>

#include "bench/spmv/contenders.hpp"

namespace bench::spmv {
void tbb(const Csr& a, const double* x, double* y) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, a.rows, 256),
                    [&](const auto& r) { rows(a, x, y, r.begin(), r.end()); });
}
}  // namespace bench::spmv
