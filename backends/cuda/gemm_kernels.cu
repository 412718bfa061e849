// veda's own GEMM kernels, the matmul ladder of the CUDA chapter, and the
// linear epilogue: gpu-naive (a thread per element of C, every operand read
// from global memory), gpu-tiled (below), gpu-vectorized (64 x 64 tiles, a
// thread computing 4 x 4 outputs from registers, float4 loads where the
// layout allows) and gpu-wmma (tensor cores: tiles converted to BF16 in
// shared memory, or FP16/BF16 elements staged as they are; FP32
// accumulation; sm_80+). Every kernel takes any shape, transposition and
// alpha/beta, and sums 16-bit elements in FP32.
//
// Tiled GEMM: 32 x 32 tiles of C per block of 32 x 8 threads; each thread
// computes four elements of one column of its tile, reading A and B through
// shared memory in 32-wide slices of k. Transposed operands are read through
// the index functions, so no copy is made.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_elem.cuh"
#include "backends/cuda/gemm.hpp"
#include "veda/error.hpp"
#include "veda/half.hpp"

namespace veda::detail::cuda {
namespace {
constexpr int kTile = 32, kRows = 8;

template <class T>
__device__ Acc<T> load_a(const GemmShape& s, const T* a, std::size_t i, std::size_t p) {
  if (i >= s.m || p >= s.k) return Acc<T>(0);
  return static_cast<Acc<T>>(s.trans_a ? a[p * s.m + i] : a[i * s.k + p]);
}
template <class T>
__device__ Acc<T> load_b(const GemmShape& s, const T* b, std::size_t p, std::size_t j) {
  if (p >= s.k || j >= s.n) return Acc<T>(0);
  return static_cast<Acc<T>>(s.trans_b ? b[j * s.k + p] : b[p * s.n + j]);
}

// C's element (i, j) from its dot product: beta 0 never reads C.
template <class T>
__device__ void store_c(const GemmShape& s, T* c, std::size_t i, std::size_t j, Acc<T> acc) {
  using A = Acc<T>;
  T& out = c[i * s.n + j];
  out = static_cast<T>(s.beta == 0 ? A(s.alpha) * acc : A(s.alpha) * acc + A(s.beta) * static_cast<A>(out));
}

// Row tile of a block whose grid's z * y walks row tiles (y alone is
// limited to 65535).
__device__ std::size_t row_tile() { return static_cast<std::size_t>(blockIdx.z) * gridDim.y + blockIdx.y; }

template <class T>
__global__ void naive_gemm(GemmShape s, const T* a, const T* b, T* c) {
  const std::size_t i = row_tile() * blockDim.y + threadIdx.y, j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= s.m || j >= s.n) return;
  Acc<T> acc = 0;
  for (std::size_t p = 0; p < s.k; ++p) acc += load_a(s, a, i, p) * load_b(s, b, p, j);
  store_c(s, c, i, j, acc);
}

// 64 x 64 tiles of C, k in slices of 16, 256 threads of 4 x 4 outputs.
// Vec (float, no transposition, k and n multiples of 4, 16-byte aligned):
// global and shared memory read as float4; else element by element.
constexpr int kVecTile = 64, kVecK = 16;
template <class T, bool Vec>
__global__ void __launch_bounds__(256) vectorized_gemm(GemmShape s, const T* a, const T* b, T* c) {
  using A = Acc<T>;
  __shared__ __align__(16) A as[kVecK][kVecTile];  // the A tile transposed: as[p][i]
  __shared__ __align__(16) A bs[kVecK][kVecTile];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const std::size_t row0 = row_tile() * kVecTile, col0 = blockIdx.x * std::size_t{kVecTile};
  if (row0 >= s.m) return;
  const int ar = tid / 4, ac = (tid % 4) * 4, br = tid / 16, bc = (tid % 16) * 4;  // what this thread loads
  A acc[4][4] = {};
  for (std::size_t p0 = 0; p0 < s.k; p0 += kVecK) {
    A av[4];
    if constexpr (Vec) {  // with k and n multiples of 4, four elements are all in bounds or none
      const std::size_t i = row0 + ar, pa = p0 + ac, pb = p0 + br, j = col0 + bc;
      const float4 z = make_float4(0, 0, 0, 0);
      const float4 x = i < s.m && pa < s.k ? *reinterpret_cast<const float4*>(a + i * s.k + pa) : z;
      const float4 y = pb < s.k && j < s.n ? *reinterpret_cast<const float4*>(b + pb * s.n + j) : z;
      av[0] = x.x, av[1] = x.y, av[2] = x.z, av[3] = x.w;
      *reinterpret_cast<float4*>(&bs[br][bc]) = y;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        av[q] = load_a(s, a, row0 + ar, p0 + ac + q);
        bs[br][bc + q] = load_b(s, b, p0 + br, col0 + bc + q);
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) as[ac + q][ar] = av[q];
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kVecK; ++p) {
      A x[4], y[4];
      if constexpr (Vec) {
        const float4 u = *reinterpret_cast<const float4*>(&as[p][ty * 4]), v = *reinterpret_cast<const float4*>(&bs[p][tx * 4]);
        x[0] = u.x, x[1] = u.y, x[2] = u.z, x[3] = u.w;
        y[0] = v.x, y[1] = v.y, y[2] = v.z, y[3] = v.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) x[q] = as[p][ty * 4 + q], y[q] = bs[p][tx * 4 + q];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += x[i] * y[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::size_t r = row0 + ty * 4 + i, col = col0 + tx * 4 + j;
      if (r < s.m && col < s.n) store_c(s, c, r, col, acc[i][j]);
    }
}

// 64 x 64 tiles of C over 4 warps (32 x 32 each: 2 x 2 WMMA fragments of
// 16 x 16 x 16), k in slices of 32 staged in shared memory as FP16 (__half
// elements) or BF16 (the rest, converted); the FP32 accumulators go through
// shared memory to C. Rows padded by 8 16-bit values / 4 floats: every
// fragment pointer stays 32-byte aligned and the staging avoids bank
// conflicts.
constexpr int kWmmaTile = 64, kWmmaK = 32;
template <class T>
__global__ void __launch_bounds__(128) wmma_gemm(GemmShape s, const T* a, const T* b, T* c) {
#if __CUDA_ARCH__ >= 800
  namespace w = nvcuda::wmma;
  using F = std::conditional_t<std::is_same_v<T, __half>, __half, __nv_bfloat16>;
  __shared__ __align__(32) F as[kWmmaTile][kWmmaK + 8];
  __shared__ __align__(32) F bs[kWmmaK][kWmmaTile + 8];
  __shared__ __align__(32) float cs[kWmmaTile][kWmmaTile + 4];
  const int tid = threadIdx.x, warp = tid / 32, wr = (warp / 2) * 32, wc = (warp % 2) * 32;
  const std::size_t row0 = row_tile() * kWmmaTile, col0 = blockIdx.x * std::size_t{kWmmaTile};
  if (row0 >= s.m) return;
  w::fragment<w::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) w::fill_fragment(acc[i][j], 0.0f);
  for (std::size_t p0 = 0; p0 < s.k; p0 += kWmmaK) {
    for (int e = tid; e < kWmmaTile * kWmmaK; e += 128) {
      const int r = e / kWmmaK, q = e % kWmmaK;
      as[r][q] = F(static_cast<float>(load_a(s, a, row0 + r, p0 + q)));  // 16-bit elements: exact
    }
    for (int e = tid; e < kWmmaK * kWmmaTile; e += 128) {
      const int r = e / kWmmaTile, q = e % kWmmaTile;
      bs[r][q] = F(static_cast<float>(load_b(s, b, p0 + r, col0 + q)));
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kWmmaK; kk += 16) {
      w::fragment<w::matrix_a, 16, 16, 16, F, w::row_major> fa[2];
      w::fragment<w::matrix_b, 16, 16, 16, F, w::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        w::load_matrix_sync(fa[i], &as[wr + 16 * i][kk], kWmmaK + 8);
        w::load_matrix_sync(fb[i], &bs[kk][wc + 16 * i], kWmmaTile + 8);
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) w::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      w::store_matrix_sync(&cs[wr + 16 * i][wc + 16 * j], acc[i][j], kWmmaTile + 4, w::mem_row_major);
  __syncthreads();
  for (int e = tid; e < kWmmaTile * kWmmaTile; e += 128) {
    const int r = e / kWmmaTile, q = e % kWmmaTile;
    if (row0 + r < s.m && col0 + q < s.n) store_c(s, c, row0 + r, col0 + q, static_cast<Acc<T>>(cs[r][q]));
  }
#else
  __trap();  // the host checks the compute capability first
#endif
}

template <class T>
__global__ void tiled_gemm(GemmShape s, const T* a, const T* b, T* c) {
  __shared__ Acc<T> as[kTile][kTile + 1];  // +1: no bank conflicts on the transposed reads
  __shared__ Acc<T> bs[kTile][kTile + 1];
  const std::size_t row0 = row_tile() * kTile;
  if (row0 >= s.m) return;  // the whole block: before any barrier
  const std::size_t col = static_cast<std::size_t>(blockIdx.x) * kTile + threadIdx.x;
  Acc<T> acc[kTile / kRows] = {};
  for (std::size_t p0 = 0; p0 < s.k; p0 += kTile) {
    for (int r = threadIdx.y; r < kTile; r += kRows) {
      as[r][threadIdx.x] = load_a(s, a, row0 + r, p0 + threadIdx.x);
      bs[r][threadIdx.x] = load_b(s, b, p0 + r, col);
    }
    __syncthreads();
#pragma unroll 8
    for (int p = 0; p < kTile; ++p) {
      const Acc<T> bv = bs[p][threadIdx.x];
#pragma unroll
      for (int q = 0; q < kTile / kRows; ++q) acc[q] += as[threadIdx.y + q * kRows][p] * bv;
    }
    __syncthreads();
  }
  if (col >= s.n) return;
#pragma unroll
  for (int q = 0; q < kTile / kRows; ++q) {
    const std::size_t row = row0 + threadIdx.y + q * kRows;
    if (row < s.m) store_c(s, c, row, col, acc[q]);
  }
}

// D: the device element type; 16-bit values are computed in FP32 (Acc).
template <class D>
__global__ void bias_act_kernel(D* c, std::size_t m, std::size_t n, const D* bias, Activation act) {
  using A = Acc<D>;
  const std::size_t total = m * n;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    A v = static_cast<A>(c[i]) + (bias ? static_cast<A>(bias[i % n]) : A(0));
    if (act == Activation::Relu) v = v > A(0) ? v : A(0);
    else if (act == Activation::Gelu) {
      const A t = A(0.7978845608028654) * (v + A(0.044715) * v * v * v);
      v = A(0.5) * v * (A(1) + tanh(t));
    }
    c[i] = static_cast<D>(v);
  }
}
// A grid of tile x tile blocks over C, row tiles over y and z (see row_tile).
dim3 tile_grid(const GemmShape& s, std::size_t tile) {
  const std::size_t row_tiles = (s.m + tile - 1) / tile, y = std::min<std::size_t>(row_tiles, 65535);
  return dim3(static_cast<unsigned>((s.n + tile - 1) / tile), static_cast<unsigned>(y),
              static_cast<unsigned>((row_tiles + y - 1) / y));
}
}  // namespace

template <class T>
void launch_tiled_gemm(const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream) {
  if (s.m == 0 || s.n == 0) return;
  tiled_gemm<<<tile_grid(s, kTile), dim3(kTile, kRows), 0, stream>>>(s, device_ptr(a), device_ptr(b), device_ptr(c));
}

bool vectorized_loads(const GemmShape& s, const void* a, const void* b, std::size_t elem_bytes) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return elem_bytes == sizeof(float) && !s.trans_a && !s.trans_b && s.k % 4 == 0 && s.n % 4 == 0 && aligned(a) &&
         aligned(b);
}

template <class T>
void launch_ladder_gemm(GemmTier tier, const GemmShape& s, const T* ha, const T* hb, T* hc, cudaStream_t stream) {
  if (s.m == 0 || s.n == 0) return;
  using D = typename DeviceElem<T>::type;
  const D *a = device_ptr(ha), *b = device_ptr(hb);
  D* c = device_ptr(hc);
  if (tier == GemmTier::Naive) {
    naive_gemm<D><<<tile_grid(s, 16), dim3(16, 16), 0, stream>>>(s, a, b, c);
  } else if (tier == GemmTier::Vectorized) {
    if constexpr (std::is_same_v<T, float>)
      if (vectorized_loads(s, a, b, sizeof(T))) {
        vectorized_gemm<D, true><<<tile_grid(s, kVecTile), 256, 0, stream>>>(s, a, b, c);
        return;
      }
    vectorized_gemm<D, false><<<tile_grid(s, kVecTile), 256, 0, stream>>>(s, a, b, c);
  } else {
    // The device's compute capability was checked; the code loaded for it
    // must be sm_80+ too (a build for older architectures JITs the __trap).
    static const int ptx = [] {  // once per process: the loaded image does not change
      cudaFuncAttributes attr{};
      if (cudaFuncGetAttributes(&attr, wmma_gemm<D>) != cudaSuccess) (void)cudaGetLastError();  // no image: not sticky
      return attr.ptxVersion;
    }();
    if (ptx < 80)
      throw InvalidArgument("veda::matmul: tier gpu-wmma needs veda built for compute capability 8.0 or later "
                            "(CMAKE_CUDA_ARCHITECTURES)");
    wmma_gemm<D><<<tile_grid(s, kWmmaTile), 128, 0, stream>>>(s, a, b, c);
  }
}

template <class T>
void bias_activation(T* c, std::size_t m, std::size_t n, const T* bias, Activation act, cudaStream_t stream) {
  if (m * n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((m * n + 255) / 256, 65535);
  bias_act_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(device_ptr(c), m, n, device_ptr(bias), act);
}

template void launch_tiled_gemm<float>(const GemmShape&, const float*, const float*, float*, cudaStream_t);
template void launch_tiled_gemm<double>(const GemmShape&, const double*, const double*, double*, cudaStream_t);
template void launch_ladder_gemm<float>(GemmTier, const GemmShape&, const float*, const float*, float*, cudaStream_t);
template void launch_ladder_gemm<double>(GemmTier, const GemmShape&, const double*, const double*, double*,
                                         cudaStream_t);
template void launch_tiled_gemm<veda::half>(const GemmShape&, const veda::half*, const veda::half*, veda::half*,
                                            cudaStream_t);
template void launch_tiled_gemm<veda::bfloat16>(const GemmShape&, const veda::bfloat16*, const veda::bfloat16*,
                                                veda::bfloat16*, cudaStream_t);
template void launch_ladder_gemm<veda::half>(GemmTier, const GemmShape&, const veda::half*, const veda::half*,
                                             veda::half*, cudaStream_t);
template void launch_ladder_gemm<veda::bfloat16>(GemmTier, const GemmShape&, const veda::bfloat16*,
                                                 const veda::bfloat16*, veda::bfloat16*, cudaStream_t);
template void bias_activation<float>(float*, std::size_t, std::size_t, const float*, Activation, cudaStream_t);
template void bias_activation<double>(double*, std::size_t, std::size_t, const double*, Activation, cudaStream_t);
template void bias_activation<veda::half>(veda::half*, std::size_t, std::size_t, const veda::half*, Activation,
                                          cudaStream_t);
template void bias_activation<veda::bfloat16>(veda::bfloat16*, std::size_t, std::size_t, const veda::bfloat16*,
                                              Activation, cudaStream_t);

}  // namespace veda::detail::cuda
