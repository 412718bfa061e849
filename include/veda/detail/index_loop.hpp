// The CPU side of parallel_for / parallel_reduce: a Box walked serially, or
// by oneTBB over 2-D/3-D tiles. A tile spans up to kTileCols columns (whole
// rows of most grids, so the hardware prefetcher streams them; at most 32
// KiB of doubles per row, so the rows a stencil reads around one stay in
// cache) and enough rows for the plan's grain; exceptions from f leave the oneTBB algorithm,
// which cancels the other tiles.
//
// Thread-safety: f runs concurrently on disjoint tiles.
#pragma once

#include <tbb/blocked_range2d.h>
#include <tbb/blocked_range3d.h>

#include <algorithm>

#include "veda/detail/cpu_loop.hpp"
#include "veda/index_space.hpp"

namespace veda::detail {

inline constexpr std::size_t kTileCols = 4096;

// f(i..., v...) for every index of `b` from linear position j0 to j1
// (row-major), one innermost row at a time: the compiler sees a plain loop
// over the last index, which it can vectorise.
template <std::size_t N, class F, class... V>
void for_linear(const Box<N>& b, std::size_t j0, std::size_t j1, const F& f, const V&... v) {
  if constexpr (N == 1) {
    for (std::size_t i = b.lo[0] + j0; i < b.lo[0] + j1; ++i) f(i, v...);
  } else {
    const std::size_t w = b.hi[N - 1] - b.lo[N - 1];
    for (std::size_t q = j0; q < j1;) {
      const std::size_t row = q / w, c0 = q % w, c1 = std::min(w, c0 + (j1 - q));
      const std::size_t lo = b.lo[N - 1] + c0, hi = b.lo[N - 1] + c1;
      if constexpr (N == 2) {
        const std::size_t i = b.lo[0] + row;
        for (std::size_t j = lo; j < hi; ++j) f(i, j, v...);
      } else {
        const std::size_t h = b.hi[1] - b.lo[1], i = b.lo[0] + row / h, j = b.lo[1] + row % h;
        for (std::size_t k = lo; k < hi; ++k) f(i, j, k, v...);
      }
      q += c1 - c0;
    }
  }
}

template <class Range, class Body>
void tbb_tiles(Runtime& rt, const Plan& p, const Range& range, const Body& body) {
  in_cpu_arena(rt, [&] {
    if (p.tier == Tier::TbbStatic) tbb::parallel_for(range, body, tbb::static_partitioner());
    else tbb::parallel_for(range, body, tbb::auto_partitioner());
  });
  parallel_done(rt);
}

// Runs f over every index of `b` per the plan's tier and grain.
template <std::size_t N, class F, class... V>
void run_box(Runtime& rt, const Plan& p, const Box<N>& b, const F& f, const V&... v) {
  const std::size_t count = b.size();
  if (count == 0) return;
  if (N == 1 || !parallel_tier(p)) {
    for_ranges(rt, p, count, [&](std::size_t j0, std::size_t j1) { for_linear(b, j0, j1, f, v...); });
    return;
  }
  const std::size_t cols = b.hi[N - 1] - b.lo[N - 1];
  const std::size_t gc = std::min(cols, kTileCols);
  const std::size_t rows_per_tile = std::max<std::size_t>(1, p.grain / gc);
  if constexpr (N == 2) {
    tbb_tiles(rt, p, tbb::blocked_range2d<std::size_t>(b.lo[0], b.hi[0], rows_per_tile, b.lo[1], b.hi[1], gc),
              [&](const tbb::blocked_range2d<std::size_t>& t) {
                for (std::size_t i = t.rows().begin(); i < t.rows().end(); ++i)
                  for (std::size_t j = t.cols().begin(); j < t.cols().end(); ++j) f(i, j, v...);
              });
  } else if constexpr (N == 3) {
    const std::size_t gr = std::min(b.hi[1] - b.lo[1], rows_per_tile);
    const std::size_t gp = std::max<std::size_t>(1, rows_per_tile / std::max<std::size_t>(gr, 1));
    tbb_tiles(rt, p,
              tbb::blocked_range3d<std::size_t>(b.lo[0], b.hi[0], gp, b.lo[1], b.hi[1], gr, b.lo[2], b.hi[2], gc),
              [&](const tbb::blocked_range3d<std::size_t>& t) {
                for (std::size_t i = t.pages().begin(); i < t.pages().end(); ++i)
                  for (std::size_t j = t.rows().begin(); j < t.rows().end(); ++j)
                    for (std::size_t k = t.cols().begin(); k < t.cols().end(); ++k) f(i, j, k, v...);
              });
  }
}

// A reduction's running value before it has seen an index: no identity
// element is needed, so any associative op works.
template <class R>
struct Partial {
  R value{};
  bool has = false;
};
template <class R, class Op>
VEDA_HD Partial<R> combine(const Partial<R>& a, const Partial<R>& b, const Op& op) {
  if (!a.has) return b;
  if (!b.has) return a;
  return {op(a.value, b.value), true};
}

// op-fold of f over `b`; the deterministic mode's fixed tree when asked.
template <class R, std::size_t N, class F, class Op, class... V>
Partial<R> reduce_box(Runtime& rt, const Plan& p, bool deterministic, const Box<N>& b, const F& f, const Op& op,
                      const V&... v) {
  auto leaf = [&](std::size_t j0, std::size_t j1) {
    Partial<R> acc;
    for_linear(b, j0, j1, [&](const auto&... index_then_views) {
      R r = f(index_then_views...);
      acc = acc.has ? Partial<R>{op(acc.value, r), true} : Partial<R>{r, true};
    }, v...);
    return acc;
  };
  return reduce_ranges(rt, p, deterministic, b.size(), Partial<R>{}, leaf,
                       [&](const Partial<R>& x, const Partial<R>& y) { return combine(x, y, op); });
}

}  // namespace veda::detail
