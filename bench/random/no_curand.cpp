// The CPU-only configuration: no cuRAND contender.
#include "bench/random/contenders.hpp"

namespace bench::random {
bool curand_setup(std::size_t) { return false; }
void curand_fill(std::vector<float>&, bool, std::uint64_t) {}
void curand_release() {}
}  // namespace bench::random
