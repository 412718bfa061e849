// Contenders of the mpi case. By hand: a oneTBB reduction of the local part
// and MPI_Allreduce; B gathered whole to every rank (MPI_Allgatherv) and
// OpenBLAS on the local rows of A. veda: veda::mpi::par_iter and
// veda::mpi::matmul (SUMMA), each rank's work placed by veda.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "veda/mpi/dist_array.hpp"

namespace bench::mpi {

double by_hand_sum_squares(MPI_Comm c, const std::vector<double>& local);
// a_rows: this rank's rows of A (rows x k); b_rows: its rows of B; b_counts:
// rows of B per rank. Returns this rank's rows of C (rows x n).
std::vector<double> by_hand_matmul(MPI_Comm c, const std::vector<double>& a_rows, std::size_t k,
                                   const std::vector<double>& b_rows, const std::vector<int>& b_counts, std::size_t n);

double veda_sum_squares(const veda::mpi::DistArray<double>& x);
veda::mpi::DistArray<double> veda_matmul(const veda::mpi::DistArray<double>& a, const veda::mpi::DistArray<double>& b);
void veda_sort(veda::mpi::DistArray<float>& keys);

}  // namespace bench::mpi
