// Shapes shared by matmul/linear/linear_backward and their tiers. Row-major throughout:
// C (m x n) = alpha op(A) (m x k) * op(B) (k x n) + beta C, where op(A) = A,
// or A^T when A is stored k x m (trans_a); likewise B stored n x k with
// trans_b. With beta == 0, C's old contents are never read (NaN included),
// as in BLAS.
#pragma once

#include <cmath>
#include <cstddef>

namespace veda {

enum class Activation { None, Relu, Gelu };

namespace detail {

struct GemmShape {
  std::size_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  double alpha = 1, beta = 0;
  // Batched (3-D) products: `batch` of them, each operand's next matrix
  // `stride_*` elements on (0: one matrix shared by every product).
  std::size_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  // One product of the batch.
  GemmShape one() const noexcept {
    GemmShape s = *this;
    s.batch = 1;
    return s;
  }
  std::size_t lda() const noexcept { return trans_a ? m : k; }
  std::size_t ldb() const noexcept { return trans_b ? k : n; }
  double flops() const noexcept { return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// op(A)[i][p] and op(B)[p][j] for the stored layouts (host code).
template <class T>
T op_a(const GemmShape& s, const T* a, std::size_t i, std::size_t p) {
  return s.trans_a ? a[p * s.m + i] : a[i * s.k + p];
}
template <class T>
T op_b(const GemmShape& s, const T* b, std::size_t p, std::size_t j) {
  return s.trans_b ? b[j * s.k + p] : b[p * s.n + j];
}

// The tanh form of GELU, as cuBLASLt's GELU epilogue computes it, so every
// tier agrees.
template <class T>
inline T activate(T x, Activation a) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return x > T(0) ? x : T(0);
    case Activation::Gelu: {
      const T c = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(c * (x + T(0.044715) * x * x * x)));
    }
  }
  return x;
}

// activate's derivative at x (ReLU's is 0 at 0, as in PyTorch).
template <class T>
inline T activation_derivative(T x, Activation a) {
  switch (a) {
    case Activation::None: return T(1);
    case Activation::Relu: return x > T(0) ? T(1) : T(0);
    case Activation::Gelu: {
      const T c = T(0.7978845608028654), k = T(0.044715);
      const T t = std::tanh(c * (x + k * x * x * x));
      return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3) * k * x * x);
    }
  }
  return T(1);
}

}  // namespace detail
}  // namespace veda
