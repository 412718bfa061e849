// moe_route's cuda tier (veda/moe_route.hpp) on device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/cuda_device.hpp"
#include "veda/detail/moe_shape.hpp"

namespace veda::detail::cuda {

// Every output of moe_route from logits [tokens, experts] on the device,
// asynchronously on `stream` (temporaries from dev's pool).
template <class T>
void moe_route(CudaDevice& dev, const MoeShape& s, const T* logits, std::int64_t* ids, T* gates,
               std::int64_t* counts, std::int64_t* offsets, std::int64_t* order, T* importance, cudaStream_t stream);

// moe_dispatch and moe_combine (backends/cpu/moe_route.hpp says what they
// compute) on the device, asynchronously on `stream`.
template <class T>
void moe_dispatch(const MoeShape& s, std::size_t d, const std::int64_t* order, const T* x, T* out, cudaStream_t stream);
template <class T>
void moe_combine(CudaDevice& dev, const MoeShape& s, std::size_t h, const std::int64_t* order, const T* gates,
                 const T* y, T* out, cudaStream_t stream);

}  // namespace veda::detail::cuda
