// cuda transpose tier: 32 x 32 tiles staged through shared memory, so both
// the reads of `in` and the writes of `out` are coalesced.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace veda::detail::cuda {

// out (cols x rows) = in (rows x cols)^T, elements of elem (1, 2, 4, 8)
// bytes; with alpha != 1 or beta != 0, out = alpha in^T + beta out over float
// (elem 4) or double (elem 8). Asynchronous on s.
void transpose_device(const void* in, void* out, std::size_t rows, std::size_t cols, std::size_t elem,
                      cudaStream_t s, double alpha = 1, double beta = 0);

}  // namespace veda::detail::cuda
