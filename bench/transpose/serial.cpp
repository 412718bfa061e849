#include <algorithm>

#include "bench/transpose/contenders.hpp"

namespace bench::transpose {

void serial_tiled(const double* a, double* b, std::size_t n, bool accumulate) {
  for (std::size_t i0 = 0; i0 < n; i0 += kTile)
    for (std::size_t j0 = 0; j0 < n; j0 += kTile)
      tile(a, b, n, i0, std::min(n, i0 + kTile), j0, std::min(n, j0 + kTile), accumulate);
}

}  // namespace bench::transpose
