// The GPU half of the machine profile: launch latency, host<->device
// bandwidth (pageable, pinned, staged), device bandwidth, the FP32 rate of an
// element-wise kernel and cuBLAS GEMM rates (FP32, TF32, FP16, FP64).
#pragma once

#include "backends/cuda/cuda_device.hpp"
#include "runtime/profile.hpp"

namespace veda::detail::cuda {

void calibrate_gpu(CudaDevice& dev, GpuProfile& gpu);

// Kernels used by calibration (calibration_kernels.cu).
void launch_empty(cudaStream_t s);
void launch_copy(const float* in, float* out, std::size_t n, cudaStream_t s);
void launch_fma(float* out, int sms, cudaStream_t s, double& flops);

}  // namespace veda::detail::cuda
