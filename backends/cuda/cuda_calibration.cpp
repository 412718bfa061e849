#include "backends/cuda/cuda_calibration.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/pinned_memory.hpp"
#include "runtime/logging.hpp"

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

void sync(cudaStream_t s) { check(cudaStreamSynchronize(s), "cudaStreamSynchronize"); }

// Runs one section on a copy of the profile and keeps its figures only if
// the whole section succeeded: running out of device memory (a small
// memory_pool_limit) or a device error must not fail init, and the analytic
// defaults are a better guess than half a section.
template <class F>
void section(const char* what, GpuProfile& g, F&& measure) {
  GpuProfile trial = g;
  try {
    measure(trial);
    g = trial;
  } catch (const Error& e) {
    log().warn("GPU calibration: could not measure {} ({}); keeping the default figures", what, e.what());
  }
}

void launches(GpuProfile& g, cudaStream_t s) {
  auto once = [&] {
    launch_empty(s);
    check(cudaGetLastError(), "empty kernel launch");
    sync(s);
  };
  once();
  g.launch_us = median_us(once, 201);
}

void transfers(CudaDevice& dev, GpuProfile& g, cudaStream_t s) {
  constexpr std::size_t bytes = std::size_t{64} << 20;
  std::vector<char> pageable(bytes, 1);
  const std::unique_ptr<void, void (*)(void*)> pinned(allocate_pinned(bytes), [](void* p) { free_pinned(p); });
  PoolBlock d(dev.pool(), bytes, s);
  g.h2d_pageable_gbps = gbps(bytes, median_us([&] {
    check(cudaMemcpy(d.get(), pageable.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }, 3));
  g.d2h_pageable_gbps = gbps(bytes, median_us([&] {
    check(cudaMemcpy(pageable.data(), d.get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }, 3));
  g.h2d_staged_gbps =
      gbps(bytes, median_us([&] { dev.copy_to_device(d.get(), pageable.data(), bytes, s, false); sync(s); }, 3));
  g.d2h_staged_gbps = gbps(bytes, median_us([&] { dev.copy_to_host(pageable.data(), d.get(), bytes, s, false); }, 3));
  if (pinned) {
    void* h = pinned.get();
    g.h2d_pinned_gbps = gbps(bytes, median_us([&] { dev.copy_to_device(d.get(), h, bytes, s, true); sync(s); }, 3));
    g.d2h_pinned_gbps = gbps(bytes, median_us([&] { dev.copy_to_host(h, d.get(), bytes, s, true); }, 3));
  }
}

// Device bandwidth (a copy kernel) and the FP32 rate of an FMA kernel.
void kernels(CudaDevice& dev, GpuProfile& g, cudaStream_t s) {
  constexpr std::size_t n = std::size_t{64} << 20;  // 256 MiB per buffer
  PoolBlock in(dev.pool(), n * 4, s), out(dev.pool(), n * 4, s);
  auto copy = [&] {
    launch_copy(static_cast<float*>(in.get()), static_cast<float*>(out.get()), n, s);
    check(cudaGetLastError(), "copy kernel launch");
    sync(s);
  };
  copy();
  g.device_bw_gbps = gbps(2.0 * n * 4, median_us(copy, 5));
  double flops = 0;
  auto fmas = [&] {
    launch_fma(static_cast<float*>(out.get()), dev.info().sm_count, s, flops);
    check(cudaGetLastError(), "FMA kernel launch");
    sync(s);
  };
  fmas();
  const double fus = median_us(fmas, 5);
  g.fp32_gflops = flops / fus / 1e3;
}

// GFLOP/s of one cuBLAS call shape, median of three after a warm-up; none
// when any call failed (it would time as near zero: an absurd rate).
template <class Call>
std::optional<double> gemm_rate(int n, Call&& call, cudaStream_t s) {
  bool ok = true;
  auto once = [&] {
    if (call() != CUBLAS_STATUS_SUCCESS) ok = false;
    sync(s);
  };
  once();
  const double us = median_us(once, 3);
  if (!ok) return std::nullopt;
  return 2.0 * n * n * static_cast<double>(n) / us / 1e3;
}

void gemms(CudaDevice& dev, GpuProfile& g, cudaStream_t s) {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw DeviceError("cublasCreate failed");
  const std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(h, [](cublasHandle_t x) { cublasDestroy(x); });
  if (cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) throw DeviceError("cublasSetStream failed");
  const int n = 4096;
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  PoolBlock a(dev.pool(), elems * 8, s), b(dev.pool(), elems * 8, s), c(dev.pool(), elems * 8, s);
  check(cudaMemsetAsync(a.get(), 0, elems * 8, s), "cudaMemsetAsync");
  check(cudaMemsetAsync(b.get(), 0, elems * 8, s), "cudaMemsetAsync");
  const float one = 1, zero = 0;
  const double done = 1, dzero = 0;
  auto* A = static_cast<float*>(a.get());
  auto* B = static_cast<float*>(b.get());
  auto* C = static_cast<float*>(c.get());
  // Each rate in the math mode its gemm tier runs with (backends/cuda/gemm.cpp);
  // a failed call leaves that rate at its default.
  auto rate = [&](const char* what, cublasMath_t mode, double& field, auto&& call) {
    std::optional<double> r;
    if (cublasSetMathMode(h, mode) == CUBLAS_STATUS_SUCCESS) r = gemm_rate(n, call, s);
    if (r) field = *r;
    else log().warn("GPU calibration: {} failed; keeping the default rate", what);
  };
  rate("cublasSgemm", CUBLAS_DEFAULT_MATH, g.sgemm_gflops, [&] {
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
  });
  rate("cublasSgemm (TF32)", CUBLAS_TF32_TENSOR_OP_MATH, g.sgemm_tf32_gflops, [&] {
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
  });
  rate("cublasGemmEx (FP16)", CUBLAS_DEFAULT_MATH, g.hgemm_gflops, [&] {
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.get(), CUDA_R_16F, n, b.get(), CUDA_R_16F, n, &zero,
                        c.get(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  rate("cublasDgemm", CUBLAS_DEFAULT_MATH, g.dgemm_gflops, [&] {
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &done, static_cast<double*>(a.get()), n,
                       static_cast<double*>(b.get()), n, &dzero, static_cast<double*>(c.get()), n);
  });
}

}  // namespace

void calibrate_gpu(CudaDevice& dev, GpuProfile& g) {
  dev.make_current();
  auto s = static_cast<cudaStream_t>(dev.stream());
  g.present = true;
  g.name = dev.info().name;
  g.uuid = dev.info().uuid;
  section("kernel launch latency", g, [&](GpuProfile& t) { launches(t, s); });
  section("host/device transfers", g, [&](GpuProfile& t) { transfers(dev, t, s); });
  section("device bandwidth and FP32 rate", g, [&](GpuProfile& t) { kernels(dev, t, s); });
  section("cuBLAS GEMM rates", g, [&](GpuProfile& t) { gemms(dev, t, s); });
}

}  // namespace veda::detail::cuda
