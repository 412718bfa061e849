// attention's GPU tiers (veda/attention.hpp) on device pointers of float,
// double, veda::half or veda::bfloat16 (summed in FP32), asynchronous on
// `s`; each launch is checked and counted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/attention_shape.hpp"
#include "veda/half.hpp"

namespace veda::detail::cuda {

// gpu-naive: the scores materialised in `scores` (naive_scores_bytes:
// batch * heads * q_len * kv_len of them, FP32 for 16-bit elements),
// softmax along each row, then the weighted sum of v.
std::size_t naive_scores_bytes(const AttentionShape& s, std::size_t elem_bytes);
template <class T>
void attention_naive(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, void* scores,
                     cudaStream_t stream);

// gpu-flash: 16 query rows a block against tiles of 32 keys in shared
// memory, an online softmax per row (a lane per key of the tile), nothing
// O(kv_len) stored; with tensor_cores (the device's compute capability is
// 8.0+), 16-bit elements, head_dim and dv multiples of 16 up to 128: the
// WMMA kernel, 64 rows a block. Runs when flash_fits(s, sizeof(T)).
bool flash_fits(const AttentionShape& s, std::size_t elem_bytes);
template <class T>
void attention_flash(const AttentionShape& s, const T* q, const T* k, const T* v, T* out, bool tensor_cores,
                     cudaStream_t stream);

}  // namespace veda::detail::cuda
