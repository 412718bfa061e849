#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "bench/common/lanes.hpp"
#include "bench/elementwise/contenders.hpp"

namespace bench::elementwise {
namespace {
template <class Partitioner>
Runner make(Work w, Workload& d) {
  switch (w) {
    case Work::Saxpy:
      return [&d] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, d.x.size()), [&](const auto& r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) d.out[i] = saxpy_op(d.x[i], d.y[i]);
        }, Partitioner());
      };
    case Work::ExpSin:
      return [&d] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, d.x.size()), [&](const auto& r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) d.out[i] = expsin_op(d.x[i]);
        }, Partitioner());
      };
    case Work::Sum:
      return [&d] {
        volatile float s = tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(0, d.x.size()), 0.0f,
            [&](const auto& r, float acc) {
              const float* x = d.x.data();
              return acc + sum_lanes<float>(r.begin(), r.end(), [x](std::size_t i) { return x[i]; });
            },
            [](float a, float b) { return a + b; }, Partitioner());
        (void)s;
      };
  }
  return {};
}
}  // namespace

Runner tbb_static(Work w, Workload& d) { return make<tbb::static_partitioner>(w, d); }
Runner tbb_auto(Work w, Workload& d) { return make<tbb::auto_partitioner>(w, d); }

}  // namespace bench::elementwise
