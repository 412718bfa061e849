// veda's element types as CUDA kernels see them: veda::half and
// veda::bfloat16 are laid out as __half and __nv_bfloat16, and kernels sum
// the 16-bit types in FP32 (Acc), the others in their own type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "veda/half.hpp"

namespace veda::detail::cuda {

template <class T>
struct DeviceElem {
  using type = T;
};
template <>
struct DeviceElem<veda::half> {
  using type = __half;
};
template <>
struct DeviceElem<veda::bfloat16> {
  using type = __nv_bfloat16;
};
template <class T>
using Acc = std::conditional_t<sizeof(T) == 2, float, T>;

// A host-side veda pointer as the kernels' element type.
template <class T>
auto* device_ptr(T* p) {
  using D = typename DeviceElem<std::remove_const_t<T>>::type;
  return reinterpret_cast<std::conditional_t<std::is_const_v<T>, const D*, D*>>(p);
}

}  // namespace veda::detail::cuda
