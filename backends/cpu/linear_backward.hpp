// linear_backward's element work on the CPU: the activation's gradient and
// column sums (bias gradients). `parallel` null: on the calling thread;
// otherwise among veda's oneTBB workers. Both split the work into pieces
// fixed by the shape, so every tier gives the same bits.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"
#include "veda/detail/gemm_shape.hpp"

namespace veda::detail::cpu {

// out[i] = g[i] * act'(z[i]) for i < count; out may be g.
template <class T>
void activation_grad(CpuExecutor* parallel, T* out, const T* g, const T* z, std::size_t count, Activation act);

// sums[j] = the sum of column j of a (rows x cols, row-major): blocks of rows
// summed in double, then the blocks in turn.
template <class T>
void column_sums(CpuExecutor* parallel, const T* a, std::size_t rows, std::size_t cols, T* sums);

}  // namespace veda::detail::cpu
