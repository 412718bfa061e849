#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "bench/random/contenders.hpp"
#include "veda/detail/philox.hpp"

namespace bench::random {
namespace rng = veda::detail::rng;

void tbb_philox(std::vector<float>& out, bool normal, std::uint64_t seed) {
  const std::size_t n = out.size(), blocks = (n + 3) / 4;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t b = r.begin(); b < r.end(); ++b) {
      float v[4];
      if (normal) rng::block_values<float, true>(seed, b, 0.0f, 1.0f, v);
      else rng::block_values<float, false>(seed, b, 0.0f, 1.0f, v);
      for (std::size_t j = 0; j < 4 && 4 * b + j < n; ++j) out[4 * b + j] = v[j];
    }
  });
}

}  // namespace bench::random
