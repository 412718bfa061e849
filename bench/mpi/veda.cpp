// The mpi case with veda::mpi.
#include "veda/mpi.hpp"

#include "bench/mpi/contenders.hpp"

namespace bench::mpi {

double veda_sum_squares(const veda::mpi::DistArray<double>& x) {
  return veda::mpi::par_iter(x).map([](double v) { return v * v; }).sum();
}
veda::mpi::DistArray<double> veda_matmul(const veda::mpi::DistArray<double>& a, const veda::mpi::DistArray<double>& b) {
  return veda::mpi::matmul(a, b);
}
void veda_sort(veda::mpi::DistArray<float>& keys) { veda::mpi::sort(keys); }

}  // namespace bench::mpi
