// The mpi case by hand: oneTBB + MPI_Allreduce; Allgatherv + OpenBLAS.
#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "bench/mpi/contenders.hpp"

namespace bench::mpi {

double by_hand_sum_squares(MPI_Comm c, const std::vector<double>& local) {
  const double mine = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, local.size()), 0.0,
      [&](const tbb::blocked_range<std::size_t>& r, double acc) {
        double s[4] = {0, 0, 0, 0};  // several accumulators, as veda folds lanes
        std::size_t i = r.begin();
        for (; i + 4 <= r.end(); i += 4)
          for (int l = 0; l < 4; ++l) s[l] += local[i + l] * local[i + l];
        for (; i < r.end(); ++i) s[0] += local[i] * local[i];
        return acc + ((s[0] + s[1]) + (s[2] + s[3]));
      },
      [](double a, double b) { return a + b; });
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, c);
  return all;
}

std::vector<double> by_hand_matmul(MPI_Comm c, const std::vector<double>& a_rows, std::size_t k,
                                   const std::vector<double>& b_rows, const std::vector<int>& b_counts, std::size_t n) {
  std::vector<int> counts, displs;
  int off = 0;
  for (int rows : b_counts) {
    counts.push_back(rows * static_cast<int>(n));
    displs.push_back(off);
    off += rows * static_cast<int>(n);
  }
  std::vector<double> b(k * n);
  MPI_Allgatherv(b_rows.data(), static_cast<int>(b_rows.size()), MPI_DOUBLE, b.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, c);
  const std::size_t m = k ? a_rows.size() / k : 0;
  std::vector<double> out(m * n);
  if (m && n && k)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a_rows.data(), static_cast<int>(k), b.data(), static_cast<int>(n), 0.0,
                out.data(), static_cast<int>(n));
  return out;
}

}  // namespace bench::mpi
