// CPU sort tiers: serial (std::sort / std::stable_sort) and tbb-auto
// (tbb::parallel_sort), for keys alone or keys with 4- or 8-byte values.
// NaN keys are moved to the end first (a stable partition), so the sort
// itself compares with plain < or >, under which -0.0 == +0.0.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

// values: null, or n values of value_bytes (4 or 8) each; sorted in place.
template <class K>
void sort_keys(CpuExecutor* parallel, K* keys, void* values, std::size_t value_bytes, std::size_t n, bool stable,
               bool descending);

}  // namespace veda::detail::cpu
