// mpi_heat: the heat_equation example's plate, split by rows over MPI ranks.
// Each sweep swaps one halo row with each neighbour (veda::mpi::exchange_halo)
// and runs the 5-point Jacobi stencil on the rank's own rows with
// veda::parallel_for, placed per call on that rank's CPU or GPU. Rank 0
// then checks the gathered plate against a plain serial loop.
//
//   mpirun -np 4 ./mpi_heat [N [sweeps]]     (default 512 x 512, 500 sweeps)
#include <veda/mpi.hpp>
#include <veda/veda.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

std::vector<double> plate(std::size_t n) {
  std::vector<double> g(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) g[j] = 1.0;  // the hot top edge; the other edges stay 0
  return g;
}

// One sweep of u's rows into v's; global edge rows and columns are held.
void sweep(const veda::mpi::DistArray<double>& u, veda::mpi::DistArray<double>& v) {
  const std::size_t n = u.cols(), rows = u.local_rows();
  const auto h = veda::mpi::exchange_halo(u, 1);
  if (rows == 0) return;
  const std::size_t lo = u.row_offset() == 0 ? 1 : 0;
  const std::size_t hi = u.row_offset() + rows == u.rows() ? rows - 1 : rows;
  if (hi <= lo) return;
  veda::parallel_for(veda::Box<2>{{lo, 1}, {hi, n - 1}}, veda::read(h.above), veda::read(u.local()),
                     veda::read(h.below), veda::write(v.local()),
                     VEDA_LAMBDA((std::size_t i, std::size_t j, veda::View<const double> above,
                                  veda::View<const double> in, veda::View<const double> below,
                                  veda::View<double> out),
                                 {
                                   const double up = i == 0 ? above(0, j) : in(i - 1, j);
                                   const double down = i + 1 == rows ? below(0, j) : in(i + 1, j);
                                   out(i, j) = 0.25 * (up + down + in(i, j - 1) + in(i, j + 1));
                                 }));
}

}  // namespace

int main(int argc, char** argv) {
  veda::mpi::Environment env(argc, argv);
  veda::mpi::Comm world;
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  const int sweeps = argc > 2 ? std::atoi(argv[2]) : 500;
  if (n < 3 || n < 2 * static_cast<std::size_t>(world.size()) || sweeps < 1) {
    if (world.rank() == 0) std::fprintf(stderr, "usage: mpi_heat [N >= max(3, 2 * ranks) [sweeps >= 1]]\n");
    return 2;
  }
  const std::vector<double> start = plate(n);
  auto u = veda::mpi::DistArray<double>::scatter(world, start, n);
  auto v = veda::mpi::DistArray<double>::scatter(world, start, n);

  world.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < sweeps; ++s) {
    sweep(u, v);
    std::swap(u, v);
  }
  veda::synchronize();
  world.barrier();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  const double heat = veda::mpi::par_iter(u).sum();
  const veda::Decision d = veda::last_decision();
  const std::vector<double> got = u.gather();
  if (world.rank() != 0) return 0;

  std::vector<double> a = start, b = start;
  for (int s = 0; s < sweeps; ++s) {
    for (std::size_t i = 1; i + 1 < n; ++i)
      for (std::size_t j = 1; j + 1 < n; ++j)
        b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
    std::swap(a, b);
  }
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(got[k] - a[k]));
  std::printf("%d ranks, %zu x %zu plate, %d sweeps: %.1f us per sweep (halo exchange + stencil)\n", world.size(), n, n,
              sweeps, us / sweeps);
  std::printf("rank 0's last call: %s on %s/%s (%s)\n", d.name.c_str(), veda::to_string(d.device).c_str(),
              d.tier.c_str(), d.reason.c_str());
  std::printf("total heat %.6f; largest difference from a serial loop: %.3g\n", heat, worst);
  if (worst > 1e-12) {
    std::printf("FAILED\n");
    return 1;
  }
  return 0;
}
