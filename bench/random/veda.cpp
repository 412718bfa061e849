#include "bench/random/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/random.hpp"

namespace bench::random {

void veda_fill(std::vector<float>& out, bool normal, std::uint64_t seed) {
  if (normal) veda::random::normal_into(out, seed);
  else veda::random::uniform_into(out, seed);
}

std::string veda_tier() { return veda::last_decision().tier; }

}  // namespace bench::random
