// CPU tiers of softmax and log_softmax (veda/softmax.hpp): serial and
// tbb-auto. The input is viewed as [outer, len, inner] with the axis in the
// middle.
#pragma once

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail {
class CpuExecutor;
namespace cpu {

// out = softmax (log_softmax when `log`) of in along the middle axis, for
// float or double. `parallel` (null: the calling thread) changes who
// computes, not the bits: a slice's sum is taken in fixed chunks.
void softmax(CpuExecutor* parallel, ScalarType type, const void* in, void* out, std::size_t outer, std::size_t len,
             std::size_t inner, bool log);

}  // namespace cpu
}  // namespace veda::detail
