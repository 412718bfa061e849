#include "backends/cpu/scan.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "veda/detail/lanes.hpp"
#include "veda/detail/op_types.hpp"

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

namespace {
// Sum of x[0, n) in independent lanes: the pre-scan pass needs only a
// range's total, and one chain of dependent adds would make it as slow as
// the scan itself (4 cycles per float add).
template <class T>
T range_sum(const T* x, std::size_t n) {
  return reduce_lanes([x](std::size_t i) { return x[i]; }, 0, n, T{}, std::plus<T>{});
}
}  // namespace

template <class T>
void scan_parallel(CpuExecutor& ex, const T* in, T* out, std::size_t n, bool inclusive, T init) {
  if (n == 0) return;
  // Three passes over blocks: every block's total in parallel (cheap: eight
  // independent chains), a serial prefix over the totals, then every block
  // scanned from its offset in parallel. Each element is added in one
  // dependent chain only once, so two threads scan about twice as fast as
  // one; tbb::parallel_scan runs its chain-bound pass for more of the data
  // (1.3x here, see bench/scan). Block b is read by pass 1 before pass 3
  // writes it, so out == in is safe.
  const std::size_t threads = static_cast<std::size_t>(ex.threads());
  const std::size_t blocks = std::min<std::size_t>(8 * threads, (n + 4095) / 4096);
  const std::size_t len = (n + blocks - 1) / blocks;
  std::vector<T> offset(blocks);
  ex.execute([&] {
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
      const std::size_t lo = b * len, hi = std::min(n, lo + len);
      offset[b] = lo < hi ? range_sum(in + lo, hi - lo) : T(0);
    });
    // offset[b] = what block b starts from: the sum of everything before it
    // (inclusive scans start from the first element, exclusive from init).
    T acc = inclusive ? T(0) : init;
    for (std::size_t b = 0; b < blocks; ++b) {
      const T total = offset[b];
      offset[b] = acc;
      acc = b == 0 && inclusive ? total : acc + total;
    }
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
      const std::size_t lo = b * len, hi = std::min(n, lo + len);
      if (lo >= hi) return;
      if (b == 0) return scan_serial(in, out, hi, inclusive, init);
      T sum = offset[b];
      if (inclusive) {
        for (std::size_t i = lo; i < hi; ++i) out[i] = sum += in[i];
      } else {
        for (std::size_t i = lo; i < hi; ++i) {
          const T x = in[i];
          out[i] = sum;
          sum += x;
        }
      }
    });
  });
}

#define VEDA_SCAN_INSTANTIATE(T)                                               \
  template void scan_serial<T>(const T*, T*, std::size_t, bool, T);            \
  template void scan_parallel<T>(CpuExecutor&, const T*, T*, std::size_t, bool, T);
VEDA_FOR_EACH_OP_TYPE(VEDA_SCAN_INSTANTIATE)
#undef VEDA_SCAN_INSTANTIATE

}  // namespace veda::detail::cpu
