// cuda sort tier: cub::DeviceRadixSort (stable) on device pointers, sorted
// in place. Integer keys are sorted directly. Float keys are sorted as
// order-preserving unsigned images (-0.0 mapped to +0.0, every NaN to the
// far end) together with their positions, then keys and values are
// gathered, so the result is bit-for-bit the CPU's stable order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

class CudaDevice;

// values: null or n values of value_bytes (4 or 8). Asynchronous on s.
void sort_device(CudaDevice& dev, ScalarType key_type, void* keys, void* values, std::size_t value_bytes,
                 std::size_t n, bool descending, cudaStream_t s);

}  // namespace veda::detail::cuda
