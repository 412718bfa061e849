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

// Sum of term(i) for i in [lo, hi).
template <class T, class Term>
T sum_lanes(std::size_t lo, std::size_t hi, const Term& term) {
  constexpr int L = sizeof(T) >= 8 ? 8 : 16;
  T acc[L] = {};
  std::size_t i = lo;
  for (; i + L <= hi; i += L)
    for (int j = 0; j < L; ++j) acc[j] += term(i + j);
  for (int w = L / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  for (; i < hi; ++i) acc[0] += term(i);
  return acc[0];
}

}  // namespace bench
