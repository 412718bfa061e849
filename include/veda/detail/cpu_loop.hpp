// The CPU tiers' one loop: how a plan for serial, tbb-static or tbb-auto
// runs a range, a set of chunks or a reduction. veda::gpu's CPU tiers,
// par_iter's stages and terminals and veda::reduce all run through here.
//
// Serial runs inline on the calling thread. The oneTBB tiers run in veda's
// CPU arena (dispatch.hpp: in_cpu_arena) with the plan's grain and
// partitioner, and report the end of the region for the wake-up model.
// Deterministic reductions walk one fixed binary tree (halving until a run
// is at most kDeterministicGrain long) whose shape does not depend on the
// thread count: tbb::parallel_deterministic_reduce with a simple partitioner
// walks exactly that tree, and the serial tier replays it on one thread, so
// every tier and thread count gives bitwise-identical results.
// Exceptions from a body propagate out of the oneTBB algorithm, which
// cancels the remaining ranges.
//
// Thread-safety: bodies run concurrently on disjoint ranges.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstddef>

#include "veda/detail/dispatch.hpp"
#include "veda/runtime.hpp"

namespace veda::detail {

inline constexpr std::size_t kDeterministicGrain = 16384;

inline bool parallel_tier(const Plan& p) { return p.tier == Tier::TbbStatic || p.tier == Tier::TbbAuto; }

// tbb::parallel_for over [0, count) in grains of `grain`, with the plan's partitioner.
template <class Task>
void tbb_for(Runtime& rt, const Plan& p, std::size_t count, std::size_t grain, const Task& task,
             tbb::task_group_context& ctx) {
  in_cpu_arena(rt, [&] {
    const tbb::blocked_range<std::size_t> range(0, count, grain);
    if (p.tier == Tier::TbbStatic) tbb::parallel_for(range, task, tbb::static_partitioner(), ctx);
    else tbb::parallel_for(range, task, tbb::auto_partitioner(), ctx);
  });
  parallel_done(rt);
}

// Runs body(j0, j1) over [0, count) per the plan's tier and grain; body is
// copied (cheap: a lambda of references, or a small job by value).
template <class Body>
void for_ranges(Runtime& rt, const Plan& p, std::size_t count, const Body& body) {
  if (count == 0) return;
  if (!parallel_tier(p)) {
    body(std::size_t{0}, count);
    return;
  }
  // The body by value: oneTBB copies the task's body into the task a
  // worker picks up, and a reference would send the worker to this
  // thread's stack for it first (a line the other core wrote last).
  tbb::task_group_context ctx;
  tbb_for(rt, p, count, p.grain, [body](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); }, ctx);
}

// Fixed chunks (for ordered buffers and early exit): about 8 per thread.
inline std::size_t chunk_size(Runtime& rt, const Plan& p, std::size_t count) {
  if (!parallel_tier(p)) return count ? count : 1;
  const std::size_t threads = static_cast<std::size_t>(std::max(1, rt.config().threads()));
  return std::max<std::size_t>(1024, (count + 8 * threads - 1) / (8 * threads));
}

// Runs body(k) for each chunk k in [0, chunks); `ctx` lets a body cancel the rest.
template <class Body>
void for_chunks(Runtime& rt, const Plan& p, std::size_t chunks, const Body& body,
                tbb::task_group_context* ctx = nullptr) {
  if (chunks == 0) return;
  if (!parallel_tier(p)) {
    for (std::size_t k = 0; k < chunks; ++k) body(k);
    return;
  }
  tbb::task_group_context local;
  tbb_for(
      rt, p, chunks, 1,
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k < r.end(); ++k) body(k);
      },
      ctx ? *ctx : local);
}

// The deterministic tree on one thread (blocked_range's split: halve at
// begin + size / 2 while size > grain). Each leaf of parallel_deterministic_reduce
// folds into a fresh body holding `identity`, so a leaf is op(identity, leaf).
template <class Acc, class Leaf, class Op>
Acc reduce_tree(const Leaf& leaf, std::size_t lo, std::size_t hi, const Acc& identity, const Op& op) {
  if (hi - lo <= kDeterministicGrain) return op(identity, leaf(lo, hi));
  const std::size_t mid = lo + (hi - lo) / 2;
  const Acc left = reduce_tree(leaf, lo, mid, identity, op);
  return op(left, reduce_tree(leaf, mid, hi, identity, op));
}

// Reduces [0, count) on the calling thread, as reduce_ranges does for a
// serial plan; needs no runtime (a settled call runs it without one).
template <class Acc, class Leaf, class Op>
Acc reduce_serial(bool deterministic, std::size_t count, const Acc& identity, const Leaf& leaf, const Op& op) {
  if (count == 0) return identity;
  return deterministic ? reduce_tree(leaf, 0, count, identity, op) : leaf(0, count);
}

// Reduces [0, count): leaf(j0, j1) reduces one run, op combines runs.
template <class Acc, class Leaf, class Op>
Acc reduce_ranges(Runtime& rt, const Plan& p, bool deterministic, std::size_t count, const Acc& identity,
                  const Leaf& leaf, const Op& op) {
  if (count == 0 || !parallel_tier(p)) return reduce_serial(deterministic, count, identity, leaf, op);
  auto body = [&](const tbb::blocked_range<std::size_t>& r, Acc a) { return op(a, leaf(r.begin(), r.end())); };
  Acc result = identity;
  in_cpu_arena(rt, [&] {
    if (deterministic)
      result = tbb::parallel_deterministic_reduce(tbb::blocked_range<std::size_t>(0, count, kDeterministicGrain),
                                                  identity, body, op, tbb::simple_partitioner());
    else if (p.tier == Tier::TbbStatic)
      result = tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, count, p.grain), identity, body, op,
                                    tbb::static_partitioner());
    else
      result = tbb::parallel_reduce(tbb::blocked_range<std::size_t>(0, count, p.grain), identity, body, op,
                                    tbb::auto_partitioner());
  });
  parallel_done(rt);
  return result;
}

}  // namespace veda::detail
