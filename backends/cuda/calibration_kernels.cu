// Small kernels for calibration: empty (launch latency), copy (device
// bandwidth) and independent FMA chains (FP32 rate of element-wise code).
#include <cuda_runtime.h>

#include "backends/cuda/cuda_calibration.hpp"

namespace veda::detail::cuda {
namespace {
__global__ void empty_kernel() {}

__global__ void copy_kernel(const float4* in, float4* out, std::size_t n4) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n4;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[i];
}

constexpr int kFmaIters = 4096;
__global__ void fma_kernel(float* out) {
  float a = threadIdx.x * 1e-3f, b = a + 1.f, c = a + 2.f, d = a + 3.f;
  for (int i = 0; i < kFmaIters; ++i) {
    a = fmaf(a, 0.9999f, 1e-4f);
    b = fmaf(b, 0.9999f, 1e-4f);
    c = fmaf(c, 0.9999f, 1e-4f);
    d = fmaf(d, 0.9999f, 1e-4f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}
}  // namespace

void launch_empty(cudaStream_t s) { empty_kernel<<<1, 1, 0, s>>>(); }

void launch_copy(const float* in, float* out, std::size_t n, cudaStream_t s) {
  copy_kernel<<<1024, 256, 0, s>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n / 4);
}

void launch_fma(float* out, int sms, cudaStream_t s, double& flops) {
  const int blocks = sms * 16, threads = 256;
  fma_kernel<<<blocks, threads, 0, s>>>(out);
  flops = 2.0 * 4 * kFmaIters * static_cast<double>(blocks) * threads;
}

}  // namespace veda::detail::cuda
