// veda/reduce_axis.hpp — reductions along one axis of an Array, NumPy-style.
//
//   veda::Array<float> X(veda::Shape{rows, cols});
//   auto m = veda::mean(X, 0);                       // [cols]: column means
//   auto s = veda::stddev(X, 0, {.keepdims = true}); // [1, cols]
//   auto r = veda::sum(X, -1);                       // [rows]: the last axis
//   auto i = veda::argmax(X, 1);                     // [rows], std::int64_t
//
// Contract:
// - sum, mean, var, stddev, min, max, argmin and argmax of a 1- to 4-D
//   Array<T>, T one of float, double, std::int32_t, std::int64_t, along
//   `axis` (negative counts from the last: -1 is the last axis; out of range
//   is veda::InvalidArgument naming the axis and the shape, before any work).
// - The result has the input's shape without that axis, or with extent 1
//   there under keepdims. A 1-D input gives a 1-element Array (the
//   whole-array forms in reduce.hpp return a scalar).
// - Result types: sum gives sum_t<T> (integers in 64 bits, floats in their
//   type); mean, var and stddev give T for floats and double for integers;
//   min and max give T; argmin and argmax give std::int64_t.
// - var and stddev divide by (length - ddof); mean, var and stddev of an
//   empty axis (or length <= ddof) are NaN, as in NumPy; sum of an empty axis
//   is 0; min, max, argmin and argmax of an empty axis throw InvalidArgument.
// - NaN: min and max return NaN where the axis holds one; argmin and argmax
//   the index of its first NaN. Ties go to the first index.
// - Sums are pairwise (blocks of 1024 along a contiguous axis, of 64 rows
//   along another), so float error grows with log(length), not length. The
//   combination tree depends only on the shape: the CPU tiers (serial,
//   tbb-auto) give bitwise-identical results at every thread count and on
//   every CPU, in deterministic mode or not. The GPU tier (veda's own
//   kernels, no atomics) gives the same bits run to run on one GPU; its sums
//   may differ from the CPU's in the last bits.
// - Tiers: serial, tbb-auto (rows, column blocks and long axes split among
//   workers), cuda. The result is left where it was computed, like every op's.
//
// Thread-safety: any number of threads may reduce at once.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/reduce_kind.hpp"

namespace veda {

struct AxisOptions {
  bool keepdims = false;  // keep the reduced axis, with extent 1
  int ddof = 0;           // var, stddev: divide by length - ddof (0: population, 1: sample)
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "sum(axis)", "mean(axis)", ...
  std::string tier;  // force "serial", "tbb-auto" or "cuda": benchmarks, debugging
};

namespace detail {
template <class T>
concept AxisElem = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
                   std::is_same_v<T, std::int64_t>;

template <class T, AxisOp Op>
using axis_result_t = std::conditional_t<
    Op == AxisOp::Sum, sum_t<T>,
    std::conditional_t<Op == AxisOp::Min || Op == AxisOp::Max, T,
                       std::conditional_t<Op == AxisOp::ArgMin || Op == AxisOp::ArgMax, std::int64_t, mean_t<T>>>>;

// Checks the axis (and, for min/max/arg*, that it is not empty) and returns
// the result's shape.
Shape axis_result_shape(AxisOp op, const Shape& in, int axis, const AxisOptions& o);
// out: a buffer for the result (null when it has no elements); in may be null
// (an empty input).
void reduce_axis_buffers(AxisOp op, ScalarType type, Buffer* in, Buffer* out, const Shape& shape, int axis,
                         const AxisOptions& o);

template <AxisOp Op, class T>
Array<axis_result_t<T, Op>> reduce_axis(const Array<T>& x, int axis, const AxisOptions& o) {
  using R = axis_result_t<T, Op>;
  const Shape out_shape = axis_result_shape(Op, x.shape(), axis, o);
  auto out = Array<R>::from_storage(make_host_storage(out_shape.size() * sizeof(R)), out_shape.size());
  out.reshape(out_shape);
  reduce_axis_buffers(Op, scalar_type_of<T>(), x.buffer(), out.buffer(), x.shape(), axis, o);
  return out;
}
}  // namespace detail

template <detail::AxisElem T>
Array<detail::sum_t<T>> sum(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Sum>(x, axis, o);
}
template <detail::AxisElem T>
Array<detail::mean_t<T>> mean(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Mean>(x, axis, o);
}
template <detail::AxisElem T>
Array<detail::mean_t<T>> var(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Var>(x, axis, o);
}
template <detail::AxisElem T>
Array<detail::mean_t<T>> stddev(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Stddev>(x, axis, o);
}
template <detail::AxisElem T>
Array<T> min(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Min>(x, axis, o);
}
template <detail::AxisElem T>
Array<T> max(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::Max>(x, axis, o);
}
template <detail::AxisElem T>
Array<std::int64_t> argmin(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::ArgMin>(x, axis, o);
}
template <detail::AxisElem T>
Array<std::int64_t> argmax(const Array<T>& x, int axis, const AxisOptions& o = {}) {
  return detail::reduce_axis<detail::AxisOp::ArgMax>(x, axis, o);
}

}  // namespace veda
