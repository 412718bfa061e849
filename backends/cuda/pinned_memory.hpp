// Page-locked host memory through cudaHostAlloc; nullptr when unavailable.
#pragma once

#include <cstddef>

namespace veda::detail::cuda {

void* allocate_pinned(std::size_t bytes) noexcept;
void free_pinned(void* p) noexcept;

}  // namespace veda::detail::cuda
