// attention's GPU tiers (veda/attention.hpp) on device pointers, float or
// double, asynchronous on `s`; each launch is checked and counted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/attention_shape.hpp"

namespace veda::detail::cuda {

// gpu-naive: the scores materialised in `scores` (batch * heads * q_len *
// kv_len elements), softmax along each row, then the weighted sum of v.
template <class T>
void attention_naive(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, T* scores,
                     cudaStream_t stream);

// gpu-flash: 16 query rows a block against tiles of 32 keys in shared
// memory, an online softmax per row (a lane per key of the tile), nothing
// O(kv_len) stored. Runs when flash_fits(s, sizeof(T)).
bool flash_fits(const AttentionShape& s, std::size_t elem_bytes);
template <class T>
void attention_flash(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, cudaStream_t stream);

}  // namespace veda::detail::cuda
