// The hand-written CUDA kernel a user would write: 32 x 8 threads, one
// point each, the grid resident on the device (copies are not timed).
#include <cuda_runtime.h>

#include "bench/stencil/contenders.hpp"

namespace bench::stencil {
namespace {
double *g_u = nullptr, *g_v = nullptr;
std::size_t g_n = 0;

__global__ void jacobi(const double* __restrict__ u, double* __restrict__ v, std::size_t n) {
  const std::size_t j = 1 + blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const std::size_t i = 1 + blockIdx.y * std::size_t{blockDim.y} + threadIdx.y;
  if (i < n - 1 && j < n - 1)
    v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}
}  // namespace

bool cuda_setup(const std::vector<double>& u, std::size_t n) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return false;
  cudaFree(g_u);
  cudaFree(g_v);
  const std::size_t bytes = n * n * sizeof(double);
  if (cudaMalloc(&g_u, bytes) != cudaSuccess || cudaMalloc(&g_v, bytes) != cudaSuccess) return false;
  cudaMemcpy(g_u, u.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemset(g_v, 0, bytes);
  g_n = n;
  return true;
}

void cuda_sweep() {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((g_n - 2 + 31) / 32), static_cast<unsigned>((g_n - 2 + 7) / 8));
  jacobi<<<grid, block>>>(g_u, g_v, g_n);
  cudaDeviceSynchronize();
}

std::vector<double> cuda_result() {
  std::vector<double> v(g_n * g_n);
  cudaMemcpy(v.data(), g_v, v.size() * sizeof(double), cudaMemcpyDeviceToHost);
  return v;
}

}  // namespace bench::stencil
