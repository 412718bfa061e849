// linear_backward's kernels (veda/linear_backward.hpp): the activation's
// gradient, column sums without atomics (bias gradients), and the ReLU bit
// mask cuBLASLt's DRELU_BGRAD epilogue reads. Each launch is checked and
// counted; all are asynchronous on `s`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "veda/detail/gemm_shape.hpp"

namespace veda::detail::cuda {

// out[i] = g[i] * act'(z[i]) for i < count; out may be g.
template <class T>
void activation_grad(T* out, const T* g, const T* z, std::size_t count, Activation act, cudaStream_t s);

// sums[j] = the sum of column j of a (rows x cols, row-major), in an order
// fixed by the shape: blocks of rows summed in double, then the blocks in
// turn. `scratch` holds column_sums_scratch(rows, cols) bytes.
std::size_t column_sums_scratch(std::size_t rows, std::size_t cols);
template <class T>
void column_sums(const T* a, std::size_t rows, std::size_t cols, T* sums, void* scratch, cudaStream_t s);

// DRELU_BGRAD's aux for a pre-activation z (m x k, row-major): bit j of
// row i (bit i * relu_mask_ld(k) + j, 32-bit words, lowest bit first) set
// where z[i][j] > 0. The row pitch is k rounded up to 128 bits.
std::size_t relu_mask_ld(std::size_t k);
void relu_mask(const float* z, std::size_t m, std::size_t k, std::uint32_t* bits, cudaStream_t s);

}  // namespace veda::detail::cuda
