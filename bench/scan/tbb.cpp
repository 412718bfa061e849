#include <tbb/blocked_range.h>
#include <tbb/parallel_scan.h>

#include "bench/scan/contenders.hpp"

namespace bench::scan {
void tbb_scan(const float* in, float* out, std::size_t n) {
  tbb::parallel_scan(
      tbb::blocked_range<std::size_t>(0, n), 0.0f,
      [&](const tbb::blocked_range<std::size_t>& r, float sum, bool final) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
          sum += in[i];
          if (final) out[i] = sum;
        }
        return sum;
      },
      [](float a, float b) { return a + b; });
}
}  // namespace bench::scan
