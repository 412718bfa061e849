// The fused CPU loop of veda's expressions: one pass over the result, every
// operand read where the result is written, no temporaries.
//
// The planned result (ExprCall::ext: up to 4 dimensions after merging the
// ones every operand walks contiguously) is cut into units of at most
// kExprUnit elements of one innermost row. A unit points each leaf at its
// first element and runs the expression's inlined eval over it, a loop the
// compiler vectorises. A leaf broadcast along the innermost dimension
// (stride 0 there) is copied into a unit-long buffer first, so the loop
// stays the same.
//
// Thread-safety: units are disjoint; the tiers run them on the caller's
// thread (serial) or on veda's oneTBB workers.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <memory>

#include "veda/detail/cpu_loop.hpp"
#include "veda/detail/expr_nodes.hpp"

namespace veda::detail {

inline constexpr std::size_t kExprUnit = 2048;

// Runs `node` (an N) into `out` (O elements) on the CPU tier of `p`; bases
// are the leaves' host pointers.
using ExprCpuFn = void (*)(const void* node, Runtime& rt, const Plan& p, const ExprCall& c,
                           const void* const* bases, void* out);

inline void expr_splat(void* dst, const void* value, std::size_t bytes, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(d + i * bytes, value, bytes);
}

template <class N, class O>
void expr_cpu(const void* node_ptr, Runtime& rt, const Plan& p, const ExprCall& c, const void* const* bases,
              void* out) {
  const N& node = *static_cast<const N*>(node_ptr);
  constexpr int L = N::kLeaves;
  const auto inner = static_cast<std::size_t>(c.ext[3]);
  const auto rows = static_cast<std::size_t>(c.ext[0] * c.ext[1] * c.ext[2]);
  if (inner == 0 || rows == 0) return;
  const std::size_t per_row = (inner + kExprUnit - 1) / kExprUnit;
  const auto e1 = static_cast<std::size_t>(c.ext[1]), e2 = static_cast<std::size_t>(c.ext[2]);
  bool splat = false;
  for (const ExprLeaf& l : c.leaves) splat |= l.stride[3] == 0 && inner > 1;
  Plan q = p;  // the plan's grain counts elements; the loop counts units
  q.grain = std::max<std::size_t>(1, p.grain / std::min(inner, kExprUnit));
  for_ranges(rt, q, rows * per_row, [&](std::size_t u0, std::size_t u1) {
    std::unique_ptr<unsigned char[]> buf(splat ? new unsigned char[L * kExprUnit * 8] : nullptr);
    std::array<const void*, L> ptr{};
    for (std::size_t u = u0; u < u1; ++u) {
      const std::size_t row = u / per_row, j0 = (u % per_row) * kExprUnit;
      const std::size_t len = std::min(kExprUnit, inner - j0);
      const auto c2 = static_cast<std::int64_t>(row % e2);
      const auto c1 = static_cast<std::int64_t>(row / e2 % e1);
      const auto c0 = static_cast<std::int64_t>(row / e2 / e1);
      for (int k = 0; k < L; ++k) {
        const ExprLeaf& l = c.leaves[k];
        const std::int64_t off = c0 * l.stride[0] + c1 * l.stride[1] + c2 * l.stride[2] +
                                 static_cast<std::int64_t>(j0) * l.stride[3];
        const auto* at = static_cast<const unsigned char*>(bases[k]) + off * l.elem_bytes;
        if (splat && l.stride[3] == 0) {
          void* b = buf.get() + k * kExprUnit * 8;
          expr_splat(b, at, l.elem_bytes, len);
          ptr[k] = b;
        } else {
          ptr[k] = at;
        }
      }
      O* o = static_cast<O*>(out) + row * inner + j0;
      const void* const* pp = ptr.data();
      for (std::size_t i = 0; i < len; ++i) o[i] = static_cast<O>(node.template eval<0>(pp, i));
    }
  });
}

}  // namespace veda::detail
