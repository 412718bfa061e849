// CPU GEMM tiers: cpu-reference (naive, double accumulation: the tests'
// oracle), cpu-tiled (cache-blocked, oneTBB-parallel, no BLAS), cpu-blas
// (CBLAS from OpenBLAS), and the bias + activation epilogue of linear().
#pragma once

#include "backends/cpu/blas.hpp"
#include "backends/cpu/cpu_executor.hpp"
#include "veda/detail/gemm_shape.hpp"

namespace veda::detail::cpu {

template <class T>
void gemm_reference(const GemmShape& s, const T* a, const T* b, T* c);
template <class T>
void gemm_tiled(CpuExecutor& ex, const GemmShape& s, const T* a, const T* b, T* c);
// Returns false if no BLAS is available or a dimension exceeds CBLAS's int.
template <class T>
bool gemm_blas(const Blas& blas, int threads, const GemmShape& s, const T* a, const T* b, T* c);
// c[i][j] = act(c[i][j] + bias[j]) over an m x n row-major matrix.
template <class T>
void bias_activation(CpuExecutor& ex, T* c, std::size_t m, std::size_t n, const T* bias, Activation act);

}  // namespace veda::detail::cpu
