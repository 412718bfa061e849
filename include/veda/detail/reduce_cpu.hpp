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

// One run over load(i), i in [lo, hi): one sum_vectors for a float or double
// sum, else reduce_lanes. Always inlined: a settled call runs it in its
// caller, where GCC left the leaf below a call (its captures stored).
template <class Acc, class Load, class Op>
[[gnu::always_inline]] inline Acc reduce_run(const Load& load, std::size_t lo, std::size_t hi, const Acc& identity,
                                             const Op& op) {
  if constexpr (is_vector_sum_v<Op, Acc>)
    return identity + sum_vectors<Acc>(load, lo, hi);  // the same bits
  else
    return reduce_lanes(load, lo, hi, identity, op);
}

// The leaf of the CPU tiers.
template <class Acc, class Load, class Op>
auto reduce_leaf(const Load& load, const Acc& identity, const Op& op) {
  return [&load, &identity, &op](std::size_t lo, std::size_t hi) { return reduce_run(load, lo, hi, identity, op); };
}

// Runs a CPU plan. `load(i)` yields element i.
template <class Acc, class Load, class Op>
Acc run_reduce_cpu(Runtime& rt, const Plan& p, bool deterministic, const Load& load, std::size_t n,
                   const Acc& identity, const Op& op) {
  return reduce_ranges(rt, p, deterministic, n, identity, reduce_leaf(load, identity, op), op);
}

// Element i of a host range's data.
template <class T>
Contiguous<T> load_of(const T* data) {
  return {data};
}

// A settled serial plan's deterministic run (settled_hit), which asks no
// runtime. Out of line: inlined, its captures were stored on every settled
// call, deterministic or not (~1.5 ns of a 256-float sum's ~6.5 ns over the
// loop).
template <class Acc, class T, class Op>
[[gnu::noinline]] Acc reduce_fixed_order(const T* data, std::size_t n, const Acc& identity, const Op& op) {
  const auto load = load_of(data);
  return reduce_serial(true, n, identity, reduce_leaf(load, identity, op), op);
}

}  // namespace veda::detail
