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
// with a constant bound, as veda folds its own.
template <int W, int L, class T>
T fold_lanes(T (&acc)[L]) {
  if constexpr (W == 0) {
    return acc[0];
  } else {
    for (int j = 0; j < W; ++j) acc[j] += acc[j + W];
    return fold_lanes<W / 2>(acc);
  }
}

// Sum of term(i) for i in [lo, hi): lanes of 16-byte vectors (GCC's vector
// types; 16 floats or 8 doubles in all, veda's lanes). Written as a loop over
// an array of lanes, as veda writes its own, GCC 12 compiled it worse here
// than in veda::sum (a runner's float sum of 4096: 442 ns against 310 ns as
// vectors, in one process pinned to one CPU; 256 floats: 37 against 22 ns),
// so veda showed 0.7x this peer at 2^10-2^14 for a reason that was not veda.
template <class T, class Term>
T sum_lanes(std::size_t lo, std::size_t hi, const Term& term) {
  constexpr int V = 16 / sizeof(T), NV = (sizeof(T) >= 8 ? 8 : 16) / V;
  using Vec [[gnu::vector_size(16)]] = T;
  Vec acc[NV] = {};
  std::size_t i = lo;
  for (; i + NV * V <= hi; i += NV * V)
    for (int k = 0; k < NV; ++k) {
      Vec v;
      for (int j = 0; j < V; ++j) v[j] = term(i + static_cast<std::size_t>(k * V + j));
      acc[k] += v;
    }
  for (int w = NV / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  T lane[V];
  for (int j = 0; j < V; ++j) lane[j] = acc[0][j];
  T s = fold_lanes<V / 2>(lane);
  for (; i < hi; ++i) s += term(i);
  return s;
}

}  // namespace bench
