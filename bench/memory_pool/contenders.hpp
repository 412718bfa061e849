// Contenders of the memory_pool case: one allocate+free pair of `bytes`,
// timed per pair (median of batches).
#pragma once

#include <cstddef>

#include "bench/common/bench.hpp"

namespace bench::memory_pool {

Stats upstream_host(std::size_t bytes, int samples);  // upstream.cpp: aligned_alloc/free
Stats veda_host(std::size_t bytes, int samples);      // veda.cpp: MemoryPool over HostUpstream
bool gpu_available();
Stats upstream_cuda(std::size_t bytes, int samples);  // upstream.cpp: cudaMalloc/cudaFree
Stats veda_cuda(std::size_t bytes, int samples);      // veda.cpp: MemoryPool over CudaUpstream

}  // namespace bench::memory_pool
