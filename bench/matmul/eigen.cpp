// Eigen as its users write it: maps over the row-major buffers, one
// product, Eigen's own OpenMP threads (one per core veda uses).
#include <Eigen/Dense>

#include "bench/matmul/contenders.hpp"

namespace bench::matmul {

bool eigen_installed() { return true; }

template <class T>
void eigen_gemm(const T* a, const T* b, T* c, std::size_t n) {
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto N = static_cast<Eigen::Index>(n);
  Eigen::Map<const M> A(a, N, N), B(b, N, N);
  Eigen::Map<M> C(c, N, N);
  C.noalias() = A * B;
}
template void eigen_gemm<float>(const float*, const float*, float*, std::size_t);
template void eigen_gemm<double>(const double*, const double*, double*, std::size_t);

}  // namespace bench::matmul
