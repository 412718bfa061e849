// par_iter on the CPU: one fused pass per chunk over a group of stages, and
// the terminal operations on top of it.
//
// A group is described by run(j0, j1, sink): push input elements [j0, j1)
// through the group's stages into sink; sink returns false to stop early.
// Chunking follows the plan: serial runs one chunk inline; oneTBB tiers run
// chunks on veda's workers. Output order is source order whatever the
// chunking: a 1:1 group writes each result at its own index, a filtering
// group fills one buffer per chunk and the buffers are joined in chunk order.
// Exceptions from user functions propagate out of the oneTBB algorithms,
// which cancel the remaining chunks; nothing partial is returned.
#pragma once

#include <tbb/task_group.h>

#include <atomic>
#include <optional>
#include <vector>

#include "veda/detail/cpu_loop.hpp"
#include "veda/detail/lanes.hpp"

namespace veda::detail::pipe {

// ---------------------------------------------------------------- collect
template <class T, class Run>
std::vector<T> collect_cpu(Runtime& rt, const Plan& p, std::size_t count, bool one_to_one, const Run& run) {
  if (one_to_one) {
    std::vector<T> out(count);
    for_ranges(rt, p, count, [&](std::size_t j0, std::size_t j1) {
      T* dst = out.data() + j0;
      auto sink = [&dst](auto&& v) {
        *dst++ = std::forward<decltype(v)>(v);
        return true;
      };
      run(j0, j1, sink);
    });
    return out;
  }
  const std::size_t chunk = chunk_size(rt, p, count);
  const std::size_t chunks = count ? (count + chunk - 1) / chunk : 0;
  std::vector<std::vector<T>> parts(chunks);
  for_chunks(rt, p, chunks, [&](std::size_t k) {
    auto& part = parts[k];
    auto sink = [&part](auto&& v) {
      part.push_back(std::forward<decltype(v)>(v));
      return true;
    };
    run(k * chunk, std::min(count, (k + 1) * chunk), sink);
  });
  if (chunks == 1) return std::move(parts[0]);
  std::vector<std::size_t> offset(chunks + 1, 0);
  for (std::size_t k = 0; k < chunks; ++k) offset[k + 1] = offset[k] + parts[k].size();
  std::vector<T> out;
  out.reserve(offset[chunks]);
  for (auto& part : parts) std::move(part.begin(), part.end(), std::back_inserter(out));
  return out;
}

// ---------------------------------------------------------------- reduce
// Accumulates what reaches the sink; deterministic mode walks the fixed
// tree of cpu_loop.hpp (positions, not surviving elements, define leaves).
// OneToOne: std::true_type when no stage filters (run's loop counts then).
template <class Acc, class Run, class Op, class OneToOne = std::false_type>
Acc reduce_pipeline_cpu(Runtime& rt, const Plan& p, bool deterministic, std::size_t count, const Acc& identity,
                        const Op& op, const Run& run, OneToOne = {}) {
  // Lanes (lanes.hpp), element j folding into lane j % lanes: independent
  // chains hide the add latency (a float sum is latency-bound otherwise),
  // and lanes by position keep the result independent of the chunking.
  auto leaf = [&](std::size_t j0, std::size_t j1) {
    if constexpr (std::is_arithmetic_v<Acc>) {
      // Every stage yields at most one value per element, so element j
      // gives its value or, filtered out, the identity, folded straight into
      // its lane (reduce_lanes). The filter becomes a select the compiler
      // can vectorise: compacting survivors into a buffer first made a
      // map -> filter -> map -> sum 1.3x a hand-written select loop, and a
      // map -> sum through the buffer 2.6x.
      auto value = [&](std::size_t j) {
        // [j, j + 1) is one element: told so, GCC 12 made the filtering
        // loop's lanes vectors (a map -> filter -> map -> sum of floats
        // 5-8% faster at 10^3-10^5). A counting loop knows it already, and
        // the hint made GCC pack a map -> sum of doubles into three pairs
        // and two scalar lanes (1.04-1.21x the oneTBB loop at 10^7, and 1.4x
        // today's time at 10^5; bench_par_iter's stream case).
        if constexpr (!OneToOne::value)
          if (j == static_cast<std::size_t>(-1)) __builtin_unreachable();
        Acc v = identity;
        auto sink = [&v](auto&& x) {
          v = static_cast<Acc>(x);
          return true;
        };
        run(j, j + 1, sink);
        return v;
      };
      return reduce_lanes(value, j0, j1, identity, op);
    }
    Acc a0 = identity, a1 = identity, a2 = identity, a3 = identity, a4 = identity, a5 = identity,
        a6 = identity, a7 = identity;
    auto fold = [&op](Acc& a) {
      return [&a, &op](auto&& v) {
        a = op(a, static_cast<Acc>(v));
        return true;
      };
    };
    auto s0 = fold(a0), s1 = fold(a1), s2 = fold(a2), s3 = fold(a3), s4 = fold(a4), s5 = fold(a5), s6 = fold(a6),
         s7 = fold(a7);
    std::size_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      run(j, j + 1, s0);
      run(j + 1, j + 2, s1);
      run(j + 2, j + 3, s2);
      run(j + 3, j + 4, s3);
      run(j + 4, j + 5, s4);
      run(j + 5, j + 6, s5);
      run(j + 6, j + 7, s6);
      run(j + 7, j + 8, s7);
    }
    run(j, j1, s0);
    return op(op(op(a0, a1), op(a2, a3)), op(op(a4, a5), op(a6, a7)));
  };
  return reduce_ranges(rt, p, deterministic, count, identity, leaf, op);
}

// ---------------------------------------------------------------- search
// The first element (in stream order) satisfying pred, scanning chunks in
// parallel; chunks after the best match found so far are skipped.
template <class T, class Run, class Pred>
std::optional<T> find_first_cpu(Runtime& rt, const Plan& p, std::size_t count, const Pred& pred, const Run& run) {
  const std::size_t chunk = chunk_size(rt, p, count);
  const std::size_t chunks = count ? (count + chunk - 1) / chunk : 0;
  std::vector<std::optional<T>> found(chunks);
  std::atomic<std::size_t> best{chunks};
  tbb::task_group_context ctx;
  for_chunks(
      rt, p, chunks,
      [&](std::size_t k) {
        if (k > best.load(std::memory_order_relaxed)) return;
        auto sink = [&](auto&& v) {
          if (!pred(v)) return true;
          found[k].emplace(std::forward<decltype(v)>(v));
          return false;
        };
        const std::size_t j1 = std::min(count, (k + 1) * chunk);
        // Scan in slices so a better match elsewhere stops this chunk early.
        for (std::size_t j = k * chunk; j < j1 && !found[k]; j += 4096) {
          if (k > best.load(std::memory_order_relaxed)) return;
          run(j, std::min(j1, j + 4096), sink);
        }
        if (found[k]) {
          std::size_t b = best.load();
          while (k < b && !best.compare_exchange_weak(b, k)) {
          }
        }
      },
      &ctx);
  const std::size_t b = best.load();
  if (b == chunks) return std::nullopt;
  return std::move(found[b]);
}

// Whether any element satisfies pred; stops every chunk once one does.
template <class Run, class Pred>
bool any_cpu(Runtime& rt, const Plan& p, std::size_t count, const Pred& pred, const Run& run) {
  const std::size_t chunk = chunk_size(rt, p, count);
  const std::size_t chunks = count ? (count + chunk - 1) / chunk : 0;
  std::atomic<bool> hit{false};
  tbb::task_group_context ctx;
  for_chunks(
      rt, p, chunks,
      [&](std::size_t k) {
        auto sink = [&](auto&& v) {
          if (!pred(v)) return true;
          hit.store(true, std::memory_order_relaxed);
          return false;
        };
        const std::size_t j1 = std::min(count, (k + 1) * chunk);
        for (std::size_t j = k * chunk; j < j1; j += 4096) {
          if (hit.load(std::memory_order_relaxed)) {
            ctx.cancel_group_execution();
            return;
          }
          run(j, std::min(j1, j + 4096), sink);
        }
      },
      &ctx);
  return hit.load();
}

}  // namespace veda::detail::pipe
