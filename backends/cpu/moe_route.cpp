// moe_route on the CPU, in three passes over blocks of tokens: (1) each
// token's top k (a partial sort of its experts), gates and full softmax,
// with per-block counts and probability sums; (2) counts, offsets and
// importance from the blocks' partials, added in block order; (3) the
// stable counting sort: each block scatters its assignments from its own
// starting cursor per expert.
#include "backends/cpu/moe_route.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/cpu/tasks.hpp"

namespace veda::detail::cpu {
namespace {
constexpr std::size_t kTaskElems = std::size_t{1} << 15;  // dispatch and combine: elements a task
// Tokens a block: about 8 Ki logits (enough blocks for the workers at a few
// thousand tokens; their partials, blocks x experts, stay a small fraction
// of the logits), at least 16 tokens.
std::size_t block_tokens(std::size_t experts) {
  return std::max<std::size_t>(16, (std::size_t{1} << 13) / std::max<std::size_t>(experts, 1));
}
}  // namespace

template <class T>
void moe_route(CpuExecutor* parallel, const MoeShape& s, const T* logits, std::int64_t* ids, T* gates,
               std::int64_t* counts, std::int64_t* offsets, std::int64_t* order, T* importance) {
  const std::size_t E = s.experts, k = s.top_k, bt = block_tokens(E);
  const std::size_t blocks = (s.tokens + bt - 1) / bt;
  std::vector<std::int64_t> block_counts(blocks * E, 0);
  std::vector<double> block_mass(blocks * E, 0.0);
  for_each_task(parallel, blocks, 1, [&](std::size_t b) {
    std::vector<std::size_t> rank(E);
    std::vector<double> p(E);
    std::int64_t* bc = block_counts.data() + b * E;
    double* bm = block_mass.data() + b * E;
    for (std::size_t t = b * bt; t < std::min(s.tokens, (b + 1) * bt); ++t) {
      const T* l = logits + t * E;
      std::iota(rank.begin(), rank.end(), std::size_t{0});
      std::partial_sort(rank.begin(), rank.begin() + static_cast<std::ptrdiff_t>(k), rank.end(),
                        [l](std::size_t a, std::size_t c) { return ranks_before(l[a], a, l[c], c); });
      // Gates: softmax over the chosen logits, the first the largest.
      const double top = static_cast<double>(l[rank[0]]);
      double z = 0;
      for (std::size_t j = 0; j < k; ++j) z += std::exp(static_cast<double>(l[rank[j]]) - top);
      for (std::size_t j = 0; j < k; ++j) {
        ids[t * k + j] = static_cast<std::int64_t>(rank[j]);
        gates[t * k + j] = static_cast<T>(std::exp(static_cast<double>(l[rank[j]]) - top) / z);
        ++bc[rank[j]];
      }
      // The softmax over every expert, for importance: exponentials in T
      // (as fast as the logits allow), sums in double. Its max is the top
      // pick's logit unless that is NaN (then every probability is NaN).
      const T tt = l[rank[0]];
      double all = 0;
      for (std::size_t e = 0; e < E; ++e) all += p[e] = static_cast<double>(std::exp(l[e] - tt));
      const double inv = 1 / all;
      for (std::size_t e = 0; e < E; ++e) bm[e] += p[e] * inv;
    }
  });
  offsets[0] = 0;
  for (std::size_t e = 0; e < E; ++e) {
    std::int64_t c = 0;
    double m = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      c += block_counts[b * E + e];
      m += block_mass[b * E + e];
    }
    counts[e] = c;
    offsets[e + 1] = offsets[e] + c;
    importance[e] = static_cast<T>(s.tokens ? m / static_cast<double>(s.tokens) : 0.0);
  }
  // Each block's cursor per expert: the expert's offset plus the earlier
  // blocks' counts (block_counts becomes those cursors, in place).
  for (std::size_t e = 0; e < E; ++e) {
    std::int64_t at = offsets[e];
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::int64_t c = block_counts[b * E + e];
      block_counts[b * E + e] = at;
      at += c;
    }
  }
  for_each_task(parallel, blocks, 1, [&](std::size_t b) {
    std::int64_t* cursor = block_counts.data() + b * E;
    for (std::size_t a = b * bt * k; a < std::min(s.tokens, (b + 1) * bt) * k; ++a)
      order[cursor[ids[a]]++] = static_cast<std::int64_t>(a);
  });
}

template <class T>
void moe_dispatch(CpuExecutor* parallel, const MoeShape& s, std::size_t d, const std::int64_t* order, const T* x,
                  T* out) {
  const std::size_t rows = s.tokens * s.top_k, per_task = std::max<std::size_t>(1, kTaskElems / std::max<std::size_t>(d, 1));
  for_each_task(parallel, (rows + per_task - 1) / per_task, 1, [&](std::size_t b) {
    for (std::size_t i = b * per_task; i < std::min(rows, (b + 1) * per_task); ++i)
      std::copy_n(x + static_cast<std::size_t>(order[i]) / s.top_k * d, d, out + i * d);
  });
}

template <class T>
void moe_combine(CpuExecutor* parallel, const MoeShape& s, std::size_t h, const std::int64_t* order, const T* gates,
                 const T* y, T* out) {
  const std::size_t k = s.top_k, n = s.tokens * k;
  std::vector<std::size_t> row(n);  // assignment -> its row of y
  for_each_task(parallel, (n + kTaskElems - 1) / kTaskElems, 1, [&](std::size_t b) {
    for (std::size_t i = b * kTaskElems; i < std::min(n, (b + 1) * kTaskElems); ++i)
      row[static_cast<std::size_t>(order[i])] = i;
  });
  const std::size_t per_task = std::max<std::size_t>(1, kTaskElems / std::max<std::size_t>(h * k, 1));
  for_each_task(parallel, (s.tokens + per_task - 1) / per_task, 1, [&](std::size_t b) {
    for (std::size_t t = b * per_task; t < std::min(s.tokens, (b + 1) * per_task); ++t) {
      T* o = out + t * h;
      std::fill_n(o, h, T(0));
      for (std::size_t j = 0; j < k; ++j) {
        const T g = gates[t * k + j];
        const T* yr = y + row[t * k + j] * h;
        for (std::size_t c = 0; c < h; ++c) o[c] += g * yr[c];
      }
    }
  });
}

#define VEDA_MOE_CPU(T)                                                                                          \
  template void moe_dispatch<T>(CpuExecutor*, const MoeShape&, std::size_t, const std::int64_t*, const T*, T*); \
  template void moe_combine<T>(CpuExecutor*, const MoeShape&, std::size_t, const std::int64_t*, const T*, const T*, T*);
VEDA_MOE_CPU(float)
VEDA_MOE_CPU(double)
#undef VEDA_MOE_CPU

template void moe_route<float>(CpuExecutor*, const MoeShape&, const float*, std::int64_t*, float*, std::int64_t*,
                               std::int64_t*, std::int64_t*, float*);
template void moe_route<double>(CpuExecutor*, const MoeShape&, const double*, std::int64_t*, double*, std::int64_t*,
                                std::int64_t*, std::int64_t*, double*);

}  // namespace veda::detail::cpu
