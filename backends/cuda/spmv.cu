#include <algorithm>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/spmv.hpp"

namespace veda::detail::cuda {
namespace {
constexpr int kBlock = 256;

// L lanes per row; a warp holds 32 / L rows. Each group shuffles within its
// own lanes only, so groups of one warp may leave the row loop at different
// iterations.
template <class T, int L>
__global__ void csr_rows(std::size_t rows, const std::int32_t* __restrict__ offsets,
                         const std::int32_t* __restrict__ indices, const T* __restrict__ values,
                         const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t groups = static_cast<std::size_t>(gridDim.x) * blockDim.x / L;
  const int lane = threadIdx.x % L;
  const unsigned mask = L == 32 ? 0xffffffffu : ((1u << L) - 1) << (threadIdx.x % 32 / L * L);
  for (std::size_t r = thread / L; r < rows; r += groups) {
    T s = 0;
    for (std::int32_t k = offsets[r] + lane, e = offsets[r + 1]; k < e; k += L) s += values[k] * __ldg(x + indices[k]);
    for (int o = L / 2; o > 0; o /= 2) s += __shfl_down_sync(mask, s, o, L);
    if (lane == 0) y[r] = beta == T(0) ? alpha * s : alpha * s + beta * y[r];
  }
}

template <class T, int L>
void launch(const CsrOnDevice<T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  const std::size_t want = (a.rows * L + kBlock - 1) / kBlock;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(want, std::size_t{1} << 20));  // then grid-stride
  csr_rows<T, L><<<blocks, kBlock, 0, s>>>(a.rows, a.offsets, a.indices, a.values, x, y, alpha, beta);
}
}  // namespace

template <class T>
void spmv_kernel(const CsrOnDevice<T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s) {
  if (a.rows == 0) return;
  const std::size_t mean = a.nnz / a.rows;
  if (mean <= 2) launch<T, 2>(a, x, y, alpha, beta, s);
  else if (mean <= 4) launch<T, 4>(a, x, y, alpha, beta, s);
  else if (mean <= 8) launch<T, 8>(a, x, y, alpha, beta, s);
  else if (mean <= 16) launch<T, 16>(a, x, y, alpha, beta, s);
  else launch<T, 32>(a, x, y, alpha, beta, s);
  launched("veda::spmv kernel launch");
}

template void spmv_kernel<float>(const CsrOnDevice<float>&, const float*, float*, float, float, cudaStream_t);
template void spmv_kernel<double>(const CsrOnDevice<double>&, const double*, double*, double, double, cudaStream_t);

}  // namespace veda::detail::cuda
