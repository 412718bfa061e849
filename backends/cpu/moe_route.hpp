// moe_route's CPU tiers (veda/moe_route.hpp) on host pointers.
#pragma once

#include <cstdint>

#include "backends/cpu/cpu_executor.hpp"
#include "veda/detail/moe_shape.hpp"

namespace veda::detail::cpu {

// Every output of moe_route from logits [tokens, experts]; `parallel` null:
// on the calling thread. Blocks of tokens are the tasks either way, and
// their partial sums are added in block order, so both give the same bits.
template <class T>
void moe_route(CpuExecutor* parallel, const MoeShape& s, const T* logits, std::int64_t* ids, T* gates,
               std::int64_t* counts, std::int64_t* offsets, std::int64_t* order, T* importance);

// out [tokens * top_k, d]: row i = x's row order[i] / top_k.
template <class T>
void moe_dispatch(CpuExecutor* parallel, const MoeShape& s, std::size_t d, const std::int64_t* order, const T* x,
                  T* out);
// out [tokens, h]: row t = sum over s in order of gates[t, s] times y's row
// holding assignment t * top_k + s (order's inverse).
template <class T>
void moe_combine(CpuExecutor* parallel, const MoeShape& s, std::size_t h, const std::int64_t* order, const T* gates,
                 const T* y, T* out);

}  // namespace veda::detail::cpu
