// attention's CPU tiers (veda/attention.hpp) on host pointers.
#pragma once

#include <cstddef>

#include "backends/cpu/blas.hpp"
#include "backends/cpu/cpu_executor.hpp"
#include "veda/detail/attention_shape.hpp"

namespace veda::detail::cpu {

// Each query row's scores in double, then the softmax and the weighted sum
// (the tests' oracle). On the calling thread.
template <class T>
void attention_reference(const AttentionShape& s, const T* q, const T* k, const T* v, T* out);

// Flash-style: query blocks against key blocks with an online softmax;
// `parallel` null: on the calling thread.
template <class T>
void attention_blocked(CpuExecutor* parallel, const AttentionShape& s, const T* q, const T* k, const T* v, T* out);

// cpu-blas: per (batch, head) and block of up to 256 query rows, the scores
// by one GEMM (OpenBLAS, `threads` threads), the softmax of each row among
// `parallel`'s workers, the weighted sum by a second GEMM. Returns false,
// having done nothing, without a BLAS or past CBLAS's int dimensions.
template <class T>
bool attention_blas(CpuExecutor* parallel, const Blas& blas, int threads, const AttentionShape& s, const T* q,
                    const T* k, const T* v, T* out);

}  // namespace veda::detail::cpu
