// The distributed pipelines' deterministic layout.
#include "veda/mpi/par_iter.hpp"

#include <algorithm>

#include "veda/runtime.hpp"

namespace veda::mpi::detail {

std::vector<std::size_t> chunk_aligned(const std::vector<std::size_t>& counts, std::size_t chunk) {
  const auto off = offsets_of(counts);
  const std::size_t n = off.back();
  auto up = [&](std::size_t i) { return std::min(n, (i + chunk - 1) / chunk * chunk); };
  std::vector<std::size_t> out(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) out[r] = up(off[r + 1]) - up(off[r]);
  return out;
}

bool deterministic() { return get_runtime().config().deterministic(); }

}  // namespace veda::mpi::detail
