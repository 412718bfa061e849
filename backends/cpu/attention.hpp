// attention's CPU tiers (veda/attention.hpp) on host pointers.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

// The problem: row-major [batch, heads, q_len, d] q, [batch, kv_heads,
// kv_len, d] k, [batch, kv_heads, kv_len, dv] v and out.
struct AttentionShape {
  std::size_t batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, d = 0, dv = 0;
  double scale = 1;
  bool causal = false;
};

// Each query row's scores in double, then the softmax and the weighted sum
// (the tests' oracle). On the calling thread.
template <class T>
void attention_reference(const AttentionShape& s, const T* q, const T* k, const T* v, T* out);

// Flash-style: query blocks against key blocks with an online softmax;
// `parallel` null: on the calling thread.
template <class T>
void attention_blocked(CpuExecutor* parallel, const AttentionShape& s, const T* q, const T* k, const T* v, T* out);

}  // namespace veda::detail::cpu
