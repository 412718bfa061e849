// veda/attention.hpp — scaled dot-product attention.
//
//   veda::Array<float> q(veda::Shape{batch, heads, seq, head_dim});
//   veda::Array<float> k(veda::Shape{batch, kv_heads, seq, head_dim}), v(...);
//   auto o = veda::attention(q, k, v);                   // softmax(q k^T / sqrt(d)) v
//   auto c = veda::attention(q, k, v, {.causal = true}); // query i sees keys 0..i
//
// Contract:
// - q: [batch, heads, q_len, d]; k: [batch, kv_heads, kv_len, d]; v:
//   [batch, kv_heads, kv_len, dv]. The result is [batch, heads, q_len, dv]:
//     out[b, h, i] = sum_j softmax_j(scale * q[b, h, i] . k[b, g, j]) v[b, g, j]
//   with g = h / (heads / kv_heads): fewer kv heads than heads is grouped-
//   query attention (one kv head: multi-query); heads must be a multiple of
//   kv_heads. scale: options.scale, or 1/sqrt(d) when it is 0.
// - causal: query i attends keys j <= i (the top-left alignment of
//   PyTorch's scaled_dot_product_attention(is_causal=True)); with
//   q_len > kv_len the last rows see every key.
// - Float and double; scores, the softmax and the weighted sum are computed
//   in the element type, the max subtracted before each exponential, so
//   scores of any finite size do not overflow. veda::half and
//   veda::bfloat16 (veda/half.hpp) are computed in FP32 from the exact
//   inputs and the result rounded once (cpu-reference: in double, rounded
//   to float, then to the type); the
//   tensor-core gpu-flash (below) also rounds the softmax weights to the
//   element type before they multiply v, as FlashAttention does: about one
//   ulp of the type more. kv_len = 0 gives zeros (an
//   empty weighted sum); an empty q gives an empty result. Shapes that do not
//   fit throw veda::InvalidArgument naming them, before any work.
// - Tiers: cpu-reference (each query row's scores materialised and summed
//   in double: the tests' oracle, only when forced), cpu-blas (per block of
//   256 query rows: the scores by an OpenBLAS GEMM, a softmax, the weighted
//   sum by a second GEMM; memory O(256 kv_len); not for nested calls),
//   cpu-blocked (flash-style:
//   key blocks of 64 against query blocks of 32 with an online softmax, the
//   blocks spread over oneTBB; memory per task O(block), none O(kv_len)),
//   gpu-naive (the batch * heads * q_len * kv_len scores materialised in
//   device memory, a softmax kernel, the weighted sum), gpu-flash (veda's
//   kernel: 16 query rows a block against 32-key tiles in shared memory, an
//   online softmax, no tensor cores; dv <= 128 and the tiles within 48 KiB:
//   head_dim <= 128 in float and the 16-bit types, <= 64 in double, else
//   InvalidArgument when forced and left out when not; 16-bit elements on
//   a GPU of compute capability 8.0 or later, with head_dim and dv
//   multiples of 16 up to 128: tensor cores, WMMA 16 x 16 x 16 tiles, 64
//   query rows a block). The 16-bit types run the CPU tiers on float
//   copies. Capability filters, then the cost model. The result is left
//   where it was computed.
//
// Thread-safety: any number of threads may call it at once.
#pragma once

#include <string>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/half.hpp"
#include "veda/softmax.hpp"  // detail::RowElem

namespace veda {
namespace detail {
template <class T>
concept AttentionElem = RowElem<T> || is_16bit_float<T>;
}  // namespace detail

struct AttentionOptions {
  bool causal = false;
  double scale = 0;  // 0: 1/sqrt(head_dim)
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "attention"
  std::string tier;  // force a named tier: tests, benchmarks, debugging
};

template <detail::AttentionElem T>
Array<T> attention(const Array<T>& q, const Array<T>& k, const Array<T>& v, const AttentionOptions& options = {});

extern template Array<float> attention<float>(const Array<float>&, const Array<float>&, const Array<float>&,
                                              const AttentionOptions&);
extern template Array<double> attention<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                                const AttentionOptions&);
extern template Array<half> attention<half>(const Array<half>&, const Array<half>&, const Array<half>&,
                                            const AttentionOptions&);
extern template Array<bfloat16> attention<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&,
                                                    const Array<bfloat16>&, const AttentionOptions&);

}  // namespace veda
