// GPU GEMM tiers on device pointers: gpu-tiled (veda's shared-memory
// kernel), gpu-cublas, gpu-cublas-tf32 (tensor cores, FP32 only), the
// bias + activation epilogue kernel, and linear() fused into one cuBLASLt
// call (bias and activation as its epilogue; FP32 only).
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_device.hpp"
#include "veda/detail/gemm_shape.hpp"

namespace veda::detail::cuda {

enum class GemmTier { Tiled, Cublas, CublasTf32, CublasBf16 };

template <class T>
void gemm(CudaDevice& dev, GemmTier tier, const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream);

// c[i][j] = act(c[i][j] + bias[j]) on the device.
template <class T>
void bias_activation(T* c, std::size_t m, std::size_t n, const T* bias, Activation act, cudaStream_t stream);

// y (m x n) = act(x (m x k) * w^T (w: n x k) + bias) in one cuBLASLt call.
void linear_fused(CudaDevice& dev, std::size_t m, std::size_t n, std::size_t k, const float* x, const float* w,
                  const float* bias, float* y, Activation act, bool tf32, cudaStream_t stream);

// Kernel launchers (gemm_kernels.cu).
template <class T>
void launch_tiled_gemm(const GemmShape& s, const T* a, const T* b, T* c, cudaStream_t stream);

}  // namespace veda::detail::cuda
