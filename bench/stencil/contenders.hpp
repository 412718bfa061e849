// Contenders of the stencil case: one 5-point Jacobi sweep over the interior
// of an n x n grid of doubles, v = (u(i-1,j) + u(i+1,j) + u(i,j-1) + u(i,j+1)) / 4,
// each written as its users write it: a serial loop, oneTBB over 2-D
// blocks, OpenMP over rows, veda::parallel_for (a tier forced, or auto) and,
// on a GPU, a hand-written CUDA kernel on resident data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bench::stencil {

inline void rows(const double* u, double* v, std::size_t n, std::size_t i0, std::size_t i1, std::size_t j0,
                 std::size_t j1) {
  for (std::size_t i = i0; i < i1; ++i)
    for (std::size_t j = j0; j < j1; ++j)
      v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}

void serial(const double* u, double* v, std::size_t n);
void tbb(const double* u, double* v, std::size_t n);
void omp(const double* u, double* v, std::size_t n);

// veda: the grid lives in two veda::Arrays (set up once per size).
void veda_setup(const std::vector<double>& u, std::size_t n);
void veda_sweep(const std::string& tier);  // "" lets veda choose
std::vector<double> veda_result();          // v, read back
std::string veda_tier();                    // the tier of the last sweep
void veda_release();                        // before veda::shutdown

// The hand-written CUDA kernel; cuda_setup returns false without a usable GPU.
bool cuda_setup(const std::vector<double>& u, std::size_t n);
void cuda_sweep();  // waits for the kernel
std::vector<double> cuda_result();

}  // namespace bench::stencil
