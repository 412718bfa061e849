// The shape of one moe_route call and the order it ranks experts in,
// shared by its CPU and GPU tiers.
#pragma once

#include <cstddef>

#if defined(__CUDACC__)
#define VEDA_MOE_FN __host__ __device__ __forceinline__
#else
#define VEDA_MOE_FN inline
#endif

namespace veda::detail {

struct MoeShape {
  std::size_t tokens = 0, experts = 0, top_k = 0;
};

// Whether expert a (logit va) ranks before expert b (logit vb): larger
// first, NaN above every number, ties to the lower index. A strict total
// order, so every tier picks the same experts.
template <class T>
VEDA_MOE_FN bool ranks_before(T va, std::size_t a, T vb, std::size_t b) {
  const bool na = va != va, nb = vb != vb;
  if (na != nb) return na;
  if (!na && va != vb) return va > vb;
  return a < b;
}

}  // namespace veda::detail
