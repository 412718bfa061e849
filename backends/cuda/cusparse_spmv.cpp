// gpu-cusparse: spmv through cusparseSpMV, 32-bit CSR.
#include <cusparse.h>

#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/handle_pool.hpp"
#include "backends/cuda/spmv.hpp"
#include "runtime/launch_count.hpp"

namespace veda::detail::cuda {
namespace {

void check_sparse(cusparseStatus_t st, const char* what) {
  if (st != CUSPARSE_STATUS_SUCCESS)
    throw DeviceError(std::string(what) + " failed (cuSPARSE: " + cusparseGetErrorString(st) + ")");
}

auto& sparse_pool() {
  static auto* p = new HandlePool<cusparseHandle_t, cusparseStatus_t>(cusparseCreate, "cuSPARSE");
  return *p;
}

// Descriptors are host objects: destroying them is always safe.
template <class D, class Destroy>
auto guard(D d, Destroy destroy) {
  return std::unique_ptr<std::remove_pointer_t<D>, Destroy>(d, destroy);
}

}  // namespace

template <class T>
void spmv_cusparse(const CsrOnDevice<T>& a, const T* x, T* y, T alpha, T beta, bool deterministic, cudaStream_t s,
                   const std::function<void*(std::size_t)>& scratch) {
  if (a.rows == 0) return;
  constexpr cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
  Lease lease(sparse_pool());
  check_sparse(cusparseSetStream(lease.h, s), "cusparseSetStream");
  cusparseConstSpMatDescr_t ma = nullptr;
  check_sparse(cusparseCreateConstCsr(&ma, static_cast<std::int64_t>(a.rows), static_cast<std::int64_t>(a.cols),
                                      static_cast<std::int64_t>(a.nnz), a.offsets, a.indices, a.values,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
               "cusparseCreateConstCsr");
  const auto ga = guard(ma, cusparseDestroySpMat);
  cusparseConstDnVecDescr_t vx = nullptr;
  check_sparse(cusparseCreateConstDnVec(&vx, static_cast<std::int64_t>(a.cols), x, type), "cusparseCreateConstDnVec");
  const auto gx = guard(vx, cusparseDestroyDnVec);
  cusparseDnVecDescr_t vy = nullptr;
  check_sparse(cusparseCreateDnVec(&vy, static_cast<std::int64_t>(a.rows), y, type), "cusparseCreateDnVec");
  const auto gy = guard(vy, cusparseDestroyDnVec);
  const auto alg = deterministic ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_ALG_DEFAULT;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  std::size_t bytes = 0;
  check_sparse(cusparseSpMV_bufferSize(lease.h, op, &alpha, ma, vx, &beta, vy, type, alg, &bytes),
               "cusparseSpMV_bufferSize");
  check_sparse(cusparseSpMV(lease.h, op, &alpha, ma, vx, &beta, vy, type, alg, bytes ? scratch(bytes) : nullptr),
               "cusparseSpMV");
  count_launch();
}

template void spmv_cusparse<float>(const CsrOnDevice<float>&, const float*, float*, float, float, bool, cudaStream_t,
                                   const std::function<void*(std::size_t)>&);
template void spmv_cusparse<double>(const CsrOnDevice<double>&, const double*, double*, double, double, bool,
                                    cudaStream_t, const std::function<void*(std::size_t)>&);

}  // namespace veda::detail::cuda
