#include <random>

#include "bench/random/contenders.hpp"

namespace bench::random {

void std_mt19937(std::vector<float>& out, bool normal, std::uint64_t seed) {
  std::mt19937 g(static_cast<std::uint32_t>(seed));
  if (normal) {
    std::normal_distribution<float> d;
    for (float& x : out) x = d(g);
  } else {
    std::uniform_real_distribution<float> d;
    for (float& x : out) x = d(g);
  }
}

}  // namespace bench::random
