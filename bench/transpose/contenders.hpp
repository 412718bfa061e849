// Contenders of the transpose case on n x n doubles, row-major: B = A^T and
// B += A^T, each written as its users write it (32 x 32 tiles, the textbook
// blocking), and veda::transpose (B += A^T with beta = 1).
#pragma once

#include <cstddef>
#include <vector>

namespace bench::transpose {

constexpr std::size_t kTile = 32;

void serial_tiled(const double* a, double* b, std::size_t n, bool accumulate);
void tbb_tiled(const double* a, double* b, std::size_t n, bool accumulate);
void veda_transpose(const std::vector<double>& a, std::vector<double>& b, std::size_t n);
void veda_accumulate(const std::vector<double>& a, std::vector<double>& b, std::size_t n);

// One tile: rows [i0, i1) x columns [j0, j1) of A into B.
inline void tile(const double* a, double* b, std::size_t n, std::size_t i0, std::size_t i1, std::size_t j0,
                 std::size_t j1, bool accumulate) {
  for (std::size_t i = i0; i < i1; ++i)
    for (std::size_t j = j0; j < j1; ++j) b[j * n + i] = accumulate ? b[j * n + i] + a[i * n + j] : a[i * n + j];
}

}  // namespace bench::transpose
