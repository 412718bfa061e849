// The fused CPU loop of veda's expressions: one pass over the result, every
// operand read where the result is written, no temporaries.
//
// The planned result (ExprCall::ext: up to 4 dimensions after merging the
// ones every operand walks contiguously) is cut into units of at most
// kExprUnit elements of one innermost row, the tiers' grain. A stretch of a
// range's units in one row points each leaf at its first element and runs
// the expression's inlined eval over it, a loop the compiler vectorises. A
// leaf broadcast along the innermost dimension (stride 0 there) is copied
// into a unit-long buffer first, so the loop stays the same; then a
// stretch is one unit.
//
// An operand that appears several times ((X - Y) * (X + Y) / (1 + X * X))
// is one leaf per appearance, and leaves are runtime pointers the compiler
// cannot merge: it would load X four times per element, 15-20% slower than
// a hand loop. So the loop is instantiated for a set of leaf maps (leaf k
// read through the pointer of leaf map[k], its first equal), the call picks
// the one that matches which leaves are the same operand, and the compiler
// loads each once. The set is bounded so that code size stays small: every
// map for up to 4 leaves, those of at most 2 distinct operands for 5 and 6,
// the all-same map beyond; an unlisted pattern reads each leaf on its own.
//
// Thread-safety: units are disjoint; the tiers run them on the caller's
// thread (serial) or on veda's oneTBB workers.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "veda/detail/cpu_loop.hpp"
#include "veda/detail/expr_nodes.hpp"

namespace veda::detail {

inline constexpr std::size_t kExprUnit = 2048;

// Runs `node` (an N) into `out` (O elements) on the CPU tier of `p`,
// reading the leaves' host copies.
using ExprCpuFn = void (*)(const void* node, Runtime& rt, const Plan& p, const ExprCall& c, void* out);

inline void expr_splat(void* dst, const void* value, std::size_t bytes, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(d + i * bytes, value, bytes);
}

// A leaf map, 4 bits per leaf: leaf k is read through pointer map[k].
using ExprLeafMap = std::uint64_t;
inline constexpr ExprLeafMap kExprOwnLeaves = ~ExprLeafMap{0};  // each leaf its own pointer
inline constexpr int kExprMaxMappedLeaves = 16;

// `Mask`: whether a where() selects by bit masks (WhereNode::eval).
template <ExprLeafMap Map, bool Mask>
struct ExprLeafPtrs {
  static constexpr bool kSelectByMask = Mask;
  const void* const* p;
  template <int K>
  const void* leaf() const {
    if constexpr (Map == kExprOwnLeaves) return p[K];
    else return p[(Map >> (4 * K)) & 0xF];
  }
};

// The maps with a loop of their own for L leaves: those of at most D distinct
// operands, then kExprOwnLeaves. Leaves are numbered by first appearance
// (a restricted growth string r: r[0] = 0, r[k] <= max(r[0..k)) + 1), and
// each maps to the first leaf with its number.
template <int L>
constexpr int kExprMergeDistinct = L <= 4 ? L : L <= 6 ? 2 : 1;

template <int L, class F>
constexpr void for_each_expr_leaf_map(F&& f) {
  if constexpr (L <= kExprMaxMappedLeaves) {
    constexpr int d = kExprMergeDistinct<L>;
    std::uint64_t total = 1;
    for (int k = 1; k < L; ++k) total *= static_cast<std::uint64_t>(d);  // digits 1..L-1 in base d
    for (std::uint64_t code = 0; code < total; ++code) {
      int r[kExprMaxMappedLeaves] = {}, first[kExprMaxMappedLeaves] = {}, seen = 1;
      bool growth = true;
      std::uint64_t rest = code;
      ExprLeafMap map = 0;
      for (int k = 1; k < L && growth; ++k) {
        r[k] = static_cast<int>(rest % static_cast<std::uint64_t>(d));
        rest /= static_cast<std::uint64_t>(d);
        growth = r[k] <= seen;
        if (r[k] == seen) first[seen++] = k;
        map |= static_cast<ExprLeafMap>(first[r[k]]) << (4 * k);
      }
      if (growth && seen < L) f(map);  // seen == L: every leaf distinct, which kExprOwnLeaves covers
    }
  }
  f(kExprOwnLeaves);
}

template <int L>
constexpr std::size_t kExprLeafMapCount = [] {
  std::size_t n = 0;
  for_each_expr_leaf_map<L>([&](ExprLeafMap) { ++n; });
  return n;
}();

template <int L>
constexpr auto kExprLeafMaps = [] {
  std::array<ExprLeafMap, kExprLeafMapCount<L>> maps{};
  std::size_t n = 0;
  for_each_expr_leaf_map<L>([&](ExprLeafMap m) { maps[n++] = m; });
  return maps;
}();

// Which of kExprLeafMaps<L> merges the leaves that are the same operand
// (same buffer, strides and type): that map's index if it has a loop, else
// the last one's (kExprOwnLeaves).
template <int L>
std::size_t expr_leaf_map_index(const ExprCall& c, const void* const* bases) {
  constexpr auto& maps = kExprLeafMaps<L>;
  if constexpr (L <= kExprMaxMappedLeaves) {
    ExprLeafMap map = 0;
    for (int k = 1; k < L; ++k) {
      const ExprLeaf& a = c.leaves[k];
      int j = 0;  // the first equal leaf, itself a first equal
      while (j < k && !(bases[j] == bases[k] && a.type == c.leaves[j].type &&
                        std::equal(a.stride, a.stride + 4, c.leaves[j].stride)))
        ++j;
      map |= static_cast<ExprLeafMap>(j) << (4 * k);
    }
    for (std::size_t i = 0; i + 1 < maps.size(); ++i)
      if (maps[i] == map) return i;
  }
  return maps.size() - 1;
}

template <class N, class O, ExprLeafMap Map>
void expr_unit(const N& node, const void* const* ptr, O* o, std::size_t len) {
  // A loop that calls libm reads the leaves' pointers from a copy as well:
  // through the caller's array, whose address escapes, it reloaded them
  // every element (sqrt's errno path might write there; where(x > 0, x,
  // 0.1 * x) + sqrt(abs(y)) 6-8% slower). One at a time (the asm): GCC
  // merged the copy's loads into vector loads, which cannot take the
  // caller's 8-byte stores from the store buffer and wait for them to reach
  // the cache, behind the previous unit's stores ((X - mu) / sd by rows of
  // 2^10 at 2^23: 20% slower). Other loops keep them in registers anyway.
  std::array<const void*, N::kCallsLibm ? N::kLeaves : 0> own;
  const void* const* at = ptr;
  if constexpr (N::kCallsLibm) {
    for (int k = 0; k < N::kLeaves; ++k) {
      const void* v = ptr[k];
      asm("" : "+r"(v));
      own[k] = v;
    }
    at = own.data();
  }
  const ExprLeafPtrs<Map, !N::kCallsLibm> p{at};
  // A copy whose address never escapes: the output's stores cannot alias
  // it, so its scalars stay in registers (through `node` each store of a
  // float might change them: where(x > 0, x, 0.1 * x) + sqrt(abs(y))
  // reloaded both every element, 4-7% over the hand loop serially).
  const N local = node;
  for (std::size_t i = 0; i < len; ++i) o[i] = static_cast<O>(local.template eval<0>(p, i));
}

template <class N, class O>
using ExprUnitFn = void (*)(const N&, const void* const*, O*, std::size_t);

template <class N, class O, std::size_t... I>
constexpr std::array<ExprUnitFn<N, O>, sizeof...(I)> expr_units(std::index_sequence<I...>) {
  return {&expr_unit<N, O, kExprLeafMaps<N::kLeaves>[I]>...};
}

// What a range of units needs, by value. The oneTBB task that runs a range
// holds a copy, so a worker reads it with the task; through references it
// followed pointers into the calling thread's stack (the call, its leaves,
// the node), each a line the other core wrote last: dependent misses (a
// tbb-static 2 * x + y on 2^16 floats took 5.15-5.32 us, now 5.06-5.19; the
// same oneTBB loop by hand 4.4-4.8; docs/expressions.md).
template <class N, class O, int L>
struct ExprJob {
  N node;
  ExprUnitFn<N, O> unit;
  O* out;
  std::size_t inner, per_row, e1, e2;
  bool splat;  // some own leaf is broadcast along the innermost dimension
  std::array<bool, L> own;  // leaf k is its own first equal (pointed at or splat)
  std::array<const unsigned char*, L> base;
  std::array<std::array<std::int64_t, 4>, L> stride;
  std::array<std::uint8_t, L> elem_bytes;

  void run(std::size_t u0, std::size_t u1) const {
    std::unique_ptr<unsigned char[]> buf(splat ? new unsigned char[L * kExprUnit * 8] : nullptr);
    std::array<const void*, L> ptr{};
    // Where the range starts; then walked forward (a division per row cost
    // as much as a short row).
    std::size_t row = u0 / per_row, j0 = (u0 % per_row) * kExprUnit;
    auto c2 = static_cast<std::int64_t>(row % e2), c1 = static_cast<std::int64_t>(row / e2 % e1),
         c0 = static_cast<std::int64_t>(row / e2 / e1);
    for (std::size_t u = u0, next = 0; u < u1; u = next) {
      // Without a splat buffer, the range's units of one row run as one stretch.
      next = splat ? u + 1 : std::min(u1, (row + 1) * per_row);
      const std::size_t len = std::min(inner, (next - row * per_row) * kExprUnit) - j0;
      for (int k = 0; k < L; ++k) {
        if (!own[k]) continue;
        const auto& st = stride[k];
        const std::int64_t off = c0 * st[0] + c1 * st[1] + c2 * st[2] + static_cast<std::int64_t>(j0) * st[3];
        const unsigned char* at = base[k] + off * elem_bytes[k];
        if (splat && st[3] == 0) {
          void* b = buf.get() + k * kExprUnit * 8;
          expr_splat(b, at, elem_bytes[k], len);
          ptr[k] = b;
        } else {
          ptr[k] = at;
        }
      }
      unit(node, ptr.data(), out + row * inner + j0, len);
      if ((j0 += len) < inner) continue;
      j0 = 0;
      ++row;
      if (++c2 < static_cast<std::int64_t>(e2)) continue;
      c2 = 0;
      if (++c1 < static_cast<std::int64_t>(e1)) continue;
      c1 = 0;
      ++c0;
    }
  }
};

template <class N, class O>
void expr_cpu(const void* node_ptr, Runtime& rt, const Plan& p, const ExprCall& c, void* out) {
  constexpr int L = N::kLeaves;
  const auto inner = static_cast<std::size_t>(c.ext[3]);
  const auto rows = static_cast<std::size_t>(c.ext[0] * c.ext[1] * c.ext[2]);
  if (inner == 0 || rows == 0) return;
  std::array<const void*, L> bases;
  for (int k = 0; k < L; ++k) bases[k] = c.leaves[k].buf->host_read();
  static constexpr auto units = expr_units<N, O>(std::make_index_sequence<kExprLeafMapCount<L>>{});
  const std::size_t m = expr_leaf_map_index<L>(c, bases.data());
  const ExprLeafMap map = kExprLeafMaps<L>[m];
  ExprJob<N, O, L> job{*static_cast<const N*>(node_ptr), units[m], static_cast<O*>(out), inner,
                       (inner + kExprUnit - 1) / kExprUnit, static_cast<std::size_t>(c.ext[1]),
                       static_cast<std::size_t>(c.ext[2]), false, {}, {}, {}, {}};
  for (int k = 0; k < L; ++k) {
    // Only a leaf that is its own first equal is pointed at (or splat).
    if (map != kExprOwnLeaves && static_cast<int>((map >> (4 * k)) & 0xF) != k) continue;
    const ExprLeaf& l = c.leaves[k];
    job.own[k] = true;
    job.splat |= l.stride[3] == 0 && inner > 1;
    job.base[k] = static_cast<const unsigned char*>(bases[k]);
    std::copy(l.stride, l.stride + 4, job.stride[k].begin());
    job.elem_bytes[k] = l.elem_bytes;
  }
  Plan q = p;  // the plan's grain counts elements; the loop counts units
  q.grain = std::max<std::size_t>(1, p.grain / std::min(inner, kExprUnit));
  for_ranges(rt, q, rows * job.per_row, [job](std::size_t u0, std::size_t u1) { job.run(u0, u1); });
}

}  // namespace veda::detail
