// cuda tier of softmax and log_softmax (veda/softmax.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

// out = softmax (log_softmax when `log`) of in, viewed as [outer, len,
// inner], along the middle axis; float or double. Asynchronous on s.
void softmax_device(ScalarType type, const void* in, void* out, std::size_t outer, std::size_t len,
                    std::size_t inner, bool log, cudaStream_t s);

}  // namespace veda::detail::cuda
