// GPU GEMM tiers on device pointers: gpu-tiled (veda's shared-memory
// kernel), gpu-cublas, gpu-cublas-tf32 (tensor cores, FP32 only), the
// bias + activation epilogue kernel, linear() fused into one cuBLASLt
// call (bias and activation as its epilogue; FP32 and 16-bit), and
// linear_backward's products with their cuBLASLt gradient epilogues.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "backends/cuda/cuda_device.hpp"
#include "veda/detail/gemm_shape.hpp"

namespace veda::detail::cuda {

// Naive, Vectorized and Wmma: the ladder's kernels (gemm_kernels.cu).
enum class GemmTier { Tiled, Cublas, CublasTf32, CublasBf16, Naive, Vectorized, Wmma };

template <class T>
void gemm(CudaDevice& dev, GemmTier tier, const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream);

// Group g's rows[g] rows of a (row-major, k columns; the groups one after
// another) times w's g-th k x n matrix, into the same rows of c (n
// columns). Tier Tiled or Cublas (one grouped-batched call on cuBLAS
// 12.5+, else a GEMM per group); groups of no rows are skipped.
template <class T>
void grouped_gemm(CudaDevice& dev, GemmTier tier, const std::vector<std::size_t>& rows, std::size_t k, std::size_t n,
                  const T* a, const T* w, T* c, cudaStream_t stream);

// c[i][j] = act(c[i][j] + bias[j]) on the device (16-bit: in FP32).
template <class T>
void bias_activation(T* c, std::size_t m, std::size_t n, const T* bias, Activation act, cudaStream_t stream);

// y (m x n) = act(x (m x k) * w^T (w: n x k) + bias) in one cuBLASLt call
// (float, half, bfloat16: FP32 sums and epilogue, y rounded once; TF32 for
// float only); false, having enqueued nothing, where cuBLASLt does not
// support it (as for the two below, whose callers then use cuBLAS and
// veda's kernels).
template <class T>
bool linear_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const T* x, const T* w, const T* bias,
                  T* y, Activation act, bool tf32, cudaStream_t stream);

// linear_backward's products, one cuBLASLt call each (FP32), for x (m x k),
// w (n x k) and dz (m x n, the gradient at the pre-activation):
// dw (n x k) = dz^T x, with dbias (n) = dz's column sums (BGRADB epilogue)
// unless dbias is null. False for an empty dimension, too.
bool weight_grad_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* x, const float* dz,
                       float* dw, float* dbias, bool tf32, cudaStream_t stream);
// dx (m x k) = (dz w) * input_act'(x's pre-activation), and dbias_in (k)
// its column sums: DRELU_BGRAD (aux: relu_mask's bits, aux_ld bits a row)
// or DGELU_BGRAD (aux: the pre-activation, m x k, aux_ld = k). False for
// an empty dimension or a null dbias_in, too.
bool input_grad_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* dz, const float* w,
                      Activation input_act, const void* aux, std::size_t aux_ld, float* dx, float* dbias_in,
                      bool tf32, cudaStream_t stream);

// Kernel launchers (gemm_kernels.cu).
template <class T>
void launch_tiled_gemm(const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream);
// One product by the Naive, Vectorized or Wmma kernel (Wmma: sm_80+).
template <class T>
void launch_ladder_gemm(GemmTier tier, const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream);
// Whether gpu-vectorized reads these operands as float4.
bool vectorized_loads(const GemmShape& s, const void* a, const void* b, std::size_t elem_bytes);

}  // namespace veda::detail::cuda
