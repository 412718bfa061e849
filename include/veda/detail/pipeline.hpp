// par_iter internals: sources, stages, and how an element flows through them.
//
// A pipeline is a source plus a tuple of stages. Stages are element-wise
// (map, gpu_map, filter) or positional (enumerate, zip, take, skip: they
// need the element's position in the stream). Positions are simple while no
// filter has run: they are source positions, so take/skip narrow the source
// range and enumerate/zip subtract an offset. A positional stage after a
// filter starts a new *phase*: the stream so far is materialised, in order,
// and positions restart from it. Within a phase, apply<K, E>() pushes one
// source element through stages [K, E) into a sink without any intermediate
// container, which is what makes consecutive stages fuse.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/detail/map_args.hpp"

namespace veda {

// The element type of enumerate() (index, value) and zip() (left, right):
// a plain aggregate, usable in device code and with structured bindings.
template <class A, class B>
struct pair {
  A first;
  B second;
  friend bool operator==(const pair&, const pair&) = default;
};

namespace detail::pipe {

// ---------------------------------------------------------------- sources
template <class T>
struct SpanSource {  // contiguous elements; an Array source keeps its Array
  using value_type = T;
  // Elements an Array can hold; others (a range of Arrays, say) come only from host ranges.
  using ArrayOf = std::conditional_t<std::is_trivially_copyable_v<T>, Array<T>, void>;
  const T* data = nullptr;
  std::size_t n = 0;
  const ArrayOf* array = nullptr;  // for residency; data is then fetched lazily
  std::size_t size() const noexcept { return n; }
  VEDA_HD const T& get(std::size_t i) const { return data[i]; }
  // Host data, brought up to date for an Array source.
  void bind_host() {
    if constexpr (!std::is_void_v<ArrayOf>)
      if (array && n) data = array->host().data();
  }
};

template <class I>
struct IndexSource {
  using value_type = I;
  I first{};
  std::size_t n = 0;
  std::size_t size() const noexcept { return n; }
  VEDA_HD I get(std::size_t i) const { return static_cast<I>(first + static_cast<I>(i)); }
  void bind_host() {}
};

// ---------------------------------------------------------------- stages
template <class F>
struct Map {
  F f;
};
template <class F>
struct GpuMap {
  F f;
};
template <class P>
struct Filter {
  P p;
};
struct Enumerate {};
template <class S>
struct Zip {
  S other;
};
struct Take {
  std::size_t n;
};
struct Skip {
  std::size_t n;
};

template <class S>
struct is_map : std::false_type {};
template <class F>
struct is_map<Map<F>> : std::true_type {};
template <class S>
struct is_gpu_map : std::false_type {};
template <class F>
struct is_gpu_map<GpuMap<F>> : std::true_type {};
template <class S>
struct is_filter : std::false_type {};
template <class P>
struct is_filter<Filter<P>> : std::true_type {};
template <class S>
struct is_zip : std::false_type {};
template <class O>
struct is_zip<Zip<O>> : std::true_type {};
template <class S>
inline constexpr bool is_positional_v = std::is_same_v<S, Enumerate> || is_zip<S>::value ||
                                        std::is_same_v<S, Take> || std::is_same_v<S, Skip>;

// Element type after one stage.
template <class T, class S>
struct after {
  using type = T;  // filter, take, skip
};
template <class T, class F>
struct after<T, Map<F>> {
  using type = std::remove_cvref_t<std::invoke_result_t<const F&, const T&>>;
};
template <class T, class F>
struct after<T, GpuMap<F>> {
  using type = std::remove_cvref_t<std::invoke_result_t<const F&, const T&>>;
};
template <class T>
struct after<T, Enumerate> {
  using type = pair<std::size_t, T>;
};
template <class T, class O>
struct after<T, Zip<O>> {
  using type = pair<T, typename O::value_type>;
};

// Element type entering stage K of Stages (K == size: the output).
template <class T, class Stages, std::size_t K>
struct value_at;
template <class T, class... S>
struct value_at<T, std::tuple<S...>, 0> {
  using type = T;
};
template <class T, class... S, std::size_t K>
  requires(K > 0)
struct value_at<T, std::tuple<S...>, K> {
  using prev = typename value_at<T, std::tuple<S...>, K - 1>::type;
  using type = typename after<prev, std::tuple_element_t<K - 1, std::tuple<S...>>>::type;
};
template <class T, class Stages, std::size_t K>
using value_at_t = typename value_at<T, Stages, K>::type;

// ---------------------------------------------------------------- layout
// Stages that can run in a GPU segment: gpu_map with a device-callable
// function, filter with a device-callable predicate (only in nvcc files).
template <class S>
struct device_stage : std::false_type {};
template <class F>
struct device_stage<GpuMap<F>> : std::bool_constant<device_callable_v<F>> {};
template <class P>
struct device_stage<Filter<P>> : std::bool_constant<device_callable_v<P>> {};

// Where a phase's GPU segment lies: [g0, g1), starting at its first
// device-callable gpu_map and extending over device stages.
struct Segment {
  bool valid = false;
  std::size_t g0 = 0, g1 = 0;
  bool maps_only = true;  // no filter inside
};

template <class Stages>
struct layout;
template <class... S>
struct layout<std::tuple<S...>> {
  static constexpr std::size_t N = sizeof...(S);
  static constexpr std::array<bool, N + 1> filter{is_filter<S>::value..., false};
  static constexpr std::array<bool, N + 1> device{device_stage<S>::value..., false};
  static constexpr std::array<bool, N + 1> positional{is_positional_v<S>..., false};
  static constexpr std::array<bool, N + 1> gpu_map{is_gpu_map<S>::value..., false};

  // End of the phase starting at I: the first positional stage after a filter.
  static constexpr std::size_t phase_end(std::size_t I) {
    bool seen = false;
    for (std::size_t j = I; j != N; ++j) {  // != : no "j < 0" warning when N == 0
      if (filter[j]) seen = true;
      else if (positional[j] && seen) return j;
    }
    return N;
  }
  static constexpr bool has_filter(std::size_t from, std::size_t to) {
    for (std::size_t j = from; j != to; ++j)
      if (filter[j]) return true;
    return false;
  }
  static constexpr Segment segment(std::size_t I, std::size_t E) {
    Segment s;
    std::size_t j = I;
    while (j != E && !(gpu_map[j] && device[j])) ++j;
    if (j == E) return s;
    s.valid = true;
    s.g0 = j;
    while (j != E && device[j]) {
      if (filter[j]) s.maps_only = false;
      ++j;
    }
    s.g1 = j;
    return s;
  }
};

// Per-phase positional state: the source range [lo, hi) the phase covers and,
// for each positional stage, the source position of the stream's first
// element at that stage.
template <std::size_t N>
struct PhaseRange {
  std::size_t lo = 0, hi = 0;
  std::array<std::size_t, N + 1> base{};
};

template <std::size_t I, std::size_t E, class Stages>
PhaseRange<std::tuple_size_v<Stages>> phase_range(const Stages& st, std::size_t n) {
  PhaseRange<std::tuple_size_v<Stages>> r;
  r.hi = n;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    [[maybe_unused]] auto one = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {  // unused without stages
      using S = std::tuple_element_t<J, Stages>;
      const auto& s = std::get<J>(st);
      r.base[J] = r.lo;
      if constexpr (std::is_same_v<S, Skip>) r.lo = std::min(r.hi, r.lo + std::min(s.n, r.hi - r.lo));
      else if constexpr (std::is_same_v<S, Take>) r.hi = std::min(r.hi, r.lo + std::min(s.n, r.hi - r.lo));
      else if constexpr (is_zip<S>::value) r.hi = std::min(r.hi, r.lo + std::min(s.other.size(), r.hi - r.lo));
    };
    (one(std::integral_constant<std::size_t, I + K>{}), ...);
  }(std::make_index_sequence<E - I>{});
  return r;
}

// Pushes the element at source position `i`, with value v entering stage K,
// through stages [K, E) into `sink`. Returns false only if the sink asks to
// stop (short-circuiting terminals).
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define VEDA_INLINE [[gnu::always_inline]] inline
#else
#define VEDA_INLINE inline
#endif

template <std::size_t K, std::size_t E, class Stages, class Range, class V, class Sink>
VEDA_INLINE bool apply(const Stages& st, const Range& r, std::size_t i, V&& v, Sink& sink) {
  if constexpr (K == E) {
    return sink(std::forward<V>(v));
  } else {
    using S = std::tuple_element_t<K, Stages>;
    const auto& s = std::get<K>(st);
    if constexpr (is_map<S>::value || is_gpu_map<S>::value) {
      return apply<K + 1, E>(st, r, i, s.f(v), sink);
    } else if constexpr (is_filter<S>::value) {
      if (!s.p(v)) return true;
      return apply<K + 1, E>(st, r, i, std::forward<V>(v), sink);
    } else if constexpr (std::is_same_v<S, Enumerate>) {
      using T = std::remove_cvref_t<V>;
      return apply<K + 1, E>(st, r, i, pair<std::size_t, T>{i - r.base[K], std::forward<V>(v)}, sink);
    } else if constexpr (is_zip<S>::value) {
      using T = std::remove_cvref_t<V>;
      using U = typename decltype(s.other)::value_type;
      return apply<K + 1, E>(st, r, i, pair<T, U>{std::forward<V>(v), s.other.get(i - r.base[K])}, sink);
    } else {  // take, skip: the range already says
      return apply<K + 1, E>(st, r, i, std::forward<V>(v), sink);
    }
  }
}

}  // namespace detail::pipe
}  // namespace veda
