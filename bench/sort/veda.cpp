#include "bench/sort/contenders.hpp"
#include "veda/sort.hpp"

namespace bench::sort {

template <class K>
void veda_sort(std::vector<K>& keys, const std::string& tier) {
  veda::SortOptions o;
  o.tier = tier;
  veda::sort(keys, o);
}
template void veda_sort<float>(std::vector<float>&, const std::string&);
template void veda_sort<std::uint32_t>(std::vector<std::uint32_t>&, const std::string&);

void veda_sort_pairs(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& values, const std::string& tier) {
  veda::SortOptions o;
  o.tier = tier;
  veda::sort_by_key(keys, values, o);
}

}  // namespace bench::sort
