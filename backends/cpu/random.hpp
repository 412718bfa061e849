// veda::random on the CPU: Philox blocks generated in index order, split
// among the workers in runs of whole blocks (each element depends only on
// its index, so any split gives the same bits).
#pragma once

#include <cstddef>
#include <cstdint>

namespace veda::detail {
class CpuExecutor;
namespace cpu {

// out[i] = element i of the (seed, T, distribution) stream for i < n; p0, p1:
// low and high, or mean and stddev. `parallel` null: on the calling thread.
template <class T>
void random_fill(CpuExecutor* parallel, T* out, std::size_t n, bool normal, std::uint64_t seed, T p0, T p1);

}  // namespace cpu
}  // namespace veda::detail
