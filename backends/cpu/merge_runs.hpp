// Merging sorted runs: the last pass of a sort whose parts were sorted apart
// (the cpu+gpu tier: the devices' shares and the CPU's part, each sorted
// where it ran).
//
// Contract: keys[bounds[i], bounds[i+1]) is sorted for each i (in the order
// veda::sort gives: ascending, or descending; NaN keys last; -0.0 == +0.0);
// afterwards keys[bounds.front(), bounds.back()) is, with each value moved
// with its key. Stable: of equal keys (and of NaN keys), those of an earlier
// run come first, and within a run they keep their order, so merging stably
// sorted runs gives a stable sort of the whole. Merges pairs of runs per
// round (log2 of the runs rounds) through one scratch copy; each merge is cut
// into pieces of equal output by binary search (the merge path), run on the
// workers when `parallel` is given.
//
// Thread-safety: the caller owns keys and values for the call.
#pragma once

#include <cstddef>
#include <span>

#include "backends/cpu/cpu_executor.hpp"

namespace veda::detail::cpu {

// values: null, or one value of value_bytes (4 or 8) per key.
template <class K>
void merge_runs(CpuExecutor* parallel, K* keys, void* values, std::size_t value_bytes,
                std::span<const std::size_t> bounds, bool descending);

}  // namespace veda::detail::cpu
