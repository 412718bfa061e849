// veda/moe_route.hpp — mixture-of-experts routing: each token's top-k
// experts, their gates, and the assignments grouped by expert.
//
//   veda::Array<float> logits(veda::Shape{tokens, experts});  // the router's scores
//   auto r = veda::moe_route(logits, 2);
//   // r.ids[t, s], r.gates[t, s]: token t's s-th expert and its weight
//   // rows r.offsets[e] .. r.offsets[e + 1] of r.order: expert e's assignments
//   auto xe = veda::moe_dispatch(x, r);                  // x's rows grouped by expert
//   auto ye = veda::grouped_matmul(xe, w, r.counts);     // veda/grouped_matmul.hpp
//   auto y = veda::moe_combine(ye, r);                   // y[t] = sum_s gates[t, s] ye[t's s-th row]
//   double loss = r.aux_loss();
//
// Contract:
// - logits: the last axis is the experts, every leading axis the tokens
//   (a 1-D logits is one token). 1 <= top_k <= experts, else
//   veda::InvalidArgument, before any work.
// - ids (int64) and gates: the logits' shape with the last extent top_k.
//   ids[t, 0..k) are token t's k largest logits in decreasing order, ties
//   to the lower expert index; NaN ranks above every number (as in
//   torch.topk), so a NaN logit is chosen and makes its token's gates NaN.
//   gates[t, s] = softmax over the k chosen logits (they sum to 1; top_k = 1
//   gives 1).
// - counts [experts] (int64): assignments per expert (experts that receive
//   none count 0); offsets [experts + 1]: their exclusive prefix sums, so
//   offsets[0] = 0 and offsets[experts] = tokens * top_k. order [tokens *
//   top_k]: the assignments t * top_k + s sorted by expert, stably (a
//   counting sort): expert e's are order[offsets[e] .. offsets[e + 1]), by
//   token. Row i of grouped_matmul's input is then token order[i] / top_k.
// - importance [experts]: the mean over tokens of the softmax over all
//   experts (the router's probability mass per expert; 0 for no tokens).
//   utilisation() = counts / (tokens * top_k); aux_loss() = experts *
//   sum_e utilisation[e] * importance[e], the Switch Transformer load-
//   balancing loss (1 when both are uniform; scale it by your coefficient).
//   Both read counts and importance on the host.
// - moe_dispatch(x, r): x [tokens, d] (or the logits' leading axes, then
//   d) -> [tokens * top_k, d], row i = token order[i] / top_k's row.
//   moe_combine(y, r): y [tokens * top_k, h] in that order -> [tokens, h],
//   row t = sum over s = 0..top_k of gates[t, s] times the row holding
//   assignment t * top_k + s (added in that order on every tier). r must
//   come from moe_route (its sizes are checked, not order's values); x or
//   y of another number of tokens is InvalidArgument, before any work.
// - Float and double logits; sums in double, in an order fixed by the
//   shape, so the CPU tiers give the same bits.
// - Tiers: serial, tbb-auto (blocks of tokens over oneTBB), cuda (a warp
//   per token, a CUB radix sort on the expert bits for order, importance
//   summed without atomics in a fixed order); dispatch and combine: serial,
//   tbb-auto and cuda (a gather kernel). The results stay where they were
//   computed.
//
// Thread-safety: any number of threads may call it at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/softmax.hpp"  // detail::RowElem

namespace veda {

struct MoeRouteOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "moe_route", "moe_dispatch" or "moe_combine"
  std::string tier;  // force "serial", "tbb-auto" or "cuda": tests, benchmarks, debugging
};

template <class T>
struct MoeRouting {
  Array<std::int64_t> ids;      // [..., top_k]
  Array<T> gates;               // [..., top_k]
  Array<std::int64_t> counts;   // [experts]
  Array<std::int64_t> offsets;  // [experts + 1]
  Array<std::int64_t> order;    // [tokens * top_k]
  Array<T> importance;          // [experts]
  std::size_t tokens = 0, experts = 0, top_k = 0;

  std::vector<double> utilisation() const {
    std::vector<double> u(experts);
    const auto c = counts.host();
    for (std::size_t e = 0; e < experts; ++e)
      u[e] = tokens ? static_cast<double>(c[e]) / static_cast<double>(tokens * top_k) : 0.0;
    return u;
  }
  double aux_loss() const {
    const std::vector<double> u = utilisation();
    const auto p = importance.host();
    double s = 0;
    for (std::size_t e = 0; e < experts; ++e) s += u[e] * static_cast<double>(p[e]);
    return static_cast<double>(experts) * s;
  }
};

template <detail::RowElem T>
MoeRouting<T> moe_route(const Array<T>& logits, std::size_t top_k, const MoeRouteOptions& options = {});

template <detail::RowElem T>
Array<T> moe_dispatch(const Array<T>& x, const MoeRouting<T>& routing, const MoeRouteOptions& options = {});

template <detail::RowElem T>
Array<T> moe_combine(const Array<T>& y, const MoeRouting<T>& routing, const MoeRouteOptions& options = {});

#define VEDA_MOE_EXTERN(T)                                                                                  \
  extern template MoeRouting<T> moe_route<T>(const Array<T>&, std::size_t, const MoeRouteOptions&);       \
  extern template Array<T> moe_dispatch<T>(const Array<T>&, const MoeRouting<T>&, const MoeRouteOptions&); \
  extern template Array<T> moe_combine<T>(const Array<T>&, const MoeRouting<T>&, const MoeRouteOptions&);
VEDA_MOE_EXTERN(float)
VEDA_MOE_EXTERN(double)
#undef VEDA_MOE_EXTERN

}  // namespace veda
