#include <algorithm>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/random.hpp"
#include "veda/detail/philox.hpp"

namespace veda::detail::cuda {
namespace {
constexpr int kBlock = 256;

template <class T, bool Normal>
__global__ void fill(T* __restrict__ out, std::size_t n, std::size_t nblocks, std::uint64_t seed, T p0, T p1) {
  constexpr int per = rng::Traits<T>::kPerBlock;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < nblocks; b += stride) {
    T v[per];
    rng::block_values<T, Normal>(seed, b, p0, p1, v);
    const std::size_t i0 = b * per;
#pragma unroll
    for (int j = 0; j < per; ++j)
      if (i0 + j < n) out[i0 + j] = v[j];
  }
}

template <class T>
void launch(T* out, std::size_t n, bool normal, std::uint64_t seed, T p0, T p1, cudaStream_t s) {
  constexpr std::size_t per = rng::Traits<T>::kPerBlock;
  const std::size_t nblocks = n / per + (n % per != 0);
  const auto grid = static_cast<unsigned>(std::min<std::size_t>((nblocks + kBlock - 1) / kBlock, std::size_t{1} << 16));
  if (normal) fill<T, true><<<grid, kBlock, 0, s>>>(out, n, nblocks, seed, p0, p1);
  else fill<T, false><<<grid, kBlock, 0, s>>>(out, n, nblocks, seed, p0, p1);
  launched("veda::random kernel launch");
}
}  // namespace

void random_fill_device(void* out, std::size_t n, std::size_t elem, bool normal, std::uint64_t seed, double p0,
                        double p1, cudaStream_t s) {
  if (n == 0) return;
  if (elem == 4)
    launch(static_cast<float*>(out), n, normal, seed, static_cast<float>(p0), static_cast<float>(p1), s);
  else
    launch(static_cast<double*>(out), n, normal, seed, p0, p1, s);
}

}  // namespace veda::detail::cuda
