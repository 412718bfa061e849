// Arguments of an element-wise call: which are ranges (std::vector,
// std::span, veda::Array, C arrays) and which are scalars broadcast to every
// element, their element types, and accessors whose get(i) compiles to a
// plain load or a constant, so the CPU loops vectorise and the same
// accessors work in CUDA kernels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/error.hpp"
#include "veda/detail/host_device.hpp"
#include "veda/detail/type_key.hpp"

namespace veda::detail {

enum class RangeKind { None, Vector, Span, Array };

template <class A>
struct arg_traits {
  static constexpr RangeKind kind = RangeKind::None;
  using value_type = std::remove_cvref_t<A>;
};
template <class T, class Al>
struct arg_traits<std::vector<T, Al>> {
  static constexpr RangeKind kind = RangeKind::Vector;
  using value_type = T;
};
template <class T, std::size_t E>
struct arg_traits<std::span<T, E>> {
  static constexpr RangeKind kind = RangeKind::Span;
  using value_type = std::remove_cv_t<T>;
};
template <class T>
struct arg_traits<Array<T>> {
  static constexpr RangeKind kind = RangeKind::Array;
  using value_type = T;
};

template <class A>
using traits_of = arg_traits<std::remove_cvref_t<A>>;
template <class A>
inline constexpr bool is_range_v = traits_of<A>::kind != RangeKind::None;
template <class A>
inline constexpr bool is_array_v = traits_of<A>::kind == RangeKind::Array;
template <class A>
using elem_t = typename traits_of<A>::value_type;

template <class... A>
inline constexpr bool any_range_v = (is_range_v<A> || ...);
template <class... A>
inline constexpr bool any_array_v = (is_array_v<A> || ...);

// Whether f can run in a CUDA kernel: a VEDA_FN (extended __host__
// __device__) lambda, or a functor that declares
// `static constexpr bool veda_device = true;` (its operator() being
// __host__ __device__). Other callables run on the CPU only.
template <class F, class = void>
struct declares_device : std::false_type {};
template <class F>
struct declares_device<F, std::enable_if_t<F::veda_device>> : std::true_type {};
#if defined(__CUDACC__)
template <class F>
inline constexpr bool device_callable_v =
    __nv_is_extended_host_device_lambda_closure_type(F) || declares_device<F>::value;
#else
template <class F>
inline constexpr bool device_callable_v = false;
#endif


// Byte counts of host ranges. Only an impossible range (a span given a
// made-up length) has more bytes than size_t counts, but every size derived
// from it would wrap, so entry points check their ranges before any work.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_byte_overflow(std::string_view who, std::string_view what,
                                                                       std::size_t n, std::size_t elem_bytes) {
  throw InvalidArgument(std::string(who) + ": " + std::string(what) + " of " + std::to_string(n) + " elements (" +
                        std::to_string(elem_bytes) + " bytes each) overflows a byte count");
}
inline void check_byte_count(std::string_view who, std::string_view what, std::size_t n, std::size_t elem_bytes) {
  if (elem_bytes != 0 && n > std::numeric_limits<std::size_t>::max() / elem_bytes)
    throw_byte_overflow(who, what, n, elem_bytes);
}

template <class A>
std::size_t range_size(const A& a) {
  if constexpr (traits_of<A>::kind == RangeKind::None) return 0;
  else return a.size();
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_argument_overflow(std::string_view who, std::size_t index,
                                                                           std::size_t n, std::size_t elem_bytes) {
  throw_byte_overflow(who, "argument " + std::to_string(index), n, elem_bytes);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_length_mismatch(std::string_view who, std::size_t index,
                                                                         std::size_t size, std::size_t first,
                                                                         std::size_t n) {
  throw InvalidArgument(std::string(who) + ": argument " + std::to_string(index) + " has " + std::to_string(size) +
                        " elements but argument " + std::to_string(first) + " has " + std::to_string(n));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_output_length(std::string_view who, std::size_t size,
                                                                       std::size_t n) {
  throw InvalidArgument(std::string(who) + ": output has " + std::to_string(size) + " elements but the inputs have " +
                        std::to_string(n));
}
// Length of the call: all ranges must agree, and their byte counts must not
// overflow (InvalidArgument otherwise; a std::vector's cannot: its size is
// at most max_size(), and skipping its check is ~0.5 ns of a settled
// 256-float saxpy). The throws are out of line, so a call's checks inline
// into it.
template <class... A>
std::size_t common_length(const std::string& who, const A&... a) {
  std::size_t n = 0, index = 0, first = 0;
  bool seen = false;
  auto check = [&](const auto& x) {
    ++index;
    using X = std::remove_cvref_t<decltype(x)>;
    if constexpr (is_range_v<X>) {
      const std::size_t s = x.size();
      if (traits_of<X>::kind != RangeKind::Vector && s > std::numeric_limits<std::size_t>::max() / sizeof(elem_t<X>))
        throw_argument_overflow(who, index, s, sizeof(elem_t<X>));
      if (!seen) {
        n = s;
        first = index;
        seen = true;
      } else if (s != n) {
        throw_length_mismatch(who, index, s, first, n);
      }
    }
  };
  (check(a), ...);
  return n;
}

// Host pointer to a range's elements (an Array's host copy is brought up to date).
template <class A>
const elem_t<A>* host_data(const A& a) {
  if constexpr (is_array_v<A>) return a.host().data();
  else return a.data();
}

// Where a range argument's host bytes are, without touching them: an
// Array's host copy (none for an empty Array), a vector's or span's elements.
template <class A>
std::pair<std::uintptr_t, std::size_t> host_extent(const A& a) {
  if constexpr (is_array_v<A>) {
    const Buffer* b = a.buffer();
    if (!b) return {0, 0};
    return {reinterpret_cast<std::uintptr_t>(b->host_address()), a.size() * sizeof(elem_t<A>)};
  } else {
    return {reinterpret_cast<std::uintptr_t>(a.data()), a.size() * sizeof(elem_t<A>)};
  }
}

// An element-wise call's output must not overlap a range argument
// (InvalidArgument naming the argument: the result would depend on the tier
// and on timing), unless it is that argument itself, updated in place: the
// same Array, or a host range with the same first element and element size.
// That is safe on every tier, since element i is read before out[i] is
// written (CPU loops; GPU tiers read a device copy, or the same device
// element). An Array and a host range over its host copy are rejected even
// when they coincide: writes through the range bypass the Array's residency.
// Checked before a std::vector output is resized to the call's length `n`
// (a rejected call must not shrink it), over the storage it will then
// occupy: its first min(n, capacity) elements (beyond that it moves to new
// storage, which overlaps nothing).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_output_overlap(std::string_view who, std::size_t index) {
  throw InvalidArgument(std::string(who) + ": the output overlaps argument " + std::to_string(index) +
                        " (only an update in place, with that argument itself as the output, is allowed)");
}
template <class Out, class... A>
void check_output_overlap(const std::string& who, const Out& out, std::size_t n, const A&... a) {
  // Plain variables, not structured bindings: the lambda below captures them.
  std::pair<std::uintptr_t, std::size_t> o = host_extent(out);
  if constexpr (traits_of<Out>::kind == RangeKind::Vector)
    o.second = std::min(n, out.capacity()) * sizeof(elem_t<Out>);
  const std::uintptr_t ob = o.first;
  const std::size_t on = o.second;
  if (on == 0) return;
  std::size_t index = 0;
  auto check = [&](const auto& x) {
    ++index;
    using X = std::remove_cvref_t<decltype(x)>;
    // Two std::vectors are the same object (an update in place) or own
    // disjoint storage: nothing to compare (~1 ns of a settled 256-float
    // saxpy into a vector).
    constexpr bool both_vectors =
        traits_of<X>::kind == RangeKind::Vector && traits_of<Out>::kind == RangeKind::Vector;
    if constexpr (is_range_v<X> && !both_vectors) {
      const std::pair<std::uintptr_t, std::size_t> e = host_extent(x);
      const std::uintptr_t xb = e.first;
      const std::size_t xn = e.second;
      if (xn == 0 || xb >= ob + on || ob >= xb + xn) return;  // disjoint
      if (xb == ob && is_array_v<X> == is_array_v<Out> && sizeof(elem_t<X>) == sizeof(elem_t<Out>)) return;
      throw_output_overlap(who, index);
    }
  };
  (check(a), ...);
}

template <class T>
struct RangeAcc {
  const T* p;
  VEDA_HD const T& get(std::size_t i) const { return p[i]; }
};
template <class T>
struct ScalarAcc {
  T v;
  VEDA_HD const T& get(std::size_t) const { return v; }
};

// Accessor over the host side of an argument.
template <class A>
auto host_accessor(const A& a) {
  if constexpr (is_range_v<A>) return RangeAcc<elem_t<A>>{host_data(a)};
  else return ScalarAcc<std::remove_cvref_t<A>>{a};
}

// out[i] = f(acc.get(i)...) for i in [lo, hi). The accessors are copies
// (a pointer or a scalar each): a scalar read through a reference might
// alias out, and the compiler would reload it per element and vectorise
// only behind a run-time overlap check. Compiled by nvcc, the caller also
// holds the call's GPU path, and this loop inlined there lost registers to
// it: one spilled store per vector (a 1024-float saxpy took 250 ns against
// 175 ns from g++); called, it gets registers of its own.
//
// GCC aligns loop heads to 16 bytes, and this short vector loop, when it
// then straddled a 32-byte boundary, ran 1.3x slower on AMD Zen 4 (a
// 16384-float saxpy: 2.25 us against 1.71 us aligned to 32; the plain loop
// it is compared with was fast or slow by where the linker put it), so
// GCC aligns this one to 32. It also unrolls it: one vector per iteration
// ran 1.1-1.4x a plain loop at 256-4096 floats on an Intel Xeon (saxpy
// 4096: 410 ns against 360), unrolled 0.95-1.05x (from g++ and nvcc alike;
// nvcc does not pass `#pragma GCC unroll` on, this attribute it does).
#if defined(__GNUC__) && !defined(__clang__)
#define VEDA_DETAIL_ALIGNED_LOOP gnu::optimize("align-loops=32", "unroll-loops")
#else
#define VEDA_DETAIL_ALIGNED_LOOP
#endif
#if defined(__CUDACC__)
#define VEDA_DETAIL_MAP_LOOP [[gnu::noinline, VEDA_DETAIL_ALIGNED_LOOP]]
#else
#define VEDA_DETAIL_MAP_LOOP [[VEDA_DETAIL_ALIGNED_LOOP]] inline
#endif
template <class F, class R, class... Acc>
VEDA_DETAIL_MAP_LOOP void map_range(const F& f, R* out, std::size_t lo, std::size_t hi, Acc... acc) {
  for (std::size_t i = lo; i < hi; ++i) out[i] = f(acc.get(i)...);
}

}  // namespace veda::detail
