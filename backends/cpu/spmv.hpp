// CSR sparse matrix-vector product on the CPU: one row per index, each row
// summed in column-index order, so every thread count gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace veda::detail {
class CpuExecutor;
namespace cpu {

// y[r] = alpha * sum_k vals[k] * x[cols[k]] (+ beta * y[r] when beta != 0)
// for the rows of a CSR matrix. `parallel` null: on the calling thread;
// otherwise rows are split among the workers in blocks of about equal work
// (non-zeros plus rows), so a few long rows do not serialise the call.
template <class T>
void spmv(CpuExecutor* parallel, std::size_t rows, const std::int32_t* offsets, const std::int32_t* cols,
          const T* vals, const T* x, T* y, T alpha, T beta);

}  // namespace cpu
}  // namespace veda::detail
