// veda/layer_norm.hpp — layer normalisation over the last axis of an Array.
//
//   veda::Array<float> x(veda::Shape{batch, seq, d_model});
//   veda::Array<float> gamma(d_model), beta(d_model);
//   auto y = veda::layer_norm(x, gamma, beta);          // eps = 1e-5
//   auto z = veda::layer_norm(x, {}, {}, 1e-6);         // no affine part
//   veda::layer_norm_into(y, x, gamma, beta);           // into an Array of x's shape
//
// Contract:
// - Array<float> or Array<double>, 1- to 4-D. Each row (a slice along the
//   last axis, of length D) is normalised on its own, as PyTorch's
//   layer_norm(x, [D], gamma, beta, eps):
//     mean = sum(x) / D,  var = sum((x - mean)^2) / D   (two passes, biased)
//     y = (x - mean) / sqrt(var + eps) * gamma + beta
// - gamma and beta: each a 1-D Array of D elements, or empty (a
//   default-constructed Array): no scale, or no shift. eps: finite and >= 0.
//   Anything else is veda::InvalidArgument naming it, before any work.
// - The result has x's shape (an empty x: an empty result, no work); the
//   _into form writes it into `out`, which must have x's shape and not be x
//   (InvalidArgument otherwise): no allocation. A row
//   holding a NaN or an infinity gives NaN throughout; with eps = 0 a
//   constant row gives NaN (0 / 0), as in PyTorch.
// - Tiers: serial, tbb-auto (rows split among workers), cuda (a warp per row
//   up to 1024 elements, a block per longer one, warp-shuffle reductions).
//   Every row is summed in a fixed order per tier, so the CPU tiers give the
//   same bits; the cuda tier may differ from them in the last bits. The
//   result is left where it was computed.
//
// Thread-safety: any number of threads may call it at once.
#pragma once

#include <string>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/softmax.hpp"  // detail::RowElem, new_like

namespace veda {

struct LayerNormOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "layer_norm"
  std::string tier;  // force "serial", "tbb-auto" or "cuda": benchmarks, debugging
};

namespace detail {
// gamma, beta: null for none; out: the result's buffer (both null when x is
// empty), which must have x's shape and not be x.
void layer_norm_buffers(ScalarType type, Buffer* x, Buffer* gamma, Buffer* beta, Buffer* out, const Shape& shape,
                        const Shape& gamma_shape, const Shape& beta_shape, const Shape& out_shape, double eps,
                        const LayerNormOptions& o);
}  // namespace detail

template <detail::RowElem T>
void layer_norm_into(Array<T>& out, const Array<T>& x, const Array<T>& gamma, const Array<T>& beta,
                     double eps = 1e-5, const LayerNormOptions& o = {}) {
  detail::layer_norm_buffers(detail::scalar_type_of<T>(), x.buffer(), gamma.buffer(), beta.buffer(), out.buffer(),
                             x.shape(), gamma.shape(), beta.shape(), out.shape(), eps, o);
}
template <detail::RowElem T>
Array<T> layer_norm(const Array<T>& x, const Array<T>& gamma, const Array<T>& beta, double eps = 1e-5,
                    const LayerNormOptions& o = {}) {
  auto out = detail::new_like(x);
  layer_norm_into(out, x, gamma, beta, eps, o);
  return out;
}

}  // namespace veda
