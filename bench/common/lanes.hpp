// Eight-lane sums for the hand-written reduction peers. veda's CPU reductions
// fold into 8 independent accumulators (include/veda/detail/reduce_cpu.hpp);
// a peer summing through one accumulator waits on one add chain and cannot
// vectorise, so veda would win for a reason that is not placement or
// overhead. Every serial, oneTBB and OpenMP reduction peer sums through this
// instead (OpenMP peers may use `omp simd reduction`, the same freedom).
#pragma once

#include <cstddef>

namespace bench {

// Sum of term(i) for i in [lo, hi), over 8 lanes combined pairwise.
template <class T, class Term>
T sum_lanes(std::size_t lo, std::size_t hi, const Term& term) {
  T acc[8] = {};
  std::size_t i = lo;
  for (; i + 8 <= hi; i += 8)
    for (std::size_t j = 0; j < 8; ++j) acc[j] += term(i + j);
  for (; i < hi; ++i) acc[0] += term(i);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace bench
