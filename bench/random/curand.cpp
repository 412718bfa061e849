// cuRAND's host API as its users call it: a Philox generator, generation into
// device memory, then a copy to the host vector (what veda's host-range form
// does too).
#include <cuda_runtime_api.h>
#include <curand.h>

#include "bench/random/contenders.hpp"

namespace bench::random {
namespace {
curandGenerator_t g_gen = nullptr;
float* g_dev = nullptr;
}  // namespace

bool curand_setup(std::size_t n) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return false;
  if (cudaMalloc(&g_dev, (n + 1) * sizeof(float)) != cudaSuccess) return false;
  if (curandCreateGenerator(&g_gen, CURAND_RNG_PSEUDO_PHILOX4_32_10) != CURAND_STATUS_SUCCESS) {
    cudaFree(g_dev);
    g_dev = nullptr;
    return false;
  }
  return true;
}

void curand_fill(std::vector<float>& out, bool normal, std::uint64_t seed) {
  curandSetPseudoRandomGeneratorSeed(g_gen, seed);
  // curandGenerateNormal needs an even count.
  if (normal) curandGenerateNormal(g_gen, g_dev, out.size() + out.size() % 2, 0.0f, 1.0f);
  else curandGenerateUniform(g_gen, g_dev, out.size());
  cudaMemcpy(out.data(), g_dev, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
}

void curand_release() {
  if (g_gen) curandDestroyGenerator(g_gen);
  cudaFree(g_dev);
  g_gen = nullptr;
  g_dev = nullptr;
}

}  // namespace bench::random
