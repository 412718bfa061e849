// veda's own GEMM kernel (the gpu-tiled tier) and the linear epilogue.
//
// Tiled GEMM: 32 x 32 tiles of C per block of 32 x 8 threads; each thread
// computes four elements of one column of its tile, reading A and B through
// shared memory in 32-wide slices of k. Transposed operands are read through
// the index functions, so no copy is made.
#include <cuda_runtime.h>

#include "backends/cuda/gemm.hpp"

namespace veda::detail::cuda {
namespace {
constexpr int kTile = 32, kRows = 8;

template <class T>
__device__ T load_a(const GemmShape& s, const T* a, std::size_t i, std::size_t p) {
  if (i >= s.m || p >= s.k) return T(0);
  return s.trans_a ? a[p * s.m + i] : a[i * s.k + p];
}
template <class T>
__device__ T load_b(const GemmShape& s, const T* b, std::size_t p, std::size_t j) {
  if (p >= s.k || j >= s.n) return T(0);
  return s.trans_b ? b[j * s.k + p] : b[p * s.n + j];
}

template <class T>
__global__ void tiled_gemm(GemmShape s, const T* a, const T* b, T* c) {
  __shared__ T as[kTile][kTile + 1];  // +1: no bank conflicts on the transposed reads
  __shared__ T bs[kTile][kTile + 1];
  // Grid z * y walks row tiles (y alone is limited to 65535).
  const std::size_t row0 = (static_cast<std::size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * kTile;
  if (row0 >= s.m) return;  // the whole block: before any barrier
  const std::size_t col = static_cast<std::size_t>(blockIdx.x) * kTile + threadIdx.x;
  T acc[kTile / kRows] = {};
  for (std::size_t p0 = 0; p0 < s.k; p0 += kTile) {
    for (int r = threadIdx.y; r < kTile; r += kRows) {
      as[r][threadIdx.x] = load_a(s, a, row0 + r, p0 + threadIdx.x);
      bs[r][threadIdx.x] = load_b(s, b, p0 + r, col);
    }
    __syncthreads();
#pragma unroll 8
    for (int p = 0; p < kTile; ++p) {
      const T bv = bs[p][threadIdx.x];
#pragma unroll
      for (int q = 0; q < kTile / kRows; ++q) acc[q] += as[threadIdx.y + q * kRows][p] * bv;
    }
    __syncthreads();
  }
  if (col >= s.n) return;
#pragma unroll
  for (int q = 0; q < kTile / kRows; ++q) {
    const std::size_t row = row0 + threadIdx.y + q * kRows;
    if (row >= s.m) continue;
    T& out = c[row * s.n + col];
    out = s.beta == 0 ? T(s.alpha) * acc[q] : T(s.alpha) * acc[q] + T(s.beta) * out;  // beta 0: C not read
  }
}

template <class T>
__global__ void bias_act_kernel(T* c, std::size_t m, std::size_t n, const T* bias, Activation act) {
  const std::size_t total = m * n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    T v = c[i] + (bias ? bias[i % n] : T(0));
    if (act == Activation::Relu) v = v > T(0) ? v : T(0);
    else if (act == Activation::Gelu) {
      const T t = T(0.7978845608028654) * (v + T(0.044715) * v * v * v);
      v = T(0.5) * v * (T(1) + tanh(t));
    }
    c[i] = v;
  }
}
}  // namespace

template <class T>
void launch_tiled_gemm(const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream) {
  if (s.m == 0 || s.n == 0) return;
  const dim3 block(kTile, kRows);
  const std::size_t row_tiles = (s.m + kTile - 1) / kTile, y = std::min<std::size_t>(row_tiles, 65535);
  const dim3 grid(static_cast<unsigned>((s.n + kTile - 1) / kTile), static_cast<unsigned>(y),
                  static_cast<unsigned>((row_tiles + y - 1) / y));
  tiled_gemm<T><<<grid, block, 0, stream>>>(s, a, b, c);
}

template <class T>
void bias_activation(T* c, std::size_t m, std::size_t n, const T* bias, Activation act, cudaStream_t stream) {
  if (m * n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((m * n + 255) / 256, 65535);
  bias_act_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(c, m, n, bias, act);
}

template void launch_tiled_gemm<float>(const GemmShape&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled_gemm<double>(const GemmShape&, const double*, const double*, double*, cudaStream_t);
template void bias_activation<float>(float*, std::size_t, std::size_t, const float*, Activation, cudaStream_t);
template void bias_activation<double>(double*, std::size_t, std::size_t, const double*, Activation, cudaStream_t);

}  // namespace veda::detail::cuda
