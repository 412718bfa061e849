// cuda tier of layer_norm (veda/layer_norm.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

// Each of n_rows rows of d elements of x (float or double) normalised into
// out; gamma and beta (d elements) may be null. Asynchronous on s.
void layer_norm_device(ScalarType type, const void* x, const void* gamma, const void* beta, void* out,
                       std::size_t n_rows, std::size_t d, double eps, cudaStream_t s);

}  // namespace veda::detail::cuda
