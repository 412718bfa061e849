// veda/gpu_kernel.hpp — bring your own kernels.
//
//   auto scale = veda::gpu_kernel(
//       [](std::span<const float> x, std::span<float> y, float a) {        // CPU
//         for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i];
//       },
//       [](std::span<const float> x, std::span<float> y, float a, veda::cuda_stream_t s) {  // CUDA
//         my_scale_kernel<<<blocks, 256, 0, s>>>(x.data(), y.data(), a, x.size());
//       },
//       {.name = "scale", .cost = {.flops_per_elem = 1}});
//   scale(x, y, 2.0f);   // x, y: vectors, spans or Arrays
//
// Contract: like a StarPU codelet, one operation with a CPU implementation
// over host spans and an optional CUDA implementation over device spans plus
// the stream to queue work on. veda chooses between them with the same cost
// model as veda::gpu (the cost hint, then measured history), moves the
// operands and takes device memory from its pool. Ranges passed as const
// (const std::vector&, std::span<const T>, const Array&) are inputs; mutable
// ones are read-write and hold the results afterwards, on the host for host
// ranges and where the work ran for Arrays. Scalars are passed through. The
// CUDA side needs a libveda built with CUDA; it does not need nvcc at the
// call site (it launches its own kernels). Exceptions from the CPU
// implementation reach the caller; what it already wrote stays written.
//
// Thread-safety: a GpuKernel may be called from many threads at once.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/detail/call_scope.hpp"
#include "veda/detail/dispatch.hpp"
#include "veda/detail/gpu_bridge.hpp"
#include "veda/detail/map_args.hpp"
#include "veda/gpu.hpp"
#include "veda/runtime.hpp"

#if VEDA_HAS_CUDA
#include <cuda_runtime_api.h>
namespace veda {
using cuda_stream_t = cudaStream_t;
}
#else
namespace veda {
struct cuda_stream_unavailable;
using cuda_stream_t = cuda_stream_unavailable*;  // no CUDA backend: never called
}
#endif

namespace veda {
namespace detail {

// Read-write ranges: a span of non-const elements (a span is a view, so its
// own constness does not matter), or a non-const vector or Array.
template <class X>
struct const_span : std::false_type {};
template <class T, std::size_t E>
struct const_span<std::span<const T, E>> : std::true_type {};
template <class A>
inline constexpr bool mutable_range_v =
    is_range_v<A> && (traits_of<A>::kind == RangeKind::Span ? !const_span<std::remove_cvref_t<A>>::value
                                                            : !std::is_const_v<std::remove_reference_t<A>>);

// The CPU implementation's view of an argument.
template <class A>
auto host_view(A&& a) {
  using X = std::remove_cvref_t<A>;
  if constexpr (!is_range_v<X>) {
    return a;
  } else if constexpr (mutable_range_v<A>) {
    if constexpr (is_array_v<X>) return a.host();
    else return std::span<elem_t<X>>(a.data(), a.size());
  } else {
    if constexpr (is_array_v<X>) return std::as_const(a).host();
    else return std::span<const elem_t<X>>(a.data(), a.size());
  }
}

constexpr std::uint32_t kKernelTiers = tier_bit(Tier::CpuImpl) | tier_bit(Tier::CudaImpl);
}  // namespace detail

template <class CpuF, class CudaF>
class GpuKernel {
 public:
  static constexpr bool kHasCudaImpl = !std::is_same_v<CudaF, std::nullptr_t>;
  static constexpr bool kHasCuda = kHasCudaImpl && VEDA_HAS_CUDA;
  // A CUDA implementation is a tier even where this libveda cannot run it,
  // so that forcing it there falls back (or, strict, fails) like any GPU tier.
  static constexpr std::uint32_t kTiers = kHasCudaImpl ? detail::kKernelTiers : detail::tier_bit(detail::Tier::CpuImpl);

  GpuKernel(CpuF cpu, CudaF cuda, GpuOptions o)
      : cpu_(std::move(cpu)),
        cuda_(std::move(cuda)),
        opt_(std::move(o)),
        site_(detail::site_for(&typeid(GpuKernel), opt_.name, detail::OpClass::Kernel, kTiers, opt_.cost)),
        forced_(detail::parse_tier(opt_.tier)) {
    if (forced_ != detail::Tier::Count && !(kTiers & detail::tier_bit(forced_)))
      throw InvalidArgument("veda::gpu_kernel '" + opt_.name + "': no tier '" + opt_.tier + "' (it has 'cpu'" +
                            (kHasCudaImpl ? " and 'cuda-impl')" : "; give it a CUDA implementation for 'cuda-impl')"));
  }

  template <class... A>
  void operator()(A&&... a) const {
    detail::CallScope scope;
    Runtime& rt = scope.runtime();
    detail::check_placement(opt_.placement, opt_.name);
    if (opt_.device != -1) detail::check_device_index(rt, opt_.device, opt_.name);
    const detail::CallDesc d = describe(a...);
    detail::Plan p = detail::begin_call(rt, *site_, d);
#if VEDA_HAS_CUDA
    if constexpr (kHasCuda) {
      if (p.tier == detail::Tier::CudaImpl) {
        if (detail::try_gpu(rt, p, d, [&] {
              const bool measured = run_cuda(rt, p, a...);
              detail::end_call(rt, p, d, measured);
            }))
          return;
      }
    }
#endif
    cpu_(detail::host_view(std::forward<A>(a))...);
    detail::end_call(rt, p, d);
  }

 private:
  template <class... A>
  detail::CallDesc describe(const A&... a) const {
    detail::CallDesc d;
    d.type_key = &detail::type_tag<GpuKernel, A...>;
    d.device = detail::device_byte(opt_.device);
    std::size_t bytes = 0;
    detail::CopyIn copy_in;
    bool all_dev = true, ranges = false;
    auto visit = [&](const auto& x, bool out) {
      using X = std::remove_cvref_t<decltype(x)>;
      if constexpr (detail::is_range_v<X>) {
        ranges = true;
        d.n = std::max(d.n, x.size());
        bytes += sizeof(detail::elem_t<X>);
        const std::size_t b = x.size() * sizeof(detail::elem_t<X>);
        if constexpr (detail::is_array_v<X>) {
          const int dev = x.device();  // -1: valid on no device
          copy_in.add(d, x, dev, b);
          if (!x.valid_on_host()) d.cpu_d2h_bytes += b;
          d.any_on_device |= dev >= 0;
        } else {
          if (out) d.d2h_bytes += b;  // host results come back
          d.h2d_bytes += b;
          all_dev = false;
        }
      }
    };
    (visit(a, detail::mutable_range_v<A>), ...);
    all_dev &= copy_in.finish(d);
    d.bytes_per_elem = detail::bytes16(bytes);
    d.all_on_device = ranges && all_dev;
    d.gpu_capable = kHasCuda;
    d.nvcc_site = true;  // the CUDA side needs no nvcc here
    d.placement = opt_.placement;
    d.strict = opt_.strict;
    d.forced_tier = forced_;
    return d;
  }

#if VEDA_HAS_CUDA
  // Device view of one argument; host ranges get pool scratch, results are
  // copied back by `finish`.
  template <class A>
  static auto device_view(Runtime& rt, void* s, std::vector<detail::gpu_bridge::DeviceTemp>& temps, A&& a) {
    namespace gb = detail::gpu_bridge;
    using X = std::remove_cvref_t<A>;
    if constexpr (!detail::is_range_v<X>) {
      return a;
    } else {
      using T = detail::elem_t<X>;
      constexpr bool out = detail::mutable_range_v<A>;
      T* p = nullptr;
      if constexpr (detail::is_array_v<X>) {
        p = a.size() == 0 ? nullptr
            : out         ? static_cast<T*>(gb::write(rt, *a.buffer(), s, true))
                          : const_cast<T*>(static_cast<const T*>(gb::read(rt, *a.buffer(), s)));
      } else {
        temps.emplace_back(rt, a.size() * sizeof(T), s);
        p = static_cast<T*>(temps.back().get());
        gb::copy_in(rt, p, a.data(), a.size() * sizeof(T), s, false);
      }
      if constexpr (out) return std::span<T>(p, a.size());
      else return std::span<const T>(p, a.size());
    }
  }

  template <class... A>
  bool run_cuda(Runtime& rt, const detail::Plan& p, A&&... a) const {
    namespace gb = detail::gpu_bridge;
    void* s = gb::stream(rt);
    std::vector<gb::DeviceTemp> temps;
    temps.reserve(sizeof...(A));
    auto views = std::make_tuple(device_view(rt, s, temps, std::forward<A>(a))...);
    std::apply([&](auto&... v) { cuda_(v..., static_cast<cuda_stream_t>(s)); }, views);
    gb::check_launch("veda::gpu_kernel CUDA implementation");
    bool synced = false;
    auto finish = [&](auto&& x, const auto& view) {
      using X = std::remove_cvref_t<decltype(x)>;
      if constexpr (detail::is_array_v<X>) {
        if (x.size()) gb::done(*x.buffer(), s);
      } else if constexpr (detail::mutable_range_v<decltype(x)>) {
        gb::copy_out(rt, x.data(), view.data(), x.size() * sizeof(detail::elem_t<X>), s, false);
        synced = true;
      }
    };
    // The kernel has run: Arrays it updated in place are changed, so a copy
    // that fails now must not send the call to the CPU, which would apply
    // the update a second time.
    try {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (finish(a, std::get<I>(views)), ...);
      }(std::index_sequence_for<A...>{});
    } catch (const DeviceFault& e) {
      throw DeviceError(std::string(e.what()) +
                        " after the GPU kernel had changed its outputs; the call is not rerun on the CPU");
    }
    if (!synced && p.sync_for_timing) {
      gb::synchronize(rt, s);
      synced = true;
    }
    return synced;
  }
#endif

  CpuF cpu_;
  CudaF cuda_;
  GpuOptions opt_;
  detail::Site* site_;
  detail::Tier forced_;
};

template <class CpuF, class CudaF>
GpuKernel<std::decay_t<CpuF>, std::decay_t<CudaF>> gpu_kernel(CpuF&& cpu, CudaF&& cuda, GpuOptions o = {}) {
  return {std::forward<CpuF>(cpu), std::forward<CudaF>(cuda), std::move(o)};
}

template <class CpuF>
GpuKernel<std::decay_t<CpuF>, std::nullptr_t> gpu_kernel(CpuF&& cpu, GpuOptions o = {}) {
  return {std::forward<CpuF>(cpu), nullptr, std::move(o)};
}

}  // namespace veda
