// CUDA kernels for element-wise maps; included only by nvcc-compiled code.
//
// map_kernel: grid-stride, one element per thread per step.
// map_kernel_vec4: when every range and the output are aligned for 4-element
// vectors, each thread loads and stores four elements at a time (16-byte
// transactions for 4-byte types), then the last n % 4 elements are done
// singly. The host-side launch_map picks between them.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "veda/detail/map_args.hpp"

namespace veda::detail {

template <class T>
struct alignas(sizeof(T) * 4 <= 16 ? sizeof(T) * 4 : 16) Pack4 {
  T v[4];
};

template <class T>
__device__ Pack4<T> load4(const RangeAcc<T>& a, std::size_t q) {
  return reinterpret_cast<const Pack4<T>*>(a.p)[q];
}
template <class T>
__device__ Pack4<T> load4(const ScalarAcc<T>& a, std::size_t) {
  return Pack4<T>{{a.v, a.v, a.v, a.v}};
}

template <class F, class R, class... P>
__device__ void apply4(const F& f, Pack4<R>& r, const P&... packs) {
#pragma unroll
  for (int j = 0; j < 4; ++j) r.v[j] = f(packs.v[j]...);
}

template <class F, class R, class... Acc>
__global__ void map_kernel(F f, R* out, std::size_t n, Acc... acc) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    out[i] = f(acc.get(i)...);
}

template <class F, class R, class... Acc>
__global__ void map_kernel_vec4(F f, R* out, std::size_t n, Acc... acc) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t tid = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t n4 = n / 4;
  auto* o4 = reinterpret_cast<Pack4<R>*>(out);
  for (std::size_t q = tid; q < n4; q += stride) {
    Pack4<R> r;
    apply4(f, r, load4(acc, q)...);
    o4[q] = r;
  }
  const std::size_t i = n4 * 4 + tid;
  if (i < n) out[i] = f(acc.get(i)...);
}

template <class T>
bool vec4_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % alignof(Pack4<T>) == 0;
}
template <class T>
bool vec4_aligned(const RangeAcc<T>& a) {
  return vec4_aligned(a.p);
}
template <class T>
bool vec4_aligned(const ScalarAcc<T>&) {
  return true;
}

// Queues out[i] = f(acc.get(i)...) for i < n on stream s.
template <class F, class R, class... Acc>
void launch_map(const F& f, R* out, std::size_t n, int sms, cudaStream_t s, const Acc&... acc) {
  if (n == 0) return;
  constexpr unsigned kBlock = 256;
  const bool vec = n >= 4 && vec4_aligned(out) && (vec4_aligned(acc) && ...);
  const std::size_t work = vec ? n / 4 + 3 : n;
  const std::size_t blocks = std::min<std::size_t>((work + kBlock - 1) / kBlock,
                                                   static_cast<std::size_t>(std::max(sms, 1)) * 32);
  if (vec)
    map_kernel_vec4<<<static_cast<unsigned>(blocks), kBlock, 0, s>>>(f, out, n, acc...);
  else
    map_kernel<<<static_cast<unsigned>(blocks), kBlock, 0, s>>>(f, out, n, acc...);
}

}  // namespace veda::detail
#endif
