// CPU reduction tiers.
//
// A leaf reduces a contiguous run with eight independent accumulators, so a
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

namespace veda::detail {

template <class Acc, class Load, class Op>
Acc reduce_leaf(const Load& load, std::size_t lo, std::size_t hi, const Acc& identity, const Op& op) {
  Acc a0 = identity, a1 = identity, a2 = identity, a3 = identity, a4 = identity, a5 = identity,
      a6 = identity, a7 = identity;
  std::size_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    a0 = op(a0, static_cast<Acc>(load(i + 0)));
    a1 = op(a1, static_cast<Acc>(load(i + 1)));
    a2 = op(a2, static_cast<Acc>(load(i + 2)));
    a3 = op(a3, static_cast<Acc>(load(i + 3)));
    a4 = op(a4, static_cast<Acc>(load(i + 4)));
    a5 = op(a5, static_cast<Acc>(load(i + 5)));
    a6 = op(a6, static_cast<Acc>(load(i + 6)));
    a7 = op(a7, static_cast<Acc>(load(i + 7)));
  }
  Acc r = op(op(op(a0, a1), op(a2, a3)), op(op(a4, a5), op(a6, a7)));
  for (; i < hi; ++i) r = op(r, static_cast<Acc>(load(i)));
  return r;
}

// Runs a CPU plan. `load(i)` yields element i.
template <class Acc, class Load, class Op>
Acc run_reduce_cpu(Runtime& rt, const Plan& p, bool deterministic, const Load& load, std::size_t n,
                   const Acc& identity, const Op& op) {
  return reduce_ranges(rt, p, deterministic, n, identity,
                       [&](std::size_t lo, std::size_t hi) { return reduce_leaf(load, lo, hi, identity, op); }, op);
}

}  // namespace veda::detail
