#include "backends/cuda/pinned_memory.hpp"

#include <cuda_runtime_api.h>

namespace veda::detail::cuda {

void* allocate_pinned(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

void free_pinned(void* p) noexcept {
  if (p) cudaFreeHost(p);
}

}  // namespace veda::detail::cuda
