// Library ops' view of their Array operands: residency for the cost model,
// and (CUDA backend) device pointers taken through the data layer.
#pragma once

#include "veda/array.hpp"
#include "veda/build_config.hpp"
#include "veda/detail/dispatch.hpp"
#if VEDA_HAS_CUDA
#include "backends/cuda/cuda_device.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/detail/gpu_bridge.hpp"
#endif

namespace veda::detail {

// Adds where the operands' valid copies are to d (bytes each tier would move).
template <class... A>
void describe_operands(CallDesc& d, const A&... arrays) {
  bool all = true, any = false;
  auto one = [&](const auto& a) {
    const std::size_t bytes = a.bytes();
    const bool dev = a.valid_on_device(), host = a.valid_on_host();
    if (!dev) d.h2d_bytes += bytes;
    if (!host) d.cpu_d2h_bytes += bytes;
    all &= dev;
    any |= dev;
  };
  (one(arrays), ...);
  d.all_on_device = all && sizeof...(A) > 0;
  d.any_on_device = any;
  d.gpu_capable = VEDA_HAS_CUDA;
  d.nvcc_site = true;  // library kernels need no nvcc at the call site
}

#if VEDA_HAS_CUDA
inline cuda::CudaDevice& cuda_device(Runtime& rt) {
  auto* dev = dynamic_cast<cuda::CudaDevice*>(rt.state().device());
  if (!dev) throw DeviceError("veda: no CUDA device in this runtime");
  return *dev;
}
template <class T>
const T* device_in(cuda::CudaDevice& dev, const Array<T>& a, void* s) {
  return a.size() ? static_cast<const T*>(a.buffer()->device_read(dev, s)) : nullptr;
}
template <class T>
T* device_out(cuda::CudaDevice& dev, Array<T>& a, void* s) {
  return a.size() ? static_cast<T*>(a.buffer()->device_write(dev, s, false)) : nullptr;
}
template <class T>
void device_done(const Array<T>& a, void* s) {
  if (a.size()) a.buffer()->device_done(s);
}
#endif

}  // namespace veda::detail
