#include "backends/cuda/cuda_calibration.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/pinned_memory.hpp"

namespace veda::detail::cuda {
namespace {

template <class F>
double median_us(F&& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double gbps(double bytes, double us) { return bytes / us / 1e3; }

// Device buffers for the duration of calibration.
struct DevBuf {
  MemoryPool& pool;
  cudaStream_t s;
  void* p;
  DevBuf(MemoryPool& pl, std::size_t bytes, cudaStream_t st) : pool(pl), s(st), p(pl.allocate(bytes, st)) {}
  ~DevBuf() { pool.deallocate(p, s); }
};

void transfers(CudaDevice& dev, GpuProfile& g, cudaStream_t s) {
  constexpr std::size_t bytes = std::size_t{64} << 20;
  std::vector<char> pageable(bytes, 1);
  void* pinned = allocate_pinned(bytes);
  DevBuf d(dev.pool(), bytes, s);
  auto sync = [&] { check(cudaStreamSynchronize(s), "cudaStreamSynchronize"); };
  g.h2d_pageable_gbps = gbps(bytes, median_us([&] { cudaMemcpy(d.p, pageable.data(), bytes, cudaMemcpyHostToDevice); }, 3));
  g.d2h_pageable_gbps = gbps(bytes, median_us([&] { cudaMemcpy(pageable.data(), d.p, bytes, cudaMemcpyDeviceToHost); }, 3));
  g.h2d_staged_gbps = gbps(bytes, median_us([&] { dev.copy_to_device(d.p, pageable.data(), bytes, s, false); sync(); }, 3));
  g.d2h_staged_gbps = gbps(bytes, median_us([&] { dev.copy_to_host(pageable.data(), d.p, bytes, s, false); }, 3));
  if (pinned) {
    g.h2d_pinned_gbps = gbps(bytes, median_us([&] { dev.copy_to_device(d.p, pinned, bytes, s, true); sync(); }, 3));
    g.d2h_pinned_gbps = gbps(bytes, median_us([&] { dev.copy_to_host(pinned, d.p, bytes, s, true); }, 3));
    free_pinned(pinned);
  }
}

// GFLOP/s of one cuBLAS call shape, median of three after a warm-up.
template <class Call>
double gemm_rate(int n, Call&& call, cudaStream_t s) {
  call();
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  const double us = median_us([&] { call(); check(cudaStreamSynchronize(s), "sync"); }, 3);
  return 2.0 * n * n * static_cast<double>(n) / us / 1e3;
}

void gemms(CudaDevice& dev, GpuProfile& g, cudaStream_t s) {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return;
  cublasSetStream(h, s);
  const int n = 4096;
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  try {
    DevBuf a(dev.pool(), elems * 8, s), b(dev.pool(), elems * 8, s), c(dev.pool(), elems * 8, s);
    cudaMemsetAsync(a.p, 0, elems * 8, s);
    cudaMemsetAsync(b.p, 0, elems * 8, s);
    const float one = 1, zero = 0;
    const double done = 1, dzero = 0;
    auto* A = static_cast<float*>(a.p);
    auto* B = static_cast<float*>(b.p);
    auto* C = static_cast<float*>(c.p);
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    g.sgemm_gflops = gemm_rate(n, [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n); }, s);
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    g.sgemm_tf32_gflops = gemm_rate(n, [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n); }, s);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    g.hgemm_gflops = gemm_rate(n, [&] {
      cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.p, CUDA_R_16F, n, b.p, CUDA_R_16F, n, &zero,
                   c.p, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }, s);
    g.dgemm_gflops = gemm_rate(n, [&] {
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &done, static_cast<double*>(a.p), n,
                  static_cast<double*>(b.p), n, &dzero, static_cast<double*>(c.p), n);
    }, s);
  } catch (const Error&) {  // too little memory for the 4096 shapes: keep estimates
  }
  cublasDestroy(h);
}

}  // namespace

void calibrate_gpu(CudaDevice& dev, GpuProfile& g) {
  dev.make_current();
  auto s = static_cast<cudaStream_t>(dev.stream());
  g.present = true;
  g.name = dev.info().name;
  g.uuid = dev.info().uuid;
  launch_empty(s);
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  g.launch_us = median_us([&] { launch_empty(s); cudaStreamSynchronize(s); }, 201);
  transfers(dev, g, s);
  {
    constexpr std::size_t n = std::size_t{64} << 20;  // 256 MiB per buffer
    DevBuf in(dev.pool(), n * 4, s), out(dev.pool(), n * 4, s);
    launch_copy(static_cast<float*>(in.p), static_cast<float*>(out.p), n, s);
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    const double us = median_us([&] {
      launch_copy(static_cast<float*>(in.p), static_cast<float*>(out.p), n, s);
      cudaStreamSynchronize(s);
    }, 5);
    g.device_bw_gbps = gbps(2.0 * n * 4, us);
    double flops = 0;
    launch_fma(static_cast<float*>(out.p), dev.info().sm_count, s, flops);
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    const double fus = median_us([&] {
      launch_fma(static_cast<float*>(out.p), dev.info().sm_count, s, flops);
      cudaStreamSynchronize(s);
    }, 5);
    g.fp32_gflops = flops / fus / 1e3;
  }
  gemms(dev, g, s);
}

}  // namespace veda::detail::cuda
