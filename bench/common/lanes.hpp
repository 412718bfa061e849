// Lane sums for the hand-written reduction peers. veda's CPU reductions fold
// into 64 bytes of independent lanes combined by halving
// (include/veda/detail/lanes.hpp); a peer summing through one accumulator
// waits on one add chain and cannot vectorise, so veda would win for a
// reason that is not placement or overhead. Every serial, oneTBB and OpenMP
// reduction peer sums through this instead (OpenMP peers may use
// `omp simd reduction`, the same freedom).
#pragma once

#include <cstddef>

namespace bench {

// Lanes [0, W) take in lanes [W, 2W), and so on down to lane 0, each level
// with a constant bound (vector adds in registers), as veda folds its own.
template <int W, int L, class T>
T fold_lanes(T (&acc)[L]) {
  if constexpr (W == 0) {
    return acc[0];
  } else {
    for (int j = 0; j < W; ++j) acc[j] += acc[j + W];
    return fold_lanes<W / 2>(acc);
  }
}

// Sum of term(i) for i in [lo, hi).
template <class T, class Term>
T sum_lanes(std::size_t lo, std::size_t hi, const Term& term) {
  constexpr int L = sizeof(T) >= 8 ? 8 : 16;
  T acc[L] = {};
  std::size_t i = lo;
  for (; i + L <= hi; i += L)
    for (int j = 0; j < L; ++j) acc[j] += term(i + j);
  T s = fold_lanes<L / 2>(acc);
  for (; i < hi; ++i) s += term(i);
  return s;
}

}  // namespace bench
