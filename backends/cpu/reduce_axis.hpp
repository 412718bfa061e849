// CPU tiers of the reductions along an axis (veda/reduce_axis.hpp): serial
// and tbb-auto. The input is viewed as [outer, len, inner] with the axis in
// the middle; out as [outer, inner].
#pragma once

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail {
class CpuExecutor;
namespace cpu {

// out[o * inner + k] = op over j < len of in[(o * len + j) * inner + k],
// in elements of `type` and results of the op's result type
// (veda/reduce_axis.hpp). The combination order depends only on the shape:
// `parallel` (null: the calling thread) changes who computes, not the bits.
// len may be 0 (sum: 0; mean, var, stddev: NaN); the arg ops and min/max
// need len > 0.
void reduce_axis(CpuExecutor* parallel, AxisOp op, ScalarType type, const void* in, void* out, std::size_t outer,
                 std::size_t len, std::size_t inner, int ddof);

}  // namespace cpu
}  // namespace veda::detail
