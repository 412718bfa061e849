// Reducing a range in independent accumulator lanes, for the CPU tiers.
//
// One chain of dependent adds waits 3-4 cycles per element; enough lanes
// keep several vector adds in flight. 64 bytes of lanes (16 floats, 8
// doubles: four SSE registers, the baseline x86-64 target) measured 3.7x
// faster than 8 scalar lanes combined pairwise on a float sum of 2^20 (GCC
// 12 -O3 did not vectorise that loop at all). The lanes live in an array and
// are combined by halving (lane j with lane j + w), a fixed order, so the
// result depends only on the range. An accumulator type that cannot be
// default constructed folds in one chain.
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail {

template <class Acc>
inline constexpr int kLanes = sizeof(Acc) >= 8 ? 8 : 16;

// Lanes [0, W) take in lanes [W, 2W), then [0, W/2) ... down to lane 0.
// Each level's bound is a constant, so the compiler keeps the lanes in
// registers and folds them with vector adds; a loop over W went through
// memory one lane at a time (10 ns of a 16-float sum's 12 on Zen 4).
template <int W, int L, class Acc, class Op>
Acc combine_lanes(Acc (&lane)[L], const Op& op) {
  if constexpr (W == 0) {
    return lane[0];
  } else {
    for (int j = 0; j < W; ++j) lane[j] = op(lane[j], lane[j + W]);
    return combine_lanes<W / 2>(lane, op);
  }
}

// op over load(i) for i in [lo, hi), starting from identity, in lanes of
// Acc. The lanes start from the first L elements and the identity joins once
// at the end, which gives the same result (op(identity, x) == x): with the
// identity in every lane, GCC -O3 -march=native (AVX2) vectorised the loop
// across blocks instead, with permutes, 1.4x slower on a float sum of 4096.
// The block loop counts blocks: `i + L <= hi` kept an index beside the
// pointer (12 uops a block of a float sum, 1.25x a hand-written loop's 10).
template <class Acc, class Load, class Op>
Acc reduce_lanes(const Load& load, std::size_t lo, std::size_t hi, const Acc& identity, const Op& op) {
  std::size_t i = lo;
  Acc r = identity;
  if constexpr (std::is_default_constructible_v<Acc>) {
    constexpr int L = kLanes<Acc>;
    if (hi - lo >= static_cast<std::size_t>(L)) {
      Acc lane[L];
      for (int j = 0; j < L; ++j) lane[j] = static_cast<Acc>(load(i + j));
      const std::size_t blocks = (hi - lo) / L;
      for (std::size_t b = 1; b < blocks; ++b)
        for (int j = 0; j < L; ++j) lane[j] = op(lane[j], static_cast<Acc>(load(lo + b * L + j)));
      i = lo + blocks * L;
      r = op(r, combine_lanes<L / 2>(lane, op));
    }
  }
  for (; i < hi; ++i) r = op(r, static_cast<Acc>(load(i)));
  return r;
}

// Element i of contiguous data (a host range's load).
template <class T>
struct Contiguous {
  const T* data;
  T operator()(std::size_t i) const { return data[i]; }
};

// The sum of p[0, n), as sum_vectors' contiguous loop gives it bit for bit,
// out of line in libveda: its block loop in 32-byte vectors where the CPU
// has AVX (backends/cpu/sum_contiguous.cpp). For kWideSumBytes or more:
// inlined, the loop's speed followed where the caller's compiler placed it
// (a 256-float sum 1.29-1.35x the loop in one build, 1.19-1.22x in another,
// the same instructions; docs/concepts.md); below 1 KiB the call costs more
// than the wider vectors gain.
float sum_contiguous(const float* p, std::size_t n) noexcept;
double sum_contiguous(const double* p, std::size_t n) noexcept;
inline constexpr std::size_t kWideSumBytes = 1024;

// The float or double sum of load(i) over [lo, hi): reduce_lanes with +, its
// lanes held in 16-byte vectors (GCC's vector types) and combined in the
// same order, so the same result bit for bit. How GCC 12 compiles
// reduce_lanes depends on what it is inlined into: in layer_norm's rows at a
// third of this loop's speed (768 floats: 0.92-1.08 us against 0.43 us), in
// veda::sum 1.1-1.3x it at 2^12 floats. For loads that compute (a
// pipeline's stages) neither wins everywhere: a map -> sum of doubles was
// scalar in reduce_lanes, a map -> filter -> map -> sum of floats 1.4-2.6x
// slower here; pipelines keep reduce_lanes.
// Inlined: a settled 256-float sum spent ~1.3 ns calling it (its captures
// stored for the call, a register spilled around it).
// sum_vectors' 64 bytes of lanes, held as four 16-byte quarters (lanes
// [k V, (k + 1) V) in a_k), combined as combine_lanes combines them: lane j
// takes in lane j + 2V, then j + V, then within the first quarter.
template <class T, class Quarter>
[[gnu::always_inline]] inline T combine_quarters(Quarter a0, Quarter a1, Quarter a2, Quarter a3) {
  constexpr int V = 16 / sizeof(T);
  a0 += a2;
  a1 += a3;
  a0 += a1;
  T in[V];
  __builtin_memcpy(in, &a0, sizeof in);
  return combine_lanes<V / 2>(in, std::plus<T>{});
}

// `kWide`: whether contiguous data of kWideSumBytes or more goes to
// sum_contiguous (which, without AVX, runs this with kWide false).
template <class T, bool kWide = true, class Load>
[[gnu::always_inline]] inline T sum_vectors(const Load& load, std::size_t lo, std::size_t hi) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr int L = kLanes<T>, V = 16 / sizeof(T), NV = L / V;
  static_assert(NV == 4);
  if constexpr (kWide && std::is_same_v<Load, Contiguous<T>>)
    if ((hi - lo) * sizeof(T) >= kWideSumBytes) return sum_contiguous(load.data + lo, hi - lo);
  using Vec [[gnu::vector_size(16)]] = T;
  // No subscripts of a vector: nvcc 13's front end, which re-emits host code
  // for the host compiler, stops on them.
  std::size_t i = lo;
  T r = 0;
  if (hi - lo >= static_cast<std::size_t>(L)) [[likely]] {  // else GCC laid the block loop out of the way
    Vec a0 = {}, a1 = {}, a2 = {}, a3 = {};  // 0 + x is x, bit for bit, but for x = -0
    const std::size_t blocks = (hi - lo) / L;
    if constexpr (std::is_same_v<Load, Contiguous<T>>) {
      // Four named vectors and one induction pointer: as an array of lanes
      // counted in blocks, GCC 12 kept the lanes in memory or a block index
      // beside the pointer where inlined into some callers (a 4096-float
      // veda::sum 1.15x the loop in bench_elementwise).
      const T* p = load.data + lo;
      for (const T* const end = p + blocks * L; p != end; p += L) {
        Vec v0, v1, v2, v3;  // unaligned loads
        __builtin_memcpy(&v0, p, sizeof v0);
        __builtin_memcpy(&v1, p + V, sizeof v1);
        __builtin_memcpy(&v2, p + 2 * V, sizeof v2);
        __builtin_memcpy(&v3, p + 3 * V, sizeof v3);
        a0 += v0;
        a1 += v1;
        a2 += v2;
        a3 += v3;
      }
    } else {
      // A block's L terms are taken as an array, as reduce_lanes takes them,
      // so the compiler can vectorise computing them.
      for (std::size_t b = 0; b < blocks; ++b) {
        T e[L];
        for (int j = 0; j < L; ++j) e[j] = static_cast<T>(load(lo + b * L + static_cast<std::size_t>(j)));
        Vec v[NV];
        __builtin_memcpy(v, e, sizeof v);
        a0 += v[0];
        a1 += v[1];
        a2 += v[2];
        a3 += v[3];
      }
    }
    i = lo + blocks * L;
    // Not r +=: lanes that start from +0 are never -0 (x + y is -0 only for
    // two -0s), so 0 + r would be r, one add later (0.3 ns of a 256-float sum's 10).
    r = combine_quarters<T>(a0, a1, a2, a3);
  }
  for (; i < hi; ++i) r += static_cast<T>(load(i));
  return r;
}

// A float or double reduction whose operator adds (std::plus or the built-in
// sum's PlusOp): one sum_vectors computes.
template <class Op, class T>
inline constexpr bool is_vector_sum_v =
    (std::is_same_v<T, float> || std::is_same_v<T, double>) &&
    (std::is_same_v<Op, std::plus<T>> || std::is_same_v<Op, std::plus<>> || std::is_same_v<Op, PlusOp>);

}  // namespace veda::detail
