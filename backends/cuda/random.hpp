// veda::random's cuda tier: one thread per Philox block, grid-stride, the
// same per-block code (veda/detail/philox.hpp) as the CPU tiers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace veda::detail::cuda {

// out (device) [i] = element i of the (seed, T, distribution) stream for
// i < n, T float (elem 4) or double (elem 8). Asynchronous on s.
void random_fill_device(void* out, std::size_t n, std::size_t elem, bool normal, std::uint64_t seed, double p0,
                        double p1, cudaStream_t s);

}  // namespace veda::detail::cuda
