// The CPU-only configuration: no hand-written CUDA contender.
#include "bench/stencil/contenders.hpp"

namespace bench::stencil {
bool cuda_setup(const std::vector<double>&, std::size_t) { return false; }
void cuda_sweep() {}
std::vector<double> cuda_result() { return {}; }
}  // namespace bench::stencil
