// sum_contiguous (detail/lanes.hpp): a float or double sum of 1 KiB or more
// of contiguous data, in sum_vectors' lanes and order, so the same bits.
//
// Why: inlined, the loop holds its 64 bytes of lanes in four 16-byte vectors
// (the baseline x86-64 target), four chains of adds that keep both vector
// adders of a recent Intel core busy every cycle, so any scheduling hiccup
// costs a cycle, and how GCC 12 laid the loop out in its caller moved a
// 4096-float veda::sum to 1.16-1.31x the hand-written loop. Where the CPU has
// AVX the same lanes fit two 32-byte vectors: half the adds, chains of the
// same length (4096 floats 0.91-0.99x the loop, bench_elementwise --quick on
// an AVX-512 Xeon; docs/benchmarks.md). And its loop lies where libveda's
// build put it, not wherever the caller's compiler did (lanes.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_isa.hpp"
#include "veda/detail/lanes.hpp"

namespace veda::detail {
namespace {

template <class T, int Bytes>
using Vec [[gnu::vector_size(Bytes)]] = T;
template <class T>
using Q = Vec<T, 16>;  // a quarter of a block's lanes

// acc += the vector at p (unaligned).
template <class V, class T>
[[gnu::always_inline]] inline void add(V& acc, const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  acc += v;
}

template <class T>
[[gnu::always_inline]] inline void halves(const Vec<T, 32>& v, Q<T>& lo, Q<T>& hi) {
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
}

// The end of run_avx: its lanes as quarters, combined, then the elements
// [from, n) past the blocks, as sum_vectors ends.
template <class T>
[[gnu::always_inline]] inline T finish(Q<T> a0, Q<T> a1, Q<T> a2, Q<T> a3, const T* p, std::size_t from,
                                       std::size_t n) {
  T r = combine_quarters<T>(a0, a1, a2, a3);  // never -0 (sum_vectors)
  for (std::size_t i = from; i < n; ++i) r += p[i];
  return r;
}

// Without AVX: sum_vectors' own loop.
template <class T>
T run_16(const T* p, std::size_t n) {
  return sum_vectors<T, false>(Contiguous<T>{p}, 0, n);
}

template <class T>
using Run = T (*)(const T*, std::size_t);

#if defined(__x86_64__) || defined(__i386__)
// The 32-byte vector (lo, hi).
template <class T>
[[gnu::target("avx"), gnu::always_inline]] inline Vec<T, 32> join(Q<T> lo, Q<T> hi) {
  if constexpr (sizeof(T) == 4)
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
  else
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
}

// Two 32-byte vectors: quarters (0, 1) and (2, 3) of each block.
template <class T>
[[gnu::target("avx")]] T run_avx(const T* p, std::size_t n) {
  using W = Vec<T, 32>;
  constexpr int L = kLanes<T>, V = 16 / static_cast<int>(sizeof(T));
  const std::size_t blocks = n / L;
  Q<T> a0, a1, a2, a3;
  if ((reinterpret_cast<std::uintptr_t>(p) & 31) != 16 || blocks == 0) {
    W b0 = {}, b1 = {};
    for (const T *q = p, *const end = p + blocks * L; q != end; q += L) {
      add(b0, q);
      add(b1, q + 2 * V);
    }
    halves<T>(b0, a0, a1);
    halves<T>(b1, a2, a3);
  } else {
    // 16 bytes past a 32-byte boundary (as malloc leaves half its blocks):
    // a 32-byte load from the block's start would cross a cache line every
    // other block (1.4x the time on 64 KiB in L2). Aligned loads instead,
    // quarters (1, 2) of a block and (3, 0 of the next), each lane still
    // taking its elements in order: quarter 0 of the first block goes in
    // first, and the last block's quarter 3 alone, beside -0 (x + -0 == x).
    Q<T> c0 = {}, c3 = {}, zero = {};
    add(c0, p);
    add(c3, p + (blocks - 1) * L + 3 * V);
    const Q<T> negative_zero = -zero;
    W b12 = {}, b30 = {};
    b30 += join<T>(zero, c0);
    const T* q = p;
    for (const T* const end = p + (blocks - 1) * L; q != end; q += L) {
      add(b12, q + V);
      add(b30, q + 3 * V);
    }
    add(b12, q + V);
    b30 += join<T>(c3, negative_zero);
    halves<T>(b12, a1, a2);
    halves<T>(b30, a3, a0);
  }
  return finish<T>(a0, a1, a2, a3, p, blocks * L, n);
}

template <class T>
Run<T> pick() {
  return cpu_has(Isa::Avx) ? &run_avx<T> : &run_16<T>;
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
