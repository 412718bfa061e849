// The shape of one attention call, shared by attention's CPU and GPU tiers:
// row-major [batch, heads, q_len, d] q, [batch, kv_heads, kv_len, d] k,
// [batch, kv_heads, kv_len, dv] v and [batch, heads, q_len, dv] out; head
// h reads kv head h / (heads / kv_heads).
#pragma once

#include <cstddef>

namespace veda::detail {

struct AttentionShape {
  std::size_t batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, d = 0, dv = 0;
  double scale = 1;
  bool causal = false;  // query i sees keys 0..i
};

}  // namespace veda::detail
