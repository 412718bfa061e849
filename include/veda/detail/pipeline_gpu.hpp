// par_iter GPU segments; included only by nvcc-compiled code (VEDA_GPU_SITE).
//
// A segment is a run of gpu_map stages (device-callable functions) and
// VEDA_FN filters. Consecutive maps compose into one kernel; each filter is
// an order-preserving stream compaction (cub::DeviceSelect::If). The input
// is a device buffer, or the index range itself (generated in the kernel,
// nothing copied). Buffers come from veda's pool and are returned to it on
// the segment's stream.
#pragma once

#include "veda/detail/site_mode.hpp"

#if VEDA_GPU_SITE
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>

#include <tuple>
#include <vector>

#include "veda/detail/gpu_bridge.hpp"
#include "veda/detail/map_kernels.hpp"
#include "veda/detail/pipeline.hpp"

namespace veda::detail::pipe {

// What CUB may call: the device closure of a Dual with its return type
// proclaimed (CUB asks for it in host code, which a __device__ lambda cannot
// answer), otherwise f itself.
template <class Ret, class F>
auto cub_op(const F& f) {
  if constexpr (is_dual<F>::value) return cuda::proclaim_return_type<Ret>(f.device);
  else return f;
}

// An index range read as a device input: element j is first + j.
template <class I>
struct IndexAcc {
  I first;
  VEDA_HD I get(std::size_t j) const { return static_cast<I>(first + static_cast<I>(j)); }
};
template <class I>
bool vec4_aligned(const IndexAcc<I>&) {
  return true;
}
template <class I>
__device__ Pack4<I> load4(const IndexAcc<I>& a, std::size_t q) {
  const I b = a.get(q * 4);
  return Pack4<I>{{b, static_cast<I>(b + 1), static_cast<I>(b + 2), static_cast<I>(b + 3)}};
}

// Applies the functions of a gpu_map run in order (a tuple of just those
// functions, so no host-only closure type reaches a kernel).
template <class Fs>
struct Compose {
  Fs fs;
  template <class V>
  VEDA_HD auto operator()(const V& v) const {
    return apply_from<0>(v);
  }
  template <std::size_t K, class V>
  VEDA_HD auto apply_from(const V& v) const {
    if constexpr (K == std::tuple_size_v<Fs>) return v;
    else return apply_from<K + 1>(std::get<K>(fs)(v));
  }
};

template <std::size_t A, std::size_t B, class Stages>
auto compose_maps(const Stages& st) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return Compose<std::tuple<std::remove_cvref_t<decltype(device_part(std::get<A + K>(st).f))>...>>{
        std::make_tuple(device_part(std::get<A + K>(st).f)...)};
  }(std::make_index_sequence<B - A>{});
}

// A typed device buffer from the pool.
template <class T>
struct DeviceVec {
  gpu_bridge::DeviceTemp mem;
  std::size_t n;
  T* data() const { return static_cast<T*>(mem.get()); }
};

// Order-preserving compaction of `in` by filter stage F into a new buffer.
template <std::size_t F, class Stages, class T>
DeviceVec<T> compact(Runtime& rt, const Stages& st, const T* in, std::size_t count, void* s) {
  DeviceVec<T> kept{gpu_bridge::DeviceTemp(rt, std::max<std::size_t>(count, 1) * sizeof(T), s), 0};
  gpu_bridge::DeviceTemp selected(rt, sizeof(std::int64_t), s);
  auto* d_sel = static_cast<std::int64_t*>(selected.get());
  const auto pred = cub_op<bool>(std::get<F>(st).p);
  std::size_t bytes = 0;
  gpu_bridge::check(cub::DeviceSelect::If(nullptr, bytes, in, kept.data(), d_sel, static_cast<std::int64_t>(count),
                                          pred, static_cast<cudaStream_t>(s)),
                    "par_iter filter (cub::DeviceSelect::If)");
  gpu_bridge::DeviceTemp temp(rt, std::max<std::size_t>(bytes, 1), s);
  gpu_bridge::check(cub::DeviceSelect::If(temp.get(), bytes, in, kept.data(), d_sel, static_cast<std::int64_t>(count),
                                          pred, static_cast<cudaStream_t>(s)),
                    "par_iter filter (cub::DeviceSelect::If)");
  gpu_bridge::check_launch("par_iter filter (cub::DeviceSelect::If)");
  std::int64_t m = 0;
  gpu_bridge::copy_out(rt, &m, d_sel, sizeof m, s, false);
  kept.n = static_cast<std::size_t>(m);
  return kept;
}

// Runs stages [K, G1) of the segment (K < G1) over `acc` (count elements);
// returns the output buffer. Maps up to the next filter fuse into one kernel.
template <std::size_t K, std::size_t G1, class Stages, class Acc, class V0>
auto run_segment(Runtime& rt, const Stages& st, const Acc& acc, std::size_t count, void* s) {
  using L = layout<Stages>;
  constexpr std::size_t F = [] {
    std::size_t j = K;
    while (j != G1 && !L::filter[j]) ++j;
    return j;
  }();
  using VF = value_at_t<V0, Stages, F>;
  static_assert(std::is_trivially_copyable_v<VF>, "gpu_map results must be trivially copyable");
  // The stream entering F: the maps [K, F) computed into a buffer, or
  // (no maps) the input buffer itself.
  auto step = [&] {
    if constexpr (F > K) {
      DeviceVec<VF> buf{gpu_bridge::DeviceTemp(rt, std::max<std::size_t>(count, 1) * sizeof(VF), s), count};
      launch_map(compose_maps<K, F>(st), buf.data(), count, gpu_bridge::sm_count(rt), static_cast<cudaStream_t>(s), acc);
      gpu_bridge::check_launch("par_iter gpu_map kernel");
      if constexpr (F == G1) return buf;
      else return compact<F>(rt, st, static_cast<const VF*>(buf.data()), count, s);
    } else {
      static_assert(std::is_same_v<Acc, RangeAcc<VF>>, "a filter directly follows a buffer");
      return compact<F>(rt, st, acc.p, count, s);
    }
  };
  auto out = step();
  if constexpr (F == G1 || F + 1 == G1) {
    return out;
  } else {
    auto next = run_segment<F + 1, G1, Stages, RangeAcc<VF>, V0>(rt, st, RangeAcc<VF>{out.data()}, out.n, s);
    return next;  // `out` returns to the pool after the queued work (stream ordered)
  }
}

// Device-wide reduction of a segment's output (only the scalar comes back).
template <class Acc, class T, class Op>
Acc reduce_device(Runtime& rt, const T* in, std::size_t n, const Acc& identity, const Op& op, void* s) {
  if (n == 0) return identity;
  gpu_bridge::DeviceTemp out(rt, sizeof(Acc), s);
  std::size_t bytes = 0;
  const auto dop = cub_op<Acc>(op);
  gpu_bridge::check(cub::DeviceReduce::Reduce(nullptr, bytes, in, static_cast<Acc*>(out.get()),
                                              static_cast<std::int64_t>(n), dop, identity, static_cast<cudaStream_t>(s)),
                    "par_iter reduction (cub::DeviceReduce)");
  gpu_bridge::DeviceTemp temp(rt, std::max<std::size_t>(bytes, 1), s);
  gpu_bridge::check(cub::DeviceReduce::Reduce(temp.get(), bytes, in, static_cast<Acc*>(out.get()),
                                              static_cast<std::int64_t>(n), dop, identity, static_cast<cudaStream_t>(s)),
                    "par_iter reduction (cub::DeviceReduce)");
  gpu_bridge::check_launch("par_iter reduction (cub::DeviceReduce)");
  Acc result = identity;
  gpu_bridge::copy_out(rt, &result, out.get(), sizeof(Acc), s, false);
  return result;
}

}  // namespace veda::detail::pipe
#endif
