// OpenBLAS called as its users call it: cblas_sgemm/dgemm, row-major.
#include <cblas.h>

#include "bench/matmul/contenders.hpp"

extern "C" char* openblas_get_corename();

namespace bench::matmul {

template <>
void openblas_gemm<float>(const float* a, const float* b, float* c, std::size_t n) {
  const int N = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
}
template <>
void openblas_gemm<double>(const double* a, const double* b, double* c, std::size_t n) {
  const int N = static_cast<int>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
}

std::string openblas_core() { return openblas_get_corename(); }

}  // namespace bench::matmul
