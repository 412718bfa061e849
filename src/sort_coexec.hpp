// The cpu+gpu tier of a sort of host ranges (CUDA configuration).
//
// sort_coexec: the first keys, by the plan's share, in equal shares on the
// idle devices, each sorted there by on_device(keys, values, count) with its
// values; the rest by the CPU's sort; then the sorted parts merged on the
// host (cpu::merge_runs: stable, ties to the earlier part, NaN keys last).
// A share whose device fails recoverably is sorted by the CPU instead
// (coexec_parts). Stable when every part is sorted stably (the devices'
// radix sort is, and the CPU's part is for a stable sort).
#pragma once

#if VEDA_HAS_CUDA
#include <cstddef>
#include <vector>

#include "backends/cpu/merge_runs.hpp"
#include "backends/cpu/sort.hpp"
#include "runtime/runtime_state.hpp"
#include "veda/detail/coexec.hpp"

namespace veda::detail {

// values: null, or n values of value_bytes each.
template <class K, class OnDevice>
void sort_coexec(Runtime& rt, const Plan& p, K* keys, void* values, std::size_t value_bytes, std::size_t n,
                 bool stable, bool descending, const OnDevice& on_device) {
  auto values_at = [&](std::size_t lo) -> void* {
    return values ? static_cast<unsigned char*>(values) + lo * value_bytes : nullptr;
  };
  CpuExecutor* workers = rt.state().cpu_executor.get();
  const std::vector<std::size_t> ends = coexec_parts<std::size_t>(
      rt, p, coexec_gpu_count(p, n), n,
      [&](std::size_t lo, std::size_t hi) {
        on_device(keys + lo, values_at(lo), hi - lo);
        return hi;
      },
      [&](std::size_t lo, std::size_t hi) {
        cpu::sort_keys(workers, keys + lo, values_at(lo), value_bytes, hi - lo, stable, descending);
        return hi;
      });
  std::vector<std::size_t> bounds{0};
  bounds.insert(bounds.end(), ends.begin(), ends.end());
  cpu::merge_runs(workers, keys, values, value_bytes, bounds, descending);
}

}  // namespace veda::detail
#endif
