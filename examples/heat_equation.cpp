// heat_equation: 2-D heat diffusion on a 512 x 512 plate by 500 5-point Jacobi sweeps with
// veda::parallel_for. The plate's top edge is held at 1, the others at 0;
// each sweep reads one grid and writes the other, then the two swap (a move:
// no copy). Where a GPU is usable and wins, the grids stay on the device for
// every sweep: telemetry counts the bytes copied back, none until the host
// reads. The result must match a plain serial loop's.
#include <veda/veda.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "example_util.hpp"

namespace {
constexpr std::size_t kN = 512;  // grid points per side, edges included
constexpr int kSweeps = 500;

void sweep(const veda::Array<double>& u, veda::Array<double>& v) {
  veda::parallel_for(veda::Box<2>{{1, 1}, {kN - 1, kN - 1}}, veda::read(u), veda::write(v),
                     VEDA_LAMBDA((std::size_t i, std::size_t j, veda::View<const double> in, veda::View<double> out), {
                       out(i, j) = 0.25 * (in(i - 1, j) + in(i + 1, j) + in(i, j - 1) + in(i, j + 1));
                     }));
}

std::vector<double> plate() {
  std::vector<double> g(kN * kN, 0.0);
  for (std::size_t j = 0; j < kN; ++j) g[j] = 1.0;  // the hot edge
  return g;
}
}  // namespace

int main() {
  veda::init(veda::Config::builder().telemetry(true).build());
  veda::Array<double> u(kN, kN, plate()), v(kN, kN, plate());
  u.to_device();  // a hint (no-op without a GPU): the sweeps then find both grids there
  v.to_device();
  sweep(u, v);
  std::swap(u, v);
  veda::telemetry::reset();
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 1; s < kSweeps; ++s) {
    sweep(u, v);
    std::swap(u, v);
  }
  veda::synchronize();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  const auto during = veda::telemetry::snapshot();
  example::report("jacobi sweep", us / (kSweeps - 1));
  std::printf("bytes copied device-to-host during %d sweeps: %llu (grids on the device now: %s)\n", kSweeps - 1,
              static_cast<unsigned long long>(during.bytes_d2h), u.valid_on_device() ? "yes" : "no");

  // The same sweeps as a plain loop.
  std::vector<double> a = plate(), b = plate();
  for (int s = 0; s < kSweeps; ++s) {
    for (std::size_t i = 1; i + 1 < kN; ++i)
      for (std::size_t j = 1; j + 1 < kN; ++j)
        b[i * kN + j] = 0.25 * (a[(i - 1) * kN + j] + a[(i + 1) * kN + j] + a[i * kN + j - 1] + a[i * kN + j + 1]);
    std::swap(a, b);
  }
  const auto got = u.host();  // the only copy back
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(got[k] - a[k]));
  std::printf("after %d sweeps, down the middle column: row 1 %.4f, row 8 %.4f, row 32 %.4f; largest difference "
              "from a serial loop: %.3g\n",
              kSweeps, got[kN + kN / 2], got[8 * kN + kN / 2], got[32 * kN + kN / 2], worst);
  if (worst > 1e-12 || during.bytes_d2h != 0) {
    std::printf("FAILED\n");
    return 1;
  }
  veda::shutdown();
  return 0;
}
