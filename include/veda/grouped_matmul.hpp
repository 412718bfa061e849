// veda/grouped_matmul.hpp — one product per group of rows, each with its
// own weight matrix: the expert layer of a mixture of experts.
//
//   auto r = veda::moe_route(logits, 2);                     // veda/moe_route.hpp
//   // x_by_expert: row i is token r.order[i] / 2's features (rows x d_in)
//   auto y = veda::grouped_matmul(x_by_expert, w, r.counts);  // w: experts x d_in x d_out
//
// Contract:
// - inputs: [rows, d_in]; weights: [groups, d_in, d_out]; counts: int64
//   [groups], each >= 0, summing to rows. The result is [rows, d_out]: the
//   counts[g] rows from offset sum(counts[0..g)) times weights[g]. A group
//   of no rows is skipped; d_in = 0 gives zeros. Shapes or counts that do
//   not fit throw veda::InvalidArgument naming them, before any work.
//   counts are read on the host (copied back if they are on the device).
// - Float, double, veda::half and veda::bfloat16; the products as matmul
//   computes them (16-bit: FP32 sums, each output rounded once).
// - Tiers: cpu-reference (naive, double accumulation: the tests' oracle,
//   only when forced), cpu-blas (OpenBLAS, group after group, each with its
//   threads; not for nested calls), cpu-tiled (the groups over oneTBB, each
//   product's tiles nested in them), gpu-tiled (veda's kernel, a launch per
//   group), gpu-cublas (one cublas{S,D}gemmGroupedBatched call where the
//   toolkit has it, cuBLAS 12.5+; else a GEMM per group; 16-bit elements:
//   cublasGemmGroupedBatchedEx on tensor cores, compute capability 8.0+,
//   or cublasGemmEx per group where the grouped call declines them). 16-bit
//   elements on the CPU tiers: the float tiers on float copies of each
//   group's operands. The cost model
//   sees the total product; history corrects it for the groups' sizes.
//   The result is left where it was computed.
//
// Thread-safety: any number of threads may call it at once.
#pragma once

#include <cstdint>
#include <string>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/half.hpp"
#include "veda/softmax.hpp"  // detail::RowElem

namespace veda {

struct GroupedMatmulOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "grouped_matmul"
  std::string tier;  // force a named tier: tests, benchmarks, debugging
};

namespace detail {
template <class T>
concept GroupedElem = RowElem<T> || is_16bit_float<T>;
}  // namespace detail

template <detail::GroupedElem T>
Array<T> grouped_matmul(const Array<T>& inputs, const Array<T>& weights, const Array<std::int64_t>& counts,
                        const GroupedMatmulOptions& options = {});

extern template Array<float> grouped_matmul<float>(const Array<float>&, const Array<float>&,
                                                   const Array<std::int64_t>&, const GroupedMatmulOptions&);
extern template Array<double> grouped_matmul<double>(const Array<double>&, const Array<double>&,
                                                     const Array<std::int64_t>&, const GroupedMatmulOptions&);
extern template Array<half> grouped_matmul<half>(const Array<half>&, const Array<half>&, const Array<std::int64_t>&,
                                                 const GroupedMatmulOptions&);
extern template Array<bfloat16> grouped_matmul<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&,
                                                         const Array<std::int64_t>&, const GroupedMatmulOptions&);

}  // namespace veda
