// linear_backward's kernels: grid-stride element loops, and column sums in
// two fixed-order passes (a block sums a tile of 32 columns over a run of
// rows; then one thread a column adds the runs in turn), so a bias gradient
// is the same bits run to run.
#include "backends/cuda/linear_backward.hpp"

#include <algorithm>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_elem.cuh"

namespace veda::detail::cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kCols = 32, kRowThreads = 8;  // column-sum blocks: 32 columns x 8 rows of threads
constexpr std::size_t kMinRun = 64;               // rows a block sums at least
constexpr std::size_t kTargetBlocks = 1024;       // enough to fill an H100's SMs several times

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 65535)); }

// The derivative of activate() (veda/detail/gemm_shape.hpp); ReLU's is 0 at
// 0. T is the compute type (Acc: FP32 for 16-bit elements).
template <class T>
__device__ T derivative(T z, Activation act) {
  if (act == Activation::Relu) return z > T(0) ? T(1) : T(0);
  if (act == Activation::Gelu) {
    const T c = T(0.7978845608028654), a = T(0.044715);
    const T t = tanh(c * (z + a * z * z * z));
    return T(0.5) * (T(1) + t) + T(0.5) * z * (T(1) - t * t) * c * (T(1) + T(3) * a * z * z);
  }
  return T(1);
}

// D: the device element type.
template <class D>
__global__ void activation_grad_kernel(D* out, const D* g, const D* z, std::size_t count, Activation act) {
  using A = Acc<D>;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<D>(static_cast<A>(g[i]) * derivative(static_cast<A>(z[i]), act));
}

// Rows per block (run) and runs for a rows x cols matrix: runs of at least
// kMinRun rows, about kTargetBlocks blocks in all.
struct Runs {
  std::size_t count, rows;
};
Runs runs_for(std::size_t rows, std::size_t cols) {
  const std::size_t tiles = (cols + kCols - 1) / kCols;
  const std::size_t want = std::max<std::size_t>(1, kTargetBlocks / tiles);
  const std::size_t count = std::clamp<std::size_t>((rows + kMinRun - 1) / kMinRun, 1, std::min<std::size_t>(want, 65535));
  return {count, (rows + count - 1) / count};
}

// Block (tile, run): partial[run][col] (or out[col] when one run) = the sum of
// its rows of each of its 32 columns.
template <class D>
__global__ void column_partials(const D* a, std::size_t rows, std::size_t cols, std::size_t run_rows, double* partial,
                                D* out) {
  using A = Acc<D>;  // 16-bit: through float (CUDA's types convert to float, not double)
  __shared__ double acc[kRowThreads][kCols];
  const std::size_t col = blockIdx.x * std::size_t{kCols} + threadIdx.x;
  const std::size_t r0 = blockIdx.y * run_rows, r1 = std::min(rows, r0 + run_rows);
  double s = 0;
  if (col < cols)
    for (std::size_t r = r0 + threadIdx.y; r < r1; r += kRowThreads) s += static_cast<double>(static_cast<A>(a[r * cols + col]));
  acc[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || col >= cols) return;
  double t = 0;
  for (unsigned y = 0; y < kRowThreads; ++y) t += acc[y][threadIdx.x];
  if (partial) partial[blockIdx.y * cols + col] = t;
  else out[col] = static_cast<D>(static_cast<A>(t));
}

template <class D>
__global__ void add_runs(const double* partial, std::size_t runs, std::size_t cols, D* out) {
  for (std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; c < cols;
       c += std::size_t{gridDim.x} * blockDim.x) {
    double t = 0;
    for (std::size_t r = 0; r < runs; ++r) t += partial[r * cols + c];
    out[c] = static_cast<D>(static_cast<Acc<D>>(t));
  }
}

// A lane per bit, a warp per word (__ballot_sync: lane b is bit b). The
// bit count is a multiple of the block size's warps, so every warp runs
// whole iterations together.
__global__ void relu_mask_kernel(const float* z, std::size_t m, std::size_t k, std::size_t ld, std::uint32_t* bits) {
  const std::size_t total = m * ld;
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e - threadIdx.x % 32 < total;
       e += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t i = e / ld, j = e % ld;
    const bool on = e < total && j < k && z[i * k + j] > 0.0f;
    const std::uint32_t word = __ballot_sync(0xffffffffu, on);
    if (threadIdx.x % 32 == 0) bits[e / 32] = word;
  }
}

}  // namespace

template <class T>
void activation_grad(T* out, const T* g, const T* z, std::size_t count, Activation act, cudaStream_t s) {
  if (count == 0) return;
  activation_grad_kernel<<<blocks_for(count), kThreads, 0, s>>>(device_ptr(out), device_ptr(g), device_ptr(z), count,
                                                                 act);
  launched("activation gradient kernel launch");
}

std::size_t column_sums_scratch(std::size_t rows, std::size_t cols) {
  if (cols == 0) return 0;
  const Runs r = runs_for(rows, cols);
  return r.count > 1 ? r.count * cols * sizeof(double) : 0;
}

template <class T>
void column_sums(const T* a, std::size_t rows, std::size_t cols, T* sums, void* scratch, cudaStream_t s) {
  if (cols == 0) return;
  const Runs r = runs_for(rows, cols);
  double* partial = r.count > 1 ? static_cast<double*>(scratch) : nullptr;
  const dim3 grid(static_cast<unsigned>((cols + kCols - 1) / kCols), static_cast<unsigned>(r.count));
  column_partials<<<grid, dim3(kCols, kRowThreads), 0, s>>>(device_ptr(a), rows, cols, r.rows, partial,
                                                             device_ptr(sums));
  launched("column sum kernel launch");
  if (!partial) return;
  add_runs<<<blocks_for(cols), kThreads, 0, s>>>(partial, r.count, cols, device_ptr(sums));
  launched("column sum kernel launch");
}

std::size_t relu_mask_ld(std::size_t k) { return (k + 127) / 128 * 128; }

void relu_mask(const float* z, std::size_t m, std::size_t k, std::uint32_t* bits, cudaStream_t s) {
  const std::size_t ld = relu_mask_ld(k);
  if (m * ld == 0) return;
  relu_mask_kernel<<<blocks_for(m * ld), kThreads, 0, s>>>(z, m, k, ld, bits);
  launched("ReLU mask kernel launch");
}

template void activation_grad<float>(float*, const float*, const float*, std::size_t, Activation, cudaStream_t);
template void activation_grad<double>(double*, const double*, const double*, std::size_t, Activation, cudaStream_t);
template void column_sums<float>(const float*, std::size_t, std::size_t, float*, void*, cudaStream_t);
template void column_sums<double>(const double*, std::size_t, std::size_t, double*, void*, cudaStream_t);
#define VEDA_LINEAR_BACKWARD_16(T)                                                                              \
  template void activation_grad<T>(T*, const T*, const T*, std::size_t, Activation, cudaStream_t);              \
  template void column_sums<T>(const T*, std::size_t, std::size_t, T*, void*, cudaStream_t);
VEDA_LINEAR_BACKWARD_16(veda::half)
VEDA_LINEAR_BACKWARD_16(veda::bfloat16)
#undef VEDA_LINEAR_BACKWARD_16

}  // namespace veda::detail::cuda
