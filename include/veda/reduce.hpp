// veda/reduce.hpp — reductions that choose their device and tier per call.
//
//   double s = veda::sum(x);             // x: vector, span or Array
//   float lo = veda::min(x), hi = veda::max(x);
//   auto p = veda::reduce(x, 1.0, [] VEDA_FN (double a, double b) { return a * b; });
//
// Contract:
// - Tiers: serial on the calling thread, oneTBB parallel_reduce (static or
//   auto partitioner), CUB DeviceReduce on the GPU, and for host ranges
//   cpu+gpu: part of the range on the CPU, the rest in equal shares on the
//   idle GPUs of the call's device's kind. sum/min/max of float, double,
//   (u)int32, (u)int64 and uint8 have GPU tiers from any call site;
//   reduce() with your operator has them where the call site is compiled
//   by nvcc and the operator is VEDA_FN.
// - sum of integers accumulates in 64 bits (sum_t<T>); floats in their type.
//   The combination order is unspecified, as for std::reduce: op must be
//   associative and commutative, `identity` its identity element.
// - min/max of an empty range throw veda::InvalidArgument; sum of an empty
//   range is 0. min/max propagate NaN: any NaN makes the result NaN; which
//   zero min(-0.0, +0.0) returns is unspecified.
// - Deterministic mode (Config::deterministic) fixes the CPU combination tree
//   independently of the thread count, so float results are bitwise identical
//   across runs, tiers and thread counts; the GPU tier is CUB's two-phase
//   reduction, run-to-run deterministic on one GPU.
//
// Thread-safety: any number of threads may reduce at once.
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "veda/array.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/detail/reduce_cpu.hpp"
#include "veda/detail/reduce_kind.hpp"
#include "veda/detail/site_mode.hpp"
#include "veda/runtime.hpp"

#if VEDA_HAS_CUDA
#include "veda/detail/coexec.hpp"
#include "veda/detail/gpu_bridge.hpp"
#endif
#if VEDA_GPU_SITE
#include "veda/detail/pipeline_gpu.hpp"  // cub_op
#endif

namespace veda {

struct ReduceOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "sum", "min", "max" or "reduce"
  std::string tier;  // force a named tier ("serial", "tbb-static", "cuda", ...): benchmarks, debugging
};

namespace detail {
// The default options, made once: a temporary's two strings cost a settled
// 256-float sum ~1.5 ns (built, kept for the call out of line, destroyed).
inline const ReduceOptions kNoReduceOptions{};

constexpr std::uint32_t kReduceTiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::TbbAuto) |
                                       tier_bit(Tier::Cuda) | tier_bit(Tier::CoExec);

// The op's unnamed site, once a call has made it (the full path; null
// before). The settled path reads it with no guard: a call before it is made
// goes the full way, so that no path with a call rejoins the inlined one,
// and the caller saves no registers for the settled call (~1 ns of a
// 256-float sum, with the guard's check).
template <class Tag>
inline constinit std::atomic<Site*> g_reduce_site{nullptr};
template <class Tag>
Site* reduce_site(const ReduceOptions& o, const char* default_name) {
  if (!o.name.empty()) return site_for(&typeid(Tag), o.name, OpClass::Reduce, kReduceTiers, {});
  Site* s = g_reduce_site<Tag>.load(std::memory_order_acquire);
  if (!s) {  // site_for gives every caller the same site: threads racing here store the same pointer
    s = site_for(&typeid(Tag), default_name, OpClass::Reduce, kReduceTiers, {});
    g_reduce_site<Tag>.store(s, std::memory_order_release);
  }
  return s;
}
}  // namespace detail

inline namespace VEDA_TU_NS {
namespace reduce_detail {
using namespace veda::detail;

#if VEDA_HAS_CUDA
template <class Acc, class Range, class Op>
Acc reduce_gpu(Runtime& rt, const Range& r, const Acc& identity, [[maybe_unused]] const Op& op, std::optional<ReduceKind> builtin) {
  namespace gb = gpu_bridge;
  using T = elem_t<Range>;
  const std::size_t n = r.size();
  void* s = gb::stream(rt);
  std::optional<gb::DeviceTemp> staged;
  const T* dptr = nullptr;
  if constexpr (is_array_v<Range>) {
    dptr = static_cast<const T*>(gb::read(rt, *r.buffer(), s));
  } else {
    staged.emplace(rt, n * sizeof(T), s);
    gb::copy_in(rt, staged->get(), r.data(), n * sizeof(T), s, false);
    dptr = static_cast<const T*>(staged->get());
  }
  Acc result = identity;
  if (builtin) {
    gb::reduce_builtin(rt, *builtin, scalar_type_of<T>(), dptr, n, &result, s);
  } else {
#if VEDA_GPU_SITE
    if constexpr (device_callable_v<Op>) {
      gb::DeviceTemp out(rt, sizeof(Acc), s);
      std::size_t bytes = 0;
      const auto dop = pipe::cub_op<Acc>(op);
      gb::check(cub::DeviceReduce::Reduce(nullptr, bytes, dptr, static_cast<Acc*>(out.get()), n, dop, identity,
                                          static_cast<cudaStream_t>(s)),
                "veda::reduce (CUB)");
      gb::DeviceTemp temp(rt, bytes, s);
      gb::check(cub::DeviceReduce::Reduce(temp.get(), bytes, dptr, static_cast<Acc*>(out.get()), n, dop, identity,
                                          static_cast<cudaStream_t>(s)),
                "veda::reduce (CUB)");
      gb::check_launch("veda::reduce (CUB)");
      gb::copy_out(rt, &result, out.get(), sizeof(Acc), s, false);
    }
#endif
  }
  if constexpr (is_array_v<Range>) gb::done(*r.buffer(), s);
  return result;
}

// cpu+gpu (detail/coexec.hpp): the range's first part in shares on the
// devices, the rest on the CPU's workers; the parts combined in source order.
template <class Acc, class T, class Op>
Acc reduce_coexec(Runtime& rt, const Plan& p, const T* data, std::size_t n, const Acc& identity, const Op& op,
                  std::optional<ReduceKind> builtin) {
  const std::vector<Acc> parts = coexec_parts<Acc>(
      rt, p, coexec_gpu_count(p, n), n,
      [&](std::size_t lo, std::size_t hi) {
        return reduce_gpu<Acc>(rt, std::span<const T>(data + lo, hi - lo), identity, op, builtin);
      },
      [&](std::size_t lo, std::size_t hi) {
        return run_reduce_cpu(rt, coexec_cpu_plan(rt, p, hi - lo), false, load_of(data + lo), hi - lo, identity, op);
      });
  Acc acc = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) acc = op(acc, parts[i]);
  return acc;
}
#endif

// builtin: the operator is sum/min/max (GPU tier from libveda); otherwise the
// GPU tier needs this call site compiled by nvcc and a device-callable op.
template <class T, class Op>
bool reduce_gpu_capable(std::optional<ReduceKind> builtin) {
  return builtin ? (VEDA_HAS_CUDA && scalar_type_of<T>() != ScalarType::Unsupported)
                 : (VEDA_GPU_SITE && device_callable_v<Op>);
}

template <class Acc, class Range, class Op>
Acc reduce_dispatch(const Range& r, const Acc& identity, const Op& op, std::optional<ReduceKind> builtin,
                    const ReduceOptions& o, Site& site) {
  using T = elem_t<Range>;
  const std::size_t n = r.size();
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d;
  d.n = n;
  d.type_key = &type_tag<Acc, Range, Op>;
  d.bytes_per_elem = bytes16(sizeof(T));
  bool on_dev = false, on_host = true;
  if constexpr (is_array_v<Range>) {
    d.resident_device = device_byte(r.device());  // -1: valid on no device
    on_dev = d.resident_device >= 0;
    on_host = r.valid_on_host();
  }
  d.h2d_bytes = on_dev ? 0 : n * sizeof(T);
  d.cpu_d2h_bytes = on_host ? 0 : n * sizeof(T);
  d.any_on_device = d.all_on_device = on_dev;
  d.gpu_capable = reduce_gpu_capable<T, Op>(builtin);
  d.nvcc_site = builtin.has_value() || VEDA_GPU_SITE;
  d.placement = o.placement;
  d.strict = o.strict;
  d.forced_tier = o.tier.empty() ? Tier::Count : parse_tier(o.tier);
  if constexpr (is_array_v<Range>) d.exclude_tiers = tier_bit(Tier::CoExec);  // cpu+gpu splits host ranges only
  Plan p = begin_call(rt, site, d);
#if VEDA_HAS_CUDA
  if (tier_device(p.tier) == Device::Gpu && n > 0) {
    Acc result = identity;  // (Acc need not be default constructible)
    if (try_gpu(rt, p, d, [&] {
          if constexpr (!is_array_v<Range>) {
            if (p.tier == Tier::CoExec) {
              result = reduce_coexec<Acc>(rt, p, r.data(), n, identity, op, builtin);
              end_call(rt, p, d);
              return;
            }
          }
          result = reduce_gpu<Acc>(rt, r, identity, op, builtin);
          end_call(rt, p, d);
        }))
      return result;
  }
#endif
  if (tier_device(p.tier) == Device::Gpu) p.tier = Tier::Serial;  // n == 0
  const T* data = n ? host_data(r) : nullptr;
  const Acc result = run_reduce_cpu(rt, p, rt.config().deterministic(), load_of(data), n, identity, op);
  end_call(rt, p, d);
  return result;
}

// Each op's site (by type) and names, which reduce_call passes on to the
// full path in no registers.
struct SumTag {
  static constexpr const char* who = "veda::sum";
  static constexpr const char* site_name = "sum";
};
struct MinTag {
  static constexpr const char* who = "veda::min";
  static constexpr const char* site_name = "min";
};
struct MaxTag {
  static constexpr const char* who = "veda::max";
  static constexpr const char* site_name = "max";
};
template <class Op>  // a site per operator type
struct ReduceTag {
  static constexpr const char* who = "veda::reduce";
  static constexpr const char* site_name = "reduce";
};

template <class Tag>
constexpr std::optional<ReduceKind> builtin_kind() {
  if constexpr (std::is_same_v<Tag, SumTag>) return ReduceKind::Sum;
  else if constexpr (std::is_same_v<Tag, MinTag>) return ReduceKind::Min;
  else if constexpr (std::is_same_v<Tag, MaxTag>) return ReduceKind::Max;
  else return std::nullopt;
}

// Before any work: the placement option, and the range's byte count.
template <class Range>
void check_args(const Range& r, const ReduceOptions& o, const char* op) {
  const std::string_view who = o.name.empty() ? std::string_view(op) : std::string_view(o.name);
  check_placement(o.placement, who);
  check_byte_count(who, "the range", r.size(), sizeof(elem_t<Range>));
}

// Every call but a settled one: checks its arguments, finds its site and
// decides. Out of line, so that the settled path inlined into the caller
// saves no registers and spills nothing for it.
template <class Acc, class Tag, class Range, class Op>
[[gnu::noinline]] Acc reduce_full(const Range& r, const Acc& identity, const Op& op, const ReduceOptions& o) {
  check_args(r, o, Tag::who);
  return reduce_dispatch<Acc>(r, identity, op, builtin_kind<Tag>(), o, *reduce_site<Tag>(o, Tag::site_name));
}

// A reduction's entry. A host range's settled call runs inline in the
// caller, kernel included, and without a CallScope (settled_plans.hpp); its
// key holds nothing of the range but its size, so it needs no CallDesc.
// Only calls the argument checks would pass, under the default name and
// without a forced tier, ask the table. Measured on a 256-float sum
// (docs/concepts.md): reduce_dispatch's call and frame were 1.4-1.9 ns of
// ~9 ns over the loop; then the options' checks and sum_vectors' call ~3.5 ns.
template <class Acc, class Tag, class Range, class Op>
[[gnu::always_inline]] inline Acc reduce_call(const Range& r, const Acc& identity, const Op& op,
                                              const ReduceOptions& o) {
  if constexpr (!is_array_v<Range>) {
    const std::size_t n = r.size();
    // The default options' checks fold away where the call passes none (inlined, the
    // address is known): their three loads were ~0.5 ns of a 256-float sum.
    const bool defaults = &o == &kNoReduceOptions;
    const Placement placement = defaults ? Placement::Auto : o.placement;
    if ((defaults || (o.name.empty() && o.tier.empty() && valid_placement(placement))) &&
        n <= std::numeric_limits<std::size_t>::max() / sizeof(elem_t<Range>)) [[likely]] {
      SettledHit h;
      const std::uint64_t key =
          settled_key(0, n, 0, placement, reduce_gpu_capable<elem_t<Range>, Op>(builtin_kind<Tag>()));
      const Site* site = g_reduce_site<Tag>.load(std::memory_order_acquire);
      if (site && settled_hit(*site, key, &type_tag<Acc, Range, Op>, h)) {
        // A built-in op on numbers runs no user code, which could call
        // shutdown() or throw: it needs no SettledRun (~1.4 ns of the sum
        // above), and its record can come first, so that nothing stays live
        // across the deterministic run's call and the caller saves no
        // registers for it.
        constexpr bool user_code = !(builtin_kind<Tag>() && std::is_arithmetic_v<elem_t<Range>>);
        if constexpr (!user_code) end_settled_call(h, n, 0, nullptr);
        [[maybe_unused]] const std::conditional_t<user_code, SettledRun, NoSettledRun> running;
        // One run, not reduce_serial: GCC did not always inline that (its
        // deterministic tree), and then stored the leaf's captures.
        const Acc result = h.deterministic ? reduce_fixed_order(r.data(), n, identity, op)
                           : n == 0        ? identity
                                           : reduce_run(load_of(r.data()), 0, n, identity, op);
        if constexpr (user_code) end_settled_call(h, n, 0, nullptr);
        return result;
      }
    }
  }
  return reduce_full<Acc, Tag>(r, identity, op, o);
}

template <class Range>
void require_range() {
  static_assert(is_range_v<Range>, "veda reductions take a std::vector, std::span or veda::Array");
}

// min or max of an empty range (a bad option is named first, as for any call).
template <class Range>
[[noreturn, gnu::cold, gnu::noinline]] void throw_empty(const Range& r, const ReduceOptions& o, const char* op) {
  check_args(r, o, op);
  throw InvalidArgument(std::string(op) + " of an empty range");
}
}  // namespace reduce_detail

template <class Range>
[[gnu::always_inline]] inline auto sum(const Range& r, const ReduceOptions& o = detail::kNoReduceOptions) {
  reduce_detail::require_range<Range>();
  using Acc = detail::sum_t<detail::elem_t<Range>>;
  return reduce_detail::reduce_call<Acc, reduce_detail::SumTag>(r, Acc{0}, std::plus<Acc>{}, o);
}

template <class Range>
[[gnu::always_inline]] inline auto min(const Range& r, const ReduceOptions& o = detail::kNoReduceOptions) {
  reduce_detail::require_range<Range>();
  using T = detail::elem_t<Range>;
  if (r.size() == 0) reduce_detail::throw_empty(r, o, "veda::min");
  constexpr T id = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::max();
  return reduce_detail::reduce_call<T, reduce_detail::MinTag>(r, id, detail::NanMin{}, o);
}

template <class Range>
[[gnu::always_inline]] inline auto max(const Range& r, const ReduceOptions& o = detail::kNoReduceOptions) {
  reduce_detail::require_range<Range>();
  using T = detail::elem_t<Range>;
  if (r.size() == 0) reduce_detail::throw_empty(r, o, "veda::max");
  constexpr T id = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  return reduce_detail::reduce_call<T, reduce_detail::MaxTag>(r, id, detail::NanMax{}, o);
}

// `op` must be associative and commutative with `identity` as its identity.
template <class Range, class T, class Op>
[[gnu::always_inline]] inline T reduce(const Range& r, T identity, Op op,
                                      const ReduceOptions& o = detail::kNoReduceOptions) {
  reduce_detail::require_range<Range>();
  return reduce_detail::reduce_call<T, reduce_detail::ReduceTag<Op>>(r, identity, op, o);
}

}  // namespace VEDA_TU_NS
}  // namespace veda

#include "veda/reduce_axis.hpp"  // the same reductions along one axis of an Array
