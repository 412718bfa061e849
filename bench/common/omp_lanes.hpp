// The OpenMP reduction peers' sum: each thread sums its static share through
// 8 lanes (bench/common/lanes.hpp). For translation units built with OpenMP.
#pragma once

#include <omp.h>

#include <cstddef>

#include "bench/common/lanes.hpp"

namespace bench {

template <class T, class Term>
T omp_sum_lanes(std::size_t n, const Term& term) {
  T acc = 0;
#pragma omp parallel reduction(+ : acc)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    acc += sum_lanes<T>(n * t / nt, n * (t + 1) / nt, term);
  }
  return acc;
}

}  // namespace bench
