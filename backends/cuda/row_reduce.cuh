// Kernels that give each row of a row-major matrix to a warp (rows of at
// most kWarpRowMax elements, eight rows per block) or to a block of kBlock
// threads (longer rows), for the row ops (softmax, layer_norm). A row
// functor does the work:
//   row(r, t, stride, reduce): thread t of `stride` threads owns row r;
//   reduce(v, rows::Sum{} or rows::Max{}, identity) combines v (float or
//   double) across them through warp shuffles (and, per block, shared
//   memory); every thread gets the result. The tree depends only on the
//   launch shape: a row's result is the same run to run. Row functors sum in
//   double (a thread of a long row adds thousands of terms).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "backends/cuda/cuda_check.hpp"

namespace veda::detail::cuda::rows {

constexpr int kWarp = 32;
constexpr int kBlock = 256;
constexpr std::size_t kWarpRowMax = 1024;
constexpr std::size_t kMaxGrid = 65535;  // rows beyond: grid-stride loops

struct Max {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

template <class T, class Op>
__device__ T warp_reduce(T v, Op op) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

struct WarpReduce {
  template <class T, class Op>
  __device__ T operator()(T v, Op op, T) const {
    return warp_reduce(v, op);
  }
};

// `shared` holds a value per warp of the block (a float is exact in double).
struct BlockReduce {
  double* shared;
  template <class T, class Op>
  __device__ T operator()(T v, Op op, T identity) const {
    v = warp_reduce(v, op);
    __syncthreads();  // the previous reduction's readers are done with `shared`
    if (threadIdx.x % kWarp == 0) shared[threadIdx.x / kWarp] = v;
    __syncthreads();
    v = threadIdx.x % kWarp < blockDim.x / kWarp ? static_cast<T>(shared[threadIdx.x % kWarp]) : identity;
    return warp_reduce(v, op);  // every warp reduces the same values
  }
};

template <class Row>
__global__ void warp_per_row(std::size_t n_rows, Row row) {
  const std::size_t per_block = blockDim.x / kWarp;
  const std::size_t warps = gridDim.x * per_block;
  for (std::size_t r = blockIdx.x * per_block + threadIdx.x / kWarp; r < n_rows; r += warps)
    row(r, threadIdx.x % kWarp, kWarp, WarpReduce{});
}

template <class Row>
__global__ void block_per_row(std::size_t n_rows, Row row) {
  __shared__ double shared[kBlock / kWarp];
  for (std::size_t r = blockIdx.x; r < n_rows; r += gridDim.x) row(r, threadIdx.x, blockDim.x, BlockReduce{shared});
}

inline unsigned grid(std::size_t blocks) { return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, kMaxGrid)); }

// `row` over n_rows rows of len elements each, on s.
template <class Row>
void launch(std::size_t n_rows, std::size_t len, const Row& row, cudaStream_t s, const char* what) {
  constexpr std::size_t per_block = kBlock / kWarp;
  if (len <= kWarpRowMax) warp_per_row<<<grid((n_rows + per_block - 1) / per_block), kBlock, 0, s>>>(n_rows, row);
  else block_per_row<<<grid(n_rows), kBlock, 0, s>>>(n_rows, row);
  launched(what);
}

// exp in T's precision.
template <class T>
__device__ T exp_of(T v) {
  if constexpr (sizeof(T) == 4) return expf(v);
  else return ::exp(v);
}

}  // namespace veda::detail::cuda::rows
