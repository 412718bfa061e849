// Softmax on the CPU. A contiguous slice (inner == 1) takes three passes:
// its maximum; exp(x - max), written out and summed; then the scaling. The
// sum is taken in fixed chunks of kChunk elements, each in vector lanes
// (detail/lanes.hpp), the chunks' sums added in order in double: a float
// sum's error then grows with the chunk, not the slice, and with workers a
// long slice's chunks run as tasks with the serial tier's bits. A strided
// axis (inner > 1) runs a block of up to kCols columns at a time, row by
// row, so that every read is a contiguous run; its sums are in double.
#include "backends/cpu/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/tasks.hpp"
#include "veda/detail/lanes.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kChunk = 4096;    // a slice's sum: fixed chunks, added in order
constexpr std::size_t kTask = 1 << 12;  // elements per task: ~20 us of exp
constexpr std::size_t kCols = 64;       // columns per strided block

template <class T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

template <class T>
T chunk_max(const T* x, std::size_t lo, std::size_t hi) {
  return reduce_lanes<T>([x](std::size_t i) { return x[i]; }, lo, hi, kNegInf<T>,
                         [](T a, T b) { return std::max(a, b); });
}
// y = exp(x - m) over [lo, hi); returns its sum.
template <class T>
T chunk_exp(const T* x, T* y, std::size_t lo, std::size_t hi, T m) {
  for (std::size_t i = lo; i < hi; ++i) y[i] = std::exp(x[i] - m);
  return reduce_lanes<T>([y](std::size_t i) { return y[i]; }, lo, hi, T(0), [](T a, T b) { return a + b; });
}
// The last pass, from the slice's max m and sum s.
template <class T>
void chunk_finish(const T* x, T* y, std::size_t lo, std::size_t hi, T m, double s, bool log) {
  if (log) {
    const T ls = static_cast<T>(std::log(s));
    for (std::size_t i = lo; i < hi; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const T r = static_cast<T>(1 / s);
    for (std::size_t i = lo; i < hi; ++i) y[i] *= r;
  }
}

// One contiguous slice of n elements; its chunks as tasks when `par`.
template <class T>
void slice(const T* x, T* y, std::size_t n, bool log, CpuExecutor* par) {
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  auto lo = [](std::size_t c) { return c * kChunk; };
  auto hi = [n](std::size_t c) { return std::min(n, (c + 1) * kChunk); };
  T m = kNegInf<T>;
  double s = 0;
  if (!par) {
    for (std::size_t c = 0; c < chunks; ++c) m = std::max(m, chunk_max(x, lo(c), hi(c)));
    for (std::size_t c = 0; c < chunks; ++c) s += chunk_exp(x, y, lo(c), hi(c), m);
    chunk_finish(x, y, 0, n, m, s, log);
    return;
  }
  std::vector<T> part(chunks);
  auto each = [&](const auto& f) { for_each_task(par, chunks, kTask / kChunk, f); };
  each([&](std::size_t c) { part[c] = chunk_max(x, lo(c), hi(c)); });
  for (T v : part) m = std::max(m, v);
  each([&](std::size_t c) { part[c] = chunk_exp(x, y, lo(c), hi(c), m); });
  for (T v : part) s += v;
  each([&](std::size_t c) { chunk_finish(x, y, lo(c), hi(c), m, s, log); });
}

// Columns [k0, k1) (at most kCols) of one [len, inner] slab.
template <class T>
void columns(const T* x, T* y, std::size_t len, std::size_t inner, std::size_t k0, std::size_t k1, bool log) {
  const std::size_t w = k1 - k0;
  T m[kCols];
  double s[kCols];
  std::fill_n(m, w, kNegInf<T>);
  std::fill_n(s, w, 0.0);
  for (std::size_t j = 0; j < len; ++j) {
    const T* r = x + j * inner + k0;
    for (std::size_t k = 0; k < w; ++k) m[k] = std::max(m[k], r[k]);
  }
  for (std::size_t j = 0; j < len; ++j) {
    const T* r = x + j * inner + k0;
    T* o = y + j * inner + k0;
    for (std::size_t k = 0; k < w; ++k) {
      o[k] = std::exp(r[k] - m[k]);
      s[k] += o[k];
    }
  }
  T f[kCols];  // log(sum) or 1 / sum
  for (std::size_t k = 0; k < w; ++k) f[k] = static_cast<T>(log ? std::log(s[k]) : 1 / s[k]);
  for (std::size_t j = 0; j < len; ++j) {
    const T* r = x + j * inner + k0;
    T* o = y + j * inner + k0;
    for (std::size_t k = 0; k < w; ++k) o[k] = log ? (r[k] - m[k]) - f[k] : o[k] * f[k];
  }
}

template <class T>
void run(CpuExecutor* par, const T* x, T* y, std::size_t outer, std::size_t len, std::size_t inner, bool log) {
  if (inner == 1) {
    // Few long slices: each one's chunks in parallel; otherwise whole slices.
    if (par && len >= 2 * kTask && outer < 2 * static_cast<std::size_t>(par->threads())) {
      for (std::size_t o = 0; o < outer; ++o) slice(x + o * len, y + o * len, len, log, par);
      return;
    }
    for_each_task(par, outer, kTask / len, [&](std::size_t o) { slice(x + o * len, y + o * len, len, log, nullptr); });
    return;
  }
  const std::size_t blocks = (inner + kCols - 1) / kCols;
  for_each_task(par, outer * blocks, kTask / (len * kCols), [&](std::size_t b) {
    const std::size_t o = b / blocks, k0 = b % blocks * kCols;
    columns(x + o * len * inner, y + o * len * inner, len, inner, k0, std::min(inner, k0 + kCols), log);
  });
}

}  // namespace

void softmax(CpuExecutor* parallel, ScalarType type, const void* in, void* out, std::size_t outer, std::size_t len,
             std::size_t inner, bool log) {
  if (type == ScalarType::F32)
    run(parallel, static_cast<const float*>(in), static_cast<float*>(out), outer, len, inner, log);
  else
    run(parallel, static_cast<const double*>(in), static_cast<double*>(out), outer, len, inner, log);
}

}  // namespace veda::detail::cpu
