#include <algorithm>

#include "bench/sort/contenders.hpp"

namespace bench::sort {

template <class K>
void std_sort(std::vector<K>& keys) {
  std::sort(keys.begin(), keys.end());
}
template void std_sort<float>(std::vector<float>&);
template void std_sort<std::uint32_t>(std::vector<std::uint32_t>&);

void std_sort_pairs(std::vector<Pair>& kv) {
  std::sort(kv.begin(), kv.end(), [](const Pair& a, const Pair& b) { return a.first < b.first; });
}

}  // namespace bench::sort
