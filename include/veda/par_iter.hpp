// veda/par_iter.hpp — parallel pipelines.
//
//   float s = veda::par_iter(x)                       // vector, span, Array, C array, range(n)
//                 .map([](float v) { return v * 2; })   // CPU
//                 .filter([](float v) { return v > 1; })
//                 .gpu_map([] VEDA_FN (float v) { return std::sqrt(v); })  // may run on the GPU
//                 .sum();
//
// Adaptors are lazy: map, gpu_map, filter, enumerate, zip, take, skip.
// Terminal operations run the pipeline: collect (std::vector, source order),
// collect_array (a veda::Array left where it was computed), reduce, sum, min,
// max, count, any, all (short-circuit), for_each, find_first.
//
// Contract:
// - Every chain gives exactly what the serial std:: equivalent gives, for
//   every length and thread count; collect, filter, enumerate, take and skip
//   preserve source order whatever stages come before (reductions combine in
//   an unspecified order, as std::reduce: sum of floats is exact up to
//   rounding, bitwise reproducible in deterministic mode).
// - Planning happens at the terminal operation: consecutive stages fuse into
//   one pass per chunk with no intermediate containers; a positional stage
//   (enumerate, zip, take, skip) after a filter materialises the stream first.
//   A run of gpu_map stages (with adjacent VEDA_FN filters) in a file compiled
//   by nvcc is a GPU segment the cost model may place on the device; the
//   plan is visible through veda::last_decision().segments.
// - A user function that throws cancels the remaining work; the first
//   exception reaches the caller, no partial result is returned, and veda
//   stays usable. for_each may call f concurrently on different elements.
// - The pipeline refers to its source's data (as a view does): keep the data
//   alive and unchanged until the terminal operation returns.
// - A source may hold Arrays (std::vector<veda::Array<float>>): stages get
//   each as const Array&. veda ops called inside a stage are nested calls:
//   each is placed on its own, oneTBB nests their CPU work in the outer loop
//   (matmul leaves OpenBLAS out there, whose threads would oversubscribe),
//   and each thread's GPU work goes to its own stream.
//
// Thread-safety: separate pipelines may run concurrently on any threads.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/pipeline.hpp"
#include "veda/detail/pipeline_run.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/detail/site_mode.hpp"
#include "veda/runtime.hpp"

namespace veda {

// Integers first, first+1, ..., last-1 as a pipeline source. Bounds of
// different integer types (range(0, v.size())) meet in their common type;
// a bound that does not fit it, or last < first, is veda::InvalidArgument.
template <class I>
struct IndexRange {
  I first;
  I last;
};
template <class I, class J>
IndexRange<std::common_type_t<I, J>> range(I first, J last) {
  static_assert(std::is_integral_v<I> && std::is_integral_v<J> && !std::is_same_v<I, bool> && !std::is_same_v<J, bool>,
                "veda::range takes integers");
  using C = std::common_type_t<I, J>;
  if (!std::in_range<C>(first) || !std::in_range<C>(last))
    throw InvalidArgument("veda::range: bounds " + std::to_string(first) + ", " + std::to_string(last) +
                          " do not fit their common integer type");
  if (std::cmp_less(last, first)) throw InvalidArgument("veda::range: last < first");
  return {static_cast<C>(first), static_cast<C>(last)};
}
template <class I>
IndexRange<I> range(I n) {
  return range(I{0}, n);
}

struct ParIterOptions {
  std::string name = "par_iter";
  Placement placement = Placement::Auto;  // for every segment of the pipeline
  bool strict = false;
  std::string tier;  // force a named tier for every phase: benchmarks, debugging
};

namespace detail::pipe {
// Source adapters.
template <class T, class A>
SpanSource<T> source_of(const std::vector<T, A>& v) {
  return {v.data(), v.size(), nullptr};
}
template <class T, std::size_t E>
SpanSource<std::remove_cv_t<T>> source_of(std::span<T, E> s) {
  return {s.data(), s.size(), nullptr};
}
template <class T>
SpanSource<T> source_of(const Array<T>& a) {
  return {nullptr, a.size(), &a};
}
template <class T, std::size_t N>
SpanSource<T> source_of(const T (&a)[N]) {
  return {a, N, nullptr};
}
template <class I>
IndexSource<I> source_of(IndexRange<I> r) {
  return {r.first, static_cast<std::size_t>(r.last - r.first)};
}
}  // namespace detail::pipe

inline namespace VEDA_TU_NS {

template <class Src, class... S>
class Pipeline {
  using Stages = std::tuple<S...>;
  static constexpr std::size_t N = sizeof...(S);

 public:
  using value_type = detail::pipe::value_at_t<typename Src::value_type, Stages, N>;

  Pipeline(Src src, Stages st, ParIterOptions o) : src_(src), st_(std::move(st)), opt_(std::move(o)) {}

  // ------------------------------------------------------------ adaptors
  template <class F>
  auto map(F f) const {
    return append(detail::pipe::Map<F>{std::move(f)});
  }
  template <class F>
  auto gpu_map(F f) const {
    return append(detail::pipe::GpuMap<F>{std::move(f)});
  }
  template <class P>
  auto filter(P p) const {
    return append(detail::pipe::Filter<P>{std::move(p)});
  }
  auto enumerate() const { return append(detail::pipe::Enumerate{}); }
  template <class Other>
  auto zip(const Other& other) const {
    auto s = detail::pipe::source_of(other);
    return append(detail::pipe::Zip<decltype(s)>{s});
  }
  auto take(std::size_t n) const { return append(detail::pipe::Take{n}); }
  auto skip(std::size_t n) const { return append(detail::pipe::Skip{n}); }

  // ------------------------------------------------------------ terminals
  std::vector<value_type> collect() const { return run(detail::pipe::Collect{}); }
  Array<value_type> collect_array() const {
    static_assert(std::is_trivially_copyable_v<value_type>, "collect_array needs trivially copyable elements");
    return run(detail::pipe::CollectArray{});
  }
  // `op` must be associative and commutative with `identity` its identity.
  template <class T, class Op>
  T reduce(T identity, Op op) const {
    return run(detail::pipe::Reduce<T, Op>{identity, op});
  }
  auto sum() const {
    using Acc = std::conditional_t<std::is_arithmetic_v<value_type>, detail::sum_t<value_type>, value_type>;
    return run(detail::pipe::Reduce<Acc, detail::PlusOp>{Acc{}, detail::PlusOp{}});
  }
  // NaN-propagating; nullopt when no element reaches the end.
  std::optional<value_type> min() const { return run(detail::pipe::Extreme<value_type, detail::NanMin>{}); }
  std::optional<value_type> max() const { return run(detail::pipe::Extreme<value_type, detail::NanMax>{}); }
  std::size_t count() const { return run(detail::pipe::Count{}); }
  template <class P>
  bool any(P p) const {
    return run(detail::pipe::Any<P, false>{std::move(p)});
  }
  template <class P>
  bool all(P p) const {
    return !run(detail::pipe::Any<P, true>{std::move(p)});
  }
  template <class F>
  void for_each(F f) const {
    run(detail::pipe::ForEach<F>{std::move(f)});
  }
  template <class P>
  std::optional<value_type> find_first(P p) const {
    return run(detail::pipe::FindFirst<P>{std::move(p)});
  }

 private:
  template <class, class...>
  friend class Pipeline;

  template <class Stage>
  Pipeline<Src, S..., Stage> append(Stage s) const {
    return {src_, std::tuple_cat(st_, std::make_tuple(std::move(s))), opt_};
  }

  template <class Term>
  auto run(const Term& term) const {
    detail::CallScope scope;
    Runtime& rt = scope.runtime();
    Stages st = st_;
    std::apply([](auto&... s) { (bind_zip(s), ...); }, st);
    detail::pipe::plan_begin();
    detail::pipe::Runner<Src, Stages, Term, std::pair<Pipeline, Term>> runner(
        rt, st, term, opt_.name, opt_.placement, opt_.strict, detail::parse_tier(opt_.tier));
    auto result = runner.template phase<0>(src_);
    detail::pipe::plan_finish(opt_.name, src_.size());
    if constexpr (std::is_same_v<decltype(result), int>) return;
    else return result;
  }

  template <class Stage>
  static void bind_zip(Stage& s) {
    if constexpr (detail::pipe::is_zip<Stage>::value) s.other.bind_host();
  }

  Src src_;
  Stages st_;
  ParIterOptions opt_;
};

template <class Data>
auto par_iter(const Data& data, ParIterOptions o = {}) {
  auto src = detail::pipe::source_of(data);
  return Pipeline<decltype(src)>(src, std::tuple<>{}, std::move(o));
}

}  // namespace VEDA_TU_NS
}  // namespace veda
