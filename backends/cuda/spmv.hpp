// The spmv tiers on the device: veda's CSR kernel (cuda) and cuSPARSE
// (gpu-cusparse). Operands are device pointers; both are asynchronous on s.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace veda::detail::cuda {

template <class T>
struct CsrOnDevice {
  std::size_t rows = 0, cols = 0, nnz = 0;
  const std::int32_t* offsets = nullptr;  // rows + 1
  const std::int32_t* indices = nullptr;  // nnz
  const T* values = nullptr;              // nnz
};

// y = alpha A x + beta y (beta 0: y is not read). A group of 2-32 lanes per
// row, sized by the mean row length, its partial sums combined by shuffles.
template <class T>
void spmv_kernel(const CsrOnDevice<T>& a, const T* x, T* y, T alpha, T beta, cudaStream_t s);

// The same by cusparseSpMV; `scratch(bytes)` gives device memory that lives
// until the work queued on s has run. `deterministic`: CSR algorithm 2,
// which cuSPARSE documents as giving the same bits run to run.
template <class T>
void spmv_cusparse(const CsrOnDevice<T>& a, const T* x, T* y, T alpha, T beta, bool deterministic, cudaStream_t s,
                   const std::function<void*(std::size_t)>& scratch);

}  // namespace veda::detail::cuda
