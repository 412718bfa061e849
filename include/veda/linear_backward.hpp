// veda/linear_backward.hpp — the gradients of veda::linear.
//
//   auto z = veda::linear(x, w, b);                      // keep the pre-activation
//   ... y = act(z), the loss, dy = dL/dy ...
//   auto g = veda::linear_backward(x, w, dy, veda::Activation::Gelu, z);
//   // g.grad_x (m x k), g.grad_w (n x k), g.grad_bias (n)
//
//   // Two layers, x2 = relu(z1): one call also gives layer 1's dL/dz1 and bias gradient.
//   auto g2 = veda::linear_backward(x2, w2, dy, veda::Activation::None, {}, veda::Activation::Relu, z1);
//   // g2.grad_x = dL/dz1 (m x k), g2.grad_input_bias = dL/db1 (k)
//
// Contract:
// - For y = act(z), z = x w^T + b (x: m x k, w: n x k, as linear() takes
//   them) and grad_out = dL/dy (m x n), with dz = grad_out * act'(pre_act):
//     grad_x = dz w (m x k),  grad_w = dz^T x (n x k),  grad_bias = the
//     column sums of dz (n; empty with options.bias = false).
//   pre_act is z (m x n); it is read only when act is not None (then it is
//   required). For ReLU, y itself gives the same result (y > 0 exactly
//   where z > 0). act' is ReLU's step (0 at 0) or the derivative of the
//   tanh form of GELU that linear() computes.
// - The chained form takes x = input_act(input_pre_act), the output of the
//   layer before (input_pre_act: m x k); grad_x is then dL/d input_pre_act
//   (grad_x above times input_act'(input_pre_act)) and grad_input_bias (k)
//   that layer's bias gradient: the next call needs neither an activation
//   pass nor a bias reduction of its own.
// - Float, double, veda::half and veda::bfloat16, 2-D Arrays. 16-bit
//   elements compute in FP32: the CPU tiers run the float path on float
//   copies and round each gradient once; gpu-unfused rounds dz to the
//   element type before its GEMMs (cublasGemmEx, tensor cores: sm_80+,
//   FP32 sums), and grad_x again after an input activation; there is no
//   gpu-cublaslt-fused tier for them. Shapes that do not fit, or a missing
//   pre-activation, throw veda::InvalidArgument naming them, before any
//   work. Empty dimensions give empty or zero gradients (m = 0: zero
//   grad_w and grad_bias).
// - Tiers: cpu-reference (naive GEMMs, double accumulation: the tests'
//   oracle, only when forced), cpu-blas, cpu-tiled (the GEMMs as matmul's
//   tiers; the activation gradient and column sums over oneTBB), gpu-unfused
//   (two cuBLAS GEMMs, an activation-gradient kernel, column sums without
//   atomics) and gpu-cublaslt-fused (FP32: grad_w with its bias gradient in
//   one cuBLASLt call, BGRADB epilogue; in the chained form grad_x with
//   DRELU_BGRAD / DGELU_BGRAD, GELU needing k a multiple of 8, else the
//   kernels). Column sums add in double in an order fixed by the shape.
//   Capability filters first, then the cost model (which sees the two GEMMs).
// - Results are Arrays left where they were computed.
//
// Thread-safety: any number of threads may call it at once.
#pragma once

#include <string>

#include "veda/array.hpp"
#include "veda/decision.hpp"
#include "veda/detail/gemm_shape.hpp"
#include "veda/half.hpp"

namespace veda {

struct LinearBackwardOptions {
  Placement placement = Placement::Auto;
  bool strict = false;
  std::string name;    // empty: "linear_backward"
  std::string tier;    // force a named tier: tests, benchmarks, debugging
  bool bias = true;    // false: the layer has no bias; grad_bias stays empty
};

template <class T>
struct LinearGrads {
  Array<T> grad_x;           // m x k
  Array<T> grad_w;           // n x k
  Array<T> grad_bias;        // n, or empty (options.bias = false)
  Array<T> grad_input_bias;  // k, the chained form only
};

template <class T>
LinearGrads<T> linear_backward(const Array<T>& x, const Array<T>& w, const Array<T>& grad_out,
                               Activation act = Activation::None, const Array<T>& pre_act = {},
                               const LinearBackwardOptions& options = {});

// The chained form: x = input_act(input_pre_act).
template <class T>
LinearGrads<T> linear_backward(const Array<T>& x, const Array<T>& w, const Array<T>& grad_out, Activation act,
                               const Array<T>& pre_act, Activation input_act, const Array<T>& input_pre_act,
                               const LinearBackwardOptions& options = {});

#define VEDA_LINEAR_BACKWARD_EXTERN(T)                                                                          \
  extern template LinearGrads<T> linear_backward<T>(const Array<T>&, const Array<T>&, const Array<T>&,         \
                                                    Activation, const Array<T>&, const LinearBackwardOptions&); \
  extern template LinearGrads<T> linear_backward<T>(const Array<T>&, const Array<T>&, const Array<T>&,         \
                                                    Activation, const Array<T>&, Activation, const Array<T>&,  \
                                                    const LinearBackwardOptions&);
VEDA_LINEAR_BACKWARD_EXTERN(float)
VEDA_LINEAR_BACKWARD_EXTERN(double)
VEDA_LINEAR_BACKWARD_EXTERN(half)
VEDA_LINEAR_BACKWARD_EXTERN(bfloat16)
#undef VEDA_LINEAR_BACKWARD_EXTERN

}  // namespace veda
