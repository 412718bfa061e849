#include <tbb/parallel_sort.h>

#include "bench/sort/contenders.hpp"

namespace bench::sort {

template <class K>
void tbb_sort(std::vector<K>& keys) {
  tbb::parallel_sort(keys.begin(), keys.end());
}
template void tbb_sort<float>(std::vector<float>&);
template void tbb_sort<std::uint32_t>(std::vector<std::uint32_t>&);

void tbb_sort_pairs(std::vector<Pair>& kv) {
  tbb::parallel_sort(kv.begin(), kv.end(), [](const Pair& a, const Pair& b) { return a.first < b.first; });
}

}  // namespace bench::sort
