#include "bench/spmv/contenders.hpp"

namespace bench::spmv {
void serial(const Csr& a, const double* x, double* y) { rows(a, x, y, 0, a.rows); }
}  // namespace bench::spmv
