// veda/softmax.hpp — softmax and log-softmax along one axis of an Array.
//
//   veda::Array<float> logits(veda::Shape{tokens, vocab});
//   auto p = veda::softmax(logits);            // along the last axis
//   auto q = veda::softmax(scores, 1);         // along axis 1 of [b, s, t]
//   auto l = veda::log_softmax(logits, -1);    // for cross-entropy
//   veda::softmax_into(p, logits);             // into an Array of x's shape
//
// Contract:
// - Array<float> or Array<double>, 1- to 4-D; `axis` negative counts from the
//   last (-1, the default). Out of range is veda::InvalidArgument naming the
//   axis and the shape, before any work.
// - Numerically stable: each slice along the axis has its maximum m
//   subtracted first, softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m) and
//   log_softmax(x)_i = x_i - m - log(sum_j exp(x_j - m)), so no finite input
//   overflows. As in PyTorch, a slice holding a NaN or +inf, or only -inf,
//   gives NaN throughout. The result has x's shape (an empty x: an empty
//   result, no work). The _into forms write it into `out`, which must have
//   x's shape and not be x (InvalidArgument otherwise): no allocation.
// - Tiers: serial, tbb-auto (slices, column blocks and long slices split
//   among workers), cuda (a warp per slice up to 1024 elements, a block per
//   longer one, warp-shuffle reductions; a thread per column for an axis that
//   is not the last). The CPU tiers sum a slice in fixed chunks, so they give
//   the same bits at every thread count; the cuda tier may differ from them
//   in the last bits. The result is left where it was computed.
//
// Thread-safety: any number of threads may call these at once.
#pragma once

#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/reduce_kind.hpp"

namespace veda {

struct SoftmaxOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "softmax" or "log_softmax"
  std::string tier;  // force "serial", "tbb-auto" or "cuda": benchmarks, debugging
};

namespace detail {
template <class T>
concept RowElem = std::is_same_v<T, float> || std::is_same_v<T, double>;

// in: x's buffer, of `shape`; out: the result's (both null when x is
// empty), which must have x's shape and not be x.
void softmax_buffers(ScalarType type, Buffer* in, Buffer* out, const Shape& shape, const Shape& out_shape, int axis,
                     bool log, const SoftmaxOptions& o);

// A host Array of x's shape, for the result of a returning form.
template <class T>
Array<T> new_like(const Array<T>& x) {
  auto out = Array<T>::from_storage(make_host_storage(x.size() * sizeof(T)), x.size());
  out.reshape(x.shape());
  return out;
}
}  // namespace detail

template <detail::RowElem T>
void softmax_into(Array<T>& out, const Array<T>& x, int axis = -1, const SoftmaxOptions& o = {}) {
  detail::softmax_buffers(detail::scalar_type_of<T>(), x.buffer(), out.buffer(), x.shape(), out.shape(), axis, false, o);
}
template <detail::RowElem T>
void log_softmax_into(Array<T>& out, const Array<T>& x, int axis = -1, const SoftmaxOptions& o = {}) {
  detail::softmax_buffers(detail::scalar_type_of<T>(), x.buffer(), out.buffer(), x.shape(), out.shape(), axis, true, o);
}
template <detail::RowElem T>
Array<T> softmax(const Array<T>& x, int axis = -1, const SoftmaxOptions& o = {}) {
  auto out = detail::new_like(x);
  softmax_into(out, x, axis, o);
  return out;
}
template <detail::RowElem T>
Array<T> log_softmax(const Array<T>& x, int axis = -1, const SoftmaxOptions& o = {}) {
  auto out = detail::new_like(x);
  log_softmax_into(out, x, axis, o);
  return out;
}

}  // namespace veda
