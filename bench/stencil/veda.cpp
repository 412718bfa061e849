// Compiled by nvcc in the CUDA configuration, so the cuda tier is offered;
// VEDA_LAMBDA keeps the CPU tiers' loop inlined there (docs/device-lambdas.md).
#include "bench/stencil/contenders.hpp"
#include "veda/parallel_for.hpp"

namespace bench::stencil {
namespace {
veda::Array<double> g_u, g_v;
std::size_t g_n = 0;
}  // namespace

void veda_setup(const std::vector<double>& u, std::size_t n) {
  g_u = veda::Array<double>(n, n, u);
  g_v = veda::Array<double>(n, n);
  g_n = n;
}

void veda_sweep(const std::string& tier) {
  veda::ParallelOptions o;
  o.tier = tier;
  o.name = "jacobi";
  veda::parallel_for(
      veda::Box<2>{{1, 1}, {g_n - 1, g_n - 1}}, veda::read(g_u), veda::write(g_v),
      VEDA_LAMBDA((std::size_t i, std::size_t j, veda::View<const double> in, veda::View<double> out), {
        out(i, j) = 0.25 * (in(i - 1, j) + in(i + 1, j) + in(i, j - 1) + in(i, j + 1));
      }),
      o);
  veda::synchronize();  // a GPU tier's work is timed to its end, like the hand-written kernel's
}

std::vector<double> veda_result() { return g_v.to_vector(); }
std::string veda_tier() { return veda::last_decision().tier; }
void veda_release() { g_u = veda::Array<double>(), g_v = veda::Array<double>(); }

}  // namespace bench::stencil
