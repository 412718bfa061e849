// veda/gpu.hpp — veda::gpu: element-wise functions that run wherever is fastest.
//
//   auto saxpy = veda::gpu([] VEDA_FN (float a, float x, float y) { return a * x + y; },
//                          {.name = "saxpy"});
//   std::vector<float> z = saxpy(2.0f, x, y);   // x, y: vectors, spans or Arrays
//
// Contract:
// - Ranges (std::vector, std::span, veda::Array) are mapped element by element;
//   other arguments are scalars broadcast to every element. All ranges must
//   have the same length, or veda::InvalidArgument is thrown before any work.
// - A call with only scalars just calls f on the calling thread.
// - The result is a std::vector for host ranges, or a veda::Array left where
//   it was computed when any argument is an Array. into(out, args...) writes
//   in place into a caller-provided std::vector (resized), std::span or Array
//   (same length); if f throws, the output holds unspecified values. The
//   output may be one of the inputs itself (an update in place) but must not
//   otherwise overlap one (veda::InvalidArgument naming it).
// - For each call veda predicts serial, oneTBB and (when the call site is
//   compiled by nvcc against a CUDA-enabled veda, and a GPU is usable) CUDA
//   candidates, including the transfers the operands' residency requires,
//   runs the fastest, measures it and learns. last_decision() explains it.
//   A call over host ranges into a host result may also be split (cpu+gpu):
//   part of the range on the CPU's workers, the rest in equal shares on the
//   idle GPUs of the call's device's kind, sized so all finish together.
// - Call sites not compiled by nvcc run on the CPU; the decision says so.
// - An exception thrown by f reaches the caller; veda stays usable.
// - Device lambdas must capture by value (they are copied to the GPU).
//
// Thread-safety: a GpuFunction may be called from many threads at once.
#pragma once

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/decision.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/cpu_loop.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/detail/site_mode.hpp"
#include "veda/runtime.hpp"
#if VEDA_GPU_SITE
#include "veda/detail/coexec.hpp"
#endif

namespace veda {

struct GpuOptions {
  Placement placement = Placement::Auto;
  bool strict = false;  // Placement::Gpu without a usable GPU throws DeviceError
  int device = -1;      // -1: veda picks among its devices (Config::devices);
                        // otherwise one of them (without a usable GPU: 0, or
                        // a device that exists)
  CostHint cost{};      // per-element flops/bytes, if known
  std::string name = "veda::gpu";
  // Force a named tier, for benchmarks and debugging: veda::gpu takes "serial",
  // "tbb-static", "tbb-auto", "cuda", "cuda-streamed", "cpu+gpu"; gpu_kernel "cpu" or
  // "cuda-impl". An unknown name is InvalidArgument; a GPU tier that cannot
  // run falls back to the CPU (strict: DeviceError).
  std::string tier;
};

namespace detail {
// Runs a CPU plan: serial inline, or a oneTBB loop with the planned grain.
template <class F, class R, class... Acc>
void run_map_cpu(Runtime& rt, const Plan& p, const F& f, R* out, std::size_t n, const Acc&... acc) {
  for_ranges(rt, p, n, [&](std::size_t i0, std::size_t i1) { map_range(f, out, i0, i1, acc...); });
}

// Describes a map call: its size, element types and operand residency.
template <class Key, class R, class... A>
CallDesc describe_map(std::size_t n, bool result_to_host, const GpuOptions& o, const A&... a) {
  CallDesc d;
  d.n = n;
  d.type_key = &type_tag<Key, R, A...>;
  d.bytes_per_elem = detail::bytes16(sizeof(R) + (0 + ... + (is_range_v<A> ? sizeof(elem_t<A>) : 0)));
  d.device = device_byte(o.device);
  bool all_dev = true, all_pinned = true, ranges = false, arrays = false;
  CopyIn copy_in;
  auto visit = [&](const auto& x) {
    using X = std::remove_cvref_t<decltype(x)>;
    if constexpr (is_range_v<X>) {
      ranges = true;
      const std::size_t bytes = n * sizeof(elem_t<X>);
      if constexpr (is_array_v<X>) {
        arrays = true;
        const int dev = x.device();  // -1: valid on no device
        copy_in.add(d, x, dev, bytes);
        if (!x.valid_on_host()) d.cpu_d2h_bytes += bytes;
        d.any_on_device |= dev >= 0;
        all_pinned &= x.pinned_host();
      } else {
        d.h2d_bytes += bytes;
        all_dev = all_pinned = false;
      }
    }
  };
  (visit(a), ...);
  all_dev &= copy_in.finish(d);
  d.all_on_device = ranges && all_dev;
  d.host_pinned = ranges && all_pinned;
  d.d2h_bytes = result_to_host ? n * sizeof(R) : 0;
  // Co-execution splits host ranges into a host result; Arrays stay whole
  // where they live.
  if (arrays || !result_to_host) d.exclude_tiers = tier_bit(Tier::CoExec);
  d.nvcc_site = VEDA_GPU_SITE;
  d.placement = o.placement;
  d.strict = o.strict;
  return d;
}

// The host pointer a CPU tier writes an Array output through: its old
// contents are not brought up to date unless an input is the same Array.
template <class R, class... A>
R* host_output(Array<R>& out, const A&... a) {
  detail::Buffer* b = out.buffer();
  if (!b) return nullptr;
  bool aliased = false;
  auto check = [&](const auto& x) {
    if constexpr (is_array_v<decltype(x)>) aliased |= x.buffer() == b;
  };
  (check(a), ...);
  return static_cast<R*>(aliased ? b->host_write() : b->host_overwrite());
}

constexpr std::uint32_t kMapTiers = tier_bit(Tier::Serial) | tier_bit(Tier::TbbStatic) |
                                    tier_bit(Tier::TbbAuto) | tier_bit(Tier::Cuda) |
                                    tier_bit(Tier::CudaStreamed) | tier_bit(Tier::CoExec);
}  // namespace detail

inline namespace VEDA_TU_NS {

template <class F>
class GpuFunction {
 public:
  GpuFunction(F f, GpuOptions o)
      : f_(std::move(f)),
        opt_(checked(std::move(o))),
        site_(detail::site_for(&typeid(F), opt_.name, detail::OpClass::Map, detail::kMapTiers, opt_.cost)),
        forced_(detail::parse_tier(opt_.tier)) {}

  const std::string& name() const noexcept { return opt_.name; }
  const GpuOptions& options() const noexcept { return opt_; }

  template <class... A>
  auto operator()(const A&... a) const {
    using R = std::invoke_result_t<const F&, const detail::elem_t<A>&...>;
    if constexpr (!detail::any_range_v<A...>) {
      return f_(a...);
    } else {
      static_assert(std::is_trivially_copyable_v<R>, "veda::gpu: the result type must be trivially copyable");
      const std::size_t n = detail::common_length(opt_.name, a...);
      detail::check_byte_count(opt_.name, "the result", n, sizeof(R));
      if constexpr (detail::any_array_v<A...>) {
        auto out = Array<R>::from_storage(detail::make_host_storage(n * sizeof(R)), n);
        run<R>(nullptr, &out, n, a...);
        return out;
      } else {
        std::vector<R> out(n);
        run<R>(out.data(), nullptr, n, a...);
        return out;
      }
    }
  }

  // Writes the results into `out`: a std::vector (resized), a std::span or an
  // Array of the call's length, in place: no allocation beyond a vector's
  // resize. If f throws, the output holds unspecified values of its type
  // (the basic guarantee) and the exception reaches the caller.
  template <class Out, class... A>
  void into(Out&& out, const A&... a) const {
    using R = std::invoke_result_t<const F&, const detail::elem_t<A>&...>;
    static_assert(detail::any_range_v<A...>, "veda::gpu::into needs at least one range argument");
    const std::size_t n = detail::common_length(opt_.name, a...);
    detail::check_byte_count(opt_.name, "the result", n, sizeof(R));
    using O = std::remove_cvref_t<Out>;
    constexpr auto kind = detail::arg_traits<O>::kind;
    static_assert(kind != detail::RangeKind::None, "veda::gpu::into: output must be a std::vector, std::span or veda::Array");
    static_assert(std::is_same_v<detail::elem_t<O>, R>, "veda::gpu::into: the output's element type must be the result type");
    if constexpr (kind != detail::RangeKind::Vector)
      if (out.size() != n) detail::throw_output_length(opt_.name, out.size(), n);
    detail::check_output_overlap(opt_.name, out, n, a...);
    if constexpr (kind == detail::RangeKind::Vector) out.resize(n);
    if constexpr (kind == detail::RangeKind::Array) run<R>(nullptr, &out, n, a...);
    else run<R>(out.data(), nullptr, n, a...);
  }

 private:
  // The options that need no runtime, checked when the function is wrapped.
  static GpuOptions checked(GpuOptions o) {
    detail::check_placement(o.placement, o.name);
    detail::check_device_sign(o.device, o.name);
    return o;
  }

  // Whether this call site can run f on the GPU (CallDesc::gpu_capable, and the settled key's).
  static constexpr bool kGpuCapable = VEDA_GPU_SITE && detail::device_callable_v<F>;

  // The settled fast path inline in the caller, the rest (run_planned) a
  // call of its own: its frame and saved registers cost the fast path ~0.7 ns
  // (a 256-float saxpy on Zen 4, 26.4 ns against 27.1).
  template <class R, class... A>
  [[gnu::always_inline]] void run(R* host_out, Array<R>* out_arr, std::size_t n, const A&... a) const {
    if constexpr (!detail::any_array_v<A...>) {
      // Host ranges into host memory: a settled call's key holds nothing of
      // them but their length, so it needs no CallDesc, and it takes no
      // CallScope (settled_plans.hpp). A `device` option is checked against
      // the runtime: such calls go the full way.
      detail::SettledHit h;
      if (out_arr == nullptr && forced_ == detail::Tier::Count && opt_.device == -1 &&
          detail::settled_hit(*site_, detail::settled_key(0, n, 0, opt_.placement, kGpuCapable),
                              &detail::type_tag<F, R, A...>, h)) {
        detail::SettledRun running;
        detail::map_range(f_, host_out, 0, n, detail::host_accessor(a)...);
        detail::end_settled_call(h, n, 0, nullptr);
        return;
      }
    }
    run_planned<R>(host_out, out_arr, n, a...);
  }

  template <class R, class... A>
  [[gnu::noinline]] void run_planned(R* host_out, Array<R>* out_arr, std::size_t n, const A&... a) const {
    // Exactly one output: an Array, or host memory (whose pointer may be null when n == 0).
    const bool to_host = out_arr == nullptr;
    detail::CallScope scope;
    Runtime& rt = scope.runtime();
    if (opt_.device != -1) detail::check_device_index(rt, opt_.device, opt_.name);
    detail::CallDesc d = detail::describe_map<F, R>(n, to_host, opt_, a...);
    d.gpu_capable = kGpuCapable;
    d.forced_tier = forced_;
    detail::Plan p = detail::begin_call(rt, *site_, d);
#if VEDA_GPU_SITE
    if constexpr (detail::device_callable_v<F>) {
      if (detail::tier_device(p.tier) == Device::Gpu && n > 0) {
        if (detail::try_gpu(rt, p, d, [&] {
              const bool measured = run_gpu<R>(rt, p, host_out, out_arr, n, a...);
              detail::end_call(rt, p, d, measured);
            }))
          return;
      }
    }
#endif
    if (detail::tier_device(p.tier) == Device::Gpu) p.tier = detail::Tier::Serial;  // n == 0
    R* out = to_host ? host_out : detail::host_output(*out_arr, a...);
    detail::run_map_cpu(rt, p, f_, out, n, detail::host_accessor(a)...);
    detail::end_call(rt, p, d);
  }

#if VEDA_GPU_SITE
  template <class A>
  static auto device_acc(Runtime& rt, void* s, std::vector<detail::gpu_bridge::DeviceTemp>& temps, const A& a) {
    namespace gb = detail::gpu_bridge;
    using X = std::remove_cvref_t<A>;
    if constexpr (!detail::is_range_v<X>) {
      return detail::ScalarAcc<X>{a};
    } else {
      using T = detail::elem_t<X>;
      if constexpr (detail::is_array_v<X>) {
        return detail::RangeAcc<T>{static_cast<const T*>(gb::read(rt, *a.buffer(), s))};
      } else {
        const std::size_t bytes = a.size() * sizeof(T);
        temps.emplace_back(rt, bytes, s);
        gb::copy_in(rt, temps.back().get(), a.data(), bytes, s, false);
        return detail::RangeAcc<T>{static_cast<const T*>(temps.back().get())};
      }
    }
  }

  template <class R, class... A>
  bool run_gpu(Runtime& rt, const detail::Plan& p, R* host_out, Array<R>* out_arr, std::size_t n,
               const A&... a) const {
    namespace gb = detail::gpu_bridge;
    if (p.tier == detail::Tier::CudaStreamed && !out_arr) {
      stream_map<R>(rt, host_out, n, a...);
      return true;
    }
    if (p.tier == detail::Tier::CoExec && !out_arr) {
      coexec_map<R>(rt, p, host_out, n, a...);
      return true;
    }
    void* s = gb::stream(rt);
    std::vector<gb::DeviceTemp> temps;
    temps.reserve(sizeof...(A) + 1);
    auto accs = std::make_tuple(device_acc(rt, s, temps, a)...);
    R* dout = nullptr;
    if (out_arr) {
      dout = static_cast<R*>(gb::write(rt, *out_arr->buffer(), s, false));
    } else {
      temps.emplace_back(rt, n * sizeof(R), s);
      dout = static_cast<R*>(temps.back().get());
    }
    std::apply([&](const auto&... acc) {
      detail::launch_map(detail::device_part(f_), dout, n, gb::sm_count(rt), static_cast<cudaStream_t>(s), acc...);
    }, accs);
    gb::check_launch("veda::gpu kernel launch");
    auto mark = [&](const auto& x) {
      if constexpr (detail::is_array_v<std::remove_cvref_t<decltype(x)>>) gb::done(*x.buffer(), s);
    };
    (mark(a), ...);
    if (out_arr) gb::done(*out_arr->buffer(), s);
    if (!out_arr) {
      gb::copy_out(rt, host_out, dout, n * sizeof(R), s, false);
      return true;
    }
    if (p.sync_for_timing) {
      gb::synchronize(rt, s);
      return true;
    }
    return false;
  }

  // cpu+gpu (detail/coexec.hpp): the range's first part in shares on the
  // devices, each share the cuda tier over its slice, the rest on the CPU.
  template <class X>
  static auto slice(const X& x, std::size_t lo, std::size_t len) {
    if constexpr (detail::is_range_v<X>) return std::span<const detail::elem_t<X>>(detail::host_data(x) + lo, len);
    else return x;
  }
  template <class R, class... A>
  void coexec_map(Runtime& rt, const detail::Plan& p, R* host_out, std::size_t n, const A&... a) const {
    struct Done {};
    detail::Plan share = p;
    share.tier = detail::Tier::Cuda;
    detail::coexec_parts<Done>(
        rt, p, detail::coexec_gpu_count(p, n), n,
        [&](std::size_t lo, std::size_t hi) {
          run_gpu<R>(rt, share, host_out + lo, nullptr, hi - lo, slice(a, lo, hi - lo)...);
          return Done{};
        },
        [&](std::size_t lo, std::size_t hi) {
          detail::for_ranges(rt, detail::coexec_cpu_plan(rt, p, hi - lo), hi - lo, [&](std::size_t j0, std::size_t j1) {
            detail::map_range(f_, host_out, lo + j0, lo + j1, detail::host_accessor(a)...);
          });
          return Done{};
        });
  }

  // Chunked, overlapped: host ranges stream through pinned staging.
  template <class R, class... A>
  struct StreamCtx {
    const std::remove_cvref_t<decltype(detail::device_part(std::declval<const F&>()))>* f;
    std::tuple<const A*...> args;
    int sms;
  };
  template <std::size_t I, class... A>
  static constexpr std::size_t ranges_before() {
    constexpr bool range[] = {detail::is_range_v<A>..., false};
    std::size_t k = 0;
    for (std::size_t i = 0; i != I; ++i) k += range[i] ? 1 : 0;  // != : no "i < 0" warning
    return k;
  }
  template <class R, class... A, std::size_t... I>
  static void launch_chunk(void* c, const void* const* in, void* out, std::size_t count, void* s,
                           std::index_sequence<I...>) {
    auto* ctx = static_cast<StreamCtx<R, A...>*>(c);
    auto acc = [&](auto index, const auto* arg) {
      using X = std::remove_cvref_t<decltype(*arg)>;
      if constexpr (detail::is_range_v<X>)
        return detail::RangeAcc<detail::elem_t<X>>{
            static_cast<const detail::elem_t<X>*>(in[ranges_before<decltype(index)::value, A...>()])};
      else
        return detail::ScalarAcc<X>{*arg};
    };
    detail::launch_map(*ctx->f, static_cast<R*>(out), count, ctx->sms, static_cast<cudaStream_t>(s),
                       acc(std::integral_constant<std::size_t, I>{}, std::get<I>(ctx->args))...);
  }
  template <class R, class... A>
  void stream_map(Runtime& rt, R* host_out, std::size_t n, const A&... a) const {
    namespace gb = detail::gpu_bridge;
    std::vector<gb::StreamInput> inputs;
    auto add = [&](const auto& x) {
      if constexpr (detail::is_range_v<std::remove_cvref_t<decltype(x)>>)
        inputs.push_back({detail::host_data(x), sizeof(detail::elem_t<std::remove_cvref_t<decltype(x)>>)});
    };
    (add(a), ...);
    StreamCtx<R, A...> ctx{&detail::device_part(f_), std::make_tuple(&a...), gb::sm_count(rt)};
    gb::pipelined_map(rt, inputs.data(), inputs.size(), host_out, sizeof(R), n,
                      [](void* c, const void* const* in, void* out, std::size_t count, void* s) {
                        launch_chunk<R, A...>(c, in, out, count, s, std::index_sequence_for<A...>{});
                      },
                      &ctx);
  }
#endif

  F f_;
  GpuOptions opt_;
  detail::Site* site_;
  detail::Tier forced_;
};

template <class F>
GpuFunction<std::decay_t<F>> gpu(F&& f, GpuOptions options = {}) {
  return GpuFunction<std::decay_t<F>>(std::forward<F>(f), std::move(options));
}

}  // namespace VEDA_TU_NS
}  // namespace veda
