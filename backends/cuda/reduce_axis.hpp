// cuda tier of the reductions along an axis (veda/reduce_axis.hpp): veda's
// own kernels, no atomics, so a shape's result has the same bits run to run.
// A contiguous axis is read by a warp per (row, segment), a strided one by a
// 32 x 8 block per (32 columns, segment); a second kernel merges each
// output's segments in order and finishes it (mean, var, stddev, index).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "veda/detail/reduce_kind.hpp"

namespace veda::detail::cuda {

// Device scratch that reduce_axis_device needs for this shape.
std::size_t reduce_axis_temp_bytes(std::size_t outer, std::size_t len, std::size_t inner);

// As cpu::reduce_axis (backends/cpu/reduce_axis.hpp), asynchronously on s;
// temp: reduce_axis_temp_bytes() of device memory.
void reduce_axis_device(AxisOp op, ScalarType type, const void* in, void* out, void* temp, std::size_t outer,
                        std::size_t len, std::size_t inner, int ddof, cudaStream_t s);

}  // namespace veda::detail::cuda
