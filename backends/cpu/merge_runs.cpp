#include "backends/cpu/merge_runs.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "veda/detail/op_types.hpp"

namespace veda::detail::cpu {
namespace {

// Whether key a goes strictly before key b.
template <class K>
struct Before {
  bool descending;
  bool operator()(const K& a, const K& b) const {
    if constexpr (std::is_floating_point_v<K>) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
    }
    return descending ? b < a : a < b;
  }
};

// A value's bytes (no alignment assumed: values may be any 4- or 8-byte type).
template <std::size_t B>
struct Bytes {
  unsigned char b[B];
};
struct NoValues {};

// The keys and values of one buffer: the caller's or the scratch.
template <class K, class V>
struct Run {
  K* k;
  V* v;
};

// Of the first d outputs of merging a[0, na) and b[0, nb), how many come
// from a (ties go to a).
template <class K>
std::size_t co_rank(std::size_t d, const K* a, std::size_t na, const K* b, std::size_t nb, const Before<K>& before) {
  std::size_t lo = d > nb ? d - nb : 0, hi = std::min(d, na);
  while (lo < hi) {
    const std::size_t m = lo + (hi - lo) / 2;
    if (!before(b[d - m - 1], a[m])) lo = m + 1;  // a[m] belongs among the first d
    else hi = m;
  }
  return lo;
}

// One round's work: runs a = [a0, a1) and b = [a1, b1) of src merged into
// dst[a0, b1), outputs [d0, d1) of it (relative to a0).
struct Piece {
  std::size_t a0, a1, b1, d0, d1;
};

template <class K, class V>
void merge_piece(const Piece& p, Run<K, V> src, Run<K, V> dst, const Before<K>& before) {
  const K* a = src.k + p.a0;
  const K* b = src.k + p.a1;
  const std::size_t na = p.a1 - p.a0, nb = p.b1 - p.a1;
  std::size_t i = co_rank(p.d0, a, na, b, nb, before), j = p.d0 - i;
  const std::size_t i_end = co_rank(p.d1, a, na, b, nb, before), j_end = p.d1 - i_end;
  for (std::size_t o = p.a0 + p.d0; o < p.a0 + p.d1; ++o) {
    const bool take_b = j < j_end && (i == i_end || before(b[j], a[i]));
    const std::size_t from = take_b ? p.a1 + j++ : p.a0 + i++;
    dst.k[o] = src.k[from];
    if constexpr (!std::is_same_v<V, NoValues>) dst.v[o] = src.v[from];
  }
}

template <class K, class V>
void merge_all(CpuExecutor* parallel, K* keys, V* values, std::span<const std::size_t> bounds, bool descending) {
  std::vector<std::size_t> runs(bounds.begin(), bounds.end());
  if (runs.size() < 3) return;  // one run (or none): already sorted
  const std::size_t base = runs.front(), n = runs.back() - base;
  auto scratch_k = std::make_unique_for_overwrite<K[]>(n);
  std::unique_ptr<V[]> scratch_v;
  if constexpr (!std::is_same_v<V, NoValues>) scratch_v = std::make_unique_for_overwrite<V[]>(n);
  Run<K, V> src{keys + base, nullptr}, dst{scratch_k.get(), scratch_v.get()};
  if constexpr (!std::is_same_v<V, NoValues>) src.v = values + base;
  for (auto& r : runs) r -= base;
  const Before<K> before{descending};
  // Pieces of about kPiece outputs: enough of them to share out, each long
  // enough that its two binary searches are noise.
  constexpr std::size_t kPiece = std::size_t{1} << 16;
  auto each = [&](const std::vector<Piece>& pieces, auto&& f) {
    if (!parallel || pieces.size() < 2) {
      for (const Piece& p : pieces) f(p);
      return;
    }
    parallel->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pieces.size(), 1),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i < r.end(); ++i) f(pieces[i]);
                        });
    });
  };
  while (runs.size() > 2) {
    std::vector<Piece> pieces;
    std::vector<std::size_t> next{0};
    for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
      // A pair of runs; a last run without a partner is copied (b empty).
      const std::size_t a0 = runs[r], a1 = runs[r + 1], b1 = r + 2 < runs.size() ? runs[r + 2] : a1;
      for (std::size_t d = 0; d < b1 - a0; d += kPiece)
        pieces.push_back({a0, a1, b1, d, std::min(d + kPiece, b1 - a0)});
      next.push_back(b1);
    }
    each(pieces, [&](const Piece& p) { merge_piece(p, src, dst, before); });
    std::swap(src, dst);
    runs = std::move(next);
  }
  if (src.k != keys + base) {  // the merged run is in the scratch: copy it back
    std::vector<Piece> pieces;
    for (std::size_t d = 0; d < n; d += kPiece) pieces.push_back({0, n, n, d, std::min(d + kPiece, n)});
    each(pieces, [&](const Piece& p) { merge_piece(p, src, dst, before); });
  }
}

}  // namespace

template <class K>
void merge_runs(CpuExecutor* parallel, K* keys, void* values, std::size_t value_bytes,
                std::span<const std::size_t> bounds, bool descending) {
  if (!values) return merge_all<K, NoValues>(parallel, keys, nullptr, bounds, descending);
  if (value_bytes == 4) return merge_all(parallel, keys, static_cast<Bytes<4>*>(values), bounds, descending);
  merge_all(parallel, keys, static_cast<Bytes<8>*>(values), bounds, descending);
}

#define VEDA_MERGE_INSTANTIATE(K) \
  template void merge_runs<K>(CpuExecutor*, K*, void*, std::size_t, std::span<const std::size_t>, bool);
VEDA_FOR_EACH_OP_TYPE(VEDA_MERGE_INSTANTIATE)
#undef VEDA_MERGE_INSTANTIATE

}  // namespace veda::detail::cpu
