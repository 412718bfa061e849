// The reductions along an axis as (state, add, merge, finish) policies,
// shared by the CPU and the CUDA kernels so that both mean the same thing by
// "first NaN", "first index on ties" and "empty".
//
// A State summarises a run of consecutive elements; merge(left, right)
// joins two runs, left before right. Sums merge in the order the kernel's
// tree gives (that order is the result's bits); min, max and the arg ops
// are order-independent (the arg ops compare (is NaN, value, index)), so any
// split gives the same answer.
#pragma once

#include <cstdint>
#include <cmath>
#include <limits>
#include <type_traits>

#include "veda/detail/reduce_kind.hpp"  // VEDA_REDUCE_HD, NanMin, NanMax

namespace veda::detail::axis {

// sum, mean and the two passes of var/stddev: Acc is the result type.
// -0.0 is the identity of IEEE addition (0.0 would turn a sum of -0.0 into +0.0).
template <class T, class Acc>
struct Sum {
  using State = Acc;
  using Center = Acc;
  static constexpr bool kCentered = false;
  static VEDA_REDUCE_HD State identity() { return static_cast<Acc>(-0.0); }
  static VEDA_REDUCE_HD void add(State& s, T x, std::int64_t, Center) { s += static_cast<Acc>(x); }
  static VEDA_REDUCE_HD void merge(State& a, const State& b) { a += b; }
};

// var's second pass: the sum of squared deviations from `c`, the mean of
// the output element the value belongs to.
template <class T, class Acc>
struct SqDev {
  using State = Acc;
  using Center = Acc;
  static constexpr bool kCentered = true;
  static VEDA_REDUCE_HD State identity() { return static_cast<Acc>(-0.0); }
  static VEDA_REDUCE_HD void add(State& s, T x, std::int64_t, Center c) {
    const Acc d = static_cast<Acc>(x) - c;
    s += d * d;
  }
  static VEDA_REDUCE_HD void merge(State& a, const State& b) { a += b; }
};

template <class T, bool IsMax>
struct Extreme {
  using State = T;
  using Center = T;  // unused
  static constexpr bool kCentered = false;
  static VEDA_REDUCE_HD State identity() {
    using L = std::numeric_limits<T>;
    if constexpr (L::has_infinity) return IsMax ? -L::infinity() : L::infinity();
    else return IsMax ? L::lowest() : L::max();
  }
  static VEDA_REDUCE_HD void add(State& s, T x, std::int64_t, Center) { merge(s, x); }
  static VEDA_REDUCE_HD void merge(State& a, const State& b) {
    if constexpr (IsMax) a = NanMax{}(a, b);
    else a = NanMin{}(a, b);
  }
};

template <class T>
struct ValueIndex {
  T v;
  std::int64_t i;  // -1: no element yet
};

// argmin/argmax: the first NaN, else the extreme value at its first index.
template <class T, bool IsMax>
struct Arg {
  using State = ValueIndex<T>;
  using Center = T;  // unused
  static constexpr bool kCentered = false;
  static VEDA_REDUCE_HD State identity() { return {T{}, -1}; }
  // Whether (v, i) comes before s in the order the answer is the first of.
  static VEDA_REDUCE_HD bool before(T v, std::int64_t i, const State& s) {
    if (s.i < 0) return i >= 0;
    if (i < 0) return false;
    const bool vn = v != v, sn = s.v != s.v;
    if (vn || sn) return vn && (!sn || i < s.i);
    if (v == s.v) return i < s.i;
    return IsMax ? v > s.v : v < s.v;
  }
  static VEDA_REDUCE_HD void add(State& s, T x, std::int64_t j, Center) {
    if (before(x, j, s)) s = {x, j};
  }
  static VEDA_REDUCE_HD void merge(State& a, const State& b) {
    if (before(b.v, b.i, a)) a = b;
  }
};

// mean and var: s / divisor (len, or len - ddof); NaN when divisor <= 0.
template <class R>
VEDA_REDUCE_HD R divide(R s, std::int64_t divisor) {
  return divisor > 0 ? s / static_cast<R>(divisor) : std::numeric_limits<R>::quiet_NaN();
}

// The result a finished state gives for `op` over an axis of `len` elements.
template <class R, class S>
VEDA_REDUCE_HD R finish(AxisOp op, const S& s, std::int64_t len, int ddof) {
  if constexpr (requires { s.i; }) {
    return s.i;
  } else if constexpr (std::is_floating_point_v<R>) {
    if (op == AxisOp::Mean) return divide(static_cast<R>(s), len);
    if (op == AxisOp::Var) return divide(static_cast<R>(s), len - ddof);
    if (op == AxisOp::Stddev) return std::sqrt(divide(static_cast<R>(s), len - ddof));
    return static_cast<R>(s);
  } else {
    return static_cast<R>(s);
  }
}

// Host side, for both backends: calls f(T{}) for the element type behind
// `type` (one of the four the axis reductions take).
template <class F>
void with_type(ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::F32: return f(float{});
    case ScalarType::F64: return f(double{});
    case ScalarType::I32: return f(std::int32_t{});
    case ScalarType::I64: return f(std::int64_t{});
    default: return;
  }
}

// Runs `op` over elements of T into `out` as the backend's passes:
// pass.template operator()<Policy>(finish_op, out_of_result_type, centers).
// var and stddev are two: the means into out, then the squared deviations
// from them (centers = out), finished as op.
template <class T, class Pass>
void for_each_pass(AxisOp op, void* out, Pass&& pass) {
  using S = sum_t<T>;
  using M = mean_t<T>;
  auto* index = static_cast<std::int64_t*>(out);
  switch (op) {
    case AxisOp::Sum: return pass.template operator()<Sum<T, S>>(op, static_cast<S*>(out), nullptr);
    case AxisOp::Mean: return pass.template operator()<Sum<T, M>>(op, static_cast<M*>(out), nullptr);
    case AxisOp::Var:
    case AxisOp::Stddev: {
      auto* m = static_cast<M*>(out);
      pass.template operator()<Sum<T, M>>(AxisOp::Mean, m, nullptr);
      return pass.template operator()<SqDev<T, M>>(op, m, m);
    }
    case AxisOp::Min: return pass.template operator()<Extreme<T, false>>(op, static_cast<T*>(out), nullptr);
    case AxisOp::Max: return pass.template operator()<Extreme<T, true>>(op, static_cast<T*>(out), nullptr);
    case AxisOp::ArgMin: return pass.template operator()<Arg<T, false>>(op, index, nullptr);
    case AxisOp::ArgMax: return pass.template operator()<Arg<T, true>>(op, index, nullptr);
  }
}

}  // namespace veda::detail::axis
