// veda/parallel_for.hpp — index-space kernels over Arrays: stencils,
// gathers, sparse products written once, run serially, on oneTBB or on the GPU.
//
//   veda::parallel_for(veda::Box<2>{{1, 1}, {n - 1, n - 1}}, veda::read(u), veda::write(v),
//       [] VEDA_FN (std::size_t i, std::size_t j, veda::View<const double> in, veda::View<double> out) {
//         out(i, j) = 0.25 * (in(i - 1, j) + in(i + 1, j) + in(i, j - 1) + in(i, j + 1));
//       });
//   double e = veda::parallel_reduce(n, veda::read(x),
//       [] VEDA_FN (std::size_t i, veda::View<const double> x) { return x[i] * x[i]; }, 0.0, veda::Plus{});
//
// Views are View<const T> for read(), View<T> for write() and read_write().
// Host-compiled call sites may take them as `auto`; nvcc does not allow
// generic __host__ __device__ lambdas, so VEDA_FN functions name the types.
// Under nvcc, VEDA_LAMBDA((params), { body }) keeps the CPU tiers' loop
// inlined (a VEDA_FN lambda's host side is called through a wrapper).
//
// Contract:
// - The extent is a count (1-D), veda::Extent<N> or veda::Box<N> (N = 1..3,
//   index_space.hpp); f receives the N indices, then one View per declared
//   Array, in order. A box with lo > hi in a dimension is InvalidArgument.
// - Declarations drive residency: read() brings the side that runs up to
//   date (a copy only when stale); write() and read_write() also keep the
//   elements f does not write (the side that runs is brought up to date
//   first), and make the other side stale. The same Array declared twice
//   is InvalidArgument (declare it once, read_write, when f updates its own
//   elements; a stencil that reads neighbours needs two Arrays).
// - Placement like every call: serial, oneTBB over tiles, and a CUDA kernel
//   (2-D/3-D grids, 64-bit indices) where the call site is compiled by nvcc,
//   f is VEDA_FN and a GPU is usable; the cost model counts the transfers the
//   declarations need (CostHint: per-index flops/bytes). last_decision()
//   explains it.
// - parallel_reduce folds f's values with `op` (associative; Plus, Min, Max
//   or your own) and then combines the fold with `init` once: op(init, fold).
//   No identity element is needed; an empty extent gives init. Deterministic
//   mode uses one fixed combination tree on the CPU (bitwise-identical across
//   thread counts); the GPU tier combines blocks in a fixed order.
// - An exception thrown by f on the CPU reaches the caller; elements f
//   wrote before it hold their new values, the others their old ones.
//
// Thread-safety: any number of threads may call at once on distinct Arrays.
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "veda/array.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/dual.hpp"
#include "veda/detail/index_loop.hpp"
#include "veda/detail/site_mode.hpp"
#include "veda/index_space.hpp"
#include "veda/runtime.hpp"

#if VEDA_GPU_SITE
#include <vector>

#include "veda/detail/gpu_bridge.hpp"
#include "veda/detail/index_kernels.hpp"
#endif

namespace veda {

struct ParallelOptions {
  Placement placement = Placement::Auto;
  bool strict = false;  // Placement::Gpu without a usable GPU throws DeviceError
  int device = -1;      // -1: veda picks among its devices (Config::devices);
                        // otherwise one of them (without a usable GPU: 0, or
                        // a device that exists)
  CostHint cost{};      // per-index flops/bytes, if known
  std::string name;     // empty: "veda::parallel_for" / "veda::parallel_reduce"
  std::string tier;     // force "serial", "tbb-static", "tbb-auto" or "cuda" (benchmarks, debugging)
};

// Operators for parallel_reduce that also run on the device.
struct Plus {
  static constexpr bool veda_device = true;
  template <class T>
  VEDA_HD T operator()(const T& a, const T& b) const { return a + b; }
};
struct Min {
  static constexpr bool veda_device = true;
  template <class T>
  VEDA_HD T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
struct Max {
  static constexpr bool veda_device = true;
  template <class T>
  VEDA_HD T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

namespace detail {
inline constexpr char kForName[] = "veda::parallel_for";
inline constexpr char kReduceName[] = "veda::parallel_reduce";
constexpr std::uint32_t kIndexTiers =
    tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) | tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda);

void check_index_call(std::string_view name, const std::size_t* lo, const std::size_t* hi, std::size_t dims,
                      const Buffer* const* arrays, std::size_t n_arrays);

template <class Tag>
Site* index_site(const ParallelOptions& o, OpClass op, const char* default_name) {
  if (o.name.empty()) {
    static Site* const site = site_for(&typeid(Tag), default_name, op, kIndexTiers, o.cost);
    return site;
  }
  return site_for(&typeid(Tag), o.name, op, kIndexTiers, o.cost);
}

template <std::size_t N, class F, class... U>
CallDesc describe_index(const Box<N>& b, const ParallelOptions& o, const U&... u) {
  CallDesc d;
  d.n = b.size();
  d.type_key = &type_tag<F, U...>;
  d.bytes_per_elem = detail::bytes16(
      std::max<std::size_t>(1, (0 + ... + (sizeof(typename U::value_type) * (U::access == Access::ReadWrite ? 2 : 1)))));
  d.ndims = static_cast<std::uint8_t>(N);
  for (std::size_t k = 0; k < N; ++k) d.dims[k] = b.hi[k] - b.lo[k];
  d.device = device_byte(o.device);
  bool all_dev = true, all_pinned = true;
  CopyIn copy_in;
  auto visit = [&](const auto& use) {
    const auto& a = *use.array;
    const int dev = a.device();  // -1: valid on no device
    copy_in.add(d, a, dev, a.bytes());
    if (!a.valid_on_host()) d.cpu_d2h_bytes += a.bytes();
    d.any_on_device |= dev >= 0;
    all_pinned &= a.pinned_host();
  };
  (visit(u), ...);
  all_dev &= copy_in.finish(d);
  d.all_on_device = sizeof...(U) > 0 && all_dev;
  d.host_pinned = sizeof...(U) > 0 && all_pinned;
  d.gpu_capable = VEDA_GPU_SITE && device_callable_v<F>;
  d.nvcc_site = VEDA_GPU_SITE;
  d.placement = o.placement;
  d.strict = o.strict;
  d.forced_tier = parse_tier(o.tier);
  return d;
}

// The host view of a declaration (its side brought up to date), with the
// Array's extents (1 past its dimensions).
template <class U>
auto declared_host_view(const U& u) {
  using T = typename U::value_type;
  auto& a = *u.array;
  Buffer* b = a.buffer();
  T* p = nullptr;
  if constexpr (U::access == Access::Read) p = b ? const_cast<T*>(static_cast<const T*>(b->host_read())) : nullptr;
  else p = b ? static_cast<T*>(b->host_write()) : nullptr;
  return view_t<T, U::access>(p, a.extent(0), a.extent(1), a.extent(2) * a.extent(3));
}

template <class E>
auto box_of(const E& e, std::string_view name) {
  if constexpr (std::is_integral_v<E>) {
    if constexpr (std::is_signed_v<E>)
      if (e < 0) throw InvalidArgument(std::string(name) + ": negative extent " + std::to_string(e));
    return to_box(static_cast<std::size_t>(e));
  } else {
    return to_box(e);
  }
}

// The declarations, the function and the options, from the trailing arguments.
template <class... A>
constexpr bool has_options_v = std::is_same_v<std::remove_cvref_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>,
                                              ParallelOptions>;
}  // namespace detail

inline namespace VEDA_TU_NS {
namespace index_detail {
using namespace veda::detail;

template <std::size_t N, class... U>
void check(std::string_view name, const Box<N>& b, const U&... u) {
  const Buffer* arrays[sizeof...(U) + 1] = {u.array->buffer()..., nullptr};
  check_index_call(name, b.lo.data(), b.hi.data(), N, arrays, sizeof...(U));
}

#if VEDA_GPU_SITE
template <class U>
auto device_view(Runtime& rt, void* s, const U& u) {
  namespace gb = gpu_bridge;
  using T = typename U::value_type;
  auto& a = *u.array;
  T* p = nullptr;
  if (a.buffer()) {
    if constexpr (U::access == Access::Read) p = const_cast<T*>(static_cast<const T*>(gb::read(rt, *a.buffer(), s)));
    else p = static_cast<T*>(gb::write(rt, *a.buffer(), s, true));
  }
  return view_t<T, U::access>(p, a.extent(0), a.extent(1), a.extent(2) * a.extent(3));
}
template <class... U>
void mark_done(void* s, const U&... u) {
  auto one = [&](const auto& use) {
    if (use.array->buffer()) gpu_bridge::done(*use.array->buffer(), s);
  };
  (one(u), ...);
}
#endif

// Both calls' start, after the checks: the device option, then the description.
template <class F, std::size_t N, class... U>
CallDesc describe_call(Runtime& rt, std::string_view name, const Box<N>& b, const ParallelOptions& o, const U&... u) {
  check_placement(o.placement, name);
  if (o.device != -1) check_device_index(rt, o.device, std::string(name));
  return describe_index<N, F>(b, o, u...);
}

template <std::size_t N, class F, class... U>
void run_for(std::string_view name, const Box<N>& b, const ParallelOptions& o, const F& f, const U&... u) {
  static_assert((is_use_v<U> && ...), "veda::parallel_for: between the extent and f, only veda::read/write/read_write(Array)");
  check(name, b, u...);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = describe_call<F>(rt, name, b, o, u...);
  Plan p = begin_call(rt, *index_site<F>(o, OpClass::Kernel, kForName), d);
#if VEDA_GPU_SITE
  if constexpr (device_callable_v<F>) {
    if (tier_device(p.tier) == Device::Gpu && d.n > 0) {
      if (try_gpu(rt, p, d, [&] {
            void* s = gpu_bridge::stream(rt);
            launch_index(device_part(f), b, gpu_bridge::sm_count(rt), static_cast<cudaStream_t>(s),
                         device_view(rt, s, u)...);
            gpu_bridge::check_launch("veda::parallel_for kernel launch");
            mark_done(s, u...);
            if (p.sync_for_timing) gpu_bridge::synchronize(rt, s);
            end_call(rt, p, d, p.sync_for_timing);
          }))
        return;
    }
  }
#endif
  if (tier_device(p.tier) == Device::Gpu) p.tier = Tier::Serial;  // nothing to run
  run_box(rt, p, b, f, declared_host_view(u)...);
  end_call(rt, p, d);
}

template <class R, std::size_t N, class F, class Op, class... U>
R run_reduce(std::string_view name, const Box<N>& b, const ParallelOptions& o, const F& f, const R& init, const Op& op,
             const U&... u) {
  static_assert((is_use_v<U> && ...), "veda::parallel_reduce: between the extent and f, only veda::read(Array)");
  static_assert(((U::access == Access::Read) && ...), "veda::parallel_reduce: Arrays are read only (veda::read)");
  check(name, b, u...);
  CallScope scope;
  Runtime& rt = scope.runtime();
  CallDesc d = describe_call<F>(rt, name, b, o, u...);
  Plan p = begin_call(rt, *index_site<std::pair<F, Op>>(o, OpClass::Reduce, kReduceName), d);
  Partial<R> fold;
#if VEDA_GPU_SITE
  if constexpr (device_callable_v<F> && device_callable_v<Op>) {
    if (tier_device(p.tier) == Device::Gpu && d.n > 0) {
      if (try_gpu(rt, p, d, [&] {
            namespace gb = gpu_bridge;
            void* s = gb::stream(rt);
            const unsigned blocks = reduce_blocks(d.n, gb::sm_count(rt));
            gb::DeviceTemp parts(rt, blocks * sizeof(Partial<R>), s);
            index_reduce_kernel<R, N><<<blocks, kReduceBlock, 0, static_cast<cudaStream_t>(s)>>>(
                device_part(f), device_part(op), b, static_cast<Partial<R>*>(parts.get()), device_view(rt, s, u)...);
            gb::check_launch("veda::parallel_reduce kernel launch");
            mark_done(s, u...);
            std::vector<Partial<R>> host(blocks);
            gb::copy_out(rt, host.data(), parts.get(), blocks * sizeof(Partial<R>), s, false);
            for (const auto& h : host) fold = combine(fold, h, op);
            end_call(rt, p, d, true);
          }))
        return fold.has ? op(init, fold.value) : init;
    }
  }
#endif
  if (tier_device(p.tier) == Device::Gpu) p.tier = Tier::Serial;
  fold = reduce_box<R>(rt, p, rt.config().deterministic(), b, f, op, declared_host_view(u)...);
  end_call(rt, p, d);
  return fold.has ? op(init, fold.value) : init;
}

template <class E, class Args, std::size_t... I>
void parallel_for_at(const E& e, const Args& args, const ParallelOptions& o, std::index_sequence<I...>) {
  constexpr std::size_t fi = sizeof...(I);
  const std::string_view name = o.name.empty() ? std::string_view(kForName) : std::string_view(o.name);
  run_for(name, box_of(e, name), o, std::get<fi>(args), std::get<I>(args)...);
}

template <class E, class Args, std::size_t... I>
auto parallel_reduce_at(const E& e, const Args& args, const ParallelOptions& o, std::index_sequence<I...>) {
  constexpr std::size_t fi = sizeof...(I);
  const std::string_view name = o.name.empty() ? std::string_view(kReduceName) : std::string_view(o.name);
  using R = std::remove_cvref_t<std::tuple_element_t<fi + 1, Args>>;
  return run_reduce<R>(name, box_of(e, name), o, std::get<fi>(args), std::get<fi + 1>(args), std::get<fi + 2>(args),
                       std::get<I>(args)...);
}
}  // namespace index_detail

// parallel_for(extent, declarations..., f [, ParallelOptions])
template <class E, class... A>
void parallel_for(const E& extent, const A&... args) {
  static_assert(sizeof...(A) >= 1, "veda::parallel_for(extent, declarations..., f [, options])");
  const auto all = std::forward_as_tuple(args...);
  if constexpr (detail::has_options_v<A...>) {
    static_assert(sizeof...(A) >= 2, "veda::parallel_for: f is missing");
    index_detail::parallel_for_at(extent, all, std::get<sizeof...(A) - 1>(all),
                                  std::make_index_sequence<sizeof...(A) - 2>{});
  } else {
    index_detail::parallel_for_at(extent, all, ParallelOptions{}, std::make_index_sequence<sizeof...(A) - 1>{});
  }
}

// parallel_reduce(extent, declarations..., f, init, op [, ParallelOptions])
template <class E, class... A>
auto parallel_reduce(const E& extent, const A&... args) {
  static_assert(sizeof...(A) >= 3, "veda::parallel_reduce(extent, declarations..., f, init, op [, options])");
  const auto all = std::forward_as_tuple(args...);
  if constexpr (detail::has_options_v<A...>) {
    return index_detail::parallel_reduce_at(extent, all, std::get<sizeof...(A) - 1>(all),
                                            std::make_index_sequence<sizeof...(A) - 4>{});
  } else {
    return index_detail::parallel_reduce_at(extent, all, ParallelOptions{}, std::make_index_sequence<sizeof...(A) - 3>{});
  }
}

}  // namespace VEDA_TU_NS
}  // namespace veda
