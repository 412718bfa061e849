// Contenders of the spmv case: y = A x for a CSR matrix of doubles (32-bit
// indices), each written as its users write it: a serial row loop, oneTBB
// over rows (auto partitioner), OpenMP over rows (dynamic chunks: rows
// differ in length), and veda::spmv_into (a tier forced, or auto).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench::spmv {

struct Csr {
  std::size_t rows = 0, cols = 0;
  std::vector<std::int32_t> off, idx;
  std::vector<double> val;
};

inline void rows(const Csr& a, const double* x, double* y, std::size_t r0, std::size_t r1) {
  for (std::size_t r = r0; r < r1; ++r) {
    double s = 0;
    for (std::int32_t k = a.off[r]; k < a.off[r + 1]; ++k) s += a.val[k] * x[a.idx[k]];
    y[r] = s;
  }
}

void serial(const Csr& a, const double* x, double* y);
void tbb(const Csr& a, const double* x, double* y);
void omp(const Csr& a, const double* x, double* y);

// veda: the matrix and vectors live in veda Arrays (set up once per matrix).
void veda_setup(const Csr& a, const std::vector<double>& x);
void veda_spmv(const std::string& tier);  // "" lets veda choose
std::vector<double> veda_result();
std::string veda_tier();
void veda_release();  // before veda::shutdown

}  // namespace bench::spmv
