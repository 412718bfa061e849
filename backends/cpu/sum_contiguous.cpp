// sum_contiguous (detail/lanes.hpp): a float or double sum of 4 KiB or more
// of contiguous data, in sum_vectors' lanes and order, so the same bits.
//
// Why: inlined, the loop holds its 64 bytes of lanes in four 16-byte vectors
// (the baseline x86-64 target), four chains of adds that keep both vector
// adders of a recent Intel core busy every cycle, so any scheduling hiccup
// costs a cycle, and how GCC 12 laid the loop out in its caller moved a
// 4096-float veda::sum to 1.16-1.31x the hand-written loop. Where the CPU has
// AVX the same lanes fit two 32-byte vectors: half the adds, chains of the
// same length (4096 floats 0.91-0.99x the loop, bench_elementwise --quick on
// an AVX-512 Xeon; docs/benchmarks.md).
#include <cstddef>
#include <cstring>
#include <functional>

#include "veda/detail/lanes.hpp"

namespace veda::detail {
namespace {

// The run over p[0, n) with its lanes in vectors of `Bytes` bytes: vector k
// of a block holds lanes [k V, (k + 1) V), so lane j takes in the elements
// j mod L, as sum_vectors' lanes do; combined by halving as it combines them.
template <class T, int Bytes>
[[gnu::always_inline]] inline T run(const T* p, std::size_t n) {
  constexpr int L = kLanes<T>, V = Bytes / static_cast<int>(sizeof(T)), NV = L / V;
  using Vec [[gnu::vector_size(Bytes)]] = T;
  Vec a[NV] = {};
  const std::size_t blocks = n / L;
  for (const T* q = p, *const end = p + blocks * L; q != end; q += L)
    for (int k = 0; k < NV; ++k) {
      Vec v;
      std::memcpy(&v, q + k * V, sizeof v);
      a[k] += v;
    }
  for (int w = NV / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) a[k] += a[k + w];
  T lane[V];
  std::memcpy(lane, &a[0], sizeof lane);
  T r = 0;
  r += combine_lanes<V / 2>(lane, std::plus<T>{});
  for (std::size_t i = blocks * L; i < n; ++i) r += p[i];
  return r;
}

template <class T>
T run_16(const T* p, std::size_t n) {
  return run<T, 16>(p, n);
}

template <class T>
using Run = T (*)(const T*, std::size_t);

#if defined(__x86_64__) || defined(__i386__)
template <class T>
[[gnu::target("avx")]] T run_avx(const T* p, std::size_t n) {
  return run<T, 32>(p, n);
}

template <class T>
Run<T> pick() {
  return __builtin_cpu_supports("avx") ? &run_avx<T> : &run_16<T>;
}
#else
template <class T>
Run<T> pick() {
  return &run_16<T>;
}
#endif
}  // namespace

float sum_contiguous(const float* p, std::size_t n) noexcept {
  static const Run<float> f = pick<float>();
  return f(p, n);
}

double sum_contiguous(const double* p, std::size_t n) noexcept {
  static const Run<double> f = pick<double>();
  return f(p, n);
}

}  // namespace veda::detail
