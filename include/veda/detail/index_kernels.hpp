// CUDA kernels for parallel_for / parallel_reduce; included only by
// nvcc-compiled code. 64-bit indices throughout; grids stride, so any box
// fits the grid limits. 2-D: x runs along a row (coalesced), y over rows;
// 3-D: x, y, z over columns, rows, pages. The reduction folds each block
// into one Partial (no identity element needed), combined on the host in
// block order: the same grid gives the same result run to run.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <algorithm>

#include "veda/detail/index_loop.hpp"

namespace veda::detail {

template <class F, class... V>
__global__ void index_kernel_1d(F f, Box<1> b, V... v) {
  const std::size_t n = b.hi[0] - b.lo[0];
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride) f(b.lo[0] + i, v...);
}

template <class F, class... V>
__global__ void index_kernel_2d(F f, Box<2> b, V... v) {
  const std::size_t rows = b.hi[0] - b.lo[0], cols = b.hi[1] - b.lo[1];
  for (std::size_t i = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y; i < rows;
       i += std::size_t{gridDim.y} * blockDim.y)
    for (std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; j < cols;
         j += std::size_t{gridDim.x} * blockDim.x)
      f(b.lo[0] + i, b.lo[1] + j, v...);
}

template <class F, class... V>
__global__ void index_kernel_3d(F f, Box<3> b, V... v) {
  const std::size_t pages = b.hi[0] - b.lo[0], rows = b.hi[1] - b.lo[1], cols = b.hi[2] - b.lo[2];
  for (std::size_t i = blockIdx.z * std::size_t{blockDim.z} + threadIdx.z; i < pages;
       i += std::size_t{gridDim.z} * blockDim.z)
    for (std::size_t j = blockIdx.y * std::size_t{blockDim.y} + threadIdx.y; j < rows;
         j += std::size_t{gridDim.y} * blockDim.y)
      for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < cols;
           k += std::size_t{gridDim.x} * blockDim.x)
        f(b.lo[0] + i, b.lo[1] + j, b.lo[2] + k, v...);
}

inline unsigned grid_dim(std::size_t n, unsigned block, std::size_t limit) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + block - 1) / block, 1, limit));
}

// Queues f over every index of b on stream s.
template <std::size_t N, class F, class... V>
void launch_index(const F& f, const Box<N>& b, int sms, cudaStream_t s, const V&... v) {
  if (b.size() == 0) return;
  const std::size_t blocks_max = static_cast<std::size_t>(std::max(sms, 1)) * 32;
  if constexpr (N == 1) {
    index_kernel_1d<<<grid_dim(b.hi[0] - b.lo[0], 256, blocks_max), 256, 0, s>>>(f, b, v...);
  } else if constexpr (N == 2) {
    const dim3 block(32, 8);
    const dim3 grid(grid_dim(b.hi[1] - b.lo[1], 32, 65535), grid_dim(b.hi[0] - b.lo[0], 8, 65535));
    index_kernel_2d<<<grid, block, 0, s>>>(f, b, v...);
  } else {
    const dim3 block(32, 4, 2);
    const dim3 grid(grid_dim(b.hi[2] - b.lo[2], 32, 65535), grid_dim(b.hi[1] - b.lo[1], 4, 65535),
                    grid_dim(b.hi[0] - b.lo[0], 2, 65535));
    index_kernel_3d<<<grid, block, 0, s>>>(f, b, v...);
  }
}

inline constexpr unsigned kReduceBlock = 256;

// One Partial per block: each thread folds a grid-stride run of linear
// positions, then the block folds its threads in a fixed tree.
template <class R, std::size_t N, class F, class Op, class... V>
__global__ void index_reduce_kernel(F f, Op op, Box<N> b, Partial<R>* out, V... v) {
  // Raw storage: Partial's member initialisers are not allowed on __shared__.
  __shared__ alignas(Partial<R>) unsigned char raw[sizeof(Partial<R>) * kReduceBlock];
  auto* part = reinterpret_cast<Partial<R>*>(raw);
  const std::size_t count = b.size(), stride = std::size_t{gridDim.x} * blockDim.x;
  Partial<R> acc;
  for (std::size_t q = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; q < count; q += stride) {
    R r;
    if constexpr (N == 1) {
      r = f(b.lo[0] + q, v...);
    } else if constexpr (N == 2) {
      const std::size_t w = b.hi[1] - b.lo[1];
      r = f(b.lo[0] + q / w, b.lo[1] + q % w, v...);
    } else {
      const std::size_t w = b.hi[2] - b.lo[2], plane = (b.hi[1] - b.lo[1]) * w;
      r = f(b.lo[0] + q / plane, b.lo[1] + q % plane / w, b.lo[2] + q % w, v...);
    }
    acc = acc.has ? Partial<R>{op(acc.value, r), true} : Partial<R>{r, true};
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned h = kReduceBlock / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] = combine(part[threadIdx.x], part[threadIdx.x + h], op);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

inline unsigned reduce_blocks(std::size_t count, int sms) {
  return grid_dim(count, kReduceBlock, static_cast<std::size_t>(std::max(sms, 1)) * 4);
}

}  // namespace veda::detail
#endif
