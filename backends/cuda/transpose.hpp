// cuda transpose tier: 32 x 32 tiles staged through shared memory, so both
// the reads of `in` and the writes of `out` are coalesced.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace veda::detail::cuda {

// out (cols x rows) = in (rows x cols)^T, elements of elem (1, 2, 4, 8) bytes. Asynchronous on s.
void transpose_device(const void* in, void* out, std::size_t rows, std::size_t cols, std::size_t elem,
                      cudaStream_t s);

}  // namespace veda::detail::cuda
