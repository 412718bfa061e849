// Contenders of the matmul case: veda::matmul (each tier forced, and auto),
// OpenBLAS called directly (the same library veda loads), and on a GPU
// cuBLAS called directly on resident data.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "veda/array.hpp"

namespace bench::matmul {

// C = A B + beta C, n x n, row-major, through cblas_?gemm with every thread.
template <class T>
void openblas_gemm(const T* a, const T* b, T* c, std::size_t n, T beta = 0);
std::string openblas_core();  // openblas_get_corename()

// C = A B with Eigen (its OpenMP threads); eigen_installed() is false in a
// build made without Eigen's headers (a GPU host carrying only the bundle
// of scripts/bundle-deps.sh may lack them), where the column says so.
bool eigen_installed();
template <class T>
void eigen_gemm(const T* a, const T* b, T* c, std::size_t n);

// veda::matmul with `tier` forced ("" for auto).
template <class T>
void veda_matmul(const veda::Array<T>& a, const veda::Array<T>& b, const std::string& tier);
// C += A B: through matmul_into (beta 1), and as it had to be written
// without beta: the product into a scratch, then an element-wise add.
template <class T>
void veda_matmul_acc(const veda::Array<T>& a, const veda::Array<T>& b, veda::Array<T>& c);
template <class T>
void veda_matmul_scratch_add(const veda::Array<T>& a, const veda::Array<T>& b, veda::Array<T>& c);

// cuBLAS directly on device-resident n x n operands (null without a GPU).
class CublasDirect {
 public:
  virtual ~CublasDirect() = default;
  virtual void run(bool tf32) = 0;  // one GEMM, synchronised
};
std::unique_ptr<CublasDirect> make_cublas_direct(std::size_t n);

}  // namespace bench::matmul
