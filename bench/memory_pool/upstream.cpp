// The upstream allocators called directly: what a program pays without a pool.
#include <cstdlib>

#include "bench/memory_pool/contenders.hpp"
#include "veda/build_config.hpp"
#include "veda/runtime.hpp"
#if VEDA_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace bench::memory_pool {

Stats upstream_host(std::size_t bytes, int samples) {
  auto pair = [&] {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    asm volatile("" : : "r"(p) : "memory");  // keep the allocation
    std::free(p);
  };
  return measure(pair, samples, calibrate_batch(pair));
}

bool gpu_available() { return veda::detect_gpu().usable; }

Stats upstream_cuda(std::size_t bytes, int samples) {
#if VEDA_HAS_CUDA
  auto pair = [&] {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) == cudaSuccess) cudaFree(p);
  };
  return measure(pair, samples, calibrate_batch(pair));
#else
  (void)bytes;
  (void)samples;
  return {};
#endif
}

}  // namespace bench::memory_pool
