// veda's MemoryPool in steady state: every pair after the first is a hit.
#include "bench/memory_pool/contenders.hpp"
#include "runtime/memory_pool.hpp"
#include "veda/build_config.hpp"
#if VEDA_HAS_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_device.hpp"
#endif

namespace bench::memory_pool {
using namespace veda::detail;

namespace {
Stats run(Upstream& up, std::size_t bytes, int samples, StreamHandle s) {
  MemoryPool pool(up, {});
  auto pair = [&] { pool.deallocate(pool.allocate(bytes, s), s); };
  pair();  // the one miss
  return measure(pair, samples, calibrate_batch(pair));
}
}  // namespace

Stats veda_host(std::size_t bytes, int samples) {
  HostUpstream up;
  return run(up, bytes, samples, nullptr);
}

Stats veda_cuda(std::size_t bytes, int samples) {
#if VEDA_HAS_CUDA
  cuda::CudaUpstream up(0);
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  const Stats r = run(up, bytes, samples, s);
  cudaStreamDestroy(s);
  return r;
#else
  (void)bytes;
  (void)samples;
  return {};
#endif
}

}  // namespace bench::memory_pool
