// CPU reduction tiers.
//
// A leaf reduces a contiguous run in independent lanes (lanes.hpp), so a
// float sum vectorises instead of waiting on one add chain; the lanes are
// combined in a fixed order. The order of a whole reduction is therefore
// "std::reduce": op must be associative and commutative and `identity` an
// identity element of it.
//
// Deterministic mode walks cpu_loop.hpp's fixed tree: bitwise-identical
// floats on every tier and thread count.
#pragma once

#include <cstddef>

#include "veda/detail/cpu_loop.hpp"
#include "veda/detail/lanes.hpp"

namespace veda::detail {

// Runs a CPU plan. `load(i)` yields element i.
template <class Acc, class Load, class Op>
Acc run_reduce_cpu(Runtime& rt, const Plan& p, bool deterministic, const Load& load, std::size_t n,
                   const Acc& identity, const Op& op) {
  return reduce_ranges(rt, p, deterministic, n, identity,
                       [&](std::size_t lo, std::size_t hi) {
                         if constexpr (is_vector_sum_v<Op, Acc>)
                           return identity + sum_vectors<Acc>(load, lo, hi);  // the same bits
                         else
                           return reduce_lanes(load, lo, hi, identity, op);
                       }, op);
}

}  // namespace veda::detail
