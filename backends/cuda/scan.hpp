// cuda scan tier: cub::DeviceScan on device pointers (in may equal out).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

class CudaDevice;

// init points to one element of `type` (exclusive scans only). Asynchronous on s.
void scan_device(CudaDevice& dev, ScalarType type, const void* in, void* out, std::size_t n, bool inclusive,
                 const void* init, cudaStream_t s);

}  // namespace veda::detail::cuda
