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
//
// Thread-safety: separate pipelines may run concurrently on any threads.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/pipeline.hpp"
#include "veda/detail/pipeline_cpu.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/detail/site_mode.hpp"
#include "veda/runtime.hpp"

namespace veda {

// Integers first, first+1, ..., last-1 as a pipeline source.
template <class I>
struct IndexRange {
  I first;
  I last;
};
template <class I>
IndexRange<I> range(I first, I last) {
  static_assert(std::is_integral_v<I>, "veda::range takes integers");
  if (last < first) throw InvalidArgument("veda::range: last < first");
  return {first, last};
}
template <class I>
IndexRange<I> range(I n) {
  return range(I{0}, n);
}

struct ParIterOptions {
  std::string name = "par_iter";
  Placement placement = Placement::Auto;  // for every segment of the pipeline
  bool strict = false;
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

// A materialised phase output, read by the next phase.
template <class T>
struct VecFeed {
  using value_type = T;
  const std::vector<T>* v;
  std::size_t size() const noexcept { return v->size(); }
  const T& get(std::size_t i) const { return (*v)[i]; }
};

template <class Pipeline, std::size_t Phase>
struct PhaseTag {};

void record_plan(Decision composite);  // last_decision() returns it until the next call
Decision current_decision();           // last_decision(), for assembling plans
}  // namespace detail::pipe

inline namespace VEDA_TU_NS {

template <class Src, class... S>
class Pipeline {
  using Stages = std::tuple<S...>;
  using L = detail::pipe::layout<Stages>;
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
  std::vector<value_type> collect() const { return run(Collect{}); }
  Array<value_type> collect_array() const {
    static_assert(std::is_trivially_copyable_v<value_type>, "collect_array needs trivially copyable elements");
    return Array<value_type>(run(Collect{}));
  }
  template <class T, class Op>
  T reduce(T identity, Op op) const {
    return run(Reduce<T, Op>{identity, op});
  }
  auto sum() const {
    using Acc = std::conditional_t<std::is_arithmetic_v<value_type>, detail::sum_t<value_type>, value_type>;
    return run(Reduce<Acc, std::plus<Acc>>{Acc{}, std::plus<Acc>{}});
  }
  std::optional<value_type> min() const { return extreme<detail::NanMin>(); }
  std::optional<value_type> max() const { return extreme<detail::NanMax>(); }
  std::size_t count() const { return run(Count{}); }
  template <class P>
  bool any(P p) const {
    return run(Any<P, false>{std::move(p)});
  }
  template <class P>
  bool all(P p) const {
    return !run(Any<P, true>{std::move(p)});
  }
  template <class F>
  void for_each(F f) const {
    run(ForEach<F>{std::move(f)});
  }
  template <class P>
  std::optional<value_type> find_first(P p) const {
    return run(FindFirst<P>{std::move(p)});
  }

 private:
  template <class, class...>
  friend class Pipeline;

  template <class Stage>
  Pipeline<Src, S..., Stage> append(Stage s) const {
    return {src_, std::tuple_cat(st_, std::make_tuple(std::move(s))), opt_};
  }

  // Terminals: what to do with the elements reaching the end of the last phase.
  struct Collect {
    template <class T, class Run>
    std::vector<T> cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool one_to_one, const Run& run) const {
      return detail::pipe::collect_cpu<T>(rt, p, count, one_to_one, run);
    }
  };
  template <class Acc, class Op>
  struct Reduce {
    Acc identity;
    Op op;
    template <class T, class Run>
    Acc cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool, const Run& run) const {
      return detail::pipe::reduce_pipeline_cpu<Acc>(rt, p, rt.config().deterministic(), count, identity, op, run);
    }
  };
  struct Count {  // a sum of ones over what reaches the end
    template <class T, class Run>
    std::size_t cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool, const Run& run) const {
      auto ones = [&run](std::size_t j0, std::size_t j1, auto& sink) {
        auto one = [&sink](auto&&) { return sink(std::size_t{1}); };
        return run(j0, j1, one);
      };
      return detail::pipe::reduce_pipeline_cpu<std::size_t>(rt, p, false, count, std::size_t{0},
                                                             std::plus<std::size_t>{}, ones);
    }
  };
  template <class P, bool Negate>
  struct Any {
    P pred;
    template <class T, class Run>
    bool cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool, const Run& run) const {
      auto test = [this](const auto& v) { return static_cast<bool>(pred(v)) != Negate; };
      return detail::pipe::any_cpu(rt, p, count, test, run);
    }
  };
  template <class F>
  struct ForEach {
    F f;
    template <class T, class Run>
    int cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool, const Run& run) const {
      detail::pipe::for_ranges(rt, p, count, [&](std::size_t j0, std::size_t j1) {
        auto sink = [this](auto&& v) {
          f(std::forward<decltype(v)>(v));
          return true;
        };
        run(j0, j1, sink);
      });
      return 0;
    }
  };
  template <class P>
  struct FindFirst {
    P pred;
    template <class T, class Run>
    std::optional<T> cpu(Runtime& rt, const detail::Plan& p, std::size_t count, bool, const Run& run) const {
      return detail::pipe::find_first_cpu<T>(rt, p, count, pred, run);
    }
  };

  template <class Op>
  std::optional<value_type> extreme() const {
    // NaN-propagating fold seeded by the first element (no identity needed).
    struct Opt {
      std::optional<value_type> operator()(const std::optional<value_type>& a, const std::optional<value_type>& b) const {
        if (!a) return b;
        if (!b) return a;
        return Op{}(*a, *b);
      }
    };
    return run(Reduce<std::optional<value_type>, Opt>{std::nullopt, Opt{}});
  }

  template <class Term>
  auto run(const Term& term) const {
    detail::CallScope scope;
    Runtime& rt = scope.runtime();
    Src src = src_;
    src.bind_host();
    Stages st = st_;
    bind_zips(st);
    std::vector<Decision> plan;
    auto result = phase<0>(rt, st, src, term, plan);
    Decision d = detail::pipe::current_decision();
    d.name = opt_.name;
    d.sizes = {src.size()};
    d.segments = std::move(plan);
    if (d.segments.size() > 1) {
      d.reason = "plan of " + std::to_string(d.segments.size()) + " segments";
      d.candidates.clear();
    }
    detail::pipe::record_plan(std::move(d));
    if constexpr (std::is_same_v<decltype(result), int>) return;
    else return result;
  }

  static void bind_zips(Stages& st) {
    std::apply([](auto&... s) { (bind_zip(s), ...); }, st);
  }
  template <class Stage>
  static void bind_zip(Stage& s) {
    if constexpr (detail::pipe::is_zip<Stage>::value) s.other.bind_host();
  }

  template <std::size_t I>
  detail::Site& phase_site() const {
    constexpr std::uint32_t tiers = detail::tier_bit(detail::Tier::Serial) | detail::tier_bit(detail::Tier::TbbStatic) |
                                    detail::tier_bit(detail::Tier::TbbAuto);
    using Tag = detail::pipe::PhaseTag<Pipeline, I>;
    if (opt_.name == "par_iter") {
      static detail::Site* const site = detail::site_for(&typeid(Tag), "par_iter", detail::OpClass::Map, tiers, {});
      return *site;
    }
    return *detail::site_for(&typeid(Tag), opt_.name, detail::OpClass::Map, tiers, {});
  }

  // Runs phase I over `feed`, then the next phase or the terminal.
  template <std::size_t I, class Feed, class Term>
  auto phase(Runtime& rt, const Stages& st, const Feed& feed, const Term& term, std::vector<Decision>& plan) const {
    constexpr std::size_t E = L::phase_end(I);
    using In = typename Feed::value_type;
    using Out = detail::pipe::value_at_t<typename Src::value_type, Stages, E>;
    const auto r = detail::pipe::phase_range<I, E>(st, feed.size());
    const std::size_t count = r.hi - r.lo;
    auto run = [&](std::size_t j0, std::size_t j1, auto& sink) {
      for (std::size_t j = j0; j < j1; ++j)
        if (!detail::pipe::apply<I, E>(st, r, r.lo + j, feed.get(r.lo + j), sink)) return false;
      return true;
    };
    detail::CallDesc d;
    d.n = count;
    d.type_key = &detail::type_tag<Pipeline, std::integral_constant<std::size_t, I>>;
    d.bytes_per_elem = static_cast<std::uint32_t>(sizeof(In) + sizeof(Out));
    d.placement = opt_.placement == Placement::Gpu ? Placement::Auto : opt_.placement;
    detail::Plan p = detail::begin_call(rt, phase_site<I>(), d);
    constexpr bool one_to_one = !L::has_filter(I, E);
    if constexpr (E == N) {
      auto result = term.template cpu<Out>(rt, p, count, one_to_one, run);
      detail::end_call(rt, p, d);
      plan.push_back(detail::pipe::current_decision());
      return result;
    } else {
      const std::vector<Out> mid = detail::pipe::collect_cpu<Out>(rt, p, count, one_to_one, run);
      detail::end_call(rt, p, d);
      plan.push_back(detail::pipe::current_decision());
      return phase<E>(rt, st, detail::pipe::VecFeed<Out>{&mid}, term, plan);
    }
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
