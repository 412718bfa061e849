// Contenders of the sort case, each sorting a vector in place the way its
// users would: std::sort, tbb::parallel_sort, veda::sort (a tier forced, or
// auto). Key-value pairs: std / TBB sort a vector of pairs; veda sorts keys
// and values in their own arrays.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bench {
struct Options;
}

namespace bench::sort {

template <class K>
void std_sort(std::vector<K>& keys);
template <class K>
void tbb_sort(std::vector<K>& keys);
template <class K>
void veda_sort(std::vector<K>& keys, const std::string& tier);

using Pair = std::pair<std::uint32_t, std::uint32_t>;
void std_sort_pairs(std::vector<Pair>& kv);
void tbb_sort_pairs(std::vector<Pair>& kv);
void veda_sort_pairs(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& values, const std::string& tier);

// Prints the merge table (merge.cpp): the cpu+gpu sort's last pass against
// std::merge, beside the cost model's prediction.
void merge_table(const Options& opt);

}  // namespace bench::sort
