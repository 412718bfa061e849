// veda/matmul.hpp — matrix products that choose their device and kernel tier.
//
//   veda::Array<float> c = veda::matmul(a, b);                 // a: m x k, b: k x n
//   auto y = veda::linear(x, w, bias, veda::Activation::Relu); // act(x w^T + bias)
//
// Contract:
// - Float and double, row-major 2-D Arrays (or spans with explicit m, k, n).
//   transpose_a / transpose_b read A as stored k x m / B as stored n x k.
// - linear(x, w, bias, act): x is m x k, w is n x k (out x in features, as
//   in PyTorch), bias has n elements (or is empty); the result is m x n.
//   GELU is the tanh form (as cuBLASLt computes it).
// - Shapes that do not fit throw veda::InvalidArgument naming both shapes,
//   before any work.
// - Tiers: cpu-reference (naive, double accumulation; only when forced: the
//   tests' oracle), cpu-blas (OpenBLAS, its kernel set chosen for this CPU,
//   its threads matched to veda's), cpu-tiled (cache-blocked oneTBB, no BLAS),
//   gpu-tiled (veda's kernel), gpu-cublas, gpu-cublas-tf32 (when the precision
//   policy allows TF32 and the GPU has tensor cores), and for linear
//   gpu-unfused (cuBLAS + an epilogue kernel) and gpu-cublaslt-fused (one
//   cuBLASLt call, FP32). Capability filters first, then the cost model.
// - Results are Arrays left where they were computed.
//
// Thread-safety: any number of threads may call these at once.
#pragma once

#include <span>
#include <string>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/gemm_shape.hpp"

namespace veda {

struct MatmulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;  // empty: "matmul" or "linear"
  std::string tier;  // force a named tier: tests, benchmarks, debugging
};

template <class T>
Array<T> matmul(const Array<T>& a, const Array<T>& b, const MatmulOptions& options = {});

// Row-major spans: a holds m x k (k x m with transpose_a), b holds k x n
// (n x k with transpose_b), c receives m x n.
template <class T>
void matmul(std::span<const T> a, std::span<const T> b, std::span<T> c, std::size_t m, std::size_t k, std::size_t n,
            const MatmulOptions& options = {});

template <class T>
Array<T> linear(const Array<T>& x, const Array<T>& w, const Array<T>& bias, Activation act = Activation::None,
                const MatmulOptions& options = {});

extern template Array<float> matmul<float>(const Array<float>&, const Array<float>&, const MatmulOptions&);
extern template Array<double> matmul<double>(const Array<double>&, const Array<double>&, const MatmulOptions&);
extern template void matmul<float>(std::span<const float>, std::span<const float>, std::span<float>, std::size_t,
                                   std::size_t, std::size_t, const MatmulOptions&);
extern template void matmul<double>(std::span<const double>, std::span<const double>, std::span<double>, std::size_t,
                                    std::size_t, std::size_t, const MatmulOptions&);
extern template Array<float> linear<float>(const Array<float>&, const Array<float>&, const Array<float>&, Activation,
                                           const MatmulOptions&);
extern template Array<double> linear<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                             Activation, const MatmulOptions&);

}  // namespace veda
