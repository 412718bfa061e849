// Device-wide sum/min/max with CUB for the element types veda's reductions
// support on the GPU. Two-phase cub::DeviceReduce: run-to-run deterministic
// on one GPU. min/max propagate NaN.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

class CudaDevice;

// Reduces n elements at device pointer `in`; writes the result (of the
// reduction's result type) to `host_result`. Synchronises `s`.
void reduce_builtin(ReduceKind kind, ScalarType type, const void* in, std::size_t n, void* host_result,
                    CudaDevice& dev, cudaStream_t s);

}  // namespace veda::detail::cuda
