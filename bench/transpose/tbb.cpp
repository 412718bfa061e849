#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include "bench/transpose/contenders.hpp"

namespace bench::transpose {

void tbb_tiled(const double* a, double* b, std::size_t n, bool accumulate) {
  tbb::parallel_for(tbb::blocked_range2d<std::size_t>(0, n, kTile, 0, n, kTile), [&](const auto& r) {
    tile(a, b, n, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end(), accumulate);
  });
}

}  // namespace bench::transpose
