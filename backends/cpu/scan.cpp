#include "backends/cpu/scan.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_scan.h>

#include <cstdint>

namespace veda::detail::cpu {

template <class T>
void scan_serial(const T* in, T* out, std::size_t n, bool inclusive, T init) {
  if (n == 0) return;
  if (inclusive) {
    T acc = in[0];
    out[0] = acc;
    for (std::size_t i = 1; i < n; ++i) out[i] = acc += in[i];
  } else {
    T acc = init;
    for (std::size_t i = 0; i < n; ++i) {
      const T x = in[i];  // read before the write: out may be in
      out[i] = acc;
      acc += x;
    }
  }
}

template <class T>
void scan_parallel(CpuExecutor& ex, const T* in, T* out, std::size_t n, bool inclusive, T init) {
  if (n == 0) return;
  // The leftmost range starts from in[0] (inclusive) or init (exclusive), as
  // the serial tier does; every other range from the prefix TBB hands it.
  // parallel_scan reads a range in its pre-scan before its final scan
  // writes it, so out == in is safe.
  ex.execute([&] {
    tbb::parallel_scan(
        tbb::blocked_range<std::size_t>(0, n, 4096), T(0),
        [&](const tbb::blocked_range<std::size_t>& r, T sum, bool final) {
          std::size_t i = r.begin();
          if (inclusive) {
            if (i == 0) {
              sum = in[0];
              if (final) out[0] = sum;
              ++i;
            }
            for (; i < r.end(); ++i) {
              sum += in[i];
              if (final) out[i] = sum;
            }
          } else {
            if (i == 0) sum = init;
            for (; i < r.end(); ++i) {
              const T x = in[i];
              if (final) out[i] = sum;
              sum += x;
            }
          }
          return sum;
        },
        [](const T& left, const T& right) { return left + right; });
  });
}

#define VEDA_SCAN_INSTANTIATE(T)                                               \
  template void scan_serial<T>(const T*, T*, std::size_t, bool, T);            \
  template void scan_parallel<T>(CpuExecutor&, const T*, T*, std::size_t, bool, T);
VEDA_SCAN_INSTANTIATE(float)
VEDA_SCAN_INSTANTIATE(double)
VEDA_SCAN_INSTANTIATE(std::int32_t)
VEDA_SCAN_INSTANTIATE(std::int64_t)
VEDA_SCAN_INSTANTIATE(std::uint32_t)
VEDA_SCAN_INSTANTIATE(std::uint64_t)
#undef VEDA_SCAN_INSTANTIATE

}  // namespace veda::detail::cpu
