// par_iter terminal operations. Each knows how to finish on the CPU over a
// group of stages (cpu) and, where it can, on the device over a GPU
// segment's output buffer (device; nvcc-compiled files only), so that a
// reduction or collect_array leaves data on the device and only a scalar, or
// nothing, comes back.
#pragma once

#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "veda/array.hpp"
#include "veda/detail/pipeline_cpu.hpp"
#include "veda/detail/pipeline_gpu.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/detail/site_mode.hpp"

namespace veda::detail::pipe {

enum class TermKind { Collect, CollectArray, Reduce, Count, Extreme, Any, ForEach, FindFirst };

struct Collect {
  static constexpr TermKind kind = TermKind::Collect;
  static constexpr bool device_ok = true;
  template <class T, class Run>
  std::vector<T> cpu(Runtime& rt, const Plan& p, std::size_t count, bool one_to_one, const Run& run) const {
    return collect_cpu<T>(rt, p, count, one_to_one, run);
  }
#if VEDA_GPU_SITE
  template <class T>
  std::vector<T> device(Runtime& rt, const T* d, std::size_t n, void* s) const {
    std::vector<T> v(n);
    gpu_bridge::copy_out(rt, v.data(), d, n * sizeof(T), s, false);
    return v;
  }
#endif
};

struct CollectArray {
  static constexpr TermKind kind = TermKind::CollectArray;
  static constexpr bool device_ok = true;
  template <class T, class Run>
  Array<T> cpu(Runtime& rt, const Plan& p, std::size_t count, bool one_to_one, const Run& run) const {
    return Array<T>(collect_cpu<T>(rt, p, count, one_to_one, run));
  }
#if VEDA_GPU_SITE
  // The result stays on the device: only its device copy is valid.
  template <class T>
  Array<T> device(Runtime& rt, const T* d, std::size_t n, void* s) const {
    auto a = Array<T>::from_storage(make_host_storage(n * sizeof(T)), n);
    if (n) {
      void* dst = gpu_bridge::write(rt, *a.buffer(), s, false);
      gpu_bridge::copy_device(rt, dst, d, n * sizeof(T), s);
      gpu_bridge::done(*a.buffer(), s);
    }
    return a;
  }
#endif
};

template <class Acc, class Op>
struct Reduce {
  static constexpr TermKind kind = TermKind::Reduce;
  static constexpr bool device_ok = device_callable_v<Op> && std::is_trivially_copyable_v<Acc>;
  Acc identity;
  Op op;
  template <class T, class Run, class OneToOne>
  Acc cpu(Runtime& rt, const Plan& p, std::size_t count, OneToOne one_to_one, const Run& run) const {
    return reduce_pipeline_cpu<Acc>(rt, p, rt.config().deterministic(), count, identity, op, run, one_to_one);
  }
#if VEDA_GPU_SITE
  template <class T>
  Acc device(Runtime& rt, const T* d, std::size_t n, void* s) const {
    if constexpr (device_ok) return reduce_device<Acc>(rt, d, n, identity, op, s);
    else return identity;  // not reached: device_ok gates the call
  }
#endif
  Acc combine(const Acc& a, const Acc& b) const { return op(a, b); }
};

struct Count {
  static constexpr TermKind kind = TermKind::Count;
  static constexpr bool device_ok = true;
  template <class T, class Run>
  std::size_t cpu(Runtime& rt, const Plan& p, std::size_t count, bool, const Run& run) const {
    auto ones = [&run](std::size_t j0, std::size_t j1, auto& sink) {
      auto one = [&sink](auto&&) { return sink(std::size_t{1}); };
      return run(j0, j1, one);
    };
    return reduce_pipeline_cpu<std::size_t>(rt, p, false, count, std::size_t{0}, std::plus<std::size_t>{}, ones);
  }
#if VEDA_GPU_SITE
  template <class T>
  std::size_t device(Runtime&, const T*, std::size_t n, void*) const {
    return n;  // compaction already counted the survivors
  }
#endif
  std::size_t combine(std::size_t a, std::size_t b) const { return a + b; }
};

// min/max: NaN-propagating, nullopt for an empty stream.
template <class V, class Op>
struct Extreme {
  static constexpr TermKind kind = TermKind::Extreme;
  static constexpr bool device_ok = std::is_arithmetic_v<V>;
  // The running extreme, empty before the first value. For arithmetic
  // values a plain value and flag with std::optional's interface: GCC 12
  // warns -Wmaybe-uninitialized on std::optional's copies once they are
  // inlined into the reduction (a false positive, seen in a -Wall build of
  // tests/mpi). Other types keep std::optional, which needs no default
  // constructor.
  struct Plain {
    V v{};
    bool has = false;
    Plain() = default;
    Plain(V x) : v(x), has(true) {}  // NOLINT: the reduction folds values in as accumulators
    explicit operator bool() const { return has; }
    const V& operator*() const { return v; }
  };
  using Acc = std::conditional_t<std::is_arithmetic_v<V>, Plain, std::optional<V>>;
  struct Fold {
    Acc operator()(const Acc& a, const Acc& b) const {
      if (!a) return b;
      if (!b) return a;
      return Acc(Op{}(*a, *b));
    }
  };
  template <class T, class Run>
  std::optional<V> cpu(Runtime& rt, const Plan& p, std::size_t count, bool, const Run& run) const {
    const Acc r = reduce_pipeline_cpu<Acc>(rt, p, rt.config().deterministic(), count, Acc{}, Fold{}, run);
    return r ? std::optional<V>(*r) : std::nullopt;
  }
#if VEDA_GPU_SITE
  template <class T>
  std::optional<V> device(Runtime& rt, const T* d, std::size_t n, void* s) const {
    if constexpr (device_ok) {
      if (n == 0) return std::nullopt;
      constexpr bool is_min = std::is_same_v<Op, NanMin>;
      constexpr V id = std::numeric_limits<V>::has_infinity
                           ? (is_min ? std::numeric_limits<V>::infinity() : -std::numeric_limits<V>::infinity())
                           : (is_min ? std::numeric_limits<V>::max() : std::numeric_limits<V>::lowest());
      return reduce_device<V>(rt, d, n, id, Op{}, s);
    } else {
      return std::nullopt;
    }
  }
#endif
};

template <class P, bool Negate>
struct Any {  // all(p) is !any(!p)
  static constexpr TermKind kind = TermKind::Any;
  static constexpr bool device_ok = false;
  P pred;
  template <class T, class Run>
  bool cpu(Runtime& rt, const Plan& p, std::size_t count, bool, const Run& run) const {
    auto test = [this](const auto& v) { return static_cast<bool>(pred(v)) != Negate; };
    return any_cpu(rt, p, count, test, run);
  }
};

template <class F>
struct ForEach {
  static constexpr TermKind kind = TermKind::ForEach;
  static constexpr bool device_ok = false;
  F f;
  template <class T, class Run>
  int cpu(Runtime& rt, const Plan& p, std::size_t count, bool, const Run& run) const {
    for_ranges(rt, p, count, [&](std::size_t j0, std::size_t j1) {
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
  static constexpr TermKind kind = TermKind::FindFirst;
  static constexpr bool device_ok = false;
  P pred;
  template <class T, class Run>
  std::optional<T> cpu(Runtime& rt, const Plan& p, std::size_t count, bool, const Run& run) const {
    return find_first_cpu<T>(rt, p, count, pred, run);
  }
};

}  // namespace veda::detail::pipe
