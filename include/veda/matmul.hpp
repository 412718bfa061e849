// veda/matmul.hpp — matrix products that choose their device and kernel tier.
//
//   veda::Array<float> c = veda::matmul(a, b);                 // a: m x k, b: k x n
//   veda::matmul_into(c, a, b, {.alpha = 0.5, .beta = 1});     // c = 0.5 a b + c, in place
//   veda::matmul(x, y, z, m, k, n);                            // contiguous ranges (vectors, spans)
//   auto bc = veda::matmul(batch_a, b);                        // [batch, m, k] x [k, n]: [batch, m, n]
//   auto y = veda::linear(x, w, bias, veda::Activation::Relu); // act(x w^T + bias)
//
// Contract:
// - Float and double, row-major 2-D Arrays (or spans with explicit m, k, n);
//   matmul, matmul_into and linear also take veda::half and veda::bfloat16
//   (veda/half.hpp): the products summed in FP32 and C rounded once to the
//   element type, as cuBLAS's 16-bit GEMMs compute them; alpha and beta
//   apply in FP32 too. A 16-bit linear adds the bias and applies the
//   activation in FP32: y is rounded once on the CPU tiers and
//   gpu-cublaslt-fused, twice (the product, then y) on gpu-unfused.
//   transpose_a / transpose_b read A as stored k x m / B as stored n x k.
// - Batches: matmul and matmul_into take 3-D Arrays as stacks of matrices
//   ([batch, rows, cols]); the result is [batch, m, n]. Two 3-D operands
//   need the same batch; a 2-D operand is shared by every product
//   (broadcast). Product i uses matrix i of each stack. On the CPU the
//   products run in turn, each on every worker (cpu-tiled also spreads
//   them over the workers); [batch, m, k] x [k, n] is one GEMM of
//   (batch * m) rows. On the GPU: one cublas*gemmStridedBatched call (a
//   shared operand has stride 0), or a gpu-tiled launch per product.
// - linear(x, w, bias, act): x is m x k, w is n x k (out x in features, as
//   in PyTorch), bias has n elements (or is empty); the result is m x n.
//   GELU is the tanh form (as cuBLASLt computes it).
// - matmul_into and the range form compute C = alpha op(A) op(B) + beta C
//   in the caller's C (m x n); with beta == 0 C's old contents are never
//   read (NaN included), as in BLAS. C must not overlap A or B. A returning
//   matmul has no C to scale: beta != 0 there is an error, as alpha or beta
//   in linear() is.
// - Shapes that do not fit throw veda::InvalidArgument naming both shapes,
//   before any work.
// - Tiers: cpu-reference (naive, double accumulation; only when forced: the
//   tests' oracle), cpu-blas (OpenBLAS, its kernel set chosen for this CPU,
//   its threads matched to veda's), cpu-tiled (cache-blocked oneTBB, no BLAS),
//   gpu-tiled (veda's kernel), gpu-cublas, gpu-cublas-tf32 (when the precision
//   policy allows TF32 and the GPU has tensor cores), and for linear
//   gpu-unfused (cuBLAS + an epilogue kernel) and gpu-cublaslt-fused (one
//   cuBLASLt call; float and 16-bit, TF32 for float where the precision
//   policy allows it). Capability filters first, then the cost model.
//   16-bit elements: the CPU tiers run the float tiers on float copies of
//   the operands; gpu-cublas is cublasGemmEx on the 16-bit data (tensor
//   cores), gpu-wmma stages it into FP16/BF16 fragments exactly, gpu-tiled
//   and the teaching kernels sum in FP32; no TF32 or BF16-rounding tiers.
// - Results are Arrays left where they were computed.
//
// Thread-safety: any number of threads may call these at once.
#pragma once

#include <ranges>
#include <span>
#include <string>
#include <type_traits>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/gemm_shape.hpp"
#include "veda/half.hpp"

namespace veda {

struct MatmulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "matmul" or "linear"
  std::string tier;  // force a named tier: tests, benchmarks, debugging
  double alpha = 1;  // C = alpha op(A) op(B) + beta C
  double beta = 0;
  int device = -1;  // a GPU tier runs on this device (one the runtime uses); -1: veda picks
};

template <class T>
Array<T> matmul(const Array<T>& a, const Array<T>& b, const MatmulOptions& options = {});

// Row-major spans: a holds m x k (k x m with transpose_a), b holds k x n
// (n x k with transpose_b), c receives m x n.
template <class T>
void matmul(std::span<const T> a, std::span<const T> b, std::span<T> c, std::size_t m, std::size_t k, std::size_t n,
            const MatmulOptions& options = {});

// C (m x n, 2-D) = alpha op(A) op(B) + beta C, in place.
template <class T>
void matmul_into(Array<T>& c, const Array<T>& a, const Array<T>& b, const MatmulOptions& options = {});

// The same over contiguous ranges of one element type (std::vector,
// std::array, spans, ...), with T deduced from them.
template <std::ranges::contiguous_range A, std::ranges::contiguous_range B, std::ranges::contiguous_range C>
  requires(!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<C>>> &&
           std::is_same_v<std::ranges::range_value_t<A>, std::ranges::range_value_t<C>> &&
           std::is_same_v<std::ranges::range_value_t<B>, std::ranges::range_value_t<C>>)
void matmul(const A& a, const B& b, C&& c, std::size_t m, std::size_t k, std::size_t n,
            const MatmulOptions& options = {}) {
  using T = std::ranges::range_value_t<C>;
  matmul<T>(std::span<const T>(std::ranges::data(a), std::ranges::size(a)),
            std::span<const T>(std::ranges::data(b), std::ranges::size(b)),
            std::span<T>(std::ranges::data(c), std::ranges::size(c)), m, k, n, options);
}

template <class T>
Array<T> linear(const Array<T>& x, const Array<T>& w, const Array<T>& bias, Activation act = Activation::None,
                const MatmulOptions& options = {});

extern template Array<float> matmul<float>(const Array<float>&, const Array<float>&, const MatmulOptions&);
extern template Array<double> matmul<double>(const Array<double>&, const Array<double>&, const MatmulOptions&);
extern template void matmul<float>(std::span<const float>, std::span<const float>, std::span<float>, std::size_t,
                                   std::size_t, std::size_t, const MatmulOptions&);
extern template void matmul<double>(std::span<const double>, std::span<const double>, std::span<double>, std::size_t,
                                    std::size_t, std::size_t, const MatmulOptions&);
extern template void matmul_into<float>(Array<float>&, const Array<float>&, const Array<float>&, const MatmulOptions&);
extern template void matmul_into<double>(Array<double>&, const Array<double>&, const Array<double>&,
                                         const MatmulOptions&);
#define VEDA_EXTERN_MATMUL_16(T)                                                                                \
  extern template Array<T> matmul<T>(const Array<T>&, const Array<T>&, const MatmulOptions&);                   \
  extern template void matmul<T>(std::span<const T>, std::span<const T>, std::span<T>, std::size_t, std::size_t, \
                                 std::size_t, const MatmulOptions&);                                            \
  extern template void matmul_into<T>(Array<T>&, const Array<T>&, const Array<T>&, const MatmulOptions&);
VEDA_EXTERN_MATMUL_16(half)
VEDA_EXTERN_MATMUL_16(bfloat16)
#undef VEDA_EXTERN_MATMUL_16
extern template Array<float> linear<float>(const Array<float>&, const Array<float>&, const Array<float>&, Activation,
                                           const MatmulOptions&);
extern template Array<double> linear<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                             Activation, const MatmulOptions&);
extern template Array<half> linear<half>(const Array<half>&, const Array<half>&, const Array<half>&, Activation,
                                         const MatmulOptions&);
extern template Array<bfloat16> linear<bfloat16>(const Array<bfloat16>&, const Array<bfloat16>&,
                                                 const Array<bfloat16>&, Activation, const MatmulOptions&);

}  // namespace veda
