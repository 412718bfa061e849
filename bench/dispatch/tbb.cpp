#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "bench/dispatch/contenders.hpp"

namespace bench::dispatch {

void tbb_static(Data& d) {
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, d.x.size()),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) d.out[i] = 2.0f * d.x[i] + d.y[i];
      },
      tbb::static_partitioner());
}

}  // namespace bench::dispatch
