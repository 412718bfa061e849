#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <memory>

#include "bench/common/bench.hpp"
#include "bench/common/lanes.hpp"
#include "bench/par_iter/contenders.hpp"

namespace bench::par_iter {

float tbb_fused(const float* x, std::size_t n) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), 0.0f,
      [&](const tbb::blocked_range<std::size_t>& r, float s) {
        return s + sum_lanes<float>(r.begin(), r.end(), [x](std::size_t i) {
                 const float a = stage1(x[i]);
                 return keep(a) ? stage2(a) : 0.0f;
               });
      },
      [](float a, float b) { return a + b; });
}

double tbb_stream(const double* x, std::size_t n) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), 0.0,
      [&](const tbb::blocked_range<std::size_t>& r, double s) {
        return s + sum_lanes<double>(r.begin(), r.end(), [x](std::size_t i) { return scale(x[i]); });
      },
      [](double a, double b) { return a + b; });
}

double triad_gbps(std::size_t n) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](auto r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) a[i] = b[i] = c[i] = 1.0f;
  });
  auto triad = [&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, n),
        [&](auto r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) a[i] = b[i] + 0.5f * c[i];
        },
        tbb::static_partitioner());
  };
  const Stats s = measure(triad, 9);
  return 3.0 * sizeof(float) * static_cast<double>(n) / s.median;  // bytes per ns = GB/s
}

}  // namespace bench::par_iter
