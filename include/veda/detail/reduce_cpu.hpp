// CPU reduction tiers.
//
// A leaf reduces a contiguous run with eight independent accumulators, so a
// float sum vectorises instead of waiting on one add chain; the lanes are
// combined in a fixed order. The order of a whole reduction is therefore
// "std::reduce": op must be associative and commutative and `identity` an
// identity element of it.
//
// Deterministic mode splits [0, n) into a fixed binary tree (halving until a
// run is at most kDeterministicGrain long) whose shape does not depend on the
// thread count; tbb::parallel_deterministic_reduce with a simple partitioner
// walks exactly that tree, and the serial tier replays it on one thread, so
// every tier and thread count gives bitwise-identical floats.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>

#include <cstddef>

#include "veda/detail/dispatch.hpp"

namespace veda::detail {

inline constexpr std::size_t kDeterministicGrain = 16384;

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

// The deterministic tree on one thread (blocked_range's split: halve at
// begin + size / 2 while size > grain). Each leaf of parallel_deterministic_reduce
// folds into a fresh body holding `identity`, so a leaf is op(identity, run).
template <class Acc, class Load, class Op>
Acc reduce_tree(const Load& load, std::size_t lo, std::size_t hi, const Acc& identity, const Op& op) {
  if (hi - lo <= kDeterministicGrain) return op(identity, reduce_leaf(load, lo, hi, identity, op));
  const std::size_t mid = lo + (hi - lo) / 2;
  const Acc left = reduce_tree(load, lo, mid, identity, op);
  const Acc right = reduce_tree(load, mid, hi, identity, op);
  return op(left, right);
}

// Runs a CPU plan. `load(i)` yields element i.
template <class Acc, class Load, class Op>
Acc run_reduce_cpu(Runtime& rt, const Plan& p, bool deterministic, const Load& load, std::size_t n,
                   const Acc& identity, const Op& op) {
  if (n == 0) return identity;
  const bool parallel = p.tier == Tier::TbbStatic || p.tier == Tier::TbbAuto;
  if (!parallel) return deterministic ? reduce_tree(load, 0, n, identity, op) : reduce_leaf(load, 0, n, identity, op);
  auto leaf = [&](const tbb::blocked_range<std::size_t>& r, Acc acc) {
    return op(acc, reduce_leaf(load, r.begin(), r.end(), identity, op));
  };
  Acc result = identity;
  in_cpu_arena(rt, [&] {
    if (deterministic)
      result = tbb::parallel_deterministic_reduce(tbb::blocked_range<std::size_t>(0, n, kDeterministicGrain),
                                                  identity, leaf, op, tbb::simple_partitioner());
    else if (p.tier == Tier::TbbStatic)
      result = tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, n, p.grain), identity, leaf, op,
                                    tbb::static_partitioner());
    else
      result = tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, n, p.grain), identity, leaf, op,
                                    tbb::auto_partitioner());
  });
  parallel_done(rt);
  return result;
}

}  // namespace veda::detail
